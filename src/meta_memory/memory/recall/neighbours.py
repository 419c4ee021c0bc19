"""Exact nearest neighbours by embedding over one scope's vectors, whichever store keeps them.

A store hands recall a scope's vectors as one contiguous float32 matrix (rows L2-normalized, so a
dot product is the cosine) with the doc of each row; a query is one matrix-vector product and a
partial sort. Exact search costs about 0.7 ms per 10,000 vectors of 384 dimensions on one core
here, against about 7 ms for embedding the query: it stays inside a turn's recall budget up to
about 100,000 vectors per scope, where the product costs what the embedding does; past that an
approximate index (HNSW, as sqlite-vec or pgvector keep it) would take over.

:func:`record_text` is what a record is embedded as, on every backend.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

__all__ = ["ScopeVectors", "extended", "nearest", "record_text"]


def record_text(title: str, body: str, tags: Sequence[str]) -> str:
    """What a record is embedded as: ``title: body (tag, tag)``, the form the recall-quality
    benchmark chose on its tuning sets (benchmarks/recall_quality/hybrid.py)."""
    text = f"{title}: {body}"
    return f"{text} ({', '.join(tags)})" if tags else text


@dataclass(frozen=True)
class ScopeVectors:
    """One scope's vectors: ``docs[i]`` is the record of row ``i`` of ``matrix``; ``mark`` is what
    the store's mark was when they were read (a copy is current while the mark is unchanged)."""

    docs: np.ndarray  # int64, ascending
    matrix: np.ndarray  # float32 (n, dim), rows L2-normalized
    mark: tuple[int, ...]


def extended(
    cached: ScopeVectors | None, rows: Sequence[tuple[int, bytes]], dim: int, mark: tuple[int, ...]
) -> ScopeVectors:
    """``cached`` (or nothing) with ``rows`` (doc, float32 bytes), docs past its own, appended."""
    import numpy as np

    docs = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    fresh = (
        np.frombuffer(b"".join(bytes(r[1]) for r in rows), dtype=np.float32).reshape(len(rows), dim)
        if rows
        else np.zeros((0, dim), dtype=np.float32)
    )
    if cached is not None:
        docs = np.concatenate([cached.docs, docs])
        fresh = np.concatenate([cached.matrix, fresh])
    return ScopeVectors(docs, np.ascontiguousarray(fresh), mark)


def nearest(
    vectors: ScopeVectors, query: np.ndarray, limit: int, allowed: Collection[int] | None = None
) -> list[tuple[int, float]]:
    """The ``limit`` docs nearest ``query`` by cosine (best first, ties by doc), among ``allowed``."""
    import numpy as np

    if not len(vectors.docs) or limit <= 0:
        return []
    # einsum's own loop, not BLAS: OpenBLAS's threads spin after each call and, on a gateway whose
    # cores are busy (the query's embedding, the database, the request threads), a multithreaded
    # product for one query took 5 ms instead of 0.2 (benchmarks/hybrid.py, hybrid p50 28 ms
    # against 13 with BLAS held to one thread). Single-threaded, it is 0.7 ms for 10,000 vectors.
    scores = np.einsum("ij,j->i", vectors.matrix, query.astype(np.float32))
    if allowed is not None:
        mask = np.isin(vectors.docs, np.fromiter(allowed, dtype=np.int64))
        scores = np.where(mask, scores, -np.inf)
    k = min(limit, len(scores))
    top = np.argpartition(-scores, k - 1)[:k]
    top = top[np.lexsort((vectors.docs[top], -scores[top]))]
    return [(int(vectors.docs[i]), float(scores[i])) for i in top if np.isfinite(scores[i])]
