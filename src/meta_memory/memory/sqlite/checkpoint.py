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
``RESTART`` mode itself, so the WAL cannot grow without limit (see :meth:`Checkpointer._restart`).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path

from ...storage.layout import StateLayout
from ..upkeep import UpkeepWorker

__all__ = ["WAL_KEEP_BYTES", "Checkpointer", "configure_writer", "truncate_wal"]

_log = logging.getLogger(__name__)

# Write transactions between nudges: the automatic checkpoint's 1,000 pages are 60-120
# transactions of a remember's size.
NUDGE_EVERY = 64
# The writer checkpoints inline after this many transactions without a completed background
# checkpoint (the thread died or is starved).
INLINE_AFTER = 4096
# The WAL's bound in bytes: a WAL file longer than it is a WAL that has not restarted since it
# passed the bound; the writer looks every WAL_CHECK_EVERY transactions (a stat of the file: 17-27
# us at the median here between writes, though 4.5 us in a loop of its own).
WAL_LIMIT_BYTES = 32 << 20
# What a restarted WAL is cut back to (the writer's ``journal_size_limit``): the WAL restarts every
# few hundred writes once checkpoints keep up, so a WAL kept at WAL_LIMIT_BYTES was most of a
# 20,000-record realm's bytes on disk (1,700 a record, benchmarks/hybrid.py).
WAL_KEEP_BYTES = 4 << 20
WAL_CHECK_EVERY = 32
# How long the writer's RESTART checkpoint waits for readers to leave the WAL (a reader in
# another process preempted mid-read on a loaded machine). When they do not, the writer tries
# again after RETRY_FIRST transactions, then twice as many each time up to RETRY_MOST, so a reader
# that holds a snapshot for long costs a write 50 ms only that rarely.
RESTART_WAIT_MS = 50
# Seconds without a write after which the upkeep thread truncates the WAL, and the longest it
# waits before trying again when a reader was in the way.
QUIET_S = 2.0
QUIET_MOST_S = 60.0
RETRY_FIRST = 8
RETRY_MOST = 1024


def truncate_wal(db: sqlite3.Connection, busy_timeout_ms: int) -> bool:
    """Checkpoint ``db``'s WAL and cut it to nothing, if nobody is in the way: busy timeout 0 while
    it runs, so a reader or a writer makes it give up at once (and ``busy_timeout_ms`` after).
    Whether it did."""
    db.execute("PRAGMA busy_timeout = 0")
    try:
        row = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    except sqlite3.OperationalError:  # locked: the writer was in the way
        return False
    finally:
        db.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    return row is not None and row[0] == 0


def configure_writer(writer: sqlite3.Connection) -> None:
    """Set up the writer's connection for this module: no checkpoint inside a commit, and a
    restarted WAL cut back to WAL_KEEP_BYTES."""
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    writer.execute(f"PRAGMA journal_size_limit = {WAL_KEEP_BYTES}")


class Checkpointer:
    """Runs ``PRAGMA wal_checkpoint(PASSIVE)`` for one database file as an upkeep task, and
    bounds its WAL from the writer's side."""

    def __init__(
        self, path: Path, *, worker: UpkeepWorker | None = None, busy_timeout_ms: int = 5000
    ) -> None:
        self._path = path
        self._wal = StateLayout.sqlite_sidecars(path)[0]
        self._worker = worker or UpkeepWorker.shared()
        self._busy_timeout_ms = busy_timeout_ms
        self._db: sqlite3.Connection | None = None  # used on the upkeep thread only
        self._closed = False
        self._since_nudge = 0
        self._since_done = 0
        self._until_check = WAL_CHECK_EVERY
        self._retry_gap = RETRY_FIRST
        self._written = 0  # write transactions counted (read on the upkeep thread: a plain int)
        self._written_at_look = 0
        self._looking = False  # a quiet look is scheduled
        self._quiet_gap = QUIET_S
        # Held by the upkeep thread's checkpoints and by the writer's restart, which would fail at
        # once beside one (see _restart).
        self._checkpointing = threading.Lock()

    def nudge(self, writer: sqlite3.Connection) -> None:
        """Count one committed write transaction of ``writer`` (called under the writer's lock)."""
        self._since_nudge += 1
        self._since_done += 1
        self._written += 1
        if not self._looking:  # the first write since the last quiet look: look after it
            self._looking = True
            self._worker.schedule(self, QUIET_S)
        if self._since_nudge >= NUDGE_EVERY:
            self._since_nudge = 0
            self._worker.schedule(self)
        self._until_check -= 1
        try:
            if self._until_check <= 0:
                self._until_check = WAL_CHECK_EVERY
                if self._wal_too_long():
                    self._restart(writer)
            elif self._since_done >= INLINE_AFTER:
                self._since_done = 0
                writer.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        except (OSError, sqlite3.Error) as exc:  # pragma: no cover - I/O faults
            _log.warning("inline checkpoint of %s failed: %s", self._path, exc)

    def _wal_too_long(self) -> bool:
        return self._wal_longer_than(WAL_LIMIT_BYTES)

    def _wal_longer_than(self, size: int) -> bool:
        try:
            return self._wal.stat().st_size > size
        except FileNotFoundError:
            return False

    def _restart(self, writer: sqlite3.Connection) -> None:
        """Checkpoint the whole WAL and wait (briefly) for readers to leave it, so the writer's
        next write restarts it from its start, cut back to WAL_KEEP_BYTES.

        The background checkpoints run beside the writer, so with another process reading the
        file often (the indexing process) the moment SQLite needs to restart the WAL (every
        frame checkpointed, no reader inside) never came, and the WAL grew without bound
        (measured: 180 MB for 5,000 remembers). Measured before this waited: under load, a
        helper preempted mid-read made every attempt miss. Before the writer looked at the
        file's length itself, it learned that the WAL was long from the background checkpoint,
        which a loaded machine runs late: a WAL bounded at 1 MiB reached 4.4 MB here, and
        10 MB on a loaded CI machine.
        """
        # The upkeep thread's checkpoint first: beside it SQLite gives the restart up at once, and
        # with checkpoints nudged every NUDGE_EVERY transactions a quick writer met one nearly every
        # time (68 restarts given up for 6 done in 2,400 remembers, the WAL at 18 MB against a
        # 1 MiB bound).
        if not self._checkpointing.acquire(timeout=RESTART_WAIT_MS / 1000):
            return  # still running: the next look comes after WAL_CHECK_EVERY transactions
        (previous,) = writer.execute("PRAGMA busy_timeout").fetchone()
        writer.execute(f"PRAGMA busy_timeout = {RESTART_WAIT_MS}")
        try:
            busy, wal_frames, _done = writer.execute("PRAGMA wal_checkpoint(RESTART)").fetchone()
        finally:
            writer.execute(f"PRAGMA busy_timeout = {int(previous)}")
            self._checkpointing.release()
        self._since_done = 0
        if busy and wal_frames >= 0:  # readers stayed: look again later, less often the longer they stay
            self._until_check = self._retry_gap
            self._retry_gap = min(self._retry_gap * 2, RETRY_MOST)
        elif not busy:
            self._retry_gap = RETRY_FIRST
        # else another checkpoint was running (the upkeep thread's, most likely): SQLite gives up
        # at once then, reporting -1 frames; the next look comes after WAL_CHECK_EVERY as usual.
        # Backing off for it instead, a writer missed the WAL's restart for 1,000 transactions.

    def run_upkeep(self) -> None:
        if self._closed:
            return
        try:
            if self._db is None:
                self._db = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)
                self._db.execute(f"PRAGMA busy_timeout = {self._busy_timeout_ms}")
            with self._checkpointing:
                self._db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            self._since_done = 0
            self._when_quiet()
        except sqlite3.Error as exc:  # pragma: no cover - I/O faults; the writer's bound remains
            _log.warning("checkpoint of %s failed: %s", self._path, exc)

    def _when_quiet(self) -> None:
        """After a burst, cut the WAL back to nothing: a WAL only shrinks when a writer restarts it,
        so the one a burst left (up to WAL_LIMIT_BYTES) stayed on disk while the realm was idle.
        Once no write came for QUIET_S, one ``TRUNCATE`` checkpoint that waits for nobody (busy
        timeout 0: a reader or the writer in the way makes it give up; it is tried again later,
        twice as long after each miss up to QUIET_MOST_S); until then, look again every QUIET_S.
        The first write after a look schedules the next, so a burst of any size is followed by one."""
        assert self._db is not None
        self._looking = False  # before reading the count: a write from now on schedules a look
        if self._written != self._written_at_look:
            self._written_at_look = self._written
            self._looking = True
            self._worker.schedule(self, QUIET_S)
            return
        if not self._wal_longer_than(0):
            return
        with self._checkpointing:
            truncated = truncate_wal(self._db, self._busy_timeout_ms)
        if truncated:
            self._quiet_gap = QUIET_S
        else:  # a reader or the writer was in the way
            self._looking = True
            self._worker.schedule(self, self._quiet_gap)
            self._quiet_gap = min(self._quiet_gap * 2, QUIET_MOST_S)

    def close(self) -> None:
        """Stop checkpointing (the last connection's close checkpoints the rest)."""
        self._closed = True
        self._worker.cancel(self)
        if self._db is not None:
            self._db.close()
            self._db = None

    def __repr__(self) -> str:
        return f"Checkpointer({self._path.name})"
