"""A sketched scope's scan in a helper process, while the caller ranks lexically with the GIL.

A hybrid recall begins its neighbour search, ranks lexically, then reads the neighbours. The scan
of a large scope's sketch (neighbours.begin_nearest: the int8 products, the rows they rank first,
those rows rescored) is a few numpy and SimSIMD calls, each releasing the GIL; on a thread beside
the ranking each one ends by taking the GIL back at the ranking's next SQLite call, and where an
idle core sleeps (a VM) each hand-over costs the caller a wake-up. benchmarks/scan_placement.py
measured what the search adds to the ranking beside it: on a 2-core Intel Xeon VM, 0.59 ms inline,
0.56 on a thread and 0.14 in another process (docs/benchmarks.md).

:class:`ScanProcesses` keeps helper processes (``python -m`` this module, one fewer than the
cores, at least one) that map the scopes' arrays (shared.py) and run the same functions on them:
their answers are this process's, bit for bit. A scan goes to an idle helper that is ready; when
none is (starting, all busy, the arrays not shared), it runs on a thread here as before, and a
helper that fails, or whose reply is not in when the caller asks for it and a little after (the
helper may wait for a core that another process holds: REPLY_GRACE_S, or three times its usual
scan since the scan was sent), leaves its scan to this process: a helper never
decides what is recalled, only how soon. A helper exits when this process closes its socket or
dies (it reads EOF). Requests are this process's own (pickled); replies are read as numbers only.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import select
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from . import shared

if TYPE_CHECKING:
    import numpy as np

__all__ = ["ScanJob", "ScanOffload", "ScanProcesses"]

log = logging.getLogger("meta_memory.recall")

# A reply not in this long after the caller asks for it, nor three times a helper's usual scan
# after it was sent: the scan runs here (the late reply is dropped). Measured in an agent's loop
# (benchmarks/hybrid.py, each recall after a write), a helper waiting for the core the indexing
# process held made the caller wait 2 ms at the median.
REPLY_GRACE_S = 0.0003
LATE_MAX_S = 10.0  # a helper that owes a reply this long is stopped
START_TIMEOUT_S = 30.0  # a helper not ready by then is stopped
RESTART_GAP_S = 10.0  # a helper that failed is replaced at most this often
_HEADER = struct.Struct("<qqd")  # a reply: its request's number, row count (-1: failed), seconds
_MESSAGE_MAX = 1 << 20


class ScanJob(NamedTuple):
    """What a helper needs to scan a sketch: its int8 rows and scales, the query in it (int8), the
    scope's float32 rows and the query, and how deep (neighbours.begin_nearest)."""

    rows: np.ndarray
    scales: np.ndarray
    query8: np.ndarray
    matrix: np.ndarray
    query: np.ndarray
    depth: int
    limit: int


Scan = Callable[[], "tuple[np.ndarray, np.ndarray]"]


class ScanOffload:
    """A scan's offload (neighbours.Offload): called, to a thread (``thread``); a sketch's scan is
    first offered to ``remote`` (:meth:`ScanProcesses.submit`), where there is one."""

    def __init__(
        self,
        thread: Callable[[Callable[[], Any]], Any],
        remote: Callable[[ScanJob, Scan], _Reply | None] | None,
    ) -> None:
        self._thread = thread
        self.remote = remote

    def __call__(self, scan: Callable[[], Any]) -> Any:
        return self._thread(scan)


class _Helper:
    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock = ours
        self.ready = False
        self.late = 0  # replies owed for requests given up on (read and dropped before the next)
        self.late_since = 0.0
        self.mapped: set[int] = set()  # buffers it has mapped
        self.unmap: list[int] = []  # buffers freed here, to be unmapped before its next scan
        self.started = time.monotonic()
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", __name__, str(theirs.fileno())],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                close_fds=True,
            )
        finally:
            theirs.close()

    def check_ready(self) -> bool:
        """Whether the helper said it is ready (read without waiting)."""
        if not self.ready and select.select([self.sock], [], [], 0)[0]:
            self.ready = self.sock.recv(64) == b"ready"
            if not self.ready:
                raise OSError("the scan helper did not start")
        return self.ready

    def drained(self) -> bool:
        """Whether every reply owed was read (read and dropped without waiting: a late reply is
        the next message, one request at a time)."""
        while self.late and select.select([self.sock], [], [], 0)[0]:
            if not self.sock.recv(_MESSAGE_MAX):
                raise OSError("the scan helper closed")
            self.late -= 1
        if self.late and time.monotonic() - self.late_since > LATE_MAX_S:
            raise OSError("the scan helper stopped answering")
        return not self.late

    def stop(self) -> None:
        """Stopped at once (a helper keeps no state): a stalled one is not waited for."""
        self.sock.close()
        self.process.kill()
        self.process.wait()


class ScanProcesses:
    """Helper processes that scan sketched scopes (module docstring). ``count`` helpers (default:
    one fewer than the cores, at least one), started at the first scan offered (it runs here meanwhile)."""

    def __init__(self, count: int | None = None) -> None:
        self._count = max(1, (os.cpu_count() or 2) - 1) if count is None else count
        self._lock = threading.Lock()
        self._idle: list[_Helper] = []
        self._busy: set[_Helper] = set()
        self._failed_at = 0.0
        self._closed = False
        self._requests = 0
        self.served = 0  # scans answered by a helper
        self.scan_s = REPLY_GRACE_S  # a helper's scan, as the helpers time it (a moving average)
        # Arrays allocated from now on are shared; the helpers start at the first scan offered.
        self.available = self._count > 0 and shared.enable()

    def _start(self) -> None:
        try:
            helper = _Helper()
        except OSError as exc:
            log.warning("could not start a scan helper (%s): scans run in this process", exc)
            self._failed_at = time.monotonic()
            return
        self._idle.append(helper)

    def _failed(self, helper: _Helper) -> None:
        with self._lock:
            self._busy.discard(helper)
            self._failed_at = time.monotonic()
        helper.stop()

    def _checkout(self) -> _Helper | None:
        with self._lock:
            if self._closed:
                return None
            while len(self._idle) + len(self._busy) < self._count and (
                time.monotonic() - self._failed_at >= RESTART_GAP_S
            ):
                self._start()
                if len(self._idle) + len(self._busy) < self._count:
                    break
            for helper in self._idle:
                try:
                    ready = helper.check_ready() and helper.drained()
                except OSError:
                    ready = False
                    self._idle.remove(helper)
                    self._failed_at = time.monotonic()
                    helper.stop()
                    break
                if ready:
                    self._idle.remove(helper)
                    self._busy.add(helper)
                    return helper
                if time.monotonic() - helper.started > START_TIMEOUT_S:
                    self._idle.remove(helper)
                    self._failed_at = time.monotonic()
                    helper.stop()
                    break
            return None

    def _checkin(self, helper: _Helper) -> None:
        with self._lock:
            self._busy.discard(helper)
            if self._closed:
                helper.stop()
            else:
                self._idle.append(helper)

    def ready(self) -> bool:
        """Whether a helper is ready and idle (read without waiting)."""
        with self._lock:
            for helper in self._idle:
                with contextlib.suppress(OSError):
                    if helper.check_ready() and helper.drained():
                        return True
        return False

    def submit(self, job: ScanJob, scan: Scan) -> _Reply | None:
        """``job`` sent to an idle helper, its reply to come (``scan`` runs here if it fails or is
        late); ``None`` when no helper can take it now (the caller scans as it would without)."""
        places = [shared.locate(a) for a in (job.rows, job.scales, job.matrix)]
        if any(p is None for p in places) or not self.available:
            return None
        helper = self._checkout()
        if helper is None:
            return None
        try:
            with self._lock:  # freed buffers: each helper that mapped one is told before its next scan
                for key in shared.take_released():
                    for other in (*self._idle, *self._busy):
                        if key in other.mapped:
                            other.mapped.discard(key)
                            other.unmap.append(key)
                unmap, helper.unmap = helper.unmap, []
            if unmap:
                helper.sock.send(pickle.dumps(("unmap", unmap)))
            arrays = []
            for place, array in zip(places, (job.rows, job.scales, job.matrix), strict=True):
                assert place is not None
                buffer, offset = place
                if buffer.key not in helper.mapped:
                    socket.send_fds(
                        helper.sock, [pickle.dumps(("map", buffer.key, buffer.size))], [buffer.fd]
                    )
                    helper.mapped.add(buffer.key)
                arrays.append((buffer.key, offset, array.shape, array.dtype.str))
            with self._lock:
                self._requests += 1
                number = self._requests
            request = (
                "scan",
                number,
                arrays,
                job.query8.tobytes(),
                job.query.tobytes(),
                job.depth,
                job.limit,
            )
            helper.sock.send(pickle.dumps(request))
        except (OSError, ValueError):
            self._failed(helper)
            return None
        due = time.monotonic() + 3 * self.scan_s
        return _Reply(self, helper, number, scan, due, len(job.matrix), min(job.limit, job.depth))

    def close(self) -> None:
        with self._lock:
            self._closed = True
            helpers = [*self._idle]
            self._idle.clear()
        for helper in helpers:
            helper.stop()


class _Reply:
    """A scan sent to a helper (neighbours.Pending): its rows and scores once read."""

    def __init__(
        self, pool: ScanProcesses, helper: _Helper, number: int, scan: Scan, due: float, rows: int, count: int
    ) -> None:
        self._pool, self._helper, self._number, self._scan, self._due = pool, helper, number, scan, due
        self._rows, self._count = rows, count  # the scope's rows; how many the answer holds

    def cancel(self) -> bool:
        return False  # under way in the helper: read it, or run it here if it fails

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        import numpy as np

        helper = self._helper
        try:
            wait = max(REPLY_GRACE_S, self._due - time.monotonic())
            if not select.select([helper.sock], [], [], wait)[0]:
                helper.late += 1
                helper.late_since = time.monotonic()
                self._pool._checkin(helper)
                return self._scan()
            data = helper.sock.recv(_MESSAGE_MAX)
            number, count, took = _HEADER.unpack_from(data)
            if number != self._number or count != self._count or len(data) != _HEADER.size + 12 * count:
                raise OSError("the scan helper's reply does not fit its request")
            rows = np.frombuffer(data, dtype="<i8", count=count, offset=_HEADER.size)
            scores = np.frombuffer(data, dtype="<f4", count=count, offset=_HEADER.size + 8 * count)
            if count and (int(rows.min()) < 0 or int(rows.max()) >= self._rows):
                raise OSError("the scan helper answered rows the scope does not have")
        except (OSError, struct.error):
            self._pool._failed(helper)
            return self._scan()
        with self._pool._lock:
            self._pool.served += 1
            self._pool.scan_s = 0.9 * self._pool.scan_s + 0.1 * min(max(took, 0.0), 1.0)
        self._pool._checkin(helper)
        return rows.astype(np.intp), scores.astype(np.float32)


def serve(sock: socket.socket) -> None:
    """A helper's loop: map the buffers it is sent, answer each scan, until EOF."""
    import mmap

    import numpy as np

    maps: dict[int, mmap.mmap] = {}
    # Imports and kernels warmed before it says it is ready: its first scan is as quick as the rest.
    warm = {
        1: np.ones(16, dtype=np.int8).tobytes(),
        2: np.ones(2, dtype="<f4").tobytes(),
        3: np.ones(16, "<f4").tobytes(),
    }
    arrays = [(1, 0, (2, 8), "|i1"), (2, 0, (2,), "<f4"), (3, 0, (2, 8), "<f4")]
    _scan(warm, ("scan", 0, arrays, np.ones(8, np.int8).tobytes(), np.ones(8, "<f4").tobytes(), 1, 1))
    sock.send(b"ready")
    while True:
        message, fds, _, _ = socket.recv_fds(sock, _MESSAGE_MAX, 1)
        if not message:
            return
        request = pickle.loads(message)
        if request[0] == "map":
            _, key, size = request
            maps[key] = mmap.mmap(fds[0], size, prot=mmap.PROT_READ)
            os.close(fds[0])
        elif request[0] == "unmap":
            for key in request[1]:
                maps.pop(key, None)  # unmapped once no array over it is left
        else:
            sock.send(_scan(maps, request))


def _scan(maps: dict[int, Any], request: tuple[Any, ...]) -> bytes:
    """One scan's reply (neighbours.begin_nearest's steps on the mapped arrays)."""
    import numpy as np

    from .neighbours import _deepest, _int8_products, _rescored_rows

    _, number, arrays, query8, query, depth, limit = request
    started = time.perf_counter()
    try:
        rows, scales, matrix = (
            np.frombuffer(maps[key], dtype=kind, count=int(np.prod(shape)), offset=offset).reshape(shape)
            for key, offset, shape, kind in arrays
        )
        coarse = _deepest(_int8_products(rows, np.frombuffer(query8, dtype=np.int8)), scales, depth)
        top, scores = _rescored_rows(matrix, coarse, np.frombuffer(query, dtype=np.float32), limit)
    except Exception:  # the caller scans itself
        return _HEADER.pack(number, -1, 0.0)
    return (
        _HEADER.pack(number, len(top), time.perf_counter() - started)
        + top.astype("<i8").tobytes()
        + np.asarray(scores, dtype="<f4").tobytes()
    )


if __name__ == "__main__":
    serve(socket.socket(fileno=int(sys.argv[1])))
