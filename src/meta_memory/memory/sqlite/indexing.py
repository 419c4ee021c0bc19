"""Keeping a realm's recall index just behind the realm store's writes.

:class:`IndexKeeper` is the store's side of its recall-index file (recall_index.py): it counts
the work each write leaves (a new active record, or a queued removal), hands it to the indexing
process when there is one (index_worker.py), catches the index up itself otherwise (inline
once the backlog is long), and prunes applied removals from the realm file's queue. Every read
of the index catches it up first (read-your-writes). New records enter the index's fresh tier
(recall_index.py); the keeper also sees that it is merged: on quiet, when it is full, or when
recalls find it long (:meth:`IndexKeeper.after_read`).

Agents write in bursts. When a realm has had no write or recall for a moment,
:class:`BackgroundIndexer` (a task on the shared upkeep thread, upkeep.py) catches the index up
in short transactions and then merges the fresh tier in paced chunks (:class:`MergePacer`), or,
when an indexing process builds the index, watches it do so, nudging it again if need be, then
prunes the queue; either way it writes back the pending usage counters (usage.py).
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ...errors import StoreCorrupt
from ..upkeep import UpkeepWorker
from .recall_index import RecallIndexFile

if TYPE_CHECKING:
    from .store import SqliteRealmStore

__all__ = ["BackgroundIndexer", "IndexKeeper", "IndexWorkerLink", "fresh_overflow"]

_log = logging.getLogger(__name__)

INDEX_FLUSH_THRESHOLD = 512
# With an indexing process, writes look at the real backlog only this often: the process
# normally keeps up, and the inline catch-up is the bound for when it does not.
WORKER_CHECK_EVERY = 4096
WORKER_NUDGE_GAP_S = 0.01
CATCH_UP_CHUNK = 8192  # new records per index transaction when catching up a long backlog
# A backlog longer than this is a rebuild (a lost or reset index file of a large realm, about
# 15 s of work here): reads and writes do not wait for it; the indexing process, or the
# quiet-time task, catches the index up while recall serves what it has indexed so far.
REBUILD_AFTER = 50_000
EXACT_BACKLOG_UPTO = 10_000
REBUILD_WARN_EVERY_S = 30.0
# The fresh tier (recall_index.py) takes new records cheaply; merging them into the postings is
# the expensive part, cheapest in large batches and best done while the realm is quiet: after
# MERGE_QUIET_S without a write, in transactions of at most MERGE_CHUNK records (MergePacer), or,
# under sustained writes, whenever a catch-up leaves FRESH_MAX records or more (fresh_overflow).
# Readers scan a scope's fresh records per recall, so FRESH_MAX also bounds that.
MERGE_QUIET_S = 0.25
MERGE_CHUNK = 512
FRESH_MAX = 4096
# A recall that finds this many fresh records in its scope asks for the fresh tier to be merged
# without waiting for quiet (reads scan a scope's fresh records: about 3 us each, per recall,
# here), at most once per MERGE_REQUEST_GAP_S.
READS_MERGE_AT = 256
MERGE_REQUEST_GAP_S = 1.0
# Merges in quiet spells or on request are sized to hold the index file's write lock for about
# this long (see MergePacer), and take at least MERGE_CHUNK_MIN records.
MERGE_TARGET_S = 0.1
MERGE_CHUNK_MIN = 32


def fresh_overflow(size: int) -> int:
    """How many records to merge at once, after a catch-up, from a fresh tier of ``size``: none
    below FRESH_MAX, else MERGE_CHUNK beyond the excess. A catch-up may take in up to
    FRESH_BATCH_MAX records (a batch write, an import); merging only MERGE_CHUNK after each let
    the tier grow without bound: 272,467 records after building the benchmark's fixture in
    batches of 1,000."""
    return 0 if size < FRESH_MAX else size - FRESH_MAX + MERGE_CHUNK


class MergePacer:
    """Sizes merge transactions to take about MERGE_TARGET_S each, at most ``most`` records.

    A merge holds the index file's write lock, so a read that must catch the index up first
    waits for it, and what a record costs to merge grows with the index (measured here: 0.3 ms
    a record into a 20,000-record index in chunks of 1,024; 0.6-0.8 ms into a 1,000,000-record
    one, where 512 records held the lock for 0.4 s). Each full chunk sizes the next from how
    long it took.
    """

    def __init__(self, most: int) -> None:
        self.most = most
        self.chunk = most

    def merge(self, index: RecallIndexFile) -> tuple[int, bool]:
        """Merge one chunk; returns (records moved, whether the fresh tier is now empty)."""
        asked = self.chunk
        started = time.monotonic()
        moved = index.merge(asked)
        if moved < asked:
            return moved, True
        took = max(time.monotonic() - started, 1e-3)
        self.chunk = max(MERGE_CHUNK_MIN, min(self.most, int(moved * MERGE_TARGET_S / took)))
        return moved, False


class IndexWorkerLink(Protocol):
    """How a store asks an indexing process (index_worker.py) to catch its index file up."""

    def nudge(self, realm_path: Path) -> bool:
        """Ask for a catch-up of ``realm_path``'s index soon; False if no process can take it."""
        ...

    def request_merge(self, realm_path: Path) -> bool:
        """Ask for ``realm_path``'s fresh tier to be merged now; False if no process can take it."""
        ...

    def listen(self, realm_path: Path, embedded: Callable[[], None]) -> None:
        """Have ``embedded`` called (on another thread) each time the process has embedded
        ``realm_path``'s records up to its newest."""
        ...

    def unlisten(self, realm_path: Path, embedded: Callable[[], None]) -> None:
        """Stop calling ``embedded`` for ``realm_path`` (if it is still the one listening)."""
        ...


class IndexKeeper:
    """One realm store's recall index: its file, its backlog, and who catches it up.

    Used under the store's lock, on the store's connection, outside its write transactions
    unless a method says otherwise.
    """

    def __init__(
        self, store: SqliteRealmStore, index: RecallIndexFile, worker: IndexWorkerLink | None
    ) -> None:
        self._store = store
        self._db = store._db
        self.index = index
        self._worker = worker
        # Writes since the index was last known to be caught up (with a worker: an upper bound).
        self.pending = self._backlog_now()
        (self._queued,) = self._db.execute("SELECT count(*) FROM index_queue").fetchone()
        self._nudged_at = -1.0  # monotonic time of the last nudge, and whether the helper took it
        self._worker_took_it = False
        self._active_at = time.monotonic()  # the last write that left work, or recall
        self._warned_at = -REBUILD_WARN_EVERY_S
        self._merge_requested_at = -MERGE_REQUEST_GAP_S
        self._pacer = MergePacer(BackgroundIndexer.MERGE_CHUNK)
        self.merge_now = False  # a read asked for a merge (inline: the quiet-time task need not wait)
        self._quiet_task = BackgroundIndexer(store, self)
        # Whether the fresh tier may hold records that no one is yet due to merge (left by an
        # earlier run, or by this store's own catch-ups); the quiet-time task sees to them.
        self.unmerged = index.fresh_size() > 0
        if self.pending or self.unmerged:
            self._quiet_task.nudge()

    # -- inside a write transaction -------------------------------------------------------------

    def grew(self) -> None:
        """Count one new active record for the index to take in."""
        self._active_at = time.monotonic()
        self.pending += 1

    def queue_removal(self, db: sqlite3.Connection, doc: int) -> None:
        """An active record left ``active``: queue its removal. Always queued: whether the index
        took it in yet is the index's to know (another process may be indexing it right now)."""
        db.execute("INSERT INTO index_queue (doc, op) VALUES (?, 'remove')", (doc,))
        self._queued += 1
        self.grew()

    # -- after a commit, and on reads -----------------------------------------------------------

    def after_commit(self, *, first: bool) -> None:
        """A committed write left index work: hand it on, or do it once the backlog is long.
        ``first``: the index was current before it (the quiet-time task starts watching)."""
        if self._worker is not None:
            now = time.monotonic()
            # At most one nudge per WORKER_NUDGE_GAP_S: the helper takes in everything committed
            # by the time it looks (so under sustained writes it applies batches of a few dozen
            # records, not one transaction per record), and the quiet-time task nudges again for
            # whatever came after the last nudge.
            if now - self._nudged_at >= WORKER_NUDGE_GAP_S:
                self._nudged_at = now
                self._worker_took_it = self._worker.nudge(self._store.path)
            if self._worker_took_it:
                if self.pending >= WORKER_CHECK_EVERY:
                    self.pending = self._backlog_now()  # what the process left
                    if self.pending >= INDEX_FLUSH_THRESHOLD:
                        self._catch_up_after_write()
                if first:
                    self._quiet_task.nudge()  # quiet-time upkeep: re-nudge, prune the queue
                return
        if first:
            self._quiet_task.nudge()
        if self.pending >= INDEX_FLUSH_THRESHOLD:
            self._catch_up_after_write()

    def _catch_up_after_write(self) -> None:
        # The write is committed and acknowledged whatever happens here: a failure leaves backlog.
        try:
            self.catch_up_unless_rebuilding()
        except (sqlite3.Error, StoreCorrupt) as exc:  # pragma: no cover - I/O faults
            _log.warning("recall index of %s could not catch up: %s", self._store.path, exc)

    def catch_up_unless_rebuilding(self) -> None:
        """Before the index is read (read-your-writes), and after a write that brought the backlog
        to the inline threshold: catch the index up, unless it is so far behind (a rebuild) that
        doing it here would hold the realm for many seconds; then the background is asked to do
        it, and a warning (at most every REBUILD_WARN_EVERY_S) says recall is incomplete meanwhile."""
        new, removals = self.index.lag(self._db)
        if new > REBUILD_AFTER:
            self._rebuild_in_background(new)
        elif new or removals:
            self._catch_up_all()
        else:
            self.pending = 0

    def _rebuild_in_background(self, behind: int) -> None:
        now = time.monotonic()
        if now - self._warned_at >= REBUILD_WARN_EVERY_S:
            self._warned_at = now
            _log.warning(
                "recall index of %s is rebuilding (up to %d records behind): recall finds only what "
                "it has indexed until it catches up",
                self._store.path,
                behind,
            )
        if self._worker is None or not self._worker.nudge(self._store.path):
            self._quiet_task.nudge()

    def catch_up(self, limit: int | None) -> int:
        """Catch the index file up (at most ``limit`` new records); an index the indexing
        process already caught up costs four small reads. Returns the records it touched."""
        if not self.index.behind(self._db):
            self.pending = 0
            return 0
        if limit is None:
            return self._catch_up_all()
        done = self.index.catch_up(self._db, limit)
        self.pending = self._backlog_now()
        self.prune_queue()
        self._caught_up_into_fresh()
        return done

    def _catch_up_all(self) -> int:
        # In transactions of CATCH_UP_CHUNK records: a whole rebuild (a lost index file of a large
        # realm) must not hold every posting of the realm in memory at once.
        index, db = self.index, self._db
        done = index.catch_up(db, CATCH_UP_CHUNK)
        while index.behind(db):
            if done >= CATCH_UP_CHUNK and done % (CATCH_UP_CHUNK * 16) < CATCH_UP_CHUNK:
                _log.info("recall index of %s: %d records caught up so far", self._store.path, done)
            done += index.catch_up(db, CATCH_UP_CHUNK)
        self.pending = 0
        self.prune_queue()
        self._caught_up_into_fresh()
        return done

    def _caught_up_into_fresh(self) -> None:
        """After a catch-up: its new records may wait in the fresh tier. A full tier is merged
        back below its bound here (the bound under writes that never pause: fresh_overflow);
        otherwise the merge waits for a quiet spell."""
        self.unmerged = True
        overflow = fresh_overflow(self.index.fresh_size())
        if overflow:
            self.index.merge(overflow)

    def merge(self, limit: int) -> int:
        """Merge up to ``limit`` fresh records into the postings; returns how many it moved."""
        moved = self.index.merge(limit)
        if moved < limit:
            self.unmerged = self.merge_now = False
        return moved

    def merge_paced(self) -> None:
        """The quiet-time task's merge: one chunk sized by :class:`MergePacer` (it holds the
        store's lock: in a library runtime, every call waits for it)."""
        with self._store._lock:
            if self._pacer.merge(self.index)[1]:
                self.unmerged = self.merge_now = False

    def _backlog_now(self) -> int:
        """The backlog: exact while short; past EXACT_BACKLOG_UPTO the cheap upper bound (the
        exact count reads every record above the watermark: a rebuild of a large realm would
        pay that for each of its chunks)."""
        bound = sum(self.index.lag(self._db))
        return bound if bound > EXACT_BACKLOG_UPTO else self.index.backlog(self._db)

    def prune_queue(self) -> None:
        """Drop the realm file's queued removals the index has applied."""
        db = self._db
        if not self._queued or db.in_transaction:
            return
        applied = self.index.marks()[1]
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute("DELETE FROM index_queue WHERE seq <= ?", (applied,))
            (self._queued,) = db.execute("SELECT count(*) FROM index_queue").fetchone()
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def after_read(self) -> None:
        """After a recall: if reads are scanning a long fresh tier, have it merged soon, by the
        indexing process or else the quiet-time task, without waiting for a quiet spell."""
        if self.index.fresh_seen < READS_MERGE_AT:
            return
        now = time.monotonic()
        if now - self._merge_requested_at < MERGE_REQUEST_GAP_S:
            return
        self._merge_requested_at = now
        if self._worker is None or not self._worker.request_merge(self._store.path):
            self.unmerged = self.merge_now = True
            self._quiet_task.nudge()

    def touched(self) -> None:
        """A recall: the realm is not quiet; look again (for usage counters) once it is."""
        self._active_at = time.monotonic()
        self._quiet_task.nudge()

    def quiet_for(self) -> float:
        return time.monotonic() - self._active_at

    # -- in quiet spells (the upkeep thread) -----------------------------------------------------

    def has_worker(self) -> bool:
        return self._worker is not None

    def hand_merge_to_worker(self) -> bool:
        """With an indexing process, in a quiet spell: ask it to merge what this store's own
        catch-ups left in the fresh tier (it merges whatever it indexed itself unasked).
        False if no process can take it (then the quiet-time task merges inline)."""
        if self._worker is None or not self._worker.nudge(self._store.path):
            return False
        self.unmerged = False
        return True

    def behind_worker(self, chunk: int) -> bool:
        """With an indexing process, in a quiet spell: whether the index is still behind. Once
        it has caught up the queue is pruned; while it is behind the process is nudged again (a
        nudge may have been dropped), or, if no process can take it, ``chunk`` records are
        caught up here."""
        with self._store._lock:
            if not self.index.behind(self._db):
                self.pending = 0
                self.prune_queue()
                return False
        if self._worker is None or not self._worker.nudge(self._store.path):
            self._store.apply_backlog(chunk)
        return True

    def close(self) -> None:
        """Stop the quiet-time task (the store closes the index file with its own connection)."""
        self._quiet_task.close()


class BackgroundIndexer:
    """Applies a realm file's deferred upkeep, as an upkeep task, while the realm is quiet.

    Agents write in bursts: a turn stores a few records, then the realm is idle for seconds.
    Once no write or recall has come for :attr:`QUIET_S`, this task applies the index backlog in
    short transactions (:attr:`CHUNK` records each, rescheduling itself between them so other
    realms' upkeep runs too), so the next recall finds the index up to date instead of paying
    for it, and writes back pending usage counters. Under sustained load it stays out of the way
    (one interpreter: competing with the request thread would slow both); the store's inline
    thresholds bound the backlog then, and every read applies what remains first, so
    read-your-writes always holds. Once the backlog is applied and the realm has been quiet for
    MERGE_QUIET_S (or a recall asked), it merges the fresh tier, a paced chunk per run. With an
    indexing process it only watches the process catch up (nudging it again, or taking a chunk
    itself if no process can), hands it what the store's own catch-ups left in the fresh tier,
    then prunes the queue.
    """

    CHUNK = 64
    QUIET_S = 0.02
    # At most this many fresh records per merge transaction here (MergePacer sizes them): inline,
    # a merge holds the store's lock.
    MERGE_CHUNK = 256

    def __init__(
        self, store: SqliteRealmStore, keeper: IndexKeeper, *, worker: UpkeepWorker | None = None
    ) -> None:
        self._store = store
        self._keeper = keeper
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
        store, keeper = self._store, self._keeper
        if self._closed or not (store.backlog() or store.pending_usage() or keeper.unmerged):
            return
        quiet = store.quiet_for()
        if quiet < self.QUIET_S:
            self._worker.schedule(self, self.QUIET_S - quiet)
            return
        if keeper.has_worker():
            # The indexing process applies the backlog; once it has, drop what it applied.
            store.flush_usage()
            if store.backlog() and keeper.behind_worker(self.CHUNK):
                self._worker.schedule(self, self.QUIET_S)
                return
            if not keeper.unmerged or keeper.hand_merge_to_worker():
                return
        if store.backlog():
            store.apply_backlog(self.CHUNK)
        else:
            store.flush_usage()
        if store.backlog() or store.pending_usage():
            self._worker.schedule(self)  # the next chunk, after whatever else is due
        elif keeper.unmerged:
            if quiet < MERGE_QUIET_S and not keeper.merge_now:
                self._worker.schedule(self, MERGE_QUIET_S - quiet)
            else:
                keeper.merge_paced()
                if keeper.unmerged:
                    self._worker.schedule(self)

    def __repr__(self) -> str:
        return f"BackgroundIndexer({self._store.path.name})"
