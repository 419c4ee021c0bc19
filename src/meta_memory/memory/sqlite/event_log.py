"""The embedded event log: the timeline's envelopes in ``event_log.sqlite3`` under the state dir.

One runtime holds the state dir, so this process assigns the sequence itself; nothing else
appends, so :meth:`SqliteEventLog.watch` has nothing to deliver.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...errors import StoreCorrupt
from ...events import envelope

__all__ = ["SqliteEventLog"]

log = logging.getLogger("meta_memory.timeline")


class SqliteEventLog:
    """An :class:`~meta_memory.timeline.EventLog` in one SQLite file (``None``: in memory only)."""

    def __init__(self, path: Path | None) -> None:
        target = str(path) if path is not None else ":memory:"
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(target, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = NORMAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY, identity TEXT NOT NULL, "
                "event_type TEXT NOT NULL, timestamp_ms INTEGER NOT NULL, data TEXT NOT NULL)"
            )
            (last,) = self._db.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()
        except sqlite3.DatabaseError as exc:
            log.error("event log %s cannot be opened: %s", target, exc)
            raise StoreCorrupt(f"event log {target} cannot be opened as an SQLite event log") from exc
        self._seq = int(last)

    def append(
        self, event_type: str, data: dict[str, Any], identity: str, timestamp_ms: int
    ) -> dict[str, Any]:
        with self._lock:
            self._seq += 1
            event = envelope(self._seq, event_type, data, identity, timestamp_ms)
            self._db.execute(
                "INSERT INTO events (seq, identity, event_type, timestamp_ms, data) VALUES (?, ?, ?, ?, ?)",
                (self._seq, identity, event_type, timestamp_ms, json.dumps(data, separators=(",", ":"))),
            )
            return event

    def after(self, seq: int, limit: int) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT seq, identity, event_type, timestamp_ms, data FROM events WHERE seq > ? ORDER BY seq LIMIT ?",
                (seq, limit),
            ).fetchall()
        return [envelope(s, kind, json.loads(data), identity, ts) for s, identity, kind, ts, data in rows]

    def prune(self, keep: int) -> None:
        with self._lock:
            self._db.execute("DELETE FROM events WHERE seq <= ?", (self._seq - keep,))

    def forget_identity(self, identity: str, realm: str) -> int:
        from .purge import rewrite

        with self._lock:
            deleted = self._db.execute(
                "DELETE FROM events WHERE identity = ? AND coalesce(json_extract(data, '$.realm'), ?) = ?",
                (identity, realm, realm),
            ).rowcount
            if deleted:
                rewrite(self._db, "event_log.sqlite3")
            return deleted

    def watch(self, deliver: Callable[[dict[str, Any]], None]) -> None:
        """Events appended by other processes: none (one runtime holds the state dir)."""

    def close(self) -> None:
        with self._lock:
            self._db.close()
