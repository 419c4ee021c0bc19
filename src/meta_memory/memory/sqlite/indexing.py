"""Quiet-time upkeep of a realm file: its recall-index backlog, queue and usage counters.

Agents write in bursts. When a realm has had no write or recall for a moment,
:class:`BackgroundIndexer` (a task on the shared upkeep thread, upkeep.py) catches the recall
index (recall_index.py) up in short transactions, or, when an indexing process builds the
index (index_worker.py), leaves that to it and only prunes the applied removals from the realm
file's queue; either way it writes back the pending usage counters (usage.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .upkeep import UpkeepWorker

if TYPE_CHECKING:
    from .store import SqliteRealmStore

__all__ = ["BackgroundIndexer"]


class BackgroundIndexer:
    """Applies a realm file's deferred upkeep, as an upkeep task, while the realm is quiet.

    Agents write in bursts: a turn stores a few records, then the realm is idle for seconds.
    Once no write or recall has come for :attr:`QUIET_S`, this task applies the index backlog in
    short transactions (:attr:`CHUNK` records each, rescheduling itself between them so other
    realms' upkeep runs too), so the next recall finds the index up to date instead of paying
    for it, and writes back pending usage counters. Under sustained load it stays out of the way
    (one interpreter: competing with the request thread would slow both); the store's inline
    thresholds bound the backlog then, and every read applies what remains first, so
    read-your-writes always holds. With an indexing process it only watches the process catch
    up (nudging it again, or taking a chunk itself if no process can), then prunes the queue.
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
        if store.has_worker():
            # The indexing process applies the backlog; once it has, drop what it applied.
            store.flush_usage()
            if store.backlog() and store.index_behind_worker(self.CHUNK):
                self._worker.schedule(self, self.QUIET_S)
            return
        if store.backlog():
            store.apply_backlog(self.CHUNK)
        else:
            store.flush_usage()
        if store.backlog() or store.pending_usage():
            self._worker.schedule(self)  # the next chunk, after whatever else is due

    def __repr__(self) -> str:
        return f"BackgroundIndexer({self._store.path.name})"
