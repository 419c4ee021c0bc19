"""BERT's uncased WordPiece tokenizer, in Python: the ids the models read, from ``vocab.txt`` alone.

It gives the ids the `tokenizers` library gives for a BERT ``tokenizer.json`` (BertNormalizer with
lower-casing and accent stripping, BertPreTokenizer, WordPiece with ``##`` continuations and
[UNK] for a word over 100 characters, [CLS] ... [SEP], the reserved tokens matched in the raw
text), so the semantic extra needs no Rust tokenizer and no model-hub client. The steps:

1. the reserved tokens ([PAD], [UNK], [CLS], [SEP], [MASK]) written literally in a text are taken
   as themselves;
2. the rest is cleaned (NUL, U+FFFD, control, format and private-use characters dropped; tab,
   newline, carriage return and the other white space become a space), each CJK ideograph is set
   apart by spaces, accents are stripped (NFD, nonspacing marks dropped) and each character is
   lower-cased on its own;
3. words are split at spaces, and every punctuation character is a word of its own;
4. each word becomes its longest vocabulary pieces, left to right (``##`` marks a continuation);
   a word with a piece the vocabulary lacks, or over 100 characters, is the one piece [UNK].

Character classes come from Python's ``unicodedata``; the Rust library classifies by an older
Unicode table, so a character assigned since may be classified differently (the parity test
names the characters where the two differ). A word's pieces are cached (a bounded table), so a
text of common words costs a normalization and a few dictionary lookups.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from pathlib import Path

__all__ = ["WordPiece"]

_RESERVED = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
_RESERVED_SPLIT = re.compile("(" + "|".join(re.escape(token) for token in _RESERVED) + ")")
_MAX_WORD_CHARS = 100
_CACHE_WORDS = 1 << 16

# Unicode's White_Space property (what the Rust library's `char::is_whitespace` reads).
_WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000" + "".join(map(chr, range(0x2000, 0x200B)))
)
_ASCII_CLEAN = {code: None for code in range(32) if chr(code) not in "\t\n\r"} | {
    ord("\t"): " ",
    ord("\n"): " ",
    ord("\r"): " ",
    0x7F: None,
}
# Dropped by the cleaning: control, format, private use and surrogate code points (unassigned ones are
# kept, as the Rust library keeps them).
_OTHER = frozenset(("Cc", "Cf", "Co", "Cs"))
_ASCII_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
# The CJK ideograph blocks BERT sets apart character by character.
_CJK = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B920, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)


class WordPiece:
    """The tokenizer of one WordPiece vocabulary (one piece per line of ``vocab.txt``, ids in line order).

    Args:
        vocab: the pieces, in id order.
        window: the most ids :meth:`encode` returns, [CLS] and [SEP] included.

    Raises:
        ValueError: the vocabulary lacks a reserved token, repeats a piece, or ``window`` is below 2.
    """

    def __init__(self, vocab: list[str], *, window: int) -> None:
        if window < 2:
            raise ValueError(f"window must be at least 2, not {window}")
        self._ids = {piece: i for i, piece in enumerate(vocab)}
        if len(self._ids) != len(vocab):
            raise ValueError("the vocabulary repeats a piece")
        missing = [token for token in _RESERVED if token not in self._ids]
        if missing:
            raise ValueError(f"the vocabulary lacks {', '.join(missing)}")
        self.window = window
        self._cls, self._sep, self._unk = self._ids["[CLS]"], self._ids["[SEP]"], self._ids["[UNK]"]
        self._longest = max(len(piece) for piece in vocab)
        self._words: dict[str, tuple[int, ...]] = {}
        self._words_lock = threading.Lock()

    @classmethod
    def from_file(cls, path: Path, *, window: int) -> WordPiece:
        """The tokenizer of a ``vocab.txt`` (UTF-8, one piece per line)."""
        text = path.read_text(encoding="utf-8")
        return cls(text.split("\n")[:-1] if text.endswith("\n") else text.split("\n"), window=window)

    @property
    def vocab_size(self) -> int:
        return len(self._ids)

    @property
    def unk_id(self) -> int:
        """The id of [UNK]."""
        return self._unk

    def token_to_id(self, token: str) -> int | None:
        """The id of one vocabulary piece, ``None`` when the vocabulary lacks it."""
        return self._ids.get(token)

    def encode(self, text: str) -> list[int]:
        """The ids a BERT model reads for ``text``: [CLS], its pieces cut to the window, [SEP]."""
        room = self.window - 2
        ids: list[int] = [self._cls]
        for i, part in enumerate(_RESERVED_SPLIT.split(text) if "[" in text else (text,)):
            if i % 2:
                ids.append(self._ids[part])
            elif part:
                for word in _words(_normalized(part)):
                    ids.extend(self._pieces(word))
            if len(ids) > room:
                break
        del ids[room + 1 :]
        ids.append(self._sep)
        return ids

    def _pieces(self, word: str) -> tuple[int, ...]:
        cached = self._words.get(word)
        if cached is not None:
            return cached
        pieces = self._split(word)
        with self._words_lock:
            if len(self._words) >= _CACHE_WORDS:
                self._words.clear()
            self._words[word] = pieces
        return pieces

    def _split(self, word: str) -> tuple[int, ...]:
        if len(word) > _MAX_WORD_CHARS:
            return (self._unk,)
        pieces: list[int] = []
        start = 0
        while start < len(word):
            end = min(len(word), start + self._longest)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                found = self._ids.get(piece)
                if found is not None:
                    pieces.append(found)
                    break
                end -= 1
            else:
                return (self._unk,)
            start = end
        return tuple(pieces)


def _normalized(text: str) -> str:
    if text.isascii():
        return text.translate(_ASCII_CLEAN).lower()
    kept: list[str] = []
    for char in text:
        code = ord(char)
        if code == 0 or code == 0xFFFD:
            continue
        if char in "\t\n\r":
            kept.append(" ")
            continue
        if unicodedata.category(char) in _OTHER:
            continue
        if char in _WHITE_SPACE:
            kept.append(" ")
        elif _is_cjk(code):
            kept.append(f" {char} ")
        else:
            kept.append(char)
    stripped = unicodedata.normalize("NFD", "".join(kept))
    # Lower-cased one character at a time, as the Rust library does (no final-sigma rule).
    return "".join(char.lower() for char in stripped if unicodedata.category(char) != "Mn")


def _is_cjk(code: int) -> bool:
    return any(low <= code <= high for low, high in _CJK)


def _words(text: str) -> list[str]:
    words: list[str] = []
    for chunk in text.split(" "):
        if not chunk:
            continue
        if chunk.isalnum():
            words.append(chunk)
            continue
        start = 0
        for i, char in enumerate(chunk):
            if _is_punctuation(char):
                if start < i:
                    words.append(chunk[start:i])
                words.append(char)
                start = i + 1
        if start < len(chunk):
            words.append(chunk[start:])
    return words


def _is_punctuation(char: str) -> bool:
    if char.isascii():
        return char in _ASCII_PUNCTUATION
    return unicodedata.category(char)[0] == "P"
