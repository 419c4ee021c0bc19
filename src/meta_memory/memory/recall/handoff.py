"""Threads a recall hands a scan to while it ranks lexically, at the cost of a queue put.

A hybrid recall begins its neighbour search's scan (neighbours.begin_nearest) on another thread
and asks for the answer after its lexical ranking. ``ThreadPoolExecutor.submit`` cost 27 us of
the caller's time for that hand-off (a Future, its condition, a work item, the pool's thread
check: benchmarks/hybrid.py's realm, a static model's query), a tenth of what hybrid recall adds
to a lexical one; here it is a ``SimpleQueue.put`` and two locks made.

A job handed off runs once: on a thread of the hand-off, or on the caller's when it takes the job
back (:meth:`Job.cancel`) before a thread started it (every thread busy: running it at once beats
waiting for one).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["Handoff", "Job"]


class Job:
    """One function handed off: run by whichever takes it first, a thread or the caller."""

    __slots__ = ("_claim", "_done", "_error", "_fn", "_value")

    def __init__(self, fn: Callable[[], Any]) -> None:
        self._fn = fn
        self._claim = threading.Lock()  # held by whoever runs the job
        self._done = threading.Lock()  # held until a thread that ran the job has its answer
        self._done.acquire()
        self._value: Any = None
        self._error: BaseException | None = None

    def run(self) -> None:
        """Run the job here unless the caller took it back (the hand-off's threads call this)."""
        if not self._claim.acquire(blocking=False):
            return
        try:
            self._value = self._fn()
        except BaseException as exc:  # the caller's to see, in result()
            self._error = exc
        finally:
            self._fn = _ran  # nothing the job closed over is kept past its run
            self._done.release()

    def cancel(self) -> bool:
        """Take the job back: ``True`` when no thread has started it (it will never run there;
        the caller runs it), ``False`` when one has (its answer is :meth:`result`'s)."""
        return self._claim.acquire(blocking=False)

    def done(self) -> bool:
        """Whether a thread ran the job to its answer (read without waiting)."""
        return not self._done.locked()

    def result(self) -> Any:
        """The job's answer, once the thread running it is done; the job's exception raised."""
        with self._done:
            pass
        if self._error is not None:
            raise self._error
        return self._value


def _ran() -> None:
    return None


class Handoff:
    """``threads`` daemon threads named ``name-N`` that run the jobs handed to them, started at
    the first :meth:`submit`."""

    def __init__(self, threads: int, name: str) -> None:
        self._size = max(1, threads)
        self._name = name
        self._jobs: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self._started = False
        self._closed = False
        self._lock = threading.Lock()

    def submit(self, fn: Callable[[], Any]) -> Job:
        """Hand ``fn`` off: a job a thread runs as soon as one is free (after :meth:`close`, the
        caller's to run: :meth:`Job.cancel` takes it back)."""
        job = Job(fn)
        if not self._started:
            self._start()
        if not self._closed:
            self._jobs.put(job)
        return job

    def _start(self) -> None:
        with self._lock:
            if self._started or self._closed:
                return
            for n in range(self._size):
                threading.Thread(target=self._serve, name=f"{self._name}-{n}", daemon=True).start()
            self._started = True

    def _serve(self) -> None:
        while (job := self._jobs.get()) is not None:
            job.run()

    def close(self) -> None:
        """Stop the threads once the jobs handed off before are run; later jobs are never taken
        up by a thread."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._started:
                for _ in range(self._size):
                    self._jobs.put(None)
