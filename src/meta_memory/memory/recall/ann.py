"""Approximate nearest neighbours for a large scope: an HNSW graph beside the exact matrix.

Exact search is one matrix-vector product over a scope's vectors: about 0.7 ms per 10,000 vectors
of 384 dimensions on one core, so past some tens of thousands of vectors in one scope (a team's
shared memory, an import) it costs more than the lexical ranking it is fused with. A scope with at
least ``ann_min_vectors`` vectors (``[agent_memory] ann_min_vectors``) gets a graph index of its own
(usearch's HNSW, vectors kept as float16, inner product over unit vectors = cosine; M 16, or 32
when 16 leaves too many rows out of reach: ``ATTEMPTS``), in the memory
of each process that ranks it; the store's vectors stay the truth, so nothing about it is persisted
or needs a migration, and either backend builds it from the same matrix.

The graph is built on a background thread below request threads' priority, never on a recall,
once the scope has been asked enough queries to check it with: it is used only where it finds at
least 97 % of the exact top 10 for the scope's own recent queries (RECALL_MIN and a margin) at
under half the cost of the scope's exact search (``_calibrated``; real questions sit apart from
the records they ask about, and a graph that serves generated queries well can serve them
poorly). Until then, and where it falls short, the scope is searched exactly. The vectors the
store adds afterwards are searched exactly beside it until there are enough of them for a new
graph (:class:`ScopeAnn`), and a store that removes vectors (PostgreSQL's sweep) hands over a
fresh matrix, for which a fresh graph is built. A search restricted to some docs (a tag filter)
is exact over those docs' rows, whatever the scope's size. Measured recall@10 against exact
search: benchmarks/ann.py (``docs/benchmarks.md``).
"""

from __future__ import annotations

import collections
import contextlib
import functools
import importlib.metadata
import itertools
import logging
import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from ..priority import BACKGROUND_NICE, lower_this_thread, start_background, stopping

if TYPE_CHECKING:
    import numpy as np

__all__ = ["ANN_MIN_VECTORS", "ScopeAnn", "ann_available", "int8_rows"]

log = logging.getLogger(__name__)

ExactSearch = Callable[["np.ndarray", int], object]
"""A scope's search without a graph: ``(query, limit)``, its answer unread (only its cost counts)."""

ANN_MIN_VECTORS = 20_000
"""The default size of a scope, in vectors, from which it is searched through a graph index:
about where the exact product (1.4 ms) costs what the lexical ranking does (its p50 at 20,000
records, benchmarks/hybrid.py)."""

# HNSW's parameters: M, efConstruction, and ef at query time (raised to the number of neighbours
# wanted when that is larger). Chosen by benchmarks/ann.py for recall@10 >= 0.95 at 1,000,000.
CONNECTIVITY = 16
EXPANSION_ADD = 128
EXPANSION_SEARCH = 128
# The graphs a build tries in turn, (M, efConstruction), until one reaches enough of the scope:
# vectors that crowd together (the static model's over the benchmark's 20,000 generated records,
# cosines of 0.8 and more) left 5.9 % of the rows unreachable with M 16 and 1.8 % with M 32, which
# answered a query in 0.31 ms there (twice the graph's memory for its links).
ATTEMPTS = ((CONNECTIVITY, EXPANSION_ADD), (2 * CONNECTIVITY, EXPANSION_ADD))
BUILD_STEP = 20_000  # vectors added to a graph per call while it is built
# A graph is rebuilt once the vectors added since it was built (searched exactly meanwhile) are
# this share of it, and at least this many.
REBUILD_FRACTION = 0.05
REBUILD_MIN = 1_000
# Rows checked for reachability after a build (all of a graph this large, a sample beyond), and the
# share of unreachable ones past which the graph is not used.
CHECK_ALL = 50_000
ORPHANS_MAX = 0.05
# A graph is used only where it finds RECALL_MIN of the exact top 10 for the queries the scope was
# really asked (the last PROBES_KEPT of them; a build waits for PROBES_MIN), searched as deep as
# recall searches (PROBE_DEPTH), at the first of EXPANSIONS that does, and only while that search
# costs well less than the exact product (COST_MAX). Vectors generated around centres do at 128
# (benchmarks/ann.py), but real questions sit apart from the records they ask about: over the
# 30,619 records of the recall-quality development sets and their questions, the graph found 0.74
# of the exact top 10 at 128 and 0.90 at 512 with the static model, 0.89 at 128 with MiniLM
# (benchmarks/ann.py --devsets). A graph refused is tried again once the scope has doubled.
RECALL_MIN = 0.95
# What the probes must find above RECALL_MIN, for the queries to come: with MiniLM over the same
# records, 0.957 and 0.961 on 256 of the questions were 0.942 on half of the others.
PROBE_MARGIN = 0.02
PROBES_MIN = 64
PROBES_KEPT = 256
PROBE_DEPTH = 100
EXPANSIONS = (EXPANSION_SEARCH, 2 * EXPANSION_SEARCH, 4 * EXPANSION_SEARCH, 8 * EXPANSION_SEARCH)
# A graph (with its unreachable rows' exact search) must answer in at most this share of the time
# of the exact search the scope would get instead (ScopeAnn.start's ``exact``: through the scope's
# sketch, where it has one; the matrix's product otherwise), both measured in the build one query
# at a time, the graph after the exact search has streamed its rows through the caches.
COST_MAX = 0.5
CHEAPER_ONLY = True  # (off only where a test of the graph's use runs on a scope too small to gain)


def ann_available() -> bool:
    """Whether usearch (the `semantic` extra) is installed."""
    return _usearch() is not None


@functools.cache
def _usearch() -> Any | None:
    """``usearch.index``, or ``None`` without it: probed once per process (a scope's vectors are
    reloaded on the recall path, and a failed import searches the path again every time)."""
    try:
        return _import_usearch()
    except ImportError:
        return None


def _import_usearch() -> Any:
    # usearch 2.26 segfaults when it is loaded before onnxruntime: the extra pins usearch below 2.24,
    # and where a later release is installed anyway (and onnxruntime is), onnxruntime goes first.
    # Otherwise onnxruntime is left alone: a gateway on the numpy runtime never loads it.
    with contextlib.suppress(ImportError, ValueError):
        if _release(importlib.metadata.version("usearch")) >= (2, 26):
            import onnxruntime  # type: ignore[import-untyped]  # noqa: F401
    import usearch.index

    return usearch.index


def _release(version: str) -> tuple[int, ...]:
    """``2.26.6`` -> (2, 26, 6): the leading numbers of a version (ValueError if there are none)."""
    numbers = []
    for part in version.split("."):
        digits = "".join(itertools.takewhile(str.isdigit, part))
        if not digits:
            break
        numbers.append(int(digits))
    if not numbers:
        raise ValueError(version)
    return tuple(numbers)


def int8_rows(codes: np.ndarray, query: np.ndarray, count: int) -> np.ndarray | None:
    """The rows of ``codes`` (int8 components, one row per vector) nearest ``query`` by the cosine
    of int8 vectors, ``count`` of them in no set order, by usearch's exact (brute-force) search on
    one thread; ``None`` without usearch or for a query of zeros. Half the time of the float32
    product over 20,000 rows of 384 (a quarter of the bytes), and its top 10 held 0.96 of the
    float32 product's on the benchmark realm's crowded vectors: a caller rescores the rows."""
    import numpy as np

    usearch = _usearch()
    peak = float(np.max(np.abs(query))) if query.size else 0.0
    if usearch is None or not peak > 0.0:
        return None
    q8 = np.clip(np.rint(query * (127.0 / peak)), -127, 127).astype(np.int8)
    found = usearch.search(codes, q8, count, "cos", exact=True, threads=1)
    rows: np.ndarray = np.asarray(found.keys, dtype=np.int64)
    return rows


class ScopeAnn:
    """The graph index of one scope's vectors, built in the background. Thread-safe.

    The graph holds the scope's vectors as they were when it was built (docs up to ``built_upto``);
    the docs added since, the delta, are searched exactly beside it and the two lists merged. A
    graph is never extended in place: inserting one far-off vector into a graph of near-duplicates
    (a thousand records of one template) left it unreachable, so a record just written was never
    found. Once the delta passes REBUILD_FRACTION of the graph (and REBUILD_MIN vectors), a new
    graph of everything is built in the background and replaces the old one when done. A build
    can leave vectors unreachable too: after one, each vector is searched for (:func:`_unreachable`)
    and those the graph does not find are searched exactly beside it, like the delta."""

    def __init__(
        self,
        dim: int,
        *,
        background_nice: int = BACKGROUND_NICE,
        attempts: tuple[tuple[int, int], ...] = ATTEMPTS,
        expansions: tuple[int, ...] = EXPANSIONS,
        probes_min: int | None = None,
        cheaper_only: bool | None = None,
    ) -> None:
        self.dim = dim
        self._nice = background_nice
        self._attempts = attempts
        self._expansions = expansions
        # (module constants read when made: tests change them)
        self._probes_min = PROBES_MIN if probes_min is None else probes_min
        self._cheaper_only = CHEAPER_ONLY if cheaper_only is None else cheaper_only
        self.connectivity: int | None = None  # M of the graph in use
        self.expansion: int | None = None  # its expansion at search time
        self.recall: float | None = None  # its recall@10 of the exact top 10 on the probes
        self._lock = threading.Lock()
        # (usearch Index, built_upto, size, the vectors the graph cannot reach: searched exactly)
        self._graph: tuple[object, int, int, _Rows] | None = None
        self._building = False
        self.failed = False
        self._probes: collections.deque[np.ndarray] = collections.deque(maxlen=PROBES_KEPT)
        self._refused_at = 0  # the scope's size when a graph last fell short of RECALL_MIN
        self._exact: ExactSearch | None = None  # the scope's exact search, what a graph must beat

    @property
    def ready(self) -> bool:
        return self._graph is not None

    def observe(self, query: np.ndarray) -> None:
        """Keep ``query`` (a unit vector the scope was asked) among the probes a build checks its
        graph with."""
        self._probes.append(query)

    def start(self, docs: np.ndarray, matrix: np.ndarray, exact: ExactSearch | None = None) -> None:
        """Build the graph of ``docs`` / ``matrix`` (ascending docs, unit rows) on a thread of its
        own, unless one is being built (or was, and failed), fewer than ``probes_min`` queries were
        observed, or a graph fell short at less than half this size; a built graph is replaced when
        done. ``exact``: the search the scope gets without a graph (kept for later builds too),
        whose cost a graph must undercut; default the matrix's product."""
        with self._lock:
            if exact is not None:
                self._exact = exact
            if self._declines(len(docs)):
                return
            self._building = True
        start_background(lambda: self._build(docs, matrix), "meta-ann-build")

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the build under way ends, a graph kept or refused (tests, benchmarks);
        whether one is built."""
        import time

        deadline = None if timeout is None else time.monotonic() + timeout
        while self._building:
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
        return self.ready

    def unbuilt(self, docs: np.ndarray, matrix: np.ndarray, query: np.ndarray) -> None:
        """A search of the scope while no graph is built (the caller searched exactly): ``query``
        is kept among the probes, and the graph's build starts once enough were."""
        self.observe(query)
        # What start() decides under its lock, read first without it: this runs on every recall of
        # a scope with no graph, and a refused one declines for good (until it doubles).
        if self._declines(len(docs)):
            return
        self.start(docs, matrix)

    def _declines(self, size: int) -> bool:
        """Whether no build starts for a scope of ``size`` vectors now: one under way (or failed),
        too few queries observed, or a graph refused at more than half this size."""
        return (
            self._building
            or self.failed
            or len(self._probes) < max(self._probes_min, 1)
            or bool(self._refused_at and size < 2 * self._refused_at)
        )

    def nearest(
        self, docs: np.ndarray, matrix: np.ndarray, query: np.ndarray, limit: int
    ) -> list[tuple[int, float]] | None:
        """The ``limit`` docs nearest ``query`` by cosine, best first; ``None`` while no graph is
        built (the caller searches exactly). The graph answers for the docs it holds, an exact
        product for the rows of ``docs`` past them."""
        import numpy as np

        q = query.astype(np.float32, copy=False)
        graph = self._graph
        if graph is None:
            self.unbuilt(docs, matrix, q)
            return None
        self.observe(q)
        index, built_upto, size, orphans = graph
        found = index.search(q, limit, exact=False, threads=1)  # type: ignore[attr-defined]
        keys = np.asarray(found.keys, dtype=np.int64)
        scores = 1.0 - np.asarray(found.distances, dtype=np.float32)
        start = int(np.searchsorted(docs, built_upto, side="right"))
        keys, scores = _with_orphans(keys, scores, orphans, q, limit)
        if start < len(docs):  # the delta: a view of the rows past the graph, not a copy
            delta_keys, delta_scores = _best(docs[start:], matrix[start:], q, limit)
            keys, scores = np.concatenate([keys, delta_keys]), np.concatenate([scores, delta_scores])
        order = np.lexsort((keys, -scores))[:limit]  # best first, ties by doc
        best = list(zip(keys[order].tolist(), scores[order].tolist(), strict=True))
        if len(docs) - start >= max(REBUILD_MIN, REBUILD_FRACTION * size):
            self.start(docs, matrix)
        return best

    def _build(self, docs: np.ndarray, matrix: np.ndarray) -> None:
        import numpy as np

        try:
            lower_this_thread(self._nice)  # usearch's own threads start from this one: they too
            usearch = _usearch()
            if usearch is None:  # a graph is only made where usearch was found
                raise ImportError("usearch")
            threads = os.cpu_count() or 1
            reached = False  # some graph reached enough of the rows
            for connectivity, expansion in self._attempts:
                index = usearch.Index(
                    ndim=self.dim,
                    metric="ip",
                    dtype="f16",
                    connectivity=connectivity,
                    expansion_add=expansion,
                    expansion_search=EXPANSION_SEARCH,
                )
                for start in range(0, len(docs), BUILD_STEP):  # in steps: an exiting process waits
                    if stopping():
                        return
                    stop = start + BUILD_STEP
                    index.add(docs[start:stop], matrix[start:stop], threads=threads)
                orphans = _unreachable(index, docs, matrix, threads)
                if len(orphans) > ORPHANS_MAX * len(docs):
                    del index
                    continue
                reached = True
                # Their rows copied once: a copy per query was a third of a search's time.
                rows = _Rows(docs[orphans], np.ascontiguousarray(matrix[orphans]))
                observed = list(self._probes)
                probes = np.stack(observed) if observed else np.zeros((0, self.dim), np.float32)
                chosen = _calibrated(
                    index, rows, matrix, probes, self._expansions, self._cheaper_only, self._exact
                )
                if chosen is None:
                    del index
                    continue
                with self._lock:
                    index.expansion_search = chosen[0]
                    self._graph = (index, int(docs[-1]) if len(docs) else -1, len(docs), rows)
                    self.connectivity, (self.expansion, self.recall) = connectivity, chosen
                return
            if reached:
                log.info(
                    "approximate index of %d vectors finds too little of the exact top 10 for the"
                    " queries asked, or costs more than exact search; searching exactly",
                    len(docs),
                )
                with self._lock:
                    self._refused_at = len(docs)
                    self._graph = None
                return
            log.warning(
                "approximate index of %d vectors reaches too few of them (%d not); searching exactly",
                len(docs),
                len(orphans),
            )
            self.failed = True
        except Exception as exc:  # a graph that cannot be built leaves exact search in place
            log.warning("approximate index of %d vectors not built (%s); searching exactly", len(docs), exc)
            self.failed = True
        finally:
            with self._lock:
                self._building = False


class _Rows(NamedTuple):
    """Some rows of a scope: their docs and their vectors."""

    docs: np.ndarray
    matrix: np.ndarray


def _best(
    docs: np.ndarray, matrix: np.ndarray, query: np.ndarray, limit: int
) -> tuple[np.ndarray, np.ndarray]:
    """The ``limit`` rows of ``matrix`` nearest ``query`` (exact, unordered): their docs and cosines."""
    import numpy as np

    scores = np.einsum("ij,j->i", matrix, query)
    if len(scores) > limit:
        top = np.argpartition(-scores, limit - 1)[:limit]
        return docs[top], scores[top]
    return docs, scores


def _calibrated(
    index: Any,
    orphans: _Rows,
    matrix: np.ndarray,
    probes: np.ndarray,
    expansions: tuple[int, ...],
    cheaper_only: bool = True,
    baseline: ExactSearch | None = None,
) -> tuple[int, float] | None:
    """The first of ``expansions`` at which the graph (with ``orphans`` searched exactly beside
    it, as a recall does) finds RECALL_MIN (and PROBE_MARGIN) of the exact top 10 of ``probes``
    among the first 10 of PROBE_DEPTH, at a cost per query below COST_MAX of ``baseline``, the
    scope's search without a graph (default: the product over ``matrix``); with the recall it
    found. The truth is an exact search of the graph's own (float16) vectors, so what is measured
    is the graph's approximation alone. ``None``: none does."""
    import time

    import numpy as np

    if not len(probes):
        return None
    depth = min(PROBE_DEPTH, len(matrix))
    exact = index.search(probes, 10, exact=True, threads=os.cpu_count() or 1)
    truth = np.asarray(exact.keys).reshape(len(probes), -1)
    for expansion in expansions:
        index.expansion_search = expansion
        exact_s = graph_s = 0.0
        # One query at a time, as recall asks, each graph search after the search without a graph
        # streamed its rows through the caches as a recall's lexical ranking does (warm, in a
        # batch, the graph looked 2 to 2.5 times cheaper than it is beside one).
        for q in probes[:16]:
            started = time.perf_counter()
            if baseline is None:
                np.argpartition(-np.einsum("ij,j->i", matrix, q), depth - 1)
            else:
                baseline(q, depth)
            between = time.perf_counter()
            index.search(q, depth, exact=False, threads=1)
            if len(orphans.docs):
                _best(orphans.docs, orphans.matrix, q, depth)
            exact_s, graph_s = exact_s + between - started, graph_s + time.perf_counter() - between
        found = index.search(probes, depth, exact=False, threads=os.cpu_count() or 1)
        keys = np.asarray(found.keys, dtype=np.int64).reshape(len(probes), -1)
        scores = 1.0 - np.asarray(found.distances, dtype=np.float32).reshape(len(probes), -1)
        hits = 0
        for i, q in enumerate(probes):
            ours, ours_scores = _with_orphans(keys[i], scores[i], orphans, q, 10)
            top = ours[np.lexsort((ours, -ours_scores))[:10]]
            hits += len(set(top.tolist()) & set(truth[i].tolist()))
        recall = hits / (10 * len(probes))
        if cheaper_only and graph_s > COST_MAX * exact_s:
            return None
        if recall >= RECALL_MIN + PROBE_MARGIN:
            return expansion, recall
    return None


def _with_orphans(
    keys: np.ndarray, scores: np.ndarray, orphans: _Rows, query: np.ndarray, limit: int
) -> tuple[np.ndarray, np.ndarray]:
    """A graph's answer (``keys``, ``scores``) with the exact search of the rows it cannot reach
    beside it: their ``limit`` best, whose exact scores replace any the graph gave them."""
    import numpy as np

    if not len(orphans.docs):
        return keys, scores
    at = np.minimum(np.searchsorted(orphans.docs, keys), len(orphans.docs) - 1)
    kept = orphans.docs[at] != keys  # (their docs ascend)
    extra_keys, extra_scores = _best(orphans.docs, orphans.matrix, query, limit)
    return np.concatenate([keys[kept], extra_keys]), np.concatenate([scores[kept], extra_scores])


def _unreachable(index: Any, docs: np.ndarray, matrix: np.ndarray, threads: int) -> np.ndarray:
    """The rows a search of the graph for their own vector does not find in its first ten: HNSW
    can leave a vector unreachable (one far-off record among a thousand near-duplicates was), and
    such rows are searched exactly beside the graph. Every row is looked at up to CHECK_ALL rows,
    a sample of CHECK_ALL beyond (an unchecked orphan stays unfound there)."""
    import numpy as np

    if not len(docs):
        return np.zeros(0, dtype=np.int64)
    rows = np.arange(len(docs))
    if len(rows) > CHECK_ALL:
        rows = np.sort(np.random.default_rng(len(docs)).choice(rows, CHECK_ALL, replace=False))
    missed: list[np.ndarray] = []
    for start in range(0, len(rows), BUILD_STEP):
        part = rows[start : start + BUILD_STEP]
        found = index.search(matrix[part], 10, exact=False, threads=threads)
        keys = np.asarray(found.keys).reshape(len(part), -1)
        missed.append(part[~(keys == docs[part][:, None]).any(axis=1)])
    return np.concatenate(missed).astype(np.int64)
