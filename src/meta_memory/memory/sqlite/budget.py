"""How many realm files a process keeps open at once, and which it closes first.

An open realm holds up to :data:`FDS_PER_REALM` file descriptors (the realm file, its WAL and
shared memory; the same three for its recall-index file; the checkpointer's connection), and a
gateway that serves thousands of realms would otherwise run out of them: every call then fails,
the busiest realm's included. So at most ``limit`` realm stores keep their files open. When one
more must open, the least recently used stores that nobody is using close their files (their
pending usage counters written back first); the store objects stay, and the next call on one
reopens its files, which costs what a first open costs (a few milliseconds; no data is lost or
reread, since a closed realm has nothing pending).

Closing runs on the shared upkeep thread (upkeep.py), the one thread that also runs the stores'
own deferred work: a store's upkeep task can then never be half-way through the files being
closed. A store about to open waits (a bounded time) until enough others have closed, so the
count stays within the limit even under a burst of first opens. The limit is also capped by the
process's open-files limit (``RLIMIT_NOFILE``), less a reserve for sockets and the rest.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from typing import Protocol

from ..upkeep import UpkeepWorker

__all__ = ["FDS_PER_REALM", "FD_RESERVE", "OpenRealmBudget", "OpenRealmFiles", "fd_capped"]

_log = logging.getLogger(__name__)

FDS_PER_REALM = 8
# Descriptors kept for everything else: sockets of HTTP clients, the event log, the indexing
# process's pipe, the ledger's stage file, the interpreter's own.
FD_RESERVE = 64
# The longest a store about to open waits for others to close (the closer normally answers at once).
ADMIT_WAIT_S = 10.0
_RETRY_S = 0.01


def fd_capped(limit: int, *, per_realm: int = FDS_PER_REALM, reserve: int = FD_RESERVE) -> int:
    """``limit``, lowered so ``per_realm`` descriptors each fit this process's open-files limit."""
    try:
        import resource

        soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):  # pragma: no cover - no such limit here
        return limit
    if soft == resource.RLIM_INFINITY:
        return limit
    return max(1, min(limit, (soft - reserve) // per_realm))


class OpenRealmFiles(Protocol):
    """A store whose files :class:`OpenRealmBudget` may close (compared by identity)."""

    def close_files_if_idle(self) -> bool:
        """Close the files if no thread is using the store; False when one is (try later)."""
        ...


class OpenRealmBudget:
    """Keeps at most ``limit`` stores' files open, closing the least recently used first."""

    def __init__(self, limit: int, *, worker: UpkeepWorker | None = None) -> None:
        self.limit = fd_capped(limit)
        if self.limit < limit:
            _log.info(
                "at most %d realms keep their files open (max_open_realms is %d; the open-files limit "
                "leaves room for %d)",
                self.limit,
                limit,
                self.limit,
            )
        self._worker = worker or UpkeepWorker.shared()
        self._cond = threading.Condition()
        self._open: collections.OrderedDict[OpenRealmFiles, None] = collections.OrderedDict()
        self._passes = 0  # closer runs completed: a waiter waits for at most one after asking
        self._warned = False

    def open_count(self) -> int:
        with self._cond:
            return len(self._open)

    def admit(self, store: OpenRealmFiles) -> None:
        """``store`` is about to open its files: make room first. Waits for one pass of the closer
        at most (bounded, too): when every open store is in use, the store opens over the limit,
        and the closer keeps trying until the count is back within it."""
        with self._cond:
            self._open[store] = None
            if len(self._open) <= self.limit:
                return
            self._worker.schedule(self)
            if self._worker.is_worker_thread():
                return  # the closer runs on this very thread, after the current task
            asked = self._passes
            deadline = time.monotonic() + ADMIT_WAIT_S
            while len(self._open) > self.limit and self._passes <= asked + 1:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            if len(self._open) > self.limit and not self._warned:
                self._warned = True
                _log.warning(
                    "%d realms are open, over the limit of %d, because every open one was in use; the "
                    "excess closes as soon as they are idle",
                    len(self._open),
                    self.limit,
                )

    def touch(self, store: OpenRealmFiles) -> None:
        """``store`` was used: it closes last."""
        with self._cond:
            if store in self._open:
                self._open.move_to_end(store)

    def discard(self, store: OpenRealmFiles) -> None:
        """``store`` closed its files (or failed to open them)."""
        with self._cond:
            if self._open.pop(store, 0) is None:
                self._cond.notify_all()

    def run_upkeep(self) -> None:
        """Close least recently used stores until the count is within the limit."""
        with self._cond:
            excess = len(self._open) - self.limit
            candidates = list(self._open)
        for store in candidates:
            if excess <= 0:
                break
            # Outside the budget's lock: closing writes the store's usage counters back, and a
            # thread using the store may be waiting for the budget meanwhile.
            if store.close_files_if_idle():
                self.discard(store)
                excess -= 1
        with self._cond:
            self._passes += 1
            self._cond.notify_all()
        if excess > 0:
            self._worker.schedule(self, _RETRY_S)  # the rest are in use right now

    def __repr__(self) -> str:
        return f"OpenRealmBudget(limit={self.limit})"
