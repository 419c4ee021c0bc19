"""Approximate nearest neighbours for a large scope: an HNSW graph beside the exact matrix.

Exact search is one matrix-vector product over a scope's vectors: about 0.7 ms per 10,000 vectors
of 384 dimensions on one core, so past some tens of thousands of vectors in one scope (a team's
shared memory, an import) it costs more than the lexical ranking it is fused with. A scope with at
least ``ann_min_vectors`` vectors (``[agent_memory] ann_min_vectors``) gets a graph index of its own
(usearch's HNSW, vectors kept as float16, inner product over unit vectors = cosine), in the memory
of each process that ranks it; the store's vectors stay the truth, so nothing about it is persisted
or needs a migration, and either backend builds it from the same matrix.

The graph is built on a background thread below request threads' priority, never on a recall:
until it is ready, the scope is searched exactly. Once built it is extended with each vector the
store adds (docs only ascend, so what it holds is one high-water mark), and a store that removes
vectors (PostgreSQL's sweep) hands over a fresh matrix, for which a fresh graph is built. A search
restricted to some docs (a tag filter) is exact over those docs' rows, whatever the scope's size.
Measured recall@10 against exact search: benchmarks/ann.py (``docs/benchmarks.md``).
"""

from __future__ import annotations

import logging
import os
import threading
from typing import TYPE_CHECKING, Any

from ..priority import BACKGROUND_NICE, lower_this_thread

if TYPE_CHECKING:
    import numpy as np

__all__ = ["ANN_MIN_VECTORS", "ScopeAnn", "ann_available"]

log = logging.getLogger(__name__)

ANN_MIN_VECTORS = 20_000
"""The default size of a scope, in vectors, from which it is searched through a graph index:
about where the exact product (1.4 ms) costs what the lexical ranking does (its p50 at 20,000
records, benchmarks/hybrid.py)."""

# HNSW's parameters: M, efConstruction, and ef at query time (raised to the number of neighbours
# wanted when that is larger). Chosen by benchmarks/ann.py for recall@10 >= 0.95 at 1,000,000.
CONNECTIVITY = 16
EXPANSION_ADD = 128
EXPANSION_SEARCH = 128


def ann_available() -> bool:
    """Whether usearch (the `semantic` extra) is installed."""
    try:
        _import_usearch()
    except ImportError:
        return False
    return True


def _import_usearch() -> Any:
    # onnxruntime first: usearch 2.26 loaded before it makes its import segfault (the extra pins
    # usearch below 2.26; this keeps a process whole if another release is installed anyway).
    import onnxruntime  # type: ignore[import-untyped]  # noqa: F401
    import usearch.index

    return usearch.index


class ScopeAnn:
    """The graph index of one scope's vectors, built in the background. Thread-safe."""

    def __init__(self, dim: int, *, background_nice: int = BACKGROUND_NICE) -> None:
        self.dim = dim
        self._nice = background_nice
        self._lock = threading.Lock()
        self._index: object | None = None  # a usearch Index once built
        self._upto = -1  # the largest doc the graph holds
        self._building = False
        self.failed = False

    @property
    def ready(self) -> bool:
        return self._index is not None

    def start(self, docs: np.ndarray, matrix: np.ndarray) -> None:
        """Build the graph of ``docs`` / ``matrix`` (ascending docs, unit rows) on a thread of its
        own, unless a build ran or is running."""
        with self._lock:
            if self._building or self._index is not None or self.failed:
                return
            self._building = True
        thread = threading.Thread(target=self._build, args=(docs, matrix), name="meta-ann-build", daemon=True)
        thread.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the graph is built (tests, benchmarks); whether it is."""
        import time

        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.ready and not self.failed:
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
        return self.ready

    def nearest(
        self, docs: np.ndarray, matrix: np.ndarray, query: np.ndarray, limit: int
    ) -> list[tuple[int, float]] | None:
        """The ``limit`` docs nearest ``query`` by cosine, best first; ``None`` while the graph is
        not built (the caller searches exactly). Rows of ``docs`` past the graph's are added first."""
        import numpy as np

        index = self._index
        if index is None:
            return None
        if len(docs) and int(docs[-1]) > self._upto:
            with self._lock:
                start = int(np.searchsorted(docs, self._upto, side="right"))
                if start < len(docs):
                    index.add(docs[start:], matrix[start:], threads=1)  # type: ignore[attr-defined]
                    self._upto = int(docs[-1])
        found = index.search(  # type: ignore[attr-defined]
            query.astype(np.float32), limit, exact=False, threads=1
        )
        keys, distances = found.keys, found.distances
        return [(int(k), float(1.0 - d)) for k, d in zip(keys, distances, strict=True)]

    def _build(self, docs: np.ndarray, matrix: np.ndarray) -> None:
        try:
            lower_this_thread(self._nice)  # usearch's own threads start from this one: they too
            index = _import_usearch().Index(
                ndim=self.dim,
                metric="ip",
                dtype="f16",
                connectivity=CONNECTIVITY,
                expansion_add=EXPANSION_ADD,
                expansion_search=EXPANSION_SEARCH,
            )
            if len(docs):
                index.add(docs, matrix, threads=os.cpu_count() or 1)
            with self._lock:
                self._index = index
                self._upto = int(docs[-1]) if len(docs) else -1
        except Exception as exc:  # a graph that cannot be built leaves exact search in place
            log.warning("approximate index of %d vectors not built (%s); searching exactly", len(docs), exc)
            self.failed = True
        finally:
            self._building = False
