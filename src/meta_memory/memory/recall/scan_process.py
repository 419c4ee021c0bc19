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
dies (it reads EOF). Requests are this process's own (pickled); replies are read as numbers only,
in the machine's own byte order (the helper runs beside this process).

A static model's query is embedded by the helper too (an ``embed`` request): this process sends
the query's text, the helper reads its pieces with the model's own tokenizer (loaded once from
the vocabulary file, static_embedder.PieceReader) and averages them over the model's table, which
this process keeps in shared memory once complete (StaticEmbedder.shared_table), so the vector is
this process's bit for bit; it answers the rows best first with that vector, which recall keeps
in its query cache. The caller neither embeds nor orders: on benchmarks/hybrid.py's realm, timed
part by part over 1,200 recalls, the query's embedding and the scan's start took the caller 0.25
to 0.30 ms, the start of an ``embed`` request 0.08 to 0.10 (docs/benchmarks.md). A recall tells
the helper its query's text as soon as it starts (:meth:`ScanProcesses.wake`), and the helper
embeds it while the caller reads the scope's vectors and begins the search. A helper answers
with row numbers only; this process maps them to its own scope's docs.

Where the scope's vectors are stored compact, the rows the sketch finds are rescored from their
stored int8 components (neighbours.sketch_scan), which the helper maps too: a quarter of the bytes
of the float32 rows, read in random order out of the caches.

A helper is kept off the CPU of the caller that wakes it or sends it a scan (``_Helper.keep_off``):
a helper woken after the caller had slept (an agent's recalls come seconds apart) was placed on the
caller's own CPU by the scheduler, and the caller stood still behind it, while the other CPU idled.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import os
import pickle
import select
import socket
import struct
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from . import shared

if TYPE_CHECKING:
    import numpy as np

    from ..embedding.static_embedder import PieceReader
    from ..embedding.wordpiece import WordPiece

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
# A reply: its request's number, its row count (-1: failed; _UNSKETCHED: the query has nothing in
# the sketch's directions), how many of them to keep (ordered replies), the helper's seconds.
_HEADER = struct.Struct("<qqqd")
_UNSKETCHED = -2
_WAKE = b"w"  # ScanProcesses.wake's message (no reply)
WAKE_SPIN_S = 0.0005  # how long a helper told a scan is coming waits for it awake, at most
# How long a caller whose reply is not in yet waits for it awake before it sleeps: a process
# asleep took 33 to 84 us to wake on a 2-core VM, and most replies not in were in 0.2 ms later.
REPLY_SPIN_S = 0.0005
_PLACES_KEPT = 1024  # arrays whose places ScanProcesses remembers (the dead ones dropped past it)
_MESSAGE_MAX = 1 << 20


_Place = tuple[int, int, tuple[int, ...], str]  # an array in a request: buffer, offset, shape, dtype
# A query a helper embedded on a wake: its text, its reader's number, the places of the table and
# weights it was embedded with (as tuples), and its vector.
_Early = tuple[str, int, tuple[tuple[Any, ...], ...], "np.ndarray"]


class ScanJob(NamedTuple):
    """What a helper needs to scan a sketch: its int8 rows and scales, the query in it (int8), the
    scope's float32 rows and its stored int8 components (``None``: not all compact), the query,
    and how deep (neighbours.begin_nearest, neighbours.sketch_scan). Or, instead of
    the query, ``pieces``: the static model's table and weights and the sketch's projection, for
    the helper to embed the query itself from its ``text``, its pieces read as ``reader`` says
    (neighbours.PiecesQuery)."""

    rows: np.ndarray
    scales: np.ndarray
    query8: np.ndarray | None
    matrix: np.ndarray
    codes: np.ndarray | None
    query: np.ndarray | None
    depth: int
    limit: int
    pieces: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    text: str = ""
    reader: PieceReader | None = None


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
        self.readers: set[int | None] = set()  # the piece readers it has loaded (by number)
        self.unmap: list[int] = []  # buffers freed here, to be unmapped before its next scan
        self.started = time.monotonic()
        self.kept_off: int | None = None  # the CPU it is kept off (keep_off), if any
        self.cpus: frozenset[int] | None = None  # the CPUs it started with (read at keep_off)
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

    def keep_off(self, cpu: int | None) -> None:
        """Keep the helper off ``cpu``, the caller's: on the CPUs it started with but that one,
        where they are two or more (set again only when the caller's CPU changed). Woken by a
        caller that had slept, a helper was mostly placed on the caller's own CPU (the
        scheduler's wake-up affinity) and waited there awake for the scan, the caller standing
        still behind it while the other CPU idled: with recalls 20 ms apart, hybrid p50 3.3 to
        3.9 ms against 2.1 to 2.5 with the helper kept off (docs/benchmarks.md)."""
        if cpu is None or cpu == self.kept_off:
            return
        try:
            if self.cpus is None:
                self.cpus = frozenset(os.sched_getaffinity(self.process.pid))
            if cpu not in self.cpus or len(self.cpus) < 2:
                return
            os.sched_setaffinity(self.process.pid, self.cpus - {cpu})
        except (AttributeError, OSError):  # (gone: found out at its next request; no affinity here)
            return
        self.kept_off = cpu

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
        # Where each array a scan sent lies (shared.locate costs 5 us an array), while it lives.
        self._places: dict[int, tuple[weakref.ref[np.ndarray], tuple[shared.Buffer, _Place]]] = {}
        self._readers: dict[PieceReader, int] = {}  # each piece reader sent, by its number
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

    def _checkin(self, helper: _Helper, took: float | None = None) -> None:
        """``helper`` idle again; ``took``: the seconds of the scan it answered (its own timing),
        counted."""
        with self._lock:
            if took is not None:
                self.served += 1
                self.scan_s = 0.9 * self.scan_s + 0.1 * min(max(took, 0.0), 1.0)
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

    def wake(
        self, text: str | None = None, pieces: tuple[np.ndarray, np.ndarray, PieceReader] | None = None
    ) -> None:
        """Tell the helper the next scan will go to that one is coming: it waits for it awake
        (WAKE_SPIN_S) instead of asleep. A recall calls this before the steps that precede its
        scan (reading the scope's vectors, the search's start), which hide the helper's wake-up:
        33 to 84 us on a 2-core VM for a process asleep for a millisecond or more, on the scan's
        path otherwise. With the query's ``text`` and the static model's ``pieces`` (its table,
        weights and piece reader, as an ``embed`` request names them), a helper that has them
        embeds the query meanwhile, for the request to come (one that asks another text, or names
        other arrays, embeds that one as before)."""
        early: list[_Place] | None = None
        if text is not None and pieces is not None:
            located = [self._located(pieces[0]), self._located(pieces[1])]
            if None not in located:
                early = [described for _, described in cast("list[tuple[shared.Buffer, _Place]]", located)]
        with self._lock:
            reader = None if pieces is None else self._readers.get(pieces[2])
            for helper in self._idle:
                if helper.ready and not helper.late:
                    message = _WAKE
                    if (
                        early is not None
                        and reader is not None
                        and reader in helper.readers
                        and all(place[0] in helper.mapped for place in early)
                    ):
                        message = pickle.dumps(("wake", text, reader, early))
                    helper.keep_off(_current_cpu())
                    with contextlib.suppress(OSError):
                        helper.sock.send(message, socket.MSG_DONTWAIT)
                    return

    def submit(self, job: ScanJob, scan: Scan) -> _Reply | None:
        """``job`` sent to an idle helper, its reply to come (``scan`` runs here if it fails or is
        late); ``None`` when no helper can take it now (the caller scans as it would without)."""
        shipped: tuple[np.ndarray | None, ...] = (job.rows, job.scales, job.matrix, job.codes)
        if job.pieces is not None:
            shipped += job.pieces  # the table, its weights, the projection
        places = [None if a is None else self._located(a) for a in shipped]
        if (
            any(p is None for p, a in zip(places, shipped, strict=True) if a is not None)
            or not self.available
        ):
            return None
        helper = self._checkout()
        if helper is None:
            return None
        helper.keep_off(_current_cpu())
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
            arrays: list[_Place | None] = []
            for place in places:
                if place is None:  # (no codes)
                    arrays.append(None)
                    continue
                buffer, described = place
                if buffer.key not in helper.mapped:
                    socket.send_fds(
                        helper.sock, [pickle.dumps(("map", buffer.key, buffer.size))], [buffer.fd]
                    )
                    helper.mapped.add(buffer.key)
                arrays.append(described)
            with self._lock:
                self._requests += 1
                number = self._requests
                reader = (
                    None if job.reader is None else self._readers.setdefault(job.reader, len(self._readers))
                )
            request: tuple[Any, ...]
            if job.pieces is None:
                assert job.query8 is not None and job.query is not None
                request = (
                    "scan",
                    number,
                    arrays,
                    job.query8.tobytes(),
                    job.query.tobytes(),
                    job.depth,
                    job.limit,
                )
            else:
                if reader not in helper.readers:  # its tokenizer, loaded once per helper
                    helper.sock.send(pickle.dumps(("reader", reader, job.reader)))
                    helper.readers.add(reader)
                request = ("embed", number, arrays, job.text, reader, job.depth, job.limit)
            helper.sock.send(pickle.dumps(request))
        except (OSError, ValueError):
            self._failed(helper)
            return None
        due = time.monotonic() + 3 * self.scan_s
        dim = 0 if job.pieces is None else job.matrix.shape[1]
        return _Reply(self, helper, number, scan, due, len(job.matrix), min(job.limit, job.depth), dim)

    def _located(self, array: np.ndarray) -> tuple[shared.Buffer, _Place] | None:
        """The shared buffer ``array`` lies in (:func:`shared.locate`) and how a request names
        it there, remembered while it lives (a scope's arrays and a model's table are sent with
        every scan of the scope; locating one costs 5 us)."""
        known = self._places.get(id(array))
        if known is not None and known[0]() is array:
            return known[1]
        found = shared.locate(array)
        place = None if found is None else (found[0], (found[0].key, found[1], array.shape, array.dtype.str))
        if place is not None:
            with self._lock:
                if len(self._places) >= _PLACES_KEPT:
                    for key in [k for k, (ref, _) in self._places.items() if ref() is None]:
                        del self._places[key]
                    if len(self._places) >= _PLACES_KEPT:
                        self._places.clear()
                self._places[id(array)] = (weakref.ref(array), place)
        return place

    def close(self) -> None:
        with self._lock:
            self._closed = True
            helpers = [*self._idle]
            self._idle.clear()
        for helper in helpers:
            helper.stop()


@functools.cache
def _getcpu() -> Callable[[], int] | None:
    """The C library's ``sched_getcpu`` (the CPU the calling thread runs on), ``None`` without."""
    try:
        import ctypes

        getcpu = ctypes.CDLL(None, use_errno=True).sched_getcpu
    except (AttributeError, OSError):
        return None
    getcpu.restype, getcpu.argtypes = ctypes.c_int, []
    return cast("Callable[[], int]", getcpu)


def _current_cpu() -> int | None:
    """The CPU this thread runs on now, ``None`` where that is not known."""
    getcpu = _getcpu()
    cpu = getcpu() if getcpu is not None else -1
    return cpu if cpu >= 0 else None


class _Reply:
    """A scan sent to a helper (neighbours.Pending): its rows and scores once read."""

    def __init__(
        self,
        pool: ScanProcesses,
        helper: _Helper,
        number: int,
        scan: Scan,
        due: float,
        rows: int,
        count: int,
        dim: int,
    ) -> None:
        self._pool, self._helper, self._number, self._scan, self._due = pool, helper, number, scan, due
        self._rows, self._count = rows, count  # the scope's rows; how many the answer holds
        self._dim = dim  # the query's embedding's, when the helper embeds it (0: it does not)

    def cancel(self) -> bool:
        return False  # under way in the helper: read it, or run it here if it fails

    def done(self) -> bool:
        """Whether the helper's reply is in (the next message: one request at a time)."""
        try:
            return bool(select.select([self._helper.sock], [], [], 0)[0])
        except (OSError, ValueError):  # closed: result() scans here
            return True

    def result(self) -> tuple[np.ndarray, np.ndarray] | tuple[list[int], list[float], np.ndarray]:
        """The scan's rows and their scores, in no set order; where the helper embedded the query,
        its ``kept`` rows best first (ties by row) and finite, as lists, and the query's embedding
        besides."""
        import numpy as np

        helper = self._helper
        try:
            try:  # in already, as a reply mostly is: read without a select
                data = helper.sock.recv(_MESSAGE_MAX, socket.MSG_DONTWAIT)
            except BlockingIOError:
                wait = max(REPLY_GRACE_S, self._due - time.monotonic())
                if not _arrives(helper.sock, wait, REPLY_SPIN_S):
                    helper.late += 1
                    helper.late_since = time.monotonic()
                    self._pool._checkin(helper)
                    return self._scan()
                data = helper.sock.recv(_MESSAGE_MAX)
            number, count, kept, took = _HEADER.unpack_from(data)
            if number == self._number and count == _UNSKETCHED:  # nothing in the sketch: here
                self._pool._checkin(helper)
                return self._scan()
            if (
                number != self._number
                or count != self._count
                or not 0 <= kept <= count
                or len(data) != _HEADER.size + 12 * count + 4 * self._dim
            ):
                raise OSError("the scan helper's reply does not fit its request")
            at = _HEADER.size
            if self._dim:
                # The rows kept, as Python ints: a recall maps them to docs and reads nothing
                # else of them (a numpy reduction here, called cold, cost 15 us of every recall).
                kept_rows: list[int] = memoryview(data)[at : at + 8 * kept].cast("q").tolist()
                if kept and (min(kept_rows) < 0 or max(kept_rows) >= self._rows):
                    raise OSError("the scan helper answered rows the scope does not have")
            else:
                # Unsigned: a negative row is past every scope's rows (one reduction checks both ends).
                rows = np.frombuffer(data, dtype=np.uint64, count=count, offset=at)
                if count and int(rows.max()) >= self._rows:
                    raise OSError("the scan helper answered rows the scope does not have")
        except (OSError, struct.error):
            self._pool._failed(helper)
            return self._scan()
        self._pool._checkin(helper, took)
        at = _HEADER.size + 8 * count
        if not self._dim:
            return rows.astype(np.intp), np.frombuffer(data, dtype=np.float32, count=count, offset=at)
        listed = cast("list[float]", memoryview(data)[at : at + 4 * kept].cast("f").tolist())
        vector = np.frombuffer(data, dtype=np.float32, count=self._dim, offset=at + 4 * count)
        return kept_rows, listed, vector


def serve(sock: socket.socket) -> None:
    """A helper's loop: map the buffers it is sent, answer each scan, until EOF."""
    import mmap

    import numpy as np

    maps: dict[int, mmap.mmap] = {}
    readers: dict[int, tuple[PieceReader, WordPiece]] = {}
    # A query embedded on a wake (its text, reader's number, table's and weights' places, vector).
    early: _Early | None = None
    # Imports and kernels warmed before it says it is ready: its first scan is as quick as the rest.
    warm = {
        1: np.ones(16, dtype=np.int8).tobytes(),
        2: np.ones(2, dtype="<f4").tobytes(),
        3: np.ones(16, "<f4").tobytes(),
    }
    arrays = [(1, 0, (2, 8), "|i1"), (2, 0, (2,), "<f4"), (3, 0, (2, 8), "<f4"), (1, 0, (2, 8), "|i1")]
    _scan(warm, ("scan", 0, arrays, np.ones(8, np.int8).tobytes(), np.ones(8, "<f4").tobytes(), 1, 1))
    _ARRAYS.clear()  # (the warm-up's keys are not the buffers')
    sock.send(b"ready")
    while True:
        message, fds, _, _ = socket.recv_fds(sock, _MESSAGE_MAX, 1)
        if not message:
            return
        if message == _WAKE:  # a scan is on its way: waited for awake, a little while
            _awake(sock)
            continue
        request = pickle.loads(message)
        if request[0] == "wake":  # and its query's text: embedded while it comes
            _, text, number, places = request
            early = None
            with contextlib.suppress(Exception):  # (the request embeds it, or fails, as before)
                reader, tokenizer = readers[number]
                table, weights = (_array(maps, *place) for place in places)
                early = (
                    text,
                    number,
                    tuple(map(tuple, places)),
                    _embedded(table, weights, reader, tokenizer, text),
                )
            _awake(sock)
        elif request[0] == "reader":
            with contextlib.suppress(Exception):  # (without it, its queries' scans fail: here)
                readers[request[1]] = (request[2], request[2].tokenizer())
        elif request[0] == "map":
            _, key, size = request
            maps[key] = mmap.mmap(fds[0], size, prot=mmap.PROT_READ)
            os.close(fds[0])
        elif request[0] == "unmap":
            gone = set(request[1])
            for place in [place for place in _ARRAYS if place[0] in gone]:
                del _ARRAYS[place]
            for key in gone:
                maps.pop(key, None)  # unmapped once no array over it is left
        else:
            sock.send(_scan(maps, request, readers, early))
            early = None


def _awake(sock: socket.socket) -> None:
    """Wait for the next message awake, at most WAKE_SPIN_S (it is read by the caller)."""
    _arrives(sock, WAKE_SPIN_S, WAKE_SPIN_S)


def _arrives(sock: socket.socket, wait: float, spin: float) -> bool:
    """Whether a message is in on ``sock`` within ``wait`` seconds: looked for awake for the first
    ``spin`` of them (each look releases the GIL), then waited for asleep."""
    now = time.monotonic()
    deadline = now + wait
    awake_until = min(deadline, now + spin)
    while time.monotonic() < awake_until:
        if select.select([sock], [], [], 0)[0]:
            return True
    return bool(select.select([sock], [], [], max(0.0, deadline - time.monotonic()))[0])


def _embedded(
    table: np.ndarray, weights: np.ndarray, reader: PieceReader, tokenizer: WordPiece, text: str
) -> np.ndarray:
    """``text`` embedded by the static model whose table and weights these are, its pieces read
    by ``tokenizer`` as ``reader`` says: the embedder's own functions, so its vector bit for bit."""
    import numpy as np

    from ..embedding.static_embedder import piece_mean, text_pieces

    ids = np.array(text_pieces(tokenizer, text, reader.max_chars), dtype=np.intp)
    return piece_mean(table, weights, ids)


_ARRAYS: dict[tuple[int, int, str], np.ndarray] = {}  # a helper's latest view at each place of its maps


def _array(maps: dict[int, Any], key: int, offset: int, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """The array at ``offset`` of the mapped buffer ``key`` (the view kept while the buffer is
    mapped, until a scan asks for another shape there: the same arrays are scanned again and
    again, and a scope that grows in place asks for more rows)."""
    import numpy as np

    place = (key, offset, dtype)
    array = _ARRAYS.get(place)
    if array is None or array.shape != shape:
        array = np.frombuffer(maps[key], dtype=dtype, count=math.prod(shape), offset=offset).reshape(shape)
        _ARRAYS[place] = array
    return array


def _scan(
    maps: dict[int, Any],
    request: tuple[Any, ...],
    readers: dict[Any, Any] | None = None,
    early: _Early | None = None,
) -> bytes:
    """One scan's reply (neighbours.begin_nearest's steps on the mapped arrays); for an ``embed``
    request, the query embedded first (:func:`_embedded`; ``early``'s vector where it is the same
    text embedded with the same reader and arrays on a wake), the rows found ordered best first
    (ties by row: a scope's docs ascend with its rows) with the finite ones kept, and the query's
    embedding after them."""
    import numpy as np

    from .neighbours import _deepest_sampled, _sketch_query, sketch_scan

    # ("scan", ..., the int8 query, the float32 query, ...) or ("embed", ..., its text, its reader's number, ...)
    kind, number, arrays, first, second, depth, limit = request
    started = time.perf_counter()
    try:
        mapped: list[Any] = [None if place is None else _array(maps, *place) for place in arrays]
        rows, scales, matrix, codes = mapped[:4]
        if kind == "embed":
            table, weights, projection = mapped[4:]
            if early is not None and early[:3] == (first, second, (tuple(arrays[4]), tuple(arrays[5]))):
                vector = early[3]
            else:
                reader, tokenizer = (readers or {})[second]
                vector = _embedded(table, weights, reader, tokenizer, first)
            q = vector.astype(np.float32, copy=False)
            q8 = _sketch_query(np.einsum("j,jk->k", q, projection))
            if q8 is None:
                return _HEADER.pack(number, _UNSKETCHED, 0, 0.0)
        else:
            q8, q = np.frombuffer(first, dtype=np.int8), np.frombuffer(second, dtype=np.float32)
        top, scores = sketch_scan(matrix, codes, rows, scales, q8, q, depth, limit, _deepest_sampled)
        kept = len(top)
        tail = b""
        if kind == "embed":
            order = np.lexsort((top, -scores))
            finite = np.isfinite(scores[order])
            order = np.concatenate((order[finite], order[~finite]))
            top, scores, kept = top[order], scores[order], int(finite.sum())
            tail = q.astype(np.float32).tobytes()
    except Exception:  # the caller scans itself
        return _HEADER.pack(number, -1, 0, 0.0)
    return (
        _HEADER.pack(number, len(top), kept, time.perf_counter() - started)
        + top.astype(np.int64).tobytes()
        + np.asarray(scores, dtype=np.float32).tobytes()
        + tail
    )


if __name__ == "__main__":
    serve(socket.socket(fileno=int(sys.argv[1])))
