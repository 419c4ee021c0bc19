"""Background work below request threads' CPU priority.

Linux keeps a niceness per thread, and a thread starts at its creator's: background threads (the
PostgreSQL embedding thread, the embedder's parallel runs, a graph index's build and the threads
it starts) lower their own, so a gateway's cores serve requests first and background work uses
what is left.
"""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Callable

__all__ = ["BACKGROUND_NICE", "IDLE_NICE", "lower_this_thread", "start_background", "stopping"]

BACKGROUND_NICE = 10
"""The niceness of threads that work beside a process's request threads."""

IDLE_NICE = 19
"""The lowest priority, for work nothing waits on: the indexing process's embedding runs (at
BACKGROUND_NICE they still took a fifth of a write burst's throughput, benchmarks/hybrid.py)."""


def lower_this_thread(nice: int = BACKGROUND_NICE) -> None:
    """Run the calling thread at niceness ``nice`` at least; where that is not permitted (or not
    Linux), at the caller's."""
    if nice <= 0 or not hasattr(os, "setpriority"):
        return
    try:
        tid = threading.get_native_id()
        if os.getpriority(os.PRIO_PROCESS, tid) < nice:
            os.setpriority(os.PRIO_PROCESS, tid, nice)
    except OSError:
        pass


# -- background threads that run native code ----------------------------------------------------

_stopping = threading.Event()
_threads: list[threading.Thread] = []
_threads_lock = threading.Lock()


def start_background(target: Callable[[], None], name: str) -> threading.Thread:
    """Start ``target`` on a daemon thread that the interpreter's exit waits for. Such a thread runs
    native code (onnxruntime, usearch) in steps and returns between two once :func:`stopping`:
    a daemon thread still inside native code when the interpreter finalizes aborts the process."""
    thread = threading.Thread(target=target, name=name, daemon=True)
    with _threads_lock:
        _threads[:] = [t for t in _threads if t.is_alive()]
        _threads.append(thread)
    thread.start()
    return thread


def stopping() -> bool:
    """Whether the process is exiting: background work returns at its next step."""
    return _stopping.is_set()


@atexit.register
def _stop_background() -> None:
    _stopping.set()
    with _threads_lock:
        threads = list(_threads)
    for thread in threads:
        thread.join(timeout=30)
