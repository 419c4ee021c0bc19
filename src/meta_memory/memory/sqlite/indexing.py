"""Upkeep of a realm file's recall index: which records are indexed, and applying the backlog.

The index (``postings``, one row per scope, term and active record, plus the per-scope
``doc_count`` / ``total_len`` of ``scopes``) is derived data, kept behind the writes:

- **New records** cost nothing at write time. ``store_meta.indexed_upto`` is a watermark over
  ``records.doc`` (creation order): every record at or below it is indexed exactly when it is
  active; records above it are the backlog, indexed by status when it is applied.
- **Records leaving ``active``** at or below the watermark append a ``remove`` to
  ``index_queue`` in the write's own transaction (``add`` rows are still honoured for files
  written by earlier releases).

:meth:`IndexBacklog.apply` brings the index up to date inside a write transaction: queued
operations in order, then the new records in one sorted batch. The store applies it before
any read of the index (a record is recallable as soon as ``remember`` returns), inline once the
backlog grows long, and in quiet spells by :class:`BackgroundIndexer` on the shared upkeep thread; because the
backlog is rows in the same file, a crash loses none of it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ..recall.analyzer import AnalyzedRecord, analyze_record
from .upkeep import UpkeepWorker

if TYPE_CHECKING:
    from .store import SqliteRealmStore

__all__ = ["WATERMARK_KEY", "BackgroundIndexer", "IndexBacklog", "backlog_size", "read_watermark"]

WATERMARK_KEY = "indexed_upto"

# (doc, scope_id, analysis) of one record to add to the index.
Analyzed = tuple[int, int, AnalyzedRecord]


def read_watermark(db: sqlite3.Connection) -> int:
    row = db.execute("SELECT value FROM store_meta WHERE key = ?", (WATERMARK_KEY,)).fetchone()
    return int(row[0]) if row else 0


def _write_watermark(db: sqlite3.Connection, doc: int) -> None:
    db.execute(
        "INSERT INTO store_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (WATERMARK_KEY, str(doc)),
    )


def backlog_size(db: sqlite3.Connection) -> int:
    """Queued operations plus active records above the watermark (what the next apply does)."""
    watermark = read_watermark(db)
    (queued,) = db.execute("SELECT count(*) FROM index_queue").fetchone()
    (new,) = db.execute(
        "SELECT count(*) FROM records WHERE doc > ? AND status = 'active'", (watermark,)
    ).fetchone()
    return int(queued) + int(new)


def analyze_rows(rows: Iterable[tuple[int, int, str, str, str]]) -> list[Analyzed]:
    """Analyze ``(doc, scope_id, title, body, tags_json)`` rows (pure: no database access)."""
    return [
        (doc, scope_id, analyze_record(title, body, json.loads(tags)))
        for doc, scope_id, title, body, tags in rows
    ]


class IndexBacklog:
    """Applies one realm file's recall-index backlog; owned by its :class:`SqliteRealmStore`."""

    def __init__(self, store: SqliteRealmStore) -> None:
        self._store = store

    def note_removal(self, db: sqlite3.Connection, doc: int) -> bool:
        """An active record at ``doc`` left ``active``: queue its unindexing if it was indexed
        (returns whether it was; above the watermark there is nothing to undo)."""
        if doc > read_watermark(db):
            return False
        db.execute("INSERT INTO index_queue (doc, op) VALUES (?, 'remove')", (doc,))
        return True

    def apply(self, db: sqlite3.Connection, limit: int | None = None) -> int:
        """Bring the index up to date inside the caller's write transaction; returns the work done.

        ``limit``: take in at most this many new records (by ``doc``), so a long backlog can be
        applied in short transactions; queued removals are always applied whole.
        """
        watermark = read_watermark(db)
        done = 0
        queue = db.execute(
            "SELECT q.seq, q.doc, q.op, r.scope_id, r.title, r.body, r.tags "
            "FROM index_queue q JOIN records r ON r.doc = q.doc ORDER BY q.seq"
        ).fetchall()
        for _seq, doc, op, scope_id, title, body, tags in queue:
            if doc > watermark:
                continue  # never indexed: the pass below reads its status now
            analysis = analyze_record(title, body, json.loads(tags))
            if op == "add":
                self._insert(db, [(doc, scope_id, analysis)])
            else:
                self._delete(db, doc, scope_id, analysis)
            done += 1
        if queue:
            db.execute("DELETE FROM index_queue WHERE seq <= ?", (queue[-1][0],))
        upto = db.execute("SELECT max(doc) FROM records").fetchone()[0] or 0
        if limit is not None:
            upto = min(upto, watermark + limit)
        if upto > watermark:
            batch = analyze_rows(
                db.execute(
                    "SELECT doc, scope_id, title, body, tags FROM records "
                    "WHERE doc > ? AND doc <= ? AND status = 'active'",
                    (watermark, upto),
                )
            )
            self._insert(db, batch)
            _write_watermark(db, upto)
            done += len(batch)
        return done

    def _insert(self, db: sqlite3.Connection, batch: Sequence[Analyzed]) -> None:
        if not batch:
            return
        store = self._store
        term_id = store._term_id
        rows: list[tuple[int, int, int, int, int, int, int]] = []
        deltas: dict[int, list[int]] = {}
        for doc, scope_id, analysis in batch:
            length = analysis.length
            for term, (tf_title, tf_body, tf_tags) in analysis.fields.items():
                rows.append((scope_id, term_id(term), doc, tf_title, tf_body, tf_tags, length))
            delta = deltas.setdefault(scope_id, [0, 0])
            delta[0] += 1
            delta[1] += length
        rows.sort()  # key order: each b-tree page is visited once per batch
        db.executemany(
            "INSERT INTO postings (scope_id, term_id, doc, tf_title, tf_body, tf_tags, length) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        db.executemany(
            "UPDATE scopes SET doc_count = doc_count + ?, total_len = total_len + ? WHERE scope_id = ?",
            [(count, length, scope_id) for scope_id, (count, length) in deltas.items()],
        )
        for scope_id in deltas:
            store._df_cache.pop(scope_id, None)

    def _delete(self, db: sqlite3.Connection, doc: int, scope_id: int, analysis: AnalyzedRecord) -> None:
        # Postings are keyed (scope, term, doc): the doc's terms come from re-analyzing its text.
        ids = self._store.lookup_term_ids(analysis.fields)
        db.executemany(
            "DELETE FROM postings WHERE scope_id = ? AND term_id = ? AND doc = ?",
            [(scope_id, term_id, doc) for term_id in ids.values()],
        )
        db.execute(
            "UPDATE scopes SET doc_count = doc_count - 1, total_len = total_len - ? WHERE scope_id = ?",
            (analysis.length, scope_id),
        )
        self._store._df_cache.pop(scope_id, None)


class BackgroundIndexer:
    """Applies a realm file's deferred upkeep, as an upkeep task, while the realm is quiet.

    Agents write in bursts: a turn stores a few records, then the realm is idle for seconds.
    Once no write or recall has come for :attr:`QUIET_S`, this task applies the index backlog in
    short transactions (:attr:`CHUNK` records each, rescheduling itself between them so other
    realms' upkeep runs too), so the next recall finds the index up to date instead of paying
    for it, and writes back pending usage counters. Under sustained load it stays out of the way
    (one interpreter: competing with the request thread would slow both); the store's inline
    thresholds bound the backlog then, and every read applies what remains first, so
    read-your-writes always holds.
    """

    CHUNK = 64
    QUIET_S = 0.02

    def __init__(self, store: SqliteRealmStore, *, worker: UpkeepWorker | None = None) -> None:
        self._store = store
        self._worker = worker or UpkeepWorker.shared()
        self._closed = False

    def nudge(self) -> None:
        """There is (more) deferred work: look again once the realm may be quiet."""
        if not self._closed:
            self._worker.schedule(self, self.QUIET_S)

    def close(self) -> None:
        self._closed = True
        self._worker.cancel(self)

    def run_upkeep(self) -> None:
        store = self._store
        if self._closed or not (store.backlog() or store.pending_usage()):
            return
        quiet = store.quiet_for()
        if quiet < self.QUIET_S:
            self._worker.schedule(self, self.QUIET_S - quiet)
            return
        if store.backlog():
            store.apply_backlog(self.CHUNK)
        else:
            store.flush_usage()
        if store.backlog() or store.pending_usage():
            self._worker.schedule(self)  # the next chunk, after whatever else is due

    def __repr__(self) -> str:
        return f"BackgroundIndexer({self._store.path.name})"
