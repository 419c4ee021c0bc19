"""The recall index of one scope, read from a realm file: :class:`TermIndex` over SQL.

Each method is one indexed statement against the ``postings`` / ``scopes`` /
``records`` tables that :class:`~meta_memory.memory.sqlite.store.SqliteRealmStore`
maintains in every write transaction.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, cast

from ..recall.index import CollectionStats, Posting, TieKey

if TYPE_CHECKING:
    from .store import SqliteRealmStore

__all__ = ["SqliteTermIndex"]


def _marks(n: int) -> str:
    return ",".join("?" * n)


class SqliteTermIndex:
    """A :class:`~meta_memory.memory.recall.index.TermIndex` over one scope of a realm file."""

    def __init__(self, store: SqliteRealmStore, scope_id: int | None) -> None:
        self._store = store
        self._scope_id = scope_id

    def collection_stats(self) -> CollectionStats:
        if self._scope_id is None:
            return CollectionStats(0, 0)
        with self._store._lock:
            row = self._store._db.execute(
                "SELECT doc_count, total_len FROM scopes WHERE scope_id = ?", (self._scope_id,)
            ).fetchone()
        return CollectionStats(row[0], row[1]) if row else CollectionStats(0, 0)

    def document_frequencies(self, terms: Collection[str]) -> Mapping[str, int]:
        # Counted from the postings range itself (C-speed, no per-write df upkeep: a df table
        # would double the index's random page writes on every remember), and memoized per
        # scope until the next drain changes that scope's postings.
        if self._scope_id is None or not terms:
            return {}
        out: dict[str, int] = {}
        with self._store._lock:
            cache = self._store._df_cache.setdefault(self._scope_id, {})
            if len(cache) > 50_000:  # a bound, not an eviction policy: refill on demand
                cache.clear()
            db = self._store._db
            for term, term_id in self._store.lookup_term_ids(terms).items():
                df = cache.get(term_id)
                if df is None:
                    (df,) = db.execute(
                        "SELECT count(*) FROM postings WHERE scope_id = ? AND term_id = ?",
                        (self._scope_id, term_id),
                    ).fetchone()
                    cache[term_id] = df
                if df:
                    out[term] = df
        return out

    def _postings(
        self, terms: Collection[str], docs: Collection[int] | None
    ) -> Mapping[str, Sequence[Posting]]:
        if self._scope_id is None or not terms:
            return {}
        out: dict[str, list[Posting]] = {}
        with self._store._lock:
            ids = self._store.lookup_term_ids(terms)
            db = self._store._db
            for term, term_id in ids.items():
                sql = (
                    "SELECT doc, tf_title, tf_body, tf_tags, length FROM postings "
                    "WHERE scope_id = ? AND term_id = ?"
                )
                args: list[int] = [self._scope_id, term_id]
                if docs is not None:
                    sql += f" AND doc IN ({_marks(len(docs))})"
                    args.extend(docs)
                rows = db.execute(sql, args).fetchall()
                if rows:
                    # Rows already have Posting's shape; building NamedTuples per row costs more
                    # than the scoring loop that unpacks them.
                    out[term] = cast(list[Posting], rows)
        return out

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
        out: dict[int, Sequence[int]] = {}
        with self._store._lock:
            db = self._store._db
            for doc in docs:
                prev = db.execute(
                    "SELECT max(doc) FROM records WHERE scope_id = ? AND status = 'active' AND doc < ?",
                    (self._scope_id, doc),
                ).fetchone()[0]
                nxt = db.execute(
                    "SELECT min(doc) FROM records WHERE scope_id = ? AND status = 'active' AND doc > ?",
                    (self._scope_id, doc),
                ).fetchone()[0]
                out[doc] = [d for d in (prev, nxt) if d is not None]
        return out

    def tie_keys(self, docs: Collection[int]) -> Mapping[int, TieKey]:
        if self._scope_id is None or not docs:
            return {}
        with self._store._lock:
            rows = self._store._db.execute(
                f"SELECT doc, updated_at_ms, created_at_ms, id FROM records WHERE doc IN ({_marks(len(docs))})",
                list(docs),
            ).fetchall()
        return {doc: TieKey(updated, created, rid) for doc, updated, created, rid in rows}
