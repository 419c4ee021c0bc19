"""Nearest neighbours by embedding over one scope's vectors, whichever store keeps them.

A store keeps each vector as :func:`vector_bytes` makes it: int8 components with one float32 scale
per vector (``dim + 4`` bytes, a quarter of float32; the development sets' recall@10 moves by 0.1
point on average, benchmarks/recall_quality/hybrid.py against its ``--float32``). A store hands
recall a scope's vectors as one contiguous float32 matrix decoded from those bytes (rows
L2-normalized again, so a dot product is the cosine) with the doc of each row. Vectors a store
wrote as plain float32 (``4 * dim`` bytes) still decode.

A query is one matrix-vector product and a partial sort: about 0.7 ms per 10,000 vectors of 384
dimensions on one core here. A scope of SKETCH_MIN vectors or more is ranked first in a sketch:
its vectors projected on the few directions that hold most of their variance (principal
components, fitted to a sample of the scope) and kept as int8 (Sketch), where a few hundred rows
are taken and rescored from their stored int8 components (the float32 rows where a scope has
none); a third of the product's cost over the development sets' 30,619 records, and for their
questions 0.996 of the exact top 10 (benchmarks/ann.py --devsets), as the float32 sketch's and
the float32 rescoring's before it. A scope whose
variance is spread over many directions (where a sketch would miss) gets none: it is ranked first
over the stored int8 components (a quarter of the bytes, kept beside the matrix) from INT8_MIN
vectors, the rows found rescored in float32, at about two thirds of the product. A scope large
enough for exact search to cost more than the lexical ranking may be searched through a graph
index instead (ann.py), built in the background from the same matrix and used where it finds what
exact search finds, at under half its cost.

:func:`record_text` is what a record is embedded as, on every backend.
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from . import shared
from .ann import ExactSearch, ScopeAnn, ann_available, int8_rows
from .scan_process import ScanJob

# Exact search of a scope this large starts with a pass over its int8 components (ann.int8_rows),
# INT8_SLACK rows deeper than twice the neighbours wanted, rescored in float32.
INT8_MIN = 2_048
INT8_SLACK = 16

# A scope this large is sketched (Sketch): ranked first in the fewest of SKETCH_DIMS principal
# directions that hold SKETCH_EXPLAINED of its variance (none if none does), fitted to SKETCH_SAMPLE
# of its vectors, then SKETCH_DEPTH_FACTOR times the neighbours wanted (at least SKETCH_DEPTH_MIN)
# rescored (sketch_scan). A fit (or a refusal) stands until the scope is SKETCH_REFIT times as large,
# and once it saw SKETCH_REFIT_MAX vectors, for good (a new fit projects every vector again).
SKETCH_MIN = 2_048
SKETCH_DIMS = (32, 48, 64, 96, 128)
SKETCH_EXPLAINED = 0.85
SKETCH_SAMPLE = 4_096
SKETCH_DEPTH_FACTOR = 5
SKETCH_DEPTH_MIN = 256
SKETCH_REFIT = 4
SKETCH_REFIT_MAX = 65_536
SAMPLE_STRIDE = 16  # a scan helper's threshold for a sketch's deepest rows: every 16th score
# The sketch's rows are narrowed to NARROW_FACTOR times the neighbours wanted (INT8_SLACK more) by
# their stored int8 components and an int8 query before they are rescored (_code_rescored).
NARROW_FACTOR = 2

# A scope's arrays, once it grows, are allocated GROWTH times its rows (GROWTH_MIN more at least):
# rows read later are written past those of the copies already handed out, in place, instead of a
# new copy of the whole scope on every read that finds new vectors (15 ms at 20,000 vectors, 54 at
# 100,000: every recall after a write, in an agent's remember-then-recall loop).
GROWTH = 1.25
GROWTH_MIN = 256

# A store reads a write's new vectors ahead of the next recall (the SQLite store on the indexing
# process's report, PostgreSQL's on its embedding thread's) into the scope copies it keeps that are
# at most this many docs behind the new mark (read_ahead_copies); older ones are left to their next
# recall (a scope not recalled for that long may never be again).
READ_AHEAD_DOCS = 4096

MIN_SIMILARITY = 0.3
"""The cosine below which a neighbour is no candidate for recall (the hybrid recall provider's
``min_similarity``); a graph's answer whose best neighbour is below it is checked exactly."""

if TYPE_CHECKING:
    import numpy as np

    from ..embedding.static_embedder import PieceReader

__all__ = [
    "MIN_SIMILARITY",
    "READ_AHEAD_DOCS",
    "Begun",
    "PiecesQuery",
    "ScopeVectors",
    "ScopesSearch",
    "begin_nearest",
    "decode_codes",
    "decode_vectors",
    "extended",
    "nearest",
    "read_ahead_copies",
    "ready",
    "record_text",
    "vector_bytes",
]


def record_text(title: str, body: str, tags: Sequence[str]) -> str:
    """What a record is embedded as: ``title: body (tag, tag)``, the form the recall-quality
    benchmark chose on its tuning sets (benchmarks/recall_quality/hybrid.py)."""
    text = f"{title}: {body}"
    return f"{text} ({', '.join(tags)})" if tags else text


def vector_bytes(vector: np.ndarray) -> bytes:
    """One vector as stored: its scale (little-endian float32, the largest component's magnitude
    over 127), then each component over the scale rounded to an int8. A vector with no component
    of a normal float32's magnitude is stored as zeros (scale 1)."""
    import numpy as np

    v = np.asarray(vector, dtype=np.float64)
    peak = float(np.max(np.abs(v))) if v.size else 0.0
    if peak / 127.0 < float(np.finfo(np.float32).tiny):  # no scale a float32 holds: zeros
        scale, q = np.float32(1.0), np.zeros(v.shape, dtype=np.int8)
    else:
        scale = np.float32(min(peak / 127.0, float(np.finfo(np.float32).max)))
        q = np.clip(np.rint(v / float(scale)), -127, 127).astype(np.int8)
    stored: bytes = scale.astype("<f4").tobytes() + q.tobytes()
    return stored


@functools.cache
def _compact(dim: int) -> np.dtype:
    """A stored vector's layout (:func:`vector_bytes`): its float32 scale, then ``dim`` int8
    components."""
    import numpy as np

    return np.dtype([("s", "<f4"), ("q", "i1", (dim,))])


def decode_vectors(blobs: Sequence[bytes], dim: int) -> np.ndarray:
    """Stored vectors (:func:`vector_bytes`, or plain float32) as one float32 matrix, rows L2-normalized.

    Raises:
        ValueError: a blob is neither ``dim + 4`` nor ``4 * dim`` bytes long.
    """
    return _decoded(blobs, dim)[0]


def _decoded(blobs: Sequence[bytes], dim: int) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`decode_vectors` and :func:`decode_codes` of the same blobs, which are parsed once
    when all are compact (as a store writes them: a read after each write decodes one or two, and
    each numpy call there runs cold)."""
    import numpy as np

    codes = decode_codes(blobs, dim)
    if codes is not None and len(codes):
        matrix = codes.astype(np.float32)  # (the scale is not read: below)
        matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), np.float32(1e-12))
        return matrix, codes
    out = np.zeros((len(blobs), dim), dtype=np.float32)
    compact = [i for i, b in enumerate(blobs) if len(b) == dim + 4]
    if compact:
        packed = np.frombuffer(b"".join(bytes(blobs[i]) for i in compact), dtype=_compact(dim))
        # A row's direction is its int8 components' (the scale only restores its length, and the
        # rows are normalized below), so the scale is not read: no overflow, whatever it is.
        out[compact] = packed["q"].astype(np.float32)
    if len(compact) < len(blobs):
        plain = [i for i, b in enumerate(blobs) if len(b) != dim + 4]
        bad = [i for i in plain if len(blobs[i]) != 4 * dim]
        if bad:
            raise ValueError(f"a stored vector is {len(blobs[bad[0]])} bytes, not {dim + 4} or {4 * dim}")
        rows = np.frombuffer(b"".join(bytes(blobs[i]) for i in plain), dtype="<f4").reshape(len(plain), dim)
        peaks = np.max(np.abs(rows), axis=1, keepdims=True)  # scaled first: a norm could overflow
        out[plain] = rows / np.where(peaks > 0, peaks, np.float32(1))
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    out /= np.maximum(norms, np.float32(1e-12))
    return out, codes


class _Room:
    """Arrays that copies of a scope are the first rows of (``arrays[name][:filled]``), allocated
    past them. A copy never changes: rows are only ever written past ``filled``, and only from the
    copy that ends there (another copy, the same rows or fewer, gets a room of its own)."""

    def __init__(self, arrays: dict[str, np.ndarray], filled: int) -> None:
        self.arrays = arrays
        self.filled = filled
        self.lock = threading.Lock()


def _grown(
    room: _Room | None, have: dict[str, np.ndarray], more: dict[str, np.ndarray]
) -> tuple[dict[str, np.ndarray], _Room]:
    """``have[name]`` with ``more[name]`` appended, for each name, as views of one room's arrays:
    written in place when ``have`` is what ``room`` holds and it has the space, into a new room
    GROWTH times as large otherwise."""
    import numpy as np

    n = len(next(iter(have.values())))
    m = n + len(next(iter(more.values())))
    if room is not None:
        with room.lock:
            if room.filled == n and room.arrays.keys() == have.keys() and _ends_room(room, have, m):
                for name, rows in more.items():
                    room.arrays[name][n:m] = rows
                room.filled = m
                return {name: array[:m] for name, array in room.arrays.items()}, room
    capacity = max(int(m * GROWTH), m + GROWTH_MIN)
    arrays = {}
    for name, rows in have.items():
        # A shared array (a sketched scope's, for the scan helpers: shared.py) grows shared.
        make = shared.zeros if shared.locate(rows) is not None else np.empty
        array = make((capacity, *rows.shape[1:]), dtype=rows.dtype)
        array[:n] = rows
        array[n:m] = more[name]
        arrays[name] = array
    grown = _Room(arrays, m)
    return {name: array[:m] for name, array in arrays.items()}, grown


def _ends_room(room: _Room, have: dict[str, np.ndarray], m: int) -> bool:
    """Whether each of ``have`` is the first rows of the room's array of its name, which holds
    ``m`` rows."""
    for name, rows in have.items():
        array = room.arrays[name]
        if len(array) < m or rows.ctypes.data != array.ctypes.data or rows.dtype != array.dtype:
            return False
    return True


@dataclass(frozen=True)
class Sketch:
    """A scope's vectors in a few of their principal directions, as int8: ``rows[i]`` is row ``i``
    of the scope's matrix projected by ``projection``, over its largest component's magnitude, x
    127, rounded; ``scales[i]`` is one over that int8 row's length (0 for a row of zeros), so
    ``rows[i] . q x scales[i]`` orders rows by their cosine with ``q`` in the sketch. A quarter of
    float32's bytes, which is what a scan of the sketch costs on a recall (its rows are out of the
    caches by then); the int8 rounding moved no neighbour in or out of the development sets' top
    100 (benchmarks/ann.py --devsets). ``projection`` is ``None`` where the fit found no few
    directions holding most of the variance (no sketch: exact search). ``fitted``: how many vectors
    the scope had at the fit."""

    projection: np.ndarray | None  # float32 (dim, d)
    rows: np.ndarray | None  # int8 (n, d)
    scales: np.ndarray | None  # float32 (n,)
    fitted: int
    room: _Room | None = field(default=None, repr=False, compare=False)  # rows and scales: its first rows


@dataclass(frozen=True)
class ScopeVectors:
    """One scope's vectors: ``docs[i]`` is the record of row ``i`` of ``matrix``; ``mark`` is what
    the store's mark was when they were read (a copy is current while the mark is unchanged)."""

    docs: np.ndarray  # int64, ascending
    matrix: np.ndarray  # float32 (n, dim), rows L2-normalized
    mark: tuple[int, ...]
    ann: ScopeAnn | None = None  # the scope's graph index, once it is large (ann.py)
    codes: np.ndarray | None = None  # int8 (n, dim): the stored components, when all are compact
    sketch: Sketch | None = None  # from SKETCH_MIN vectors
    room: _Room | None = field(default=None, repr=False, compare=False)  # docs, matrix, codes: its first rows


def extended(
    cached: ScopeVectors | None,
    rows: Sequence[tuple[int, bytes]],
    dim: int,
    mark: tuple[int, ...],
    *,
    ann_min: int | None = None,
) -> ScopeVectors:
    """``cached`` (or nothing) with ``rows`` (doc, stored vector), docs past its own, appended
    (written in place past the cached copy's rows where its arrays have room: GROWTH; ``cached``
    itself never changes); a scope of at least ``ann_min`` vectors gets a graph index (``None``:
    never), which the store starts building (:meth:`ScopeAnn.start`) once this copy is the one it
    keeps."""
    import numpy as np

    docs = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    blobs = [bytes(r[1]) for r in rows]
    matrix, codes = _decoded(blobs, dim)
    ann = sketch = room = None
    if cached is not None and not len(docs):
        docs, matrix, codes, room = cached.docs, cached.matrix, cached.codes, cached.room
        ann, sketch = cached.ann, cached.sketch
    elif cached is not None:
        # Appended in place past the cached copy's rows where its room allows (see GROWTH).
        have = {"docs": cached.docs, "matrix": cached.matrix}
        more = {"docs": docs, "matrix": matrix}
        if cached.codes is not None and codes is not None:
            have["codes"], more["codes"] = cached.codes, codes
        grown, room = _grown(cached.room, have, more)
        docs, matrix, codes = grown["docs"], grown["matrix"], grown.get("codes")
        ann, sketch = cached.ann, cached.sketch
    sketch = sketched(sketch, matrix)
    if sketch is not None and sketch.rows is not None:
        # A scan helper narrows and rescores its rows (once shared, they grow shared).
        matrix = shared.copy(matrix)
        codes = None if codes is None else shared.copy(codes)
    if ann is None and ann_min is not None and len(docs) >= ann_min and ann_available():
        ann = ScopeAnn(dim)
    return ScopeVectors(docs, matrix, mark, ann, codes, sketch, room)


def read_ahead_copies(copies: Mapping[int, ScopeVectors], mark: tuple[int, ...]) -> dict[int, ScopeVectors]:
    """The scope copies (by scope id) a read-ahead to the store's new ``mark`` brings up: those of
    the same vectors (every part of their mark but the last, the doc they are read up to, equal to
    ``mark``'s: on PostgreSQL the generation) that are behind it by at most READ_AHEAD_DOCS docs."""
    upto, same = mark[-1], mark[:-1]
    return {
        scope_id: copy
        for scope_id, copy in copies.items()
        if copy.mark[:-1] == same and upto - READ_AHEAD_DOCS <= copy.mark[-1] < upto
    }


def exact_search(vectors: ScopeVectors) -> ExactSearch:
    """The search ``vectors`` get without a graph (through their sketch, where they have one): what
    a graph of them must undercut (ScopeAnn.start)."""
    without = replace(vectors, ann=None)
    return lambda query, limit: nearest(without, query, limit)


def sketched(sketch: Sketch | None, matrix: np.ndarray) -> Sketch | None:
    """The sketch of ``matrix`` (a scope's rows): ``sketch`` (of its first rows) with the rows
    since projected, or a new fit when the scope has outgrown it (see SKETCH_REFIT)."""

    n = len(matrix)
    if n < SKETCH_MIN:
        return None
    if sketch is not None and (n < SKETCH_REFIT * sketch.fitted or sketch.fitted >= SKETCH_REFIT_MAX):
        if sketch.projection is None or sketch.rows is None or sketch.scales is None or len(sketch.rows) == n:
            return sketch  # (rows and scales are set together: Sketch)
        rows, scales = _projected(matrix[len(sketch.rows) :], sketch.projection)
        have = {"rows": sketch.rows, "scales": sketch.scales}
        grown, room = _grown(sketch.room, have, {"rows": rows, "scales": scales})
        return Sketch(sketch.projection, grown["rows"], grown["scales"], sketch.fitted, room)
    projection = _principal(matrix)
    if projection is None:
        return Sketch(None, None, None, n)
    rows, scales = _projected(matrix, projection)
    return Sketch(shared.copy(projection), shared.copy(rows), shared.copy(scales), n)


def _principal(matrix: np.ndarray) -> np.ndarray | None:
    """The fewest of SKETCH_DIMS principal directions of (a sample of) ``matrix`` that hold
    SKETCH_EXPLAINED of its variance, as a float32 (dim, d) projection; ``None`` if none does."""
    import numpy as np

    n, dim = matrix.shape
    rng = np.random.default_rng(n)  # the same scope, the same fit
    sample = matrix[np.sort(rng.choice(n, SKETCH_SAMPLE, replace=False))] if n > SKETCH_SAMPLE else matrix
    centred = sample.astype(np.float64) - sample.mean(axis=0, dtype=np.float64)
    variances, directions = np.linalg.eigh(centred.T @ centred)  # ascending
    variances, directions = variances[::-1], directions[:, ::-1]
    total = float(variances.sum())
    if not total > 0.0:
        return None
    held = np.cumsum(variances) / total
    for d in SKETCH_DIMS:
        if d * 3 > dim:  # past a third of the dimensions a sketch saves too little
            break
        if held[d - 1] >= SKETCH_EXPLAINED:
            projection: np.ndarray = np.ascontiguousarray(directions[:, :d], dtype=np.float32)
            return projection
    return None


def _projected(rows: np.ndarray, projection: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``rows`` projected, as a sketch keeps them (Sketch): int8 rows and their scales."""
    import numpy as np

    out = rows @ projection
    peaks = np.max(np.abs(out), axis=1, keepdims=True) if len(out) else np.zeros((0, 1), np.float32)
    codes = np.clip(np.rint(out * (127.0 / np.where(peaks > 0, peaks, 1.0))), -127, 127).astype(np.int8)
    lengths = np.linalg.norm(codes.astype(np.float32), axis=1)
    scales = np.divide(1.0, lengths, out=np.zeros_like(lengths), where=lengths > 0)
    return codes, scales.astype(np.float32, copy=False)  # (C-contiguous, as astype makes them)


def decode_codes(blobs: Sequence[bytes], dim: int) -> np.ndarray | None:
    """The int8 components of stored vectors (:func:`vector_bytes`) as one matrix, or ``None`` if
    any is not compact; beside :func:`decode_vectors`, what a scope keeps of them (ScopeVectors)."""
    import numpy as np

    if any(len(b) != dim + 4 for b in blobs):
        return None
    if not blobs:
        return np.zeros((0, dim), dtype=np.int8)
    packed = np.frombuffer(b"".join(blobs), dtype=_compact(dim))
    codes: np.ndarray = np.ascontiguousarray(packed["q"])
    return codes


Finish = Callable[[], list[tuple[int, float]]]
"""The rest of a search begun by :func:`begin_nearest`: its answer, once the scan it started ends."""


class Begun:
    """A search begun whose scan runs on another thread or in a scan helper (a :data:`Finish`):
    called, its answer (waiting for the scan); :meth:`ready`, whether the scan is done, so that
    a caller with other work can do it first (hybrid recall reads records meanwhile)."""

    __slots__ = ("_finish", "_ready")

    def __init__(self, finish: Finish, ready: Callable[[], bool]) -> None:
        self._finish, self._ready = finish, ready

    def __call__(self) -> list[tuple[int, float]]:
        return self._finish()

    def ready(self) -> bool:
        return self._ready()


def ready(finish: Finish) -> bool:
    """Whether calling ``finish`` waits for no scan (one that is not a :class:`Begun` never does)."""
    return finish.ready() if isinstance(finish, Begun) else True


class Pending(Protocol):
    """A scan handed to another thread (a ``concurrent.futures.Future``, a handoff.Job) or to a
    scan helper (scan_process.py)."""

    def done(self) -> bool:
        """Whether its answer is in (read without waiting)."""
        ...

    def cancel(self) -> bool:
        """Take it back if no thread started it (``True``: the caller runs it)."""
        ...

    def result(self) -> Any:
        """Its answer, once the thread is done."""
        ...


Offload = Callable[[Callable[[], Any]], Pending]
"""Runs a scan on another thread (handoff.Handoff.submit, ``ThreadPoolExecutor.submit``). One
with a ``remote`` attribute (a :data:`Remote`) offers a sketch's scan to it first."""

Remote = Callable[[ScanJob, Callable[[], Any]], "Pending | None"]
"""Runs a sketch's scan in a helper process (scan_process.ScanProcesses.submit), the callable
its fallback; ``None`` when it cannot take it now."""


class PiecesQuery:
    """A query a scan helper can embed itself (a static model's, once its table is shared:
    hybrid.py): its text, how its pieces are read (static_embedder.PieceReader), the model's table
    and weights (static_embedder.piece_mean), and :meth:`vector`, the query's embedding computed
    here for any search that runs here (once). ``answered``: the embedding a helper sent back with
    its answer, if one did."""

    def __init__(
        self,
        text: str,
        reader: PieceReader,
        table: np.ndarray,
        weights: np.ndarray,
        embed: Callable[[], np.ndarray],
    ) -> None:
        self.text, self.reader, self.table, self.weights = text, reader, table, weights
        self._embed = embed
        self._vector: np.ndarray | None = None
        self.answered: np.ndarray | None = None

    def vector(self) -> np.ndarray:
        if self._vector is None:
            self._vector = self.answered if self.answered is not None else self._embed()
        return self._vector


def nearest(
    vectors: ScopeVectors, query: np.ndarray, limit: int, allowed: Collection[int] | None = None
) -> list[tuple[int, float]]:
    """The ``limit`` docs nearest ``query`` by cosine (best first, ties by doc), among ``allowed``."""
    return begin_nearest(vectors, query, limit, allowed)()


def begin_nearest(
    vectors: ScopeVectors,
    query: np.ndarray | PiecesQuery,
    limit: int,
    allowed: Collection[int] | None = None,
    offload: Offload | None = None,
) -> Finish:
    """:func:`nearest` in two steps: the search is begun now and its answer is the call of what
    this returns. With ``offload``, a sketched scope's scan runs on ``offload``'s thread meanwhile
    (the sketch's products, the rows they rank first, those rows rescored: a few SimSIMD and numpy
    calls that release the GIL, with little Python between them to wait for it behind the
    caller's), so that the caller ranks lexically beside it; the rest runs on the caller's thread.
    On benchmarks/hybrid.py's realm (20,000 records, a static model's query) the caller waited
    for the scan in one recall in ten; the whole search on a thread, the embedding and each numpy
    step taking the GIL in turn with the lexical ranking, gained nothing (docs/benchmarks.md).

    A :class:`PiecesQuery` is embedded by the helper that scans a sketched scope, and here (its
    ``vector()``) for every other search."""
    import numpy as np

    if not len(vectors.docs) or limit <= 0:
        return lambda: []
    docs, matrix = vectors.docs, vectors.matrix
    if isinstance(query, PiecesQuery):
        begun = _begin_pieces(vectors, query, limit, allowed, offload)
        if begun is not None:
            return begun
        query = query.vector()
    if allowed is not None:
        # Only these docs' rows (docs ascend): exact, at the cost of the filter's size.
        wanted = np.unique(np.fromiter(allowed, dtype=np.int64))
        rows = np.searchsorted(docs, wanted)
        inside = rows < len(docs)
        rows, wanted = rows[inside], wanted[inside]
        rows = rows[docs[rows] == wanted]
        docs, matrix = docs[rows], matrix[rows]
        if not len(docs):
            return lambda: []
    elif vectors.ann is not None:
        found = vectors.ann.nearest(docs, matrix, query, limit)
        if found is not None and found and found[0][1] >= MIN_SIMILARITY:
            graph = [(doc, score) for doc, score in found if math.isfinite(score)]
            return lambda: graph
        # No neighbour the graph found is one recall would use: a graph of near-duplicates can
        # keep the one record that matches out of its search's reach, so the product decides.
    q = query.astype(np.float32, copy=False)  # (read only here and on the scan's thread)
    sketch = vectors.sketch if allowed is None else None
    depth = max(SKETCH_DEPTH_FACTOR * limit, SKETCH_DEPTH_MIN)
    if (
        sketch is not None
        and sketch.projection is not None
        and sketch.rows is not None
        and sketch.scales is not None
        and depth < len(docs)
    ):
        # Ranked in the sketch first, as deep as SKETCH_DEPTH_FACTOR times the neighbours wanted,
        # then the rows it found rescored (sketch_scan: einsum and SimSIMD, GIL released: see below).
        q8 = _sketch_query(np.einsum("j,jk->k", q, sketch.projection))
        if q8 is not None:
            rows8, scales, codes = sketch.rows, sketch.scales, vectors.codes

            def scan() -> tuple[np.ndarray, np.ndarray]:
                return sketch_scan(matrix, codes, rows8, scales, q8, q, depth, limit)

            if offload is None:
                here = scan()
                return lambda: _ordered(docs, *here)
            # To a scan helper process where the offload has them (scan_process.py), else a thread.
            remote: Remote | None = getattr(offload, "remote", None)
            pending = None
            if remote is not None:
                pending = remote(ScanJob(rows8, scales, q8, matrix, codes, q, depth, limit), scan)
            if pending is None:
                pending = offload(scan)

            def finish() -> list[tuple[int, float]]:
                # Still waiting for a thread (the cores busy): run here rather than wait for one.
                return _ordered(docs, *(scan() if pending.cancel() else pending.result()))

            return Begun(finish, pending.done)
    if allowed is None and vectors.codes is not None and len(docs) >= INT8_MIN:
        # A first pass over the int8 components (a quarter of the bytes), twice as deep as wanted
        # and more, then the float32 rows of what it found: the product's answer at half its cost.
        coarse = int8_rows(vectors.codes, q, min(len(docs), 2 * limit + INT8_SLACK))
        if coarse is not None and len(coarse):
            found8 = _rescored(docs, matrix, coarse, q, limit)
            return lambda: found8
    # einsum's own loop, not BLAS: OpenBLAS's threads spin after each call and, on a gateway whose
    # cores are busy (the query's embedding, the database, the request threads), a multithreaded
    # product for one query took 5 ms instead of 0.2 (benchmarks/hybrid.py, hybrid p50 28 ms
    # against 13 with BLAS held to one thread). Single-threaded, it is 0.7 ms for 10,000 vectors.
    exact = _ordered(docs, *_exact_rows(matrix, q, limit))
    return lambda: exact


def _begin_pieces(
    vectors: ScopeVectors,
    query: PiecesQuery,
    limit: int,
    allowed: Collection[int] | None,
    offload: Offload | None,
) -> Finish | None:
    """A sketched scope's search for a query its scan helper embeds (:func:`begin_nearest`);
    ``None`` where no helper takes it (the search then runs with the query embedded here)."""
    import numpy as np

    sketch = vectors.sketch
    remote: Remote | None = getattr(offload, "remote", None)
    depth = max(SKETCH_DEPTH_FACTOR * limit, SKETCH_DEPTH_MIN)
    ann = vectors.ann
    if (
        remote is None
        or allowed is not None
        or (ann is not None and ann.ready)  # the graph answers (its query embedded here)
        or sketch is None
        or sketch.projection is None
        or sketch.rows is None
        or sketch.scales is None
        or depth >= len(vectors.docs)
    ):
        return None
    docs, matrix, codes = vectors.docs, vectors.matrix, vectors.codes
    rows8, scales, projection = sketch.rows, sketch.scales, sketch.projection

    def scan() -> tuple[np.ndarray, np.ndarray]:  # here, when the helper fails or is late
        q = query.vector().astype(np.float32, copy=False)
        q8 = _sketch_query(np.einsum("j,jk->k", q, projection))
        if q8 is None:  # nothing in the sketch's directions: the exact product
            return _exact_rows(matrix, q, limit)
        return sketch_scan(matrix, codes, rows8, scales, q8, q, depth, limit)

    pieces = (query.table, query.weights, projection)
    job = ScanJob(rows8, scales, None, matrix, codes, None, depth, limit, pieces, query.text, query.reader)
    pending = remote(job, scan)
    if pending is None:
        return None

    def finish() -> list[tuple[int, float]]:
        found = pending.result()
        if len(found) == 3:  # the helper's answer: ordered, finite, with the query's embedding
            top, scores, query.answered = found
            answer = list(zip(docs.take(top).tolist(), scores, strict=True))
        else:
            answer = _ordered(docs, *found)
        if ann is not None:  # a graph not built yet: the query is one its build is checked with
            ann.unbuilt(docs, matrix, query.vector())
        return answer

    return Begun(finish, pending.done)


class ScopesSearch:
    """A search of some scopes' vectors (``VectorReads.searcher``), as ``read`` gives them when
    the search begins: called, the ``limit`` docs nearest a query (cosine, best first) among
    ``allowed``; :meth:`begin` starts the same search in two steps (:func:`begin_nearest`).

    ``progress``: ``(newest doc, embedded up to)`` of the realm as the store read its vectors for
    this search (``VectorReads.vector_progress``'s answer, read with them): given by a store that
    reads them at once, set by ``read`` for one that reads them when the search begins; ``None``
    while unknown."""

    def __init__(
        self, read: Callable[[], Sequence[ScopeVectors]], progress: tuple[int, int] | None = None
    ) -> None:
        self._read = read
        self.progress = progress

    def __call__(
        self, query: np.ndarray, limit: int, allowed: Collection[int] | None = None
    ) -> list[tuple[int, float]]:
        return self.begin(query, limit, allowed)()

    def begin(
        self,
        query: np.ndarray | PiecesQuery,
        limit: int,
        allowed: Collection[int] | None = None,
        offload: Offload | None = None,
    ) -> Finish:
        """The search begun (each scope's scan on ``offload``'s thread, where it has one), its
        answer the call of what this returns."""
        begun = [begin_nearest(scope, query, limit, allowed, offload) for scope in self._read()]
        if len(begun) == 1:  # best first already
            return begun[0]

        def merged() -> list[tuple[int, float]]:
            found = [hit for finish in begun for hit in finish()]
            return sorted(found, key=lambda hit: -hit[1])[:limit]

        return Begun(merged, lambda: all(ready(finish) for finish in begun))


def _sketch_query(query: np.ndarray) -> np.ndarray | None:
    """A query projected on a sketch's directions, as int8 (over its largest component x 127);
    ``None`` for a query with nothing in them."""
    import numpy as np

    peak = float(np.abs(query).max(initial=0.0))
    if not peak > 0.0:
        return None
    # No clip: the largest component is +-peak x (127 / peak), within rounding of 127, and rounds
    # to it. (A recall calls this cold, where each numpy call costs 5 to 10 us.)
    q8: np.ndarray = np.rint(query * (127.0 / peak)).astype(np.int8)
    return q8


def _deepest(products: np.ndarray, scales: np.ndarray, depth: int) -> np.ndarray:
    """The ``depth`` sketch rows of the highest ``products`` x ``scales`` (their cosines with the
    query in the sketch), in no set order.

    One partial sort of the whole scope (130 us at 20,000 rows), not the rows above a threshold
    sampled from it (15 us, five numpy calls): this runs on the scan's thread beside the lexical
    ranking, and each numpy call there takes the GIL back from the ranking when it ends; with the
    sampled threshold hybrid recall's p50 was 2.16x lexical against 1.95x (docs/benchmarks.md)."""
    import numpy as np

    scores = products * scales
    n = len(scores)
    found: np.ndarray = np.argpartition(scores, n - depth)[n - depth :]
    return found


def sketch_scan(
    matrix: np.ndarray,
    codes: np.ndarray | None,
    rows8: np.ndarray,
    scales: np.ndarray,
    q8: np.ndarray,
    q: np.ndarray,
    depth: int,
    limit: int,
    deepest: Callable[[np.ndarray, np.ndarray, int], np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """A sketched scope's scan: the ``depth`` rows of its sketch ``rows8`` / ``scales`` nearest
    the int8 query ``q8`` (``deepest``: how they are taken, default :func:`_deepest`), rescored
    against ``q`` from their stored int8 components ``codes`` where the scope has them
    (:func:`_code_rescored`), else from its float32 rows ``matrix``; the ``limit`` best rows and
    their cosines, in no set order. Run here and, with :func:`_deepest_sampled`, by a scan helper
    (scan_process.py)."""
    coarse = (deepest or _deepest)(_int8_products(rows8, q8), scales, depth)
    if codes is not None:
        found = _code_rescored(codes, coarse, q, limit)
        if found is not None:
            return found
    return _rescored_rows(matrix, coarse, q, limit)


def _code_rescored(
    codes: np.ndarray, coarse: np.ndarray, query: np.ndarray, limit: int
) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`_rescored_rows` from the rows' stored int8 components: a row of the float32 matrix
    is its components normalized, so its cosine with ``query`` is their product with it over
    their norm (float32 products, within 5e-7 of the matrix's). The rows are first narrowed to
    NARROW_FACTOR x ``limit`` (+ INT8_SLACK) by the product with the query as int8 (SimSIMD),
    whose order is the cosines' but for the query's rounding. Reads a quarter of the bytes of the
    float32 rows, and none of the matrix; ``None`` without SimSIMD or for a query of zeros."""
    import numpy as np

    simsimd = _simsimd()
    q8 = _sketch_query(query)
    if simsimd is None or q8 is None:
        return None
    coarse = np.sort(coarse)  # read in the order they lie (as _rescored_rows)
    picked = np.take(codes, coarse, axis=0)
    # Each row's norm (a row of zeros: its cosine 0, as the matrix's row of zeros gives).
    norms = np.sqrt(np.maximum(np.asarray(simsimd.dot(picked, picked)), 1.0))
    keep = NARROW_FACTOR * limit + INT8_SLACK
    if len(coarse) > keep:
        near = np.asarray(simsimd.cdist(q8[None], picked, metric="dot"))[0] / norms
        chosen = np.argpartition(-near, keep - 1)[:keep]
        coarse, picked, norms = coarse[chosen], picked[chosen], norms[chosen]
    scores = (np.einsum("ij,j->i", picked.astype(np.float32), query) / norms).astype(np.float32)
    best = np.argpartition(-scores, min(limit, len(coarse)) - 1)[:limit]
    return coarse[best], scores[best]


def _exact_rows(matrix: np.ndarray, q: np.ndarray, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``limit`` rows of ``matrix`` of the highest product with ``q`` and their products, in
    no set order (the exact search)."""
    import numpy as np

    scores = np.einsum("ij,j->i", matrix, q)
    k = min(limit, len(scores))
    top = np.argpartition(-scores, k - 1)[:k]
    return top, scores[top]


def _deepest_sampled(products: np.ndarray, scales: np.ndarray, depth: int) -> np.ndarray:
    """:func:`_deepest`'s rows (which of rows tied at the ``depth``-th score aside) in a third of
    its time at 20,000 rows: the rows at or above a threshold read from every SAMPLE_STRIDE-th
    score (twice as deep as wanted, scaled), and the ``depth`` best of those; the whole partial
    sort where fewer pass. Five numpy calls: for a scan helper (scan_process.py), where no other
    thread waits for the GIL between them."""
    import numpy as np

    scores = products * scales
    n = len(scores)
    sample = scores[::SAMPLE_STRIDE]
    k = min(len(sample), 2 * depth // SAMPLE_STRIDE + 1)
    threshold = np.partition(sample, len(sample) - k)[len(sample) - k]
    passed = np.flatnonzero(scores >= threshold)
    if len(passed) < depth:
        found: np.ndarray = np.argpartition(scores, n - depth)[n - depth :]
        return found
    within = scores[passed]
    chosen: np.ndarray = passed[np.argpartition(within, len(within) - depth)[len(within) - depth :]]
    return chosen


def _int8_products(rows: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Each int8 row's dot product with the int8 ``query``, as float64: SimSIMD's kernel for the
    CPU (the `semantic` extra; about a fifth of numpy's int32 einsum at 20,000 rows of 96), numpy
    without it."""
    import numpy as np

    simsimd = _simsimd()
    if simsimd is not None:
        products: np.ndarray = np.asarray(simsimd.cdist(query[None], rows, metric="dot"))[0]
        return products
    exact: np.ndarray = np.einsum("ij,j->i", rows, query, dtype=np.int32, casting="unsafe")
    return exact.astype(np.float64)


@functools.cache
def _simsimd() -> Any | None:
    """The ``simsimd`` module, or ``None`` without it (probed once per process)."""
    try:
        import simsimd
    except ImportError:
        return None
    return simsimd


def _rescored(
    docs: np.ndarray, matrix: np.ndarray, coarse: np.ndarray, query: np.ndarray, limit: int
) -> list[tuple[int, float]]:
    """The ``limit`` best of the rows ``coarse`` (a first pass's finds) by their float32 cosine."""
    return _ordered(docs, *_rescored_rows(matrix, coarse, query, limit))


def _rescored_rows(
    matrix: np.ndarray, coarse: np.ndarray, query: np.ndarray, limit: int
) -> tuple[np.ndarray, np.ndarray]:
    """The ``limit`` best of the rows ``coarse`` by their float32 cosine, in no set order, and
    their cosines."""
    import numpy as np

    # The rows read in the order they lie (the matrix is out of the caches by now, and np.take
    # over ascending rows is a quarter quicker than fancy indexing in the order found).
    coarse = np.sort(coarse)
    scores = np.einsum("ij,j->i", np.take(matrix, coarse, axis=0), query)
    best = np.argpartition(-scores, min(limit, len(coarse)) - 1)[:limit]
    return coarse[best], scores[best]


def _ordered(docs: np.ndarray, top: np.ndarray, scores: np.ndarray) -> list[tuple[int, float]]:
    """``(doc, cosine)`` of the rows ``top`` with their ``scores``, best first, ties by doc."""
    import numpy as np

    order = np.lexsort((docs[top], -scores))
    top, scores = top[order], scores[order]
    kept = np.isfinite(scores)
    return list(zip(docs[top[kept]].tolist(), scores[kept].tolist(), strict=True))
