"""The recall index of a set of scopes (one identity's own, and the shared scopes it reads), as one
:class:`TermIndex`.

Term statistics, postings and neighbours come from the realm's recall-index file
(recall_index.py), one scope at a time, and are added up: the ranker sees the union of the scopes'
active records as one collection (their document counts, lengths and document frequencies
summed), so a shared record competes with an identity's own on relevance alone. A document belongs
to one scope; its neighbours are those of its own scope. Tie-break keys come from the realm file's
``records``. Every method runs under the realm store's lock.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, cast

from ..recall.index import CollectionStats, Opening, Posting, TieKey, compose_opening

if TYPE_CHECKING:
    from .recall_index import PostingRow, RecallIndexFile
    from .store import SqliteRealmStore

__all__ = ["SqliteTermIndex"]


def _marks(n: int) -> str:
    return ",".join("?" * n)


class SqliteTermIndex:
    """A :class:`~meta_memory.memory.recall.index.TermIndex` over some scopes of a realm
    (``scope_ids``: those that hold a record; none is an empty index)."""

    def __init__(self, store: SqliteRealmStore, index: RecallIndexFile, scope_ids: Sequence[int]) -> None:
        self._store = store
        self._index = index
        self._scope_ids = tuple(scope_ids)
        # Over several scopes: the scope of each document a read of this index has seen.
        self._scope_of: dict[int, int] = {}

    def collection_stats(self) -> CollectionStats:
        count = total = 0
        with self._store._lock:
            for scope_id in self._scope_ids:
                n, length = self._index.collection_stats(scope_id)
                count, total = count + n, total + length
        return CollectionStats(count, total)

    def opening(self, terms: Collection[str], prefetch: Collection[str], rare_floor: int) -> Opening:
        return compose_opening(self, terms, prefetch, rare_floor)  # in-process reads: nothing to save

    def document_frequencies(self, terms: Collection[str]) -> Mapping[str, int]:
        if not self._scope_ids or not terms:
            return {}
        out: dict[str, int] = {}
        with self._store._lock:
            for scope_id in self._scope_ids:
                for term, df in self._index.document_frequencies(scope_id, terms).items():
                    out[term] = out.get(term, 0) + df
        return out

    def _postings(
        self, terms: Collection[str], docs: Sequence[int] | None
    ) -> Mapping[str, Sequence[Posting]]:
        if not self._scope_ids or not terms:
            return {}
        with self._store._lock:
            if len(self._scope_ids) == 1:
                # Rows already have Posting's shape; building NamedTuples per row costs more than
                # the scoring loop that unpacks them.
                found = self._index.postings(self._scope_ids, terms, docs)
                return cast(Mapping[str, Sequence[Posting]], found)
            if docs is None:
                return self._read_scope_by_scope(terms)
            return self._read_for_docs(terms, docs)

    def _read_scope_by_scope(self, terms: Collection[str]) -> Mapping[str, Sequence[Posting]]:
        """Whole posting lists, one scope at a time, noting which scope each document is in (the
        ranker's later reads for candidate documents then seek each in its own scope only).
        Concatenated, not merged: the ranker adds postings up in any order."""
        out: dict[str, list[PostingRow]] = {}
        scope_of = self._scope_of
        for scope_id in self._scope_ids:
            for term, rows in self._index.postings((scope_id,), terms, None).items():
                scope_of.update(dict.fromkeys([row[0] for row in rows], scope_id))
                out.setdefault(term, []).extend(rows)
        return cast(Mapping[str, Sequence[Posting]], out)

    def _read_for_docs(self, terms: Collection[str], docs: Sequence[int]) -> Mapping[str, Sequence[Posting]]:
        by_scope: dict[int, list[int]] = {}
        unplaced: list[int] = []
        for doc in docs:
            scope_id = self._scope_of.get(doc)
            if scope_id is None:
                unplaced.append(doc)
            else:
                by_scope.setdefault(scope_id, []).append(doc)
        out: dict[str, list[PostingRow]] = {}
        reads: list[tuple[Sequence[int], list[int]]] = [
            ((scope_id,), own) for scope_id, own in by_scope.items()
        ]
        if unplaced:  # not seen by a read of this index yet: looked for in every scope
            reads.append((self._scope_ids, unplaced))
        for scope_ids, own in reads:
            for term, rows in self._index.postings(scope_ids, terms, own).items():
                out.setdefault(term, []).extend(rows)
        return cast(Mapping[str, Sequence[Posting]], out)

    def postings(self, terms: Collection[str]) -> Mapping[str, Sequence[Posting]]:
        return self._postings(terms, None)

    def postings_for_docs(
        self, terms: Collection[str], docs: Collection[int]
    ) -> Mapping[str, Sequence[Posting]]:
        if not docs:
            return {}
        return self._postings(terms, list(docs))

    def neighbors(self, docs: Collection[int]) -> Mapping[int, Sequence[int]]:
        if not self._scope_ids or not docs:
            return {}
        with self._store._lock:
            if len(self._scope_ids) == 1:
                # From the index file (its scope_docs), so the realm file needs no (scope, doc)
                # index of its own: one b-tree fewer for every remember to write.
                return self._index.neighbors(self._scope_ids[0], docs)
            # Each document's neighbours in its own scope (a neighbour is in its doc's scope).
            by_scope: dict[int, list[int]] = {}
            unplaced = [doc for doc in docs if doc not in self._scope_of]
            if unplaced:
                found = self._store._db.execute(
                    f"SELECT doc, scope_id FROM records WHERE doc IN ({_marks(len(unplaced))})", unplaced
                ).fetchall()
                self._scope_of.update((int(doc), int(scope_id)) for doc, scope_id in found)
            for doc in docs:
                scope_id = self._scope_of.get(doc)
                if scope_id in self._scope_ids:
                    by_scope.setdefault(scope_id, []).append(doc)
            out: dict[int, Sequence[int]] = {}
            for scope_id, own in by_scope.items():
                near = self._index.neighbors(scope_id, own)
                for found_near in near.values():
                    self._scope_of.update(dict.fromkeys(found_near, scope_id))
                out.update(near)
        return out

    def tie_keys(self, docs: Collection[int]) -> Mapping[int, TieKey]:
        if not self._scope_ids or not docs:
            return {}
        with self._store._lock:
            rows = self._store._db.execute(
                f"SELECT doc, updated_at_ms, created_at_ms, id FROM records WHERE doc IN ({_marks(len(docs))})",
                list(docs),
            ).fetchall()
        return {doc: TieKey(updated, created, rid) for doc, updated, created, rid in rows}
