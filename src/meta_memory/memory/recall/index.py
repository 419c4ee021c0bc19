"""The storage seam of contextual recall: what the ranker reads for one scope, and an in-memory reference.

:class:`TermIndex` is the whole contract between :func:`~meta_memory.memory.recall.scorer.rank` and a store,
for the active records of ONE scope (an identity). Documents are integer ids that increase in creation order
within the scope. Every method is a batch read that one indexed SQL statement can answer (SQLite or
PostgreSQL), so a query costs a handful of round trips whatever its length. :class:`InMemoryTermIndex`
implements it over dicts for tests and the recall-quality benchmarks, and documents the intended semantics by
example.
"""

from __future__ import annotations

import bisect
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import NamedTuple, Protocol

from meta_memory.memory.recall.analyzer import analyze_record

__all__ = [
    "CollectionStats",
    "InMemoryTermIndex",
    "Opening",
    "Posting",
    "TermIndex",
    "TieKey",
    "compose_opening",
]


class Posting(NamedTuple):
    """One (term, document) entry: field term frequencies plus the document's length in index terms."""

    doc: int
    tf_title: int
    tf_body: int
    tf_tags: int
    length: int


class CollectionStats(NamedTuple):
    """Scope-wide BM25 statistics over active documents."""

    doc_count: int
    total_length: int


class TieKey(NamedTuple):
    """Order of equal scores: ``updated_at_ms`` desc, then ``created_at_ms`` desc, then ``record_id`` asc."""

    updated_at_ms: int
    created_at_ms: int
    record_id: str


class Opening(NamedTuple):
    """What a query reads first: the scope's statistics, each term's df, and the postings of the
    short lists the ranker reads in one batch (see :meth:`TermIndex.opening`)."""

    stats: CollectionStats
    dfs: Mapping[str, int]
    postings: Mapping[str, Sequence[Posting]]


class TermIndex(Protocol):
    """Read access to the term index of one scope (only its active records), as the ranker needs it.

    Suggested SQL layout: ``postings(scope, term, doc, tf_title, tf_body, tf_tags) WITHOUT ROWID`` with
    primary key ``(scope, term, doc)``; df counted from the postings range (or a ``term_df`` table);
    ``records(scope, doc, length, created_at_ms, updated_at_ms, id)`` with an index
    on ``(scope, doc)``; ``scope_stats(scope, doc_count,
    total_length)`` maintained on write.
    """

    def collection_stats(self) -> CollectionStats:
        """Return document count and summed length. O(1): one row of a per-scope counter table."""
        ...

    def opening(self, terms: Collection[str], prefetch: Collection[str], rare_floor: int) -> Opening:
        """The first reads of a query in one: :meth:`collection_stats`, :meth:`document_frequencies`
        of ``terms``, and :meth:`postings` of each ``prefetch`` term whose df is at most
        ``rare_floor`` (and not 0). A store whose every statement is a network round trip answers
        it in one; the others compose the three calls (:func:`compose_opening`)."""
        ...

    def document_frequencies(self, terms: Collection[str]) -> Mapping[str, int]:
        """Return df for each term present (absent terms may be omitted or 0).

        A ``count(*)`` over each term's ``(scope, term)`` postings range (or a df table): O(Σ df) in C.
        """
        ...

    def postings(self, terms: Collection[str]) -> Mapping[str, Sequence[Posting]]:
        """Return every posting of each term. The ranker only asks for terms with small df.

        One range scan per term on the ``(scope, term, doc)`` key, joined to ``records`` (primary key) for
        ``length`` (or with ``length`` denormalised into the postings row). Cost O(Σ df of the terms).
        """
        ...

    def postings_for_docs(
        self, terms: Collection[str], docs: Collection[int]
    ) -> Mapping[str, Sequence[Posting]]:
        """Return the postings of ``terms`` restricted to ``docs``; used to score common terms on candidates.

        One ``... WHERE scope=? AND term IN (...) AND doc IN (...)``: O(len(terms) × len(docs)) point lookups
        on the primary key, never a scan of a long posting list.
        """
        ...

    def neighbors(self, docs: Collection[int]) -> Mapping[int, Sequence[int]]:
        """Map each doc to its previous and next active doc in creation order (zero, one or two docs).

        One statement with two correlated ``MAX(doc) < d`` / ``MIN(doc) > d`` subqueries per doc on a
        ``(scope, doc)`` key: O(len(docs) × log N).
        """
        ...

    def tie_keys(self, docs: Collection[int]) -> Mapping[int, TieKey]:
        """Return the ordering key of each doc; asked only for the few docs that are returned.

        One ``SELECT ... FROM records WHERE scope=? AND doc IN (...)``: O(len(docs)) primary-key lookups.
        """
        ...


def compose_opening(
    index: TermIndex, terms: Collection[str], prefetch: Collection[str], rare_floor: int
) -> Opening:
    """:meth:`TermIndex.opening` from the index's other calls."""
    stats = index.collection_stats()
    if stats.doc_count <= 0:
        return Opening(stats, {}, {})
    dfs = index.document_frequencies(terms)
    rare = [t for t in prefetch if 0 < dfs.get(t, 0) <= rare_floor]
    return Opening(stats, dfs, index.postings(rare) if rare else {})


class InMemoryTermIndex:
    """A dict-backed :class:`TermIndex` over one scope, with ``add``/``remove`` of analyzed records."""

    def __init__(self) -> None:
        self._postings: dict[str, dict[int, Posting]] = {}
        self._doc_terms: dict[int, tuple[str, ...]] = {}
        self._keys: dict[int, TieKey] = {}
        self._lengths: dict[int, int] = {}
        self._order: list[int] = []
        self._total_length = 0

    def __len__(self) -> int:
        return len(self._doc_terms)

    def add(
        self,
        doc: int,
        *,
        title: str,
        body: str,
        tags: Iterable[str] = (),
        created_at_ms: int = 0,
        updated_at_ms: int | None = None,
        record_id: str | None = None,
    ) -> None:
        """Analyze and index a record as ``doc``, replacing any earlier version of the same doc."""
        if doc in self._doc_terms:
            self.remove(doc)
        analyzed = analyze_record(title, body, tags)
        for term, (tf_title, tf_body, tf_tags) in analyzed.fields.items():
            self._postings.setdefault(term, {})[doc] = Posting(
                doc, tf_title, tf_body, tf_tags, analyzed.length
            )
        self._doc_terms[doc] = tuple(analyzed.fields)
        self._lengths[doc] = analyzed.length
        self._total_length += analyzed.length
        self._keys[doc] = TieKey(
            created_at_ms if updated_at_ms is None else updated_at_ms,
            created_at_ms,
            record_id if record_id is not None else f"{doc:020d}",
        )
        bisect.insort(self._order, doc)

    def remove(self, doc: int) -> bool:
        """Drop ``doc`` from the index (a tombstone or supersede); return whether it was present."""
        terms = self._doc_terms.pop(doc, None)
        if terms is None:
            return False
        for term in terms:
            postings = self._postings[term]
            del postings[doc]
            if not postings:
                del self._postings[term]
        self._total_length -= self._lengths.pop(doc)
        del self._keys[doc]
        del self._order[bisect.bisect_left(self._order, doc)]
        return True

    def collection_stats(self) -> CollectionStats:
        return CollectionStats(len(self._doc_terms), self._total_length)

    def opening(self, terms: Collection[str], prefetch: Collection[str], rare_floor: int) -> Opening:
        return compose_opening(self, terms, prefetch, rare_floor)

    def document_frequencies(self, terms: Collection[str]) -> Mapping[str, int]:
        return {term: len(self._postings[term]) for term in terms if term in self._postings}

    def postings(self, terms: Collection[str]) -> Mapping[str, Sequence[Posting]]:
        return {term: list(self._postings[term].values()) for term in terms if term in self._postings}

    def postings_for_docs(
        self, terms: Collection[str], docs: Collection[int]
    ) -> Mapping[str, Sequence[Posting]]:
        out: dict[str, Sequence[Posting]] = {}
        for term in terms:
            postings = self._postings.get(term)
            if postings:
                # Probe from the smaller side, as a SQL planner would with the (term, doc) key.
                if len(docs) <= len(postings):
                    out[term] = [postings[d] for d in docs if d in postings]
                else:
                    out[term] = [p for d, p in postings.items() if d in docs]
        return out

    def neighbors(self, docs: Collection[int]) -> Mapping[int, Sequence[int]]:
        order = self._order
        out: dict[int, Sequence[int]] = {}
        for doc in docs:
            lo = bisect.bisect_left(order, doc)
            hi = bisect.bisect_right(order, doc)
            out[doc] = ([order[lo - 1]] if lo > 0 else []) + ([order[hi]] if hi < len(order) else [])
        return out

    def tie_keys(self, docs: Collection[int]) -> Mapping[int, TieKey]:
        return {doc: self._keys[doc] for doc in docs if doc in self._keys}
