"""The recall index of one scope in PostgreSQL, as a :class:`~meta_memory.memory.recall.index.TermIndex`.

Every method is one indexed statement on the connection of the caller's read snapshot (the
store's ``reading_index``): postings by ``(scope_id, term, doc)``, statistics from
``scope_stats``, neighbours and tie-break keys from ``records``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import cast

import psycopg

from ..recall.index import CollectionStats, Posting, TieKey

__all__ = ["PostgresTermIndex"]


class PostgresTermIndex:
    """The postings of one scope (``scope_id=None``: a scope with no record, an empty index)."""

    def __init__(self, conn: psycopg.Connection, scope_id: int | None) -> None:
        self._conn = conn
        self._scope_id = scope_id

    def collection_stats(self) -> CollectionStats:
        if self._scope_id is None:
            return CollectionStats(0, 0)
        row = self._conn.execute(
            "SELECT doc_count, total_len FROM scope_stats WHERE scope_id = %s", (self._scope_id,)
        ).fetchone()
        return CollectionStats(int(row[0]), int(row[1])) if row else CollectionStats(0, 0)

    def document_frequencies(self, terms: Collection[str]) -> Mapping[str, int]:
        if self._scope_id is None or not terms:
            return {}
        rows = self._conn.execute(
            "SELECT term, count(*) FROM postings WHERE scope_id = %s AND term = ANY(%s) GROUP BY term",
            (self._scope_id, list(terms)),
        ).fetchall()
        return {term: int(n) for term, n in rows}

    def _postings(
        self, terms: Collection[str], docs: Collection[int] | None
    ) -> Mapping[str, Sequence[Posting]]:
        if self._scope_id is None or not terms:
            return {}
        sql = (
            "SELECT term, doc, tf_title, tf_body, tf_tags, length FROM postings WHERE scope_id = %s "
            "AND term = ANY(%s)"
        )
        args: list[object] = [self._scope_id, list(terms)]
        if docs is not None:
            sql += " AND doc = ANY(%s)"
            args.append(list(docs))
        out: dict[str, list[tuple[int, int, int, int, int]]] = {}
        for term, doc, a, b, c, length in self._conn.execute(sql + " ORDER BY term, doc", args):
            out.setdefault(term, []).append((doc, a, b, c, length))
        # Rows already have Posting's shape (the ranker unpacks them positionally).
        return cast(Mapping[str, Sequence[Posting]], out)

    def postings(self, terms: Collection[str]) -> Mapping[str, Sequence[Posting]]:
        return self._postings(terms, None)

    def postings_for_docs(
        self, terms: Collection[str], docs: Collection[int]
    ) -> Mapping[str, Sequence[Posting]]:
        if not docs:
            return {}
        return self._postings(terms, docs)

    def neighbors(self, docs: Collection[int]) -> Mapping[int, Sequence[int]]:
        if self._scope_id is None or not docs:
            return {}
        rows = self._conn.execute(
            "SELECT d, (SELECT max(doc) FROM records WHERE scope_id = %s AND status = 'active' AND doc < d), "
            "(SELECT min(doc) FROM records WHERE scope_id = %s AND status = 'active' AND doc > d) "
            "FROM unnest(%s::bigint[]) AS d",
            (self._scope_id, self._scope_id, list(docs)),
        ).fetchall()
        return {int(d): [n for n in (before, after) if n is not None] for d, before, after in rows}

    def tie_keys(self, docs: Collection[int]) -> Mapping[int, TieKey]:
        if self._scope_id is None or not docs:
            return {}
        rows = self._conn.execute(
            "SELECT doc, updated_at_ms, created_at_ms, id FROM records WHERE doc = ANY(%s)", (list(docs),)
        ).fetchall()
        return {int(doc): TieKey(updated, created, rid) for doc, updated, created, rid in rows}
