"""The single-runtime guard: an OS file lock held on the state directory for a runtime's life.

Upstream Meta leaves "one runtime per state dir" to convention and two runtimes silently
race on the ledger file. We take an exclusive, non-blocking ``flock`` on a lock file the
layout names; the OS drops it when the process dies, so a crash never leaves it stale.
"""

from __future__ import annotations

import fcntl
import os

from ..errors import StorageRefused
from .layout import StateLayout

__all__ = ["StateDirLock"]


class StateDirLock:
    def __init__(self, layout: StateLayout, fd: int) -> None:
        self.layout = layout
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, layout: StateLayout) -> StateDirLock:
        """Take the lock or refuse: another runtime already serves this state dir.

        Raises:
            StorageRefused: the lock is held by another process, or the lock file cannot be opened.
        """
        try:
            fd = os.open(layout.lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise StorageRefused(
                f"storage refused: cannot open the runtime lock {layout.lock_path}: {exc.strerror or exc}"
            ) from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            raise StorageRefused(
                f"storage refused: another meta runtime{holder} already serves state dir {layout.root}; "
                "run one runtime per state dir"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        return cls(layout, fd)

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def _read_holder(fd: int) -> str:
    try:
        pid = os.pread(fd, 32, 0).decode().strip()
    except OSError:
        return ""
    return f" (pid {pid})" if pid.isdigit() else ""
