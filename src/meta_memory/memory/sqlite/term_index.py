"""The recall index of one scope, as a :class:`TermIndex`.

Term statistics, postings and neighbours come from the realm's recall-index file
(recall_index.py); tie-break keys from the realm file's ``records``. Every method runs under the
realm store's lock.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, cast

from ..recall.index import CollectionStats, Opening, Posting, TieKey, compose_opening

if TYPE_CHECKING:
    from .recall_index import RecallIndexFile
    from .store import SqliteRealmStore

__all__ = ["SqliteTermIndex"]


def _marks(n: int) -> str:
    return ",".join("?" * n)


class SqliteTermIndex:
    """A :class:`~meta_memory.memory.recall.index.TermIndex` over one scope of a realm."""

    def __init__(self, store: SqliteRealmStore, index: RecallIndexFile, scope_id: int | None) -> None:
        self._store = store
        self._index = index
        self._scope_id = scope_id

    def collection_stats(self) -> CollectionStats:
        if self._scope_id is None:
            return CollectionStats(0, 0)
        with self._store._lock:
            return CollectionStats(*self._index.collection_stats(self._scope_id))

    def opening(self, terms: Collection[str], prefetch: Collection[str], rare_floor: int) -> Opening:
        return compose_opening(self, terms, prefetch, rare_floor)  # in-process reads: nothing to save

    def document_frequencies(self, terms: Collection[str]) -> Mapping[str, int]:
        if self._scope_id is None or not terms:
            return {}
        with self._store._lock:
            return self._index.document_frequencies(self._scope_id, terms)

    def _postings(
        self, terms: Collection[str], docs: Sequence[int] | None
    ) -> Mapping[str, Sequence[Posting]]:
        if self._scope_id is None or not terms:
            return {}
        with self._store._lock:
            # Rows already have Posting's shape; building NamedTuples per row costs more than the
            # scoring loop that unpacks them.
            return cast(Mapping[str, Sequence[Posting]], self._index.postings(self._scope_id, terms, docs))

    def postings(self, terms: Collection[str]) -> Mapping[str, Sequence[Posting]]:
        return self._postings(terms, None)

    def postings_for_docs(
        self, terms: Collection[str], docs: Collection[int]
    ) -> Mapping[str, Sequence[Posting]]:
        if not docs:
            return {}
        return self._postings(terms, list(docs))

    def neighbors(self, docs: Collection[int]) -> Mapping[int, Sequence[int]]:
        if self._scope_id is None or not docs:
            return {}
        with self._store._lock:
            # From the index file (its scope_docs), so the realm file needs no (scope, doc) index
            # of its own: one b-tree fewer for every remember to write.
            return self._index.neighbors(self._scope_id, docs)

    def tie_keys(self, docs: Collection[int]) -> Mapping[int, TieKey]:
        if self._scope_id is None or not docs:
            return {}
        with self._store._lock:
            rows = self._store._db.execute(
                f"SELECT doc, updated_at_ms, created_at_ms, id FROM records WHERE doc IN ({_marks(len(docs))})",
                list(docs),
            ).fetchall()
        return {doc: TieKey(updated, created, rid) for doc, updated, created, rid in rows}
