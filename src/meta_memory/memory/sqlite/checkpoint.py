"""WAL checkpoints off the write path, on the shared upkeep thread.

SQLite's automatic checkpoint runs inside the commit that crosses the threshold, so one
remember in every hundred or so paid for copying a thousand pages into the database file
(about a third of the mean write cost, measured). The writer connection turns the automatic
checkpoint off and nudges this task instead; it runs ``PASSIVE`` checkpoints on a connection of
its own on the upkeep thread (upkeep.py), which copy committed pages without blocking the writer
or readers and run in SQLite's C code with the GIL released, on the other core. Durability is
unchanged: a commit is in the WAL before the reply either way; the checkpoint only moves it into
the main file.

If the task falls behind, :meth:`Checkpointer.nudge` falls back to a ``PASSIVE`` checkpoint on
the writer's own connection; once the WAL passes a hard bound the writer checkpoints it in
``RESTART`` mode itself, so the WAL cannot grow without limit.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

from .upkeep import UpkeepWorker

__all__ = ["Checkpointer"]

_log = logging.getLogger(__name__)

# Write transactions between nudges: the automatic checkpoint's 1,000 pages are 60-120
# transactions of a remember's size.
NUDGE_EVERY = 64
# The writer checkpoints inline after this many transactions without a completed background
# checkpoint (the thread died or is starved): the WAL's bound.
INLINE_AFTER = 4096
# A WAL this long (in pages: 32 MiB at the default page size) is checkpointed by the writer, so it
# restarts from its start.
RESTART_AFTER_FRAMES = 8192
# How long that checkpoint waits for readers to leave the WAL (a reader in another process
# preempted mid-read on a loaded machine), once per RESTART_AFTER_FRAMES pages at most.
RESTART_WAIT_MS = 50


class Checkpointer:
    """Runs ``PRAGMA wal_checkpoint(PASSIVE)`` for one database file as an upkeep task."""

    def __init__(
        self, path: Path, *, worker: UpkeepWorker | None = None, busy_timeout_ms: int = 5000
    ) -> None:
        self._path = path
        self._worker = worker or UpkeepWorker.shared()
        self._busy_timeout_ms = busy_timeout_ms
        self._db: sqlite3.Connection | None = None  # used on the upkeep thread only
        self._closed = False
        self._since_nudge = 0
        self._since_done = 0
        self._wal_long = False  # set by the background checkpoint, acted on by the writer

    def nudge(self, writer: sqlite3.Connection) -> None:
        """Count one committed write transaction of ``writer`` (called under the writer's lock)."""
        self._since_nudge += 1
        self._since_done += 1
        if self._since_nudge >= NUDGE_EVERY:
            self._since_nudge = 0
            self._worker.schedule(self)
        if self._wal_long or self._since_done >= INLINE_AFTER:
            # A checkpoint on the writer's own connection, between its transactions, leaves every
            # frame checkpointed when its next write begins, which is when SQLite restarts the
            # WAL from its start (if no reader is inside it then). The background checkpoints
            # run beside the writer, so with another process reading the file often (the
            # indexing process) that moment never came and the WAL grew without bound
            # (measured: 180 MB for 5,000 remembers). So the writer checkpoints in RESTART mode,
            # waiting up to RESTART_WAIT_MS for readers to leave the WAL, and if they do not, it
            # tries again at its next commit. A few ms, about once per RESTART_AFTER_FRAMES pages.
            self._since_done = 0
            try:
                if self._wal_long:
                    self._wal_long = self._restart(writer)
                else:
                    writer.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            except sqlite3.Error as exc:  # pragma: no cover - I/O faults
                self._wal_long = False
                _log.warning("inline checkpoint of %s failed: %s", self._path, exc)

    @staticmethod
    def _restart(writer: sqlite3.Connection) -> bool:
        """Checkpoint everything and wait (briefly) for readers to leave the WAL, so the next
        write restarts it from its start; returns whether readers kept it from restarting
        (then the writer tries again at its next commit). Measured before this waited: under
        load, a helper preempted mid-read made every attempt miss and the WAL passed 8 MiB
        where the bound was 1 MiB."""
        (previous,) = writer.execute("PRAGMA busy_timeout").fetchone()
        writer.execute(f"PRAGMA busy_timeout = {RESTART_WAIT_MS}")
        try:
            busy, _wal_frames, _done = writer.execute("PRAGMA wal_checkpoint(RESTART)").fetchone()
        finally:
            writer.execute(f"PRAGMA busy_timeout = {int(previous)}")
        return bool(busy)

    def run_upkeep(self) -> None:
        if self._closed:
            return
        try:
            if self._db is None:
                self._db = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)
                self._db.execute(f"PRAGMA busy_timeout = {self._busy_timeout_ms}")
            _busy, wal_frames, _done = self._db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            self._since_done = 0
            # See nudge(): the writer finishes the job when the WAL has grown long.
            self._wal_long = wal_frames >= RESTART_AFTER_FRAMES
        except sqlite3.Error as exc:  # pragma: no cover - I/O faults; the writer's bound remains
            _log.warning("checkpoint of %s failed: %s", self._path, exc)

    def close(self) -> None:
        """Stop checkpointing (the last connection's close checkpoints the rest)."""
        self._closed = True
        self._worker.cancel(self)
        if self._db is not None:
            self._db.close()
            self._db = None

    def __repr__(self) -> str:
        return f"Checkpointer({self._path.name})"
