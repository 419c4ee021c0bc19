"""The recall index of a set of scopes in PostgreSQL (one identity's own, and the shared scopes it
reads), as one :class:`~meta_memory.memory.recall.index.TermIndex`.

Every method is one indexed statement on the connection of the caller's read snapshot (the
store's ``reading_index``): postings by ``(scope_id, term, doc)`` for each of the scopes, read from
the key alone (its payload rides in it), statistics from ``scope_stats`` summed over the scopes
(so the ranker sees their union as one collection: a shared record competes with an identity's own
on relevance alone), neighbours within each document's own scope and tie-break keys from
``records`` (looked up by document through its primary key, whatever the planner's estimates).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, cast

import psycopg

from ..recall.index import CollectionStats, Opening, Posting, TieKey
from ..records import Record
from .columns import RECORD_COLUMNS

__all__ = ["HELD_FLOOR", "PostgresTermIndex"]

# The opening reads (and holds) every query term's postings up to this df: a round trip here costs
# more than a few hundred rows.
HELD_FLOOR = 512


class PostgresTermIndex:
    """The postings of some scopes (``scope_ids``: those that hold a record; none is an empty
    index).

    ``begin``: the statement that opens the read snapshot; it goes out with the first query,
    not a round trip ahead of it. ``decode`` turns record rows into records: :meth:`tie_keys`
    reads the few documents it orders as whole records, kept in :attr:`records` for the
    caller that fetches them next (the store's ``records_by_doc``).
    """

    def __init__(
        self,
        conn: psycopg.Connection,
        scope_ids: Sequence[int],
        *,
        begin: str | None = None,
        decode: Callable[[Sequence[Sequence[Any]]], list[Record]] | None = None,
    ) -> None:
        self._conn = conn
        self._scopes = list(scope_ids)
        self._begin = begin
        self._decode = decode
        self.records: dict[int, Record] = {}
        self._held: dict[str, list[tuple[int, int, int, int, int]]] = {}

    def _rows(self, sql: str, args: Any) -> list[tuple[Any, ...]]:
        if self._begin is None:
            return self._conn.execute(sql, args).fetchall()
        begin, self._begin = self._begin, None
        with self._conn.pipeline():
            self._conn.execute(begin)
            return self._conn.execute(sql, args).fetchall()

    def collection_stats(self) -> CollectionStats:
        if not self._scopes:
            return CollectionStats(0, 0)
        rows = self._rows(
            "SELECT coalesce(sum(doc_count), 0)::bigint, coalesce(sum(total_len), 0)::bigint FROM scope_stats "
            "WHERE scope_id = ANY(%s)",
            (self._scopes,),
        )
        return CollectionStats(int(rows[0][0]), int(rows[0][1])) if rows else CollectionStats(0, 0)

    def opening(self, terms: Collection[str], prefetch: Collection[str], rare_floor: int) -> Opening:
        """One statement: the scope's statistics (a row of kind 0), each term's df (kind 1), and
        the postings (kind 2) of every query term whose list is at most :data:`HELD_FLOOR` long.
        The opening returns those the protocol asks for (``prefetch`` terms up to
        ``rare_floor``); the rest are held, and the ranker's later reads of them (in full, or
        for candidate documents) are answered from memory instead of another round trip, with
        the same rows the statement would have returned."""
        if not self._scopes or not terms:
            return Opening(self.collection_stats(), {}, {})
        rows = self._rows(
            "WITH df AS (SELECT term, count(*) AS n FROM postings WHERE scope_id = ANY(%(scopes)s) "
            "AND term = ANY(%(terms)s) GROUP BY term) "
            "SELECT 0, NULL, coalesce(sum(doc_count), 0)::bigint, coalesce(sum(total_len), 0)::bigint, 0, 0, 0 FROM scope_stats "
            "WHERE scope_id = ANY(%(scopes)s) "
            "UNION ALL SELECT 1, term, n, 0, 0, 0, 0 FROM df "
            "UNION ALL SELECT 2, p.term, p.doc, p.tf_title, p.tf_body, p.tf_tags, p.length FROM postings p "
            "JOIN df ON df.term = p.term AND df.n <= %(floor)s WHERE p.scope_id = ANY(%(scopes)s)",
            {"scopes": self._scopes, "terms": list(terms), "floor": max(rare_floor, HELD_FLOOR)},
        )
        stats = CollectionStats(0, 0)
        dfs: dict[str, int] = {}
        held: dict[str, list[tuple[int, int, int, int, int]]] = {}
        for kind, term, a, b, c, d, e in rows:
            if kind == 2:
                held.setdefault(term, []).append((a, b, c, d, e))
            elif kind == 1:
                dfs[term] = int(a)
            else:
                stats = CollectionStats(int(a), int(b))
        for found in held.values():
            found.sort()  # by doc, as postings() returns them
        self._held = held
        wanted = {t: held[t] for t in prefetch if t in held and dfs[t] <= rare_floor}
        # Rows already have Posting's shape (the ranker unpacks them positionally).
        return Opening(stats, dfs, cast(Mapping[str, Sequence[Posting]], wanted))

    def document_frequencies(self, terms: Collection[str]) -> Mapping[str, int]:
        if not self._scopes or not terms:
            return {}
        rows = self._rows(
            "SELECT term, count(*) FROM postings WHERE scope_id = ANY(%s) AND term = ANY(%s) GROUP BY term",
            (self._scopes, list(terms)),
        )
        return {term: int(n) for term, n in rows}

    def _postings(
        self, terms: Collection[str], docs: Collection[int] | None
    ) -> Mapping[str, Sequence[Posting]]:
        if not self._scopes or not terms:
            return {}
        if docs is None:
            sql = (
                "SELECT term, doc, tf_title, tf_body, tf_tags, length FROM postings WHERE scope_id = ANY(%s) "
                "AND term = ANY(%s) ORDER BY term, doc"
            )
            args: list[object] = [self._scopes, list(terms)]
        else:
            # Joined, not ``doc = ANY(...)``: that tests each row of a long list against the whole
            # array, where a join hashes the candidates once.
            sql = (
                "SELECT p.term, p.doc, p.tf_title, p.tf_body, p.tf_tags, p.length FROM postings p "
                "JOIN unnest(%s::bigint[]) AS d(doc) ON p.doc = d.doc WHERE p.scope_id = ANY(%s) "
                "AND p.term = ANY(%s) ORDER BY p.term, p.doc"
            )
            args = [list(docs), self._scopes, list(terms)]
        out: dict[str, list[tuple[int, int, int, int, int]]] = {}
        for term, doc, a, b, c, length in self._rows(sql, args):
            out.setdefault(term, []).append((doc, a, b, c, length))
        # Rows already have Posting's shape (the ranker unpacks them positionally).
        return cast(Mapping[str, Sequence[Posting]], out)

    def postings(self, terms: Collection[str]) -> Mapping[str, Sequence[Posting]]:
        out = {t: self._held[t] for t in terms if t in self._held}
        rest = [t for t in terms if t not in self._held]
        if rest:
            out.update(self._postings(rest, None))  # type: ignore[arg-type]
        return cast(Mapping[str, Sequence[Posting]], out)

    def postings_for_docs(
        self, terms: Collection[str], docs: Collection[int]
    ) -> Mapping[str, Sequence[Posting]]:
        if not docs:
            return {}
        wanted = docs if isinstance(docs, (set, frozenset)) else set(docs)
        out: dict[str, Sequence[Posting]] = {}
        for term in terms:
            if term in self._held:
                found = [p for p in self._held[term] if p[0] in wanted]
                if found:
                    out[term] = cast(Sequence[Posting], found)
        rest = [t for t in terms if t not in self._held]
        if rest:
            out.update(self._postings(rest, docs))
        return out

    def neighbors(self, docs: Collection[int]) -> Mapping[int, Sequence[int]]:
        if not self._scopes or not docs:
            return {}
        if len(self._scopes) == 1:
            rows = self._rows(
                "SELECT d, (SELECT max(doc) FROM records WHERE scope_id = %(s)s AND status = 'active' AND doc < d), "
                "(SELECT min(doc) FROM records WHERE scope_id = %(s)s AND status = 'active' AND doc > d) "
                "FROM unnest(%(docs)s::bigint[]) AS d",
                {"s": self._scopes[0], "docs": list(docs)},
            )
        else:  # each document's neighbours in its own scope
            rows = self._rows(
                "SELECT x.doc, (SELECT max(r.doc) FROM records r WHERE r.scope_id = x.scope_id "
                "AND r.status = 'active' AND r.doc < x.doc), (SELECT min(r.doc) FROM records r "
                "WHERE r.scope_id = x.scope_id AND r.status = 'active' AND r.doc > x.doc) "
                "FROM unnest(%(docs)s::bigint[]) AS d(doc) JOIN records x ON x.doc = d.doc "
                "WHERE x.scope_id = ANY(%(scopes)s)",
                {"scopes": self._scopes, "docs": list(docs)},
            )
        return {int(d): [n for n in (before, after) if n is not None] for d, before, after in rows}

    def tie_keys(self, docs: Collection[int]) -> Mapping[int, TieKey]:
        if not self._scopes or not docs:
            return {}
        if self._decode is None:
            rows = self._rows(
                "SELECT r.doc, r.updated_at_ms, r.created_at_ms, r.id FROM unnest(%s::bigint[]) AS d(doc) "
                "JOIN records r ON r.doc = d.doc",
                (list(docs),),
            )
            return {int(doc): TieKey(updated, created, rid) for doc, updated, created, rid in rows}
        # The documents a ranking orders are the ones it returns: read them whole, once.
        rows = self._rows(
            f"SELECT {RECORD_COLUMNS} FROM unnest(%s::bigint[]) AS d(doc) JOIN records r ON r.doc = d.doc",
            (list(docs),),
        )
        for row, record in zip(rows, self._decode(rows), strict=True):
            self.records[int(row[0])] = record
        return {
            doc: TieKey(r.updated_at_ms, r.created_at_ms, r.id)
            for doc, r in self.records.items()
            if doc in docs
        }
