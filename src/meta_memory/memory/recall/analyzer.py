"""Text analysis for contextual recall: one tokenizer shared by indexing and querying.

Text is accent-folded, English contractions are undone ("didn't" → "did not", "Melanie's" → "Melanie"), and it
is split, as upstream (REFERENCE 3.4), on every character that is not ASCII alphanumeric, ``_`` or ``-``;
hyphenated compounds index their parts and the joined word. Tokens are lowercased, stopwords (the upstream 45
plus :data:`~meta_memory.memory.recall.lexicon.STOPWORDS`) and one-character tokens are dropped, irregular
forms are normalised and the rest Porter-stemmed. A word of a concept group also yields a ``~concept`` token
and a temporal word yields the ``#when`` cue, so paraphrases and "when ..." questions match without query-time
fan-out. Tokens that start with ``~`` or ``#`` can never come out of the splitter, so they cannot collide with
real words.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from meta_memory.memory.recall.lexicon import (
    CONCEPT_GROUPS,
    IRREGULAR_FORMS,
    QUERY_STOPWORDS,
    STOPWORDS,
    TIME_WORDS,
)
from meta_memory.memory.recall.stemmer import stem

__all__ = [
    "ANALYZER_VERSION",
    "CONCEPT_PREFIX",
    "CUE_PREFIX",
    "WHEN_CUE",
    "AnalyzedRecord",
    "analyze_record",
    "index_terms",
    "query_terms",
    "words",
]

#: Bump whenever a change here or in ``lexicon.py`` alters the terms of a text: stores re-index on it.
ANALYZER_VERSION = 1
CONCEPT_PREFIX = "~"
CUE_PREFIX = "#"
WHEN_CUE = CUE_PREFIX + "when"

_SPLIT = re.compile(r"[^A-Za-z0-9_-]+")
_JOINERS = re.compile(r"[-_]+")
_NOT = re.compile(r"\b(can|won|shan)['’]t\b|n['’]t\b", re.IGNORECASE)
_CLITIC = re.compile(r"['’](?:s|re|ve|ll|d|m)\b", re.IGNORECASE)
_YEAR = re.compile(r"^(?:19|20)\d\d$")
_WHEN_QUESTION = re.compile(
    r"\b(?:when|what (?:time|year|month|day|date)|which (?:year|month|day)|how long ago|since when)\b",
    re.IGNORECASE,
)
_NOT_FORMS = {"can": "can not", "won": "will not", "shan": "shall not"}


def _build_concepts() -> dict[str, tuple[str, ...]]:
    table: dict[str, list[str]] = {}
    for concept, members in CONCEPT_GROUPS.items():
        for member in members:
            key = stem(IRREGULAR_FORMS.get(member, member))
            token = CONCEPT_PREFIX + concept
            if token not in table.setdefault(key, []):
                table[key].append(token)
    return {key: tuple(tokens) for key, tokens in table.items()}


_CONCEPTS = _build_concepts()


def _fold(text: str) -> str:
    # Accent folding keeps "café" one token instead of splitting it at the non-ASCII letter.
    if text.isascii():
        return text
    return "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))


def _expand_not(match: re.Match[str]) -> str:
    head = match.group(1)
    return " " + _NOT_FORMS[head.lower()] if head else " not"


def words(text: str) -> Iterator[str]:
    """Yield the lowercased words of ``text`` in order, before stopword removal and stemming."""
    text = _fold(text)
    if "'" in text or "’" in text:  # both patterns need one; the two passes cost ~25 µs a record
        text = _CLITIC.sub(" ", _NOT.sub(_expand_not, text))
    text = text.lower()
    for raw in _SPLIT.split(text):
        if not raw:
            continue
        if "-" not in raw and "_" not in raw:  # the common case: no compound to split
            yield raw
            continue
        parts = [part for part in _JOINERS.split(raw) if part]
        if len(parts) > 1 and all(part.isalpha() for part in parts):
            yield "".join(parts)
        yield from parts


def _word_terms(word: str) -> tuple[str, ...]:
    """The terms one (non-stopword) word yields; pure, so it is memoized."""
    if word.isdigit():
        return (word, WHEN_CUE) if _YEAR.match(word) else (word,)
    base = IRREGULAR_FORMS.get(word, word)
    term = base if any(ch.isdigit() for ch in base) else stem(base)
    out = (term, *_CONCEPTS.get(term, ()))
    return (*out, WHEN_CUE) if word in TIME_WORDS else out


# Analysis runs on every write and every query, and vocabularies are Zipfian: a bounded
# memo of word -> terms removes most of the stemming work. Cleared whole when full.
_MEMO: dict[str, tuple[str, ...]] = {}
_MEMO_MAX = 200_000


def _terms(tokens: Iterable[str], stop: frozenset[str]) -> Iterator[str]:
    memo = _MEMO
    for word in tokens:
        if len(word) < 2 or word in stop:
            continue
        terms = memo.get(word)
        if terms is None:
            if len(memo) >= _MEMO_MAX:
                memo.clear()
            terms = memo[word] = _word_terms(word)
        yield from terms


def index_terms(text: str) -> list[str]:
    """Return the index terms of ``text`` in order, repeated as often as they occur (term frequency)."""
    return list(_terms(words(text), STOPWORDS))


def query_terms(query_text: str | None, query_terms: Iterable[str] | None = None) -> list[str]:
    """Return the distinct terms of a recall query: normalised ``query_terms`` ∪ terms of ``query_text``.

    Question-form words ("what kind of", "mentioned") are dropped from the query, and a "when ..." question
    adds the :data:`WHEN_CUE` term. Order is first occurrence, explicit terms first, so it is deterministic.
    """
    stop = STOPWORDS | QUERY_STOPWORDS
    out: dict[str, None] = {}
    for item in query_terms or ():
        for term in _terms(words(item), stop):
            out.setdefault(term)
    if query_text:
        for term in _terms(words(query_text), stop):
            if term != WHEN_CUE:
                out.setdefault(term)
        # A cue only re-ranks matches, so a query of stopwords alone stays empty.
        if out and _WHEN_QUESTION.search(query_text):
            out.setdefault(WHEN_CUE)
    return list(out)


@dataclass(frozen=True, slots=True)
class AnalyzedRecord:
    """Per-term field frequencies of one record, ready to be written as postings.

    Attributes:
        fields: term → (tf in title, tf in body, tf in tags).
        length: total number of index terms over all fields (the BM25 document length).
    """

    fields: dict[str, tuple[int, int, int]]
    length: int


def _count_into(fields: dict[str, list[int]], text: str, slot: int) -> int:
    """Add the index terms of ``text`` to ``fields[term][slot]``; returns how many there were."""
    n = 0
    for term in _terms(words(text), STOPWORDS):
        counts = fields.get(term)
        if counts is None:
            counts = fields[term] = [0, 0, 0]
        counts[slot] += 1
        n += 1
    return n


def analyze_record(title: str, body: str, tags: Iterable[str] = ()) -> AnalyzedRecord:
    """Analyze a record's title, body and tags into the postings a :class:`TermIndex` stores.

    One pass per field into one table (this runs for every record the index takes in).
    """
    fields: dict[str, list[int]] = {}
    length = _count_into(fields, title, 0) + _count_into(fields, body, 1)
    joined = " ".join(tags)
    if joined:
        length += _count_into(fields, joined, 2)
    return AnalyzedRecord(
        fields={term: (c[0], c[1], c[2]) for term, c in sorted(fields.items())}, length=length
    )
