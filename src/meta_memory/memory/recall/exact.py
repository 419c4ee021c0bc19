"""Exact nearest neighbours of one query over a matrix of unit rows, at int8 speed.

A float32 matrix-vector product reads four bytes per component: about 1.5 ms for 20,000 vectors of
384 dimensions on one core here, more than the lexical ranking it is fused with. :func:`top`
first scores every row in int8 with numkong's SIMD dot products over the rows' int8 codes, packed
once in blocks (0.2 ms for the same 20,000), then scores again in float32 every row that pass
cannot rule out, and returns those exact scores.

The query is split into two int8 vectors (its codes, and the codes of what they leave out), both
scored in the one pass, so the int8 score of a row is off from its float32 score by at most
``residual * |q| + |row| * |q - q codes|`` (Cauchy-Schwarz; the largest over the rows is taken),
with ``|q - q codes|`` about 1/16,000 of ``|q|``. A row whose int8 score is more than twice that
bound below the ``k``-th best int8 score cannot be among the ``k`` best, so ruling out is a bound,
not a margin. For vectors a store
keeps as int8 the residual is nil; on vectors that differ by less than the bound the float32 pass
reads as many rows as they are, and costs what the plain product costs.

Without numkong (it comes with usearch, in the ``semantic`` extra), and for small matrices, the
float32 product is the whole search.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

__all__ = ["Quantized", "quantize", "top"]

INT8_FROM = 2_048  # rows: below this the float32 product is as fast
BLOCK = 4_096  # rows packed together for numkong; a scope that grows repacks only its last block
SLACK = 1e-6  # added to every bound: float32 rounding in the int8 pass's scaling


@dataclass(frozen=True)
class Quantized:
    """A matrix's rows as int8 codes: ``row ≈ codes[i] * factors[i]``."""

    codes: np.ndarray  # int8 (n, dim)
    factors: np.ndarray  # float32 (n,): the row's largest magnitude over 127
    norms: np.ndarray  # float32 (n,): |codes[i] * factors[i]|
    residuals: np.ndarray  # float32 (n,): |row - codes[i] * factors[i]|
    packed: tuple[Any, ...] = ()  # numkong's packed codes, BLOCK rows each, the last maybe fewer

    def __len__(self) -> int:
        return len(self.factors)

    def rows(self, which: np.ndarray) -> Quantized:
        """Some rows (not packed: a filter's rows are searched once)."""
        return Quantized(self.codes[which], self.factors[which], self.norms[which], self.residuals[which])

    def extended(self, other: Quantized) -> Quantized:
        import numpy as np

        if not len(other):
            return self
        codes = np.concatenate([self.codes, other.codes])
        full = len(self) // BLOCK  # whole blocks stay packed as they are
        packed = _pack(codes, self.packed[:full], full * BLOCK) if len(self.packed) >= full else ()
        return Quantized(
            codes,
            np.concatenate([self.factors, other.factors]),
            np.concatenate([self.norms, other.norms]),
            np.concatenate([self.residuals, other.residuals]),
            packed,
        )


def quantize(matrix: np.ndarray) -> Quantized:
    """``matrix`` (float32, n x dim) as int8 codes with a factor per row, packed for numkong."""
    import numpy as np

    peaks = np.max(np.abs(matrix), axis=1) if len(matrix) else np.zeros(0, dtype=np.float32)
    factors = (np.where(peaks > 0, peaks, np.float32(1.0)) / np.float32(127.0)).astype(np.float32)
    codes = np.ascontiguousarray(np.clip(np.rint(matrix / factors[:, None]), -127, 127).astype(np.int8))
    approx = codes.astype(np.float64) * factors[:, None]
    norms = np.linalg.norm(approx, axis=1).astype(np.float32)
    residuals = np.linalg.norm(matrix - approx, axis=1).astype(np.float32)
    return Quantized(codes, factors, norms, residuals, _pack(codes, (), 0))


def _pack(codes: np.ndarray, kept: tuple[Any, ...], start: int) -> tuple[Any, ...]:
    """``kept`` (the packed blocks of ``codes[:start]``), then ``codes[start:]`` packed in blocks;
    nothing without numkong or below INT8_FROM rows (searched by the float32 product)."""
    import numpy as np

    nk = _numkong()
    if nk is None or len(codes) < INT8_FROM:
        return ()
    fresh = tuple(
        nk.dots_pack(np.ascontiguousarray(codes[at : at + BLOCK])) for at in range(start, len(codes), BLOCK)
    )
    return kept + fresh


@functools.cache
def _numkong() -> ModuleType | None:
    try:
        import numkong
    except ImportError:
        return None
    return numkong


def top(
    matrix: np.ndarray, quantized: Quantized | None, query: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` rows of ``matrix`` (unit rows, float32) with the largest dot product with
    ``query``: ``(row indices, their float32 scores)``, in no particular order. ``quantized`` is
    :func:`quantize` of ``matrix`` (``None``: the float32 product alone)."""
    import numpy as np

    n = len(matrix)
    k = min(k, n)
    q = np.ascontiguousarray(query, dtype=np.float32)
    if k <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    nk = _numkong()
    peak = float(np.max(np.abs(q))) if q.size else 0.0
    if nk is None or quantized is None or n < INT8_FROM or k >= n or not peak > 0.0 or not np.isfinite(peak):
        scores = np.einsum("ij,j->i", matrix, q)
        rows = np.argpartition(-scores, k - 1)[:k]
        return rows, scores[rows]
    # q = high * s1 + low * s2 + off, high and low int8.
    s1 = peak / 127.0
    high = np.clip(np.rint(q / s1), -127, 127)
    rest = q - high * s1
    s2 = max(float(np.max(np.abs(rest))) / 127.0, 1e-30)
    low = np.clip(np.rint(rest / s2), -127, 127)
    off = float(np.linalg.norm(rest - low * s2))
    halves = np.stack([high, low]).astype(np.int8)
    if quantized.packed:
        dots = np.concatenate(
            [np.asarray(nk.dots_packed(halves, block)) for block in quantized.packed], axis=1
        )
    else:
        dots = np.asarray(nk.cdist(halves, quantized.codes, metric="dot", out_dtype="float64"))
    rough = (dots[0] * s1 + dots[1] * s2).astype(np.float32) * quantized.factors
    # One bound for every row (the largest): as tight where it matters, at a fraction of the cost.
    bound = (
        float(np.max(quantized.residuals)) * float(np.linalg.norm(q)) + float(np.max(quantized.norms)) * off
    )
    floor = np.partition(rough, n - k)[n - k] - 2.0 * (bound + SLACK)  # below it: not among the k best
    candidates = np.flatnonzero(rough >= floor)
    # einsum's own loop, not BLAS: OpenBLAS's threads spin after each call and, on a busy gateway,
    # a multithreaded product for one query took milliseconds instead of microseconds.
    scores = np.einsum("ij,j->i", matrix[candidates], q)
    best = np.argpartition(-scores, k - 1)[:k]
    return candidates[best], scores[best]
