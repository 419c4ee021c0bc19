"""WAL checkpoints off the write path: one background thread per realm file.

SQLite's automatic checkpoint runs inside the commit that crosses the threshold, so one
remember in every hundred or so paid for copying a thousand pages into the database file
(about a third of the mean write cost, measured). The writer connection turns the automatic
checkpoint off and nudges this thread instead; the thread runs ``PASSIVE`` checkpoints on its
own connection, which copy committed pages without blocking the writer or readers and run in
SQLite's C code with the GIL released, on the other core. Durability is unchanged: a commit is
in the WAL before the reply either way; the checkpoint only moves it into the main file.

If the thread ever stops (or cannot keep up), :meth:`Checkpointer.nudge` falls back to a
``PASSIVE`` checkpoint on the writer's own connection once the WAL passes a hard bound, so the
WAL cannot grow without limit.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path

__all__ = ["Checkpointer"]

_log = logging.getLogger(__name__)

# Write transactions between nudges: the automatic checkpoint's 1,000 pages are 60-120
# transactions of a remember's size.
NUDGE_EVERY = 64
# The writer checkpoints inline after this many transactions without a completed background
# checkpoint (the thread died or is starved): the WAL's bound.
INLINE_AFTER = 4096


class Checkpointer:
    """Runs ``PRAGMA wal_checkpoint(PASSIVE)`` for one database file on a daemon thread."""

    def __init__(self, path: Path, *, busy_timeout_ms: int = 5000) -> None:
        self._path = path
        self._busy_timeout_ms = busy_timeout_ms
        self._wake = threading.Event()
        self._stop = False
        self._since_nudge = 0
        self._since_done = 0
        self._thread = threading.Thread(target=self._run, name=f"meta-checkpoint:{path.name}", daemon=True)
        self._thread.start()

    def nudge(self, writer: sqlite3.Connection) -> None:
        """Count one committed write transaction of ``writer`` (called under the writer's lock)."""
        self._since_nudge += 1
        self._since_done += 1
        if self._since_nudge >= NUDGE_EVERY:
            self._since_nudge = 0
            self._wake.set()
        if self._since_done >= INLINE_AFTER:
            self._since_done = 0
            try:
                writer.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            except sqlite3.Error as exc:  # pragma: no cover - I/O faults
                _log.warning("inline checkpoint of %s failed: %s", self._path, exc)

    def close(self) -> None:
        """Stop the thread and wait for it (the last connection's close checkpoints the rest)."""
        self._stop = True
        self._wake.set()
        self._thread.join(timeout=30)

    def _run(self) -> None:
        try:
            db = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:  # pragma: no cover - the writer opened the same file a moment ago
            _log.warning("checkpoint thread for %s cannot open it: %s", self._path, exc)
            return
        try:
            db.execute(f"PRAGMA busy_timeout = {self._busy_timeout_ms}")
            while True:
                self._wake.wait()
                self._wake.clear()
                if self._stop:
                    return
                try:
                    db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                    self._since_done = 0
                except sqlite3.Error as exc:  # pragma: no cover - I/O faults; the writer's bound remains
                    _log.warning("checkpoint of %s failed: %s", self._path, exc)
        finally:
            db.close()
