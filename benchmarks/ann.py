"""A large scope's graph index against exact search: build time, query p50 / p99, memory, recall@10.

Run: ``python benchmarks/ann.py [--vectors 1000000] [--queries 500] [--k 10]`` (the `semantic` extra installed).

The vectors are generated, not embedded (embedding a million texts takes most of an hour here):
384-dimension unit vectors drawn around ``vectors / 100`` random centres with noise of about the
centres' own spread, the shape of sentence embeddings of a varied corpus (clustered, far from
uniform), and queries drawn the same way. Each query is answered by the code recall runs
(``meta_memory.memory.recall.neighbours.nearest``) twice on the same matrix: exactly (the baseline,
one matrix-vector product) and through the scope's graph (``recall/ann.py``, built as a gateway
builds it: in the background, on every core, below request threads' priority). Recall@k is the
share of the exact top ``--k`` (default 10) the graph returns.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time

import numpy as np
from rich.console import Console

from meta_memory.memory.recall.ann import ScopeAnn
from meta_memory.memory.recall.neighbours import ScopeVectors, nearest

DIM = 384
console = Console()


def generated(n: int, queries: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(max(n // 100, 10), DIM)).astype(np.float32)

    def draw(count: int) -> np.ndarray:
        out = np.empty((count, DIM), dtype=np.float32)
        for start in range(0, count, 100_000):  # in slices: float64 noise for 1M rows is 3 GB
            stop = min(count, start + 100_000)
            rows = centres[rng.integers(0, len(centres), stop - start)]
            rows = rows + rng.normal(scale=0.9, size=rows.shape).astype(np.float32)
            out[start:stop] = rows / np.linalg.norm(rows, axis=1, keepdims=True)
        return out

    return draw(n), draw(queries)


def rss_mb() -> float:
    """The process's resident memory now (not its peak: generating the vectors peaks higher)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vectors", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--k", type=int, default=10, help="neighbours per query (hybrid recall asks 100)")
    args = parser.parse_args()
    matrix, queries = generated(args.vectors, args.queries)
    docs = np.arange(1, args.vectors + 1, dtype=np.int64)
    before = rss_mb()
    ann = ScopeAnn(DIM)
    started = time.perf_counter()
    ann.start(docs, matrix)
    ann.wait()
    build_s = time.perf_counter() - started
    graph_mb = rss_mb() - before
    exact, graph = ScopeVectors(docs, matrix, (0,)), ScopeVectors(docs, matrix, (0,), ann)
    exact_ms: list[float] = []
    graph_ms: list[float] = []
    found = 0
    for q in queries:
        t0 = time.perf_counter()
        want = nearest(exact, q, args.k)
        t1 = time.perf_counter()
        got = nearest(graph, q, args.k)
        t2 = time.perf_counter()
        exact_ms.append((t1 - t0) * 1e3)
        graph_ms.append((t2 - t1) * 1e3)
        found += len({d for d, _ in want} & {d for d, _ in got})
    recall = found / (args.k * len(queries))
    console.print(f"{args.vectors:,} vectors of {DIM} dimensions, {len(queries)} queries, k = {args.k}")
    console.print(
        f"graph built in {build_s:,.1f} s on {ann_threads()} threads; memory for it {graph_mb:,.0f} MB "
        f"(beside the float32 matrix's {matrix.nbytes / 2**20:,.0f} MB)"
    )
    console.print(
        f"query p50 / p99: graph {statistics.median(graph_ms):.2f} / {pct(graph_ms, 0.99):.2f} ms, "
        f"exact {statistics.median(exact_ms):.2f} / {pct(exact_ms, 0.99):.2f} ms "
        f"({statistics.median(exact_ms) / statistics.median(graph_ms):.0f}x at the median)"
    )
    console.print(f"recall@{args.k} of the graph against exact search: {recall:.3f} (target >= 0.95)")


def ann_threads() -> int:
    import os

    return os.cpu_count() or 1


if __name__ == "__main__":
    main()
