"""One daemon thread for the deferred upkeep of every realm store in the process.

Realm stores leave work behind their writes: the SQLite files' WAL checkpoints
(sqlite/checkpoint.py), their recall-index backlog (sqlite/indexing.py), and any backend's pending
usage counters. Each store's upkeep is a task; this worker runs
the tasks one at a time, each when it is due, on a single thread shared by every open realm, so
a gateway serving a thousand realms runs one upkeep thread, not two thousand. A task that has
more to do reschedules itself, which lets other files' tasks run in between.

Nothing depends on the worker for correctness: writers checkpoint inline past a bound, apply the
backlog inline past a threshold, and every read applies what remains first.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import ClassVar, Protocol

__all__ = ["UpkeepTask", "UpkeepWorker"]

_log = logging.getLogger(__name__)


class UpkeepTask(Protocol):
    """A unit of deferred upkeep; compared by identity."""

    def run_upkeep(self) -> None: ...


class UpkeepWorker:
    """Runs scheduled :class:`UpkeepTask` s, one at a time, on one daemon thread."""

    _shared: ClassVar[UpkeepWorker | None] = None
    _shared_lock: ClassVar[threading.Lock] = threading.Lock()

    @classmethod
    def shared(cls) -> UpkeepWorker:
        """The process's worker, started on first use."""
        with cls._shared_lock:
            if cls._shared is None:
                cls._shared = cls()
            return cls._shared

    @classmethod
    def _forget_shared(cls) -> None:
        # A forked child has no copy of the parent's thread: it starts its own on first use.
        cls._shared = None
        cls._shared_lock = threading.Lock()

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._due: dict[UpkeepTask, float] = {}  # task -> when it is due (time.monotonic)
        self._running: UpkeepTask | None = None
        self._thread = threading.Thread(target=self._run, name="meta-upkeep", daemon=True)
        self._thread.start()

    def schedule(self, task: UpkeepTask, delay_s: float = 0.0) -> None:
        """Run ``task`` in ``delay_s`` seconds, or sooner if it is already due sooner."""
        due = time.monotonic() + delay_s
        with self._cond:
            current = self._due.get(task)
            if current is None or due < current:
                self._due[task] = due
                self._cond.notify()

    def is_worker_thread(self) -> bool:
        """Whether the caller is this worker's own thread (running a task)."""
        return threading.current_thread() is self._thread

    def cancel(self, task: UpkeepTask) -> None:
        """Drop ``task``'s schedule and wait until it is not running (it will not run again unless
        rescheduled)."""
        with self._cond:
            self._due.pop(task, None)
            while self._running is task and threading.current_thread() is not self._thread:
                self._cond.wait()

    def _next(self) -> UpkeepTask:
        with self._cond:
            while True:
                if not self._due:
                    self._cond.wait()
                    continue
                task, due = min(self._due.items(), key=lambda item: item[1])
                wait = due - time.monotonic()
                if wait > 0:
                    self._cond.wait(wait)
                    continue
                del self._due[task]
                self._running = task
                return task

    def _run(self) -> None:
        while True:
            task = self._next()
            try:
                task.run_upkeep()
            except Exception as exc:  # logged; the writers' inline bounds still do the work
                _log.warning("upkeep task %r failed: %s", task, exc)
            finally:
                with self._cond:
                    self._running = None
                    self._cond.notify_all()


os.register_at_fork(after_in_child=UpkeepWorker._forget_shared)
