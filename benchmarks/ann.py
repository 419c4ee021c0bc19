"""A large scope's graph index against exact search: build time, query p50 / p99, memory, recall@10.

Run: ``python benchmarks/ann.py [--vectors 1000000] [--queries 500] [--k 10]`` or
``python benchmarks/ann.py --devsets [--model ID]`` (the `semantic` extra installed).

A build checks its graph with queries the scope was asked (recall/ann.py): here 256 more queries
drawn as the measured ones are, observed before the build. With ``--devsets`` the scope is every
record of the recall-quality development sets (benchmarks/recall_quality, both halves: 30,619
records) embedded by ``--model`` (default: the default model), and the queries are their
questions: half observed, the other half measured. Beside the rules' verdict (graph used or
refused, at which expansion), the graph's recall@10 for the measured queries is printed at each
expansion it tries, with its cost beside the exact product's; and so is the exact search's sketch
(recall/neighbours.py: the scope ranked first in a few principal directions, the rows found
rescored from their stored int8 components as recall does, and from the float32 rows beside it):
its recall@10 and recall@100 of the exact product's, ties counted as found, and its cost.

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

from meta_memory.memory.recall.ann import ATTEMPTS, EXPANSIONS, PROBES_KEPT, ScopeAnn
from meta_memory.memory.recall.neighbours import (
    ScopeVectors,
    decode_codes,
    decode_vectors,
    nearest,
    sketched,
    vector_bytes,
)

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


def devsets(model: str | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The development sets' records as stored vectors (rows L2-normalized), and their questions
    embedded, split in two halves: probes, measured."""
    import random
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent / "recall_quality"))
    import hybrid as quality  # benchmarks/recall_quality/hybrid.py
    from meta_memory.memory.recall.neighbours import decode_vectors, vector_bytes

    embedder = quality.load(model)
    texts: list[str] = []
    questions: list[str] = []
    for sets in (quality.tuning_sets(False), quality.heldout_sets(False)):
        for scopes in sets.values():
            for scope in scopes:
                texts += [quality.record_text(r, quality.RECORD_TEXT) for r in scope.records]
                questions += [q.text for q in scope.questions]
    console.print(f"{embedder.model_id}: {len(texts):,} records, {len(questions):,} questions")
    vectors = np.asarray(embedder.embed_documents(texts), dtype=np.float32)
    matrix = decode_vectors([vector_bytes(v) for v in vectors], vectors.shape[1])
    random.Random(7).shuffle(questions)
    asked = np.asarray(embedder.embed_queries(questions), dtype=np.float32)
    return matrix, asked[: len(asked) // 2], asked[len(asked) // 2 :]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vectors", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--k", type=int, default=10, help="neighbours per query (hybrid recall asks 100)")
    parser.add_argument("--devsets", action="store_true", help="the development sets' records and questions")
    parser.add_argument("--model", help="with --devsets: the embedding model id")
    args = parser.parse_args()
    if args.devsets:
        matrix, probes, queries = devsets(args.model)
    else:
        matrix, asked = generated(args.vectors, args.queries + PROBES_KEPT)
        queries, probes = asked[: args.queries], asked[args.queries :]
    docs = np.arange(1, len(matrix) + 1, dtype=np.int64)
    before = rss_mb()
    ann = ScopeAnn(matrix.shape[1])
    for q in probes[:PROBES_KEPT]:
        ann.observe(q)
    started = time.perf_counter()
    ann.start(docs, matrix)
    while ann._building or not (ann.ready or ann.failed or ann._refused_at):
        time.sleep(0.05)
    build_s = time.perf_counter() - started
    graph_mb = rss_mb() - before
    verdict = (
        f"graph used: M {ann.connectivity}, expansion {ann.expansion}, "
        f"recall@10 on the probes {ann.recall:.3f}"
        if ann.ready
        else "graph refused: exact search"
    )
    console.print(f"{len(matrix):,} vectors; {verdict} (built and checked in {build_s:,.1f} s)")
    _expansions(matrix, docs, queries, args.k)
    _sketch(matrix, docs, queries[:500])
    if not ann.ready:
        return
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
    console.print(
        f"{len(matrix):,} vectors of {matrix.shape[1]} dimensions, {len(queries)} queries, k = {args.k}"
    )
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


def _expansions(matrix: np.ndarray, docs: np.ndarray, queries: np.ndarray, k: int) -> None:
    """The graph's recall@k for ``queries`` and its cost at each expansion the rules try, beside
    the exact product's (a graph of the first of ATTEMPTS, built here without the rules)."""
    from usearch.index import Index

    connectivity, expansion_add = ATTEMPTS[0]
    index = Index(
        ndim=matrix.shape[1], metric="ip", dtype="f16", connectivity=connectivity, expansion_add=expansion_add
    )
    index.add(docs, matrix, threads=ann_threads())
    truth = [{int(d) for d, _ in nearest(ScopeVectors(docs, matrix, (0,)), q, k)} for q in queries]
    started = time.perf_counter()
    for q in queries[:50]:
        nearest(ScopeVectors(docs, matrix, (0,)), q, 100)
    exact_ms = (time.perf_counter() - started) / len(queries[:50]) * 1e3
    for expansion in EXPANSIONS:
        index.expansion_search = expansion  # type: ignore[misc]  # (a setter at runtime)
        found, times = 0, []
        for q, want in zip(queries, truth, strict=True):
            t0 = time.perf_counter()
            got = index.search(q, 100, exact=False, threads=1)
            times.append((time.perf_counter() - t0) * 1e3)
            found += len(want & set(np.asarray(got.keys)[:k].tolist()))
        console.print(
            f"  M {connectivity}, expansion {expansion}: recall@{k} {found / (k * len(queries)):.3f}, "
            f"search p50 {statistics.median(times):.2f} ms for 100 neighbours (exact: {exact_ms:.2f} ms)"
        )


def _sketch(matrix: np.ndarray, docs: np.ndarray, queries: np.ndarray) -> None:
    """Exact search's sketch (as recall fits it) against the exact product, 100 neighbours asked
    (as hybrid recall asks): recall@10 and @100, a neighbour tied with the exact k-th counted. The
    vectors as a store keeps them (int8 components, decoded to normalized float32 rows): the rows
    the sketch finds rescored from the components, as recall does, and from the float32 rows."""
    blobs = [vector_bytes(v) for v in matrix]
    matrix, codes = decode_vectors(blobs, matrix.shape[1]), decode_codes(blobs, matrix.shape[1])
    started = time.perf_counter()
    sketch = sketched(None, matrix)
    fit_s = time.perf_counter() - started
    if sketch is None or sketch.projection is None:
        console.print(f"  no sketch (fitted in {fit_s:.1f} s): no few directions hold enough of the variance")
        return
    exact = ScopeVectors(docs, matrix, (0,))
    for rescored, fast in (
        ("the int8 components", ScopeVectors(docs, matrix, (0,), codes=codes, sketch=sketch)),
        ("the float32 rows", ScopeVectors(docs, matrix, (0,), sketch=sketch)),
    ):
        found = {10: 0, 100: 0}
        exact_ms, sketch_ms = [], []
        for q in queries:
            t0 = time.perf_counter()
            nearest(exact, q, 100)
            t1 = time.perf_counter()
            got = nearest(fast, q, 100)
            t2 = time.perf_counter()
            exact_ms.append((t1 - t0) * 1e3)
            sketch_ms.append((t2 - t1) * 1e3)
            scores = matrix @ q
            ranked = np.sort(scores)[::-1]
            for k in found:
                kth = ranked[k - 1]
                found[k] += sum(1 for doc, _ in got[:k] if scores[doc - docs[0]] >= kth - 1e-6)
        console.print(
            f"  sketch of {sketch.projection.shape[1]} directions (fitted in {fit_s:.1f} s), rescored from "
            f"{rescored}: recall@10 {found[10] / (10 * len(queries)):.3f}, recall@100 "
            f"{found[100] / (100 * len(queries)):.3f} of the exact product's; p50 / p99 "
            f"{statistics.median(sketch_ms):.2f} / {pct(sketch_ms, 0.99):.2f} ms for 100 neighbours "
            f"(exact: {statistics.median(exact_ms):.2f} / {pct(exact_ms, 0.99):.2f} ms)"
        )


def ann_threads() -> int:
    import os

    return os.cpu_count() or 1


if __name__ == "__main__":
    main()
