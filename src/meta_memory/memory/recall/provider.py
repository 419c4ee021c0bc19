"""The recall-provider seam: how the runtime asks for records, and the bundled lexical provider.

A provider receives the raw ``query_text`` and the caller's ``query_terms`` untouched, so a semantic or hybrid
provider can plug in without changing the runtime. The bundled :class:`LexicalRecallProvider` ranks over the
store's term index.

A query names the scopes it reads (an identity's own first, then the shared scopes the identity
reads): one ranking serves them all, over their union as one collection.

Contextual recall scores what it returns (:meth:`LexicalRecallProvider.recall_scored`): each
record's relevance to the query in [0, 1], never rising down the list; lexical recall's is the
record's BM25 score over the query's best. ``always`` recall scores nothing (``None``).

A query's ``tags`` restrict recall to the records carrying every one of them, inside the recall and before
its ``max_entries`` cut: ``always`` reads them in the store's query, and contextual recall ranks only them
(the scope's BM25 statistics unchanged, so the tagged records keep the order they have among all records).
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ..records import Record, Scope, Status
from .analyzer import query_terms as analyze_query
from .index import CollectionStats, Opening, Posting, TermIndex, TieKey
from .scorer import rank

if TYPE_CHECKING:
    from ..store import RealmStore

__all__ = [
    "LexicalRecallProvider",
    "RecallProvider",
    "RecallQuery",
    "Scored",
    "only_docs",
    "recall_scored",
    "relative",
]

Scored = tuple[Record, float | None]
"""A recalled record and its score (``None``: ``always`` recall, which ranks by recency)."""


@dataclass(frozen=True)
class RecallQuery:
    scopes: tuple[Scope, ...]  # the identity's own scope, then the shared scopes it reads
    selection: str  # "always" | "contextual"
    query_text: str | None
    query_terms: tuple[str, ...]
    max_entries: int
    tags: tuple[str, ...] = ()  # only records carrying every one of them (normalized)
    # Automatic injection: a provider whose extra half fails (an embedder) answers with the lexical
    # ranking rather than nothing; explicit recall reports the failure.
    lexical_fallback: bool = False
    # The time expiry is judged at (Unix ms): a record whose ``expires_at_ms`` has come is never
    # returned. None: the wall clock.
    now_ms: int | None = None

    def live(self, record: Record) -> bool:
        """Whether ``record`` may be returned: active and not expired."""
        if record.status is not Status.ACTIVE:
            return False
        return record.expires_at_ms is None or record.expires_at_ms > (
            self.now_ms if self.now_ms is not None else int(time.time() * 1000)
        )


class RecallProvider(Protocol):
    def recall(self, store: RealmStore, query: RecallQuery) -> list[Record]:
        """Active records of ``query.scopes`` carrying every tag of ``query.tags``, best first, at
        most ``query.max_entries``."""
        ...


def recall_scored(provider: RecallProvider, store: RealmStore, query: RecallQuery) -> list[Scored]:
    """``provider``'s records, each with its score in [0, 1], never rising down the list (``None``
    for ``always`` recall): the provider's ``recall_scored`` when it has one (the bundled ones
    do) and does not override ``recall`` below it (a subclass that reranks), else its records
    unscored."""
    cls = type(provider)
    owner = next((c for c in cls.__mro__ if "recall_scored" in vars(c)), None)
    if owner is None or getattr(cls, "recall", None) is not getattr(owner, "recall", None):
        return [(record, None) for record in provider.recall(store, query)]
    scored: list[Scored] = provider.recall_scored(store, query)  # type: ignore[attr-defined]
    return scored


def recall_reporting(
    provider: RecallProvider, store: RealmStore, query: RecallQuery
) -> tuple[list[Scored], bool | None]:
    """:func:`recall_scored`, and whether the provider's vectors missed records acknowledged
    before the recall (its ``vectors_behind``; ``None`` for a provider without vectors): the
    provider's ``recall_reporting`` when it has one (it reads both at once) and a subclass
    overrides none of ``recall``, ``recall_scored`` and ``vectors_behind`` below it, else each
    asked in turn."""
    cls = type(provider)
    owner = next((c for c in cls.__mro__ if "recall_reporting" in vars(c)), None)
    if owner is not None and all(
        getattr(cls, name, None) is getattr(owner, name, None) for name in _REPORTED
    ):
        reported: tuple[list[Scored], bool | None] = provider.recall_reporting(store, query)  # type: ignore[attr-defined]
        return reported
    probe = getattr(provider, "vectors_behind", None)
    behind: bool | None = probe(store, 0.0) if probe is not None else None
    return recall_scored(provider, store, query), behind


_REPORTED = ("recall", "recall_scored", "vectors_behind")


class LexicalRecallProvider:
    """Contextual recall over the realm store's term index; ``always`` = newest first."""

    def recall(self, store: RealmStore, query: RecallQuery) -> list[Record]:
        return [record for record, _ in self.recall_scored(store, query)]

    def recall_scored(self, store: RealmStore, query: RecallQuery) -> list[Scored]:
        if query.selection == "always":
            newest = store.newest_active(query.scopes, query.max_entries, query.tags)
            return [(r, None) for r in newest if query.live(r)]
        terms = analyze_query(query.query_text, list(query.query_terms))
        if not terms:
            return []
        allowed = store.tagged_docs(query.scopes, query.tags) if query.tags else None
        if allowed is not None and not allowed:
            return []
        wanted = set(query.tags)
        out: list[Scored] = []
        limit, fetched = query.max_entries, 0
        seen: set[int] = set()
        while True:
            with store.reading_index(query.scopes) as index:
                ranked = index if allowed is None else _OnlyDocs(index, allowed)
                hits = rank(ranked, terms, limit)
            # A record that drops out at the fetch (expired by the query's time and not swept yet,
            # forgotten or retagged since the ranking) is not returned: the ranking is read again
            # deeper (each a prefix of the next) until the places are filled or it has no more.
            # (A write between two reads can shift the places: a record is never answered twice.)
            fresh = [(doc, score) for doc, score in relative(hits)[fetched:] if doc not in seen]
            by_doc = store.records_by_doc([doc for doc, _ in fresh])
            for doc, score in fresh:
                seen.add(doc)
                record = by_doc.get(doc)
                if record is not None and query.live(record) and wanted.issubset(record.tags):
                    out.append((record, score))
                    if len(out) == query.max_entries:
                        return out
            if len(hits) < limit:
                return out
            fetched, limit = len(hits), 4 * limit


def relative(hits: Sequence[tuple[int, float]]) -> list[tuple[int, float]]:
    """Best-first ``(doc, score)`` with each score over the best (the first scores 1), rounded to
    six places."""
    if not hits:
        return []
    best = max(hits[0][1], 1e-12)
    return [(doc, round(max(0.0, score) / best, 6)) for doc, score in hits]


def only_docs(index: TermIndex, allowed: Collection[int]) -> TermIndex:
    """``index`` restricted to ``allowed`` documents, under the scope's statistics."""
    return _OnlyDocs(index, allowed)


class _OnlyDocs:
    """A term index that holds only ``allowed`` of another's documents, under the other's scope
    statistics (document count, lengths, document frequencies): ranking it ranks those documents
    exactly as among all of them, and the ranker's cut applies to them alone."""

    def __init__(self, index: TermIndex, allowed: Collection[int]) -> None:
        self._index = index
        self._allowed = frozenset(allowed)

    def _only(self, postings: Mapping[str, Sequence[Posting]]) -> dict[str, Sequence[Posting]]:
        allowed = self._allowed
        return {term: [p for p in rows if p[0] in allowed] for term, rows in postings.items()}

    def collection_stats(self) -> CollectionStats:
        return self._index.collection_stats()

    def opening(self, terms: Collection[str], prefetch: Collection[str], rare_floor: int) -> Opening:
        opening = self._index.opening(terms, prefetch, rare_floor)
        return Opening(opening.stats, opening.dfs, self._only(opening.postings))

    def document_frequencies(self, terms: Collection[str]) -> Mapping[str, int]:
        return self._index.document_frequencies(terms)

    def postings(self, terms: Collection[str]) -> Mapping[str, Sequence[Posting]]:
        return self._only(self._index.postings(terms))

    def postings_for_docs(
        self, terms: Collection[str], docs: Collection[int]
    ) -> Mapping[str, Sequence[Posting]]:
        kept = [d for d in docs if d in self._allowed]
        return self._index.postings_for_docs(terms, kept) if kept else {}

    def neighbors(self, docs: Collection[int]) -> Mapping[int, Sequence[int]]:
        allowed = self._allowed
        return {doc: [n for n in near if n in allowed] for doc, near in self._index.neighbors(docs).items()}

    def tie_keys(self, docs: Collection[int]) -> Mapping[int, TieKey]:
        return self._index.tie_keys(docs)
