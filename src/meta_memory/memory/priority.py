"""Background work below request threads' CPU priority.

Linux keeps a niceness per thread, and a thread starts at its creator's: background threads (the
PostgreSQL embedding thread, the embedder's parallel runs, a graph index's build and the threads
it starts) lower their own, so a gateway's cores serve requests first and background work uses
what is left.
"""

from __future__ import annotations

import os
import threading

__all__ = ["BACKGROUND_NICE", "lower_this_thread"]

BACKGROUND_NICE = 10
"""The niceness of threads that work beside a process's request threads."""


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
