"""Vector arrays another process can map: anonymous shared memory (``memfd``) behind numpy arrays.

A hybrid recall's neighbour search runs its scan in a helper process (scan_process.py) so that the
caller's lexical ranking keeps the GIL. For that, the arrays the scan reads (a scope's sketch, its
scales, its float32 rows and their stored int8 components) are allocated here once :func:`enable`
was called: each in a ``memfd`` of its own, mapped by this process and, when a scan first needs it,
by a helper (its file descriptor passed over a socket). Rows appended in place later
(neighbours.GROWTH) are seen by the helper as they are written; a scan reads only the rows its copy
holds. Memory is freed when the last array over a buffer is collected here (:func:`take_released`
then names it, for the helpers to unmap). Where ``memfd`` is missing (not Linux) or fails, or an
array is small, an ordinary array is made and the scan runs in this process. Only the arrays of
scopes large enough to be sketched (neighbours.SKETCH_MIN vectors) are asked for here.
"""

from __future__ import annotations

import itertools
import math
import mmap
import os
import threading
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["MAX_BUFFERS", "Buffer", "copy", "enable", "enabled", "locate", "take_released", "zeros"]

# Each buffer holds a file descriptor open while it lives (four per sketched scope): past this
# many, arrays are made ordinary again and those scopes scanned here.
MAX_BUFFERS = 384


@dataclass(frozen=True)
class Buffer:
    """One shared allocation: ``key`` names it to the helpers, ``fd`` maps it (open while it lives)."""

    key: int
    fd: int
    size: int
    address: int  # where this process maps it


_lock = threading.Lock()
_enabled = False
_keys = itertools.count(1)
_by_owner: dict[int, Buffer] = {}  # id(mmap) -> its buffer, while the mmap lives
_released: list[int] = []  # keys of buffers collected since take_released()


def enable() -> bool:
    """Allocate the arrays of :func:`zeros` and :func:`copy` in shared memory from now on (where
    this system has ``memfd``); whether it does."""
    global _enabled
    _enabled = hasattr(os, "memfd_create")
    return _enabled


def enabled() -> bool:
    return _enabled


def zeros(shape: tuple[int, ...], dtype: npt.DTypeLike) -> np.ndarray:
    """A zero-filled array, in shared memory when enabled (an ordinary one where that fails)."""
    import numpy as np

    kind = np.dtype(dtype)
    count = math.prod(shape)
    if _enabled and count > 0:
        mapped = _mapped(count * kind.itemsize)
        if mapped is not None:
            return np.frombuffer(mapped, dtype=kind, count=count).reshape(shape)
    return np.zeros(shape, dtype=kind)


def copy(array: np.ndarray) -> np.ndarray:
    """``array`` itself if it is shared or sharing is not enabled, else a copy of it in shared
    memory (``array`` itself where that fails)."""
    if not _enabled or not array.size or locate(array) is not None:
        return array
    out = zeros(array.shape, array.dtype)
    if locate(out) is None:
        return array
    out[...] = array
    return out


def _mapped(size: int) -> mmap.mmap | None:
    with _lock:
        if len(_by_owner) >= MAX_BUFFERS:
            return None
    try:
        fd = os.memfd_create("meta-vectors", os.MFD_CLOEXEC)
    except OSError:
        return None
    try:
        os.ftruncate(fd, size)
        mapped = mmap.mmap(fd, size)
    except OSError:
        os.close(fd)
        return None
    import ctypes

    address = ctypes.addressof(ctypes.c_char.from_buffer(mapped))
    with _lock:
        buffer = Buffer(next(_keys), fd, size, address)
        _by_owner[id(mapped)] = buffer
    weakref.finalize(mapped, _release, id(mapped))
    return mapped


def _release(owner: int) -> None:
    with _lock:
        buffer = _by_owner.pop(owner, None)
        if buffer is None:
            return
        _released.append(buffer.key)
    os.close(buffer.fd)


def take_released() -> list[int]:
    """The keys of buffers freed here since the last call (for the helpers to unmap)."""
    with _lock:
        keys = list(_released)
        _released.clear()
    return keys


def locate(array: np.ndarray) -> tuple[Buffer, int] | None:
    """The shared buffer ``array`` lies in and its offset there, ``None`` if it is not one (or not
    C-contiguous)."""
    import numpy as np

    if not array.flags.c_contiguous:
        return None
    owner: object = array
    while isinstance(owner, np.ndarray | memoryview):  # numpy keeps a memoryview of the mmap
        owner = owner.base if isinstance(owner, np.ndarray) else owner.obj
    if not isinstance(owner, mmap.mmap):
        return None
    with _lock:
        buffer = _by_owner.get(id(owner))
    if buffer is None:
        return None
    offset = array.ctypes.data - buffer.address
    if offset < 0 or offset + array.nbytes > buffer.size:
        return None
    return buffer, offset
