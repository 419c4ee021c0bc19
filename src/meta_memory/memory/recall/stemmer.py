"""A compact, dependency-free Porter (1980) stemmer for the recall analyzer.

It follows Martin Porter's reference algorithm (steps 1a–5b, with the later "bli"→"ble" and "logi"→"log"
revisions) so that inflections such as run/runs/running or relax/relaxing/relaxation conflate to one index
term. Results are memoised because conversational text reuses a small vocabulary; the cache is bounded so a
hostile stream of unique tokens cannot grow memory without limit.
"""

from __future__ import annotations

from functools import lru_cache

__all__ = ["stem"]


def _is_consonant(word: str, i: int) -> bool:
    ch = word[i]
    if ch in "aeiou":
        return False
    if ch == "y":
        return i == 0 or not _is_consonant(word, i - 1)
    return True


def _measure(stem_: str) -> int:
    """Number of VC sequences in ``[C](VC)^m[V]``."""
    n = 0
    i = 0
    size = len(stem_)
    while i < size and _is_consonant(stem_, i):
        i += 1
    while i < size:
        while i < size and not _is_consonant(stem_, i):
            i += 1
        if i >= size:
            break
        while i < size and _is_consonant(stem_, i):
            i += 1
        n += 1
    return n


def _has_vowel(stem_: str) -> bool:
    return any(not _is_consonant(stem_, i) for i in range(len(stem_)))


def _double_consonant(word: str) -> bool:
    return len(word) >= 2 and word[-1] == word[-2] and _is_consonant(word, len(word) - 1)


def _cvc(word: str) -> bool:
    if len(word) < 3:
        return False
    n = len(word)
    return (
        _is_consonant(word, n - 3)
        and not _is_consonant(word, n - 2)
        and _is_consonant(word, n - 1)
        and word[-1] not in "wxy"
    )


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


def _longest(word: str, suffixes: tuple[tuple[str, str], ...]) -> tuple[str, str] | None:
    best: tuple[str, str] | None = None
    for suffix, repl in suffixes:
        if word.endswith(suffix) and (best is None or len(suffix) > len(best[0])):
            best = (suffix, repl)
    return best


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


def _step2_3(word: str, table: tuple[tuple[str, str], ...]) -> str:
    hit = _longest(word, table)
    if hit is not None:
        base = word[: -len(hit[0])]
        if _measure(base) > 0:
            return base + hit[1]
    return word


def _step4(word: str) -> str:
    best = ""
    for suffix in _STEP4:
        if word.endswith(suffix) and len(suffix) > len(best):
            best = suffix
    if best:
        base = word[: -len(best)]
        if _measure(base) > 1 and (best != "ion" or base.endswith(("s", "t"))):
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
    word = _step2_3(word, _STEP2)
    word = _step2_3(word, _STEP3)
    word = _step4(word)
    return _step5(word)
