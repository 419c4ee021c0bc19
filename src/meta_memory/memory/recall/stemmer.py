"""A compact, dependency-free Porter (1980) stemmer for the recall analyzer.

It follows Martin Porter's reference algorithm (steps 1a–5b, with the later "bli"→"ble" and "logi"→"log"
revisions) so that inflections such as run/runs/running or relax/relaxing/relaxation conflate to one index
term. Results are memoised because conversational text reuses a small vocabulary; the cache is bounded so a
hostile stream of unique tokens cannot grow memory without limit.
"""

from __future__ import annotations

from functools import lru_cache

__all__ = ["stem"]


_CV = str.maketrans(
    {ch: ("v" if ch in "aeiou" else "y" if ch == "y" else "c") for ch in map(chr, range(128))}
)


def _cv(word: str) -> str:
    """Porter's consonant/vowel pattern of ``word``: "v" for a vowel, "c" otherwise, where "y" is a
    consonant at the start or after a vowel and a vowel after a consonant."""
    pattern = word.translate(_CV)
    if "y" not in pattern:
        return pattern
    out: list[str] = []
    for ch in pattern:
        if ch == "y":
            ch = "c" if not out or out[-1] == "v" else "v"
        out.append(ch)
    return "".join(out)


def _measure(stem_: str) -> int:
    """Number of VC sequences in ``[C](VC)^m[V]``: each is one vowel-to-consonant step."""
    return _cv(stem_).count("vc")


def _has_vowel(stem_: str) -> bool:
    return "v" in _cv(stem_)


def _double_consonant(word: str) -> bool:
    return len(word) >= 2 and word[-1] == word[-2] and _cv(word)[-1] == "c"


def _cvc(word: str) -> bool:
    return len(word) >= 3 and _cv(word)[-3:] == "cvc" and word[-1] not in "wxy"


_STEP2 = (
    ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"), ("izer", "ize"),
    ("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous"),
    ("ization", "ize"), ("ation", "ate"), ("ator", "ate"), ("alism", "al"), ("iveness", "ive"),
    ("fulness", "ful"), ("ousness", "ous"), ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"),
    ("logi", "log"),
)  # fmt: skip
_STEP3 = (
    ("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"), ("ful", ""),
    ("ness", ""),
)  # fmt: skip
_STEP4 = (
    "ement", "ance", "ence", "able", "ible", "ment", "ant", "ent", "ism", "ate", "iti", "ous", "ive", "ize",
    "ion", "al", "er", "ic", "ou",
)  # fmt: skip


def _by_length(pairs: tuple[tuple[str, str], ...]) -> tuple[dict[str, str], tuple[int, ...]]:
    return dict(pairs), tuple(sorted({len(suffix) for suffix, _ in pairs}, reverse=True))


_STEP2_TABLE = _by_length(_STEP2)
_STEP3_TABLE = _by_length(_STEP3)
_STEP4_TABLE = _by_length(tuple((suffix, "") for suffix in _STEP4))


def _longest(word: str, table: tuple[dict[str, str], tuple[int, ...]]) -> tuple[str, str] | None:
    """The longest suffix of ``word`` in ``table`` and its replacement (one lookup per length)."""
    replacements, lengths = table
    size = len(word)
    for n in lengths:
        if n <= size:
            suffix = word[-n:]
            repl = replacements.get(suffix)
            if repl is not None:
                return suffix, repl
    return None


def _step1(word: str) -> str:
    if word.endswith("sses") or word.endswith("ies"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    if word.endswith("eed"):
        if _measure(word[:-3]) > 0:
            word = word[:-1]
        return _step1c(word)
    for suffix in ("ed", "ing"):
        if word.endswith(suffix) and _has_vowel(word[: -len(suffix)]):
            word = word[: -len(suffix)]
            if word.endswith(("at", "bl", "iz")):
                word += "e"
            elif _double_consonant(word) and word[-1] not in "lsz":
                word = word[:-1]
            elif _measure(word) == 1 and _cvc(word):
                word += "e"
            break
    return _step1c(word)


def _step1c(word: str) -> str:
    if word.endswith("y") and _has_vowel(word[:-1]):
        return word[:-1] + "i"
    return word


def _step2_3(word: str, table: tuple[dict[str, str], tuple[int, ...]]) -> str:
    hit = _longest(word, table)
    if hit is not None:
        base = word[: -len(hit[0])]
        if _measure(base) > 0:
            return base + hit[1]
    return word


def _step4(word: str) -> str:
    hit = _longest(word, _STEP4_TABLE)
    if hit is not None:
        base = word[: -len(hit[0])]
        if _measure(base) > 1 and (hit[0] != "ion" or base.endswith(("s", "t"))):
            return base
    return word


def _step5(word: str) -> str:
    if word.endswith("e"):
        base = word[:-1]
        m = _measure(base)
        if m > 1 or (m == 1 and not _cvc(base)):
            word = base
    if word.endswith("ll") and _measure(word) > 1:
        word = word[:-1]
    return word


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Return the Porter stem of a lowercase ASCII ``word`` (words of two letters or fewer are kept)."""
    if len(word) <= 2:
        return word
    word = _step1(word)
    word = _step2_3(word, _STEP2_TABLE)
    word = _step2_3(word, _STEP3_TABLE)
    word = _step4(word)
    return _step5(word)
