"""A large scope's graph index (recall/ann.py): built in the background from the scope's matrix,
searched instead of the exact product once built, with recall@10 against exact search at least
0.95 on a generated clustered set; exact until it is ready, exact under a doc filter, extended
with the vectors a store adds afterwards; and the switch is the configured size, on both
backends, through recall itself."""

from __future__ import annotations

import concurrent.futures
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from meta_memory import Meta
from meta_memory.config import load_config_dict
from meta_memory.errors import ConfigError
from meta_memory.memory.recall import ann as ann_module
from meta_memory.memory.recall import neighbours as neighbours_module
from meta_memory.memory.recall.ann import (
    ANN_MIN_VECTORS,
    PROBES_MIN,
    RECALL_MIN,
    ScopeAnn,
    _Rows,
    _unreachable,
)
from meta_memory.memory.recall.neighbours import (
    INT8_MIN,
    MIN_SIMILARITY,
    SKETCH_MIN,
    SKETCH_REFIT,
    ScopesSearch,
    ScopeVectors,
    extended,
    nearest,
    vector_bytes,
)
from meta_memory.sdk import MetaHandle

from ..conftest import BACKENDS, Backend, make_backend

DIM = 384


def clustered(n: int, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """``n`` unit vectors around n/50 centres, and 100 queries drawn the same way."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(max(n // 50, 4), DIM))

    def draw(count: int) -> np.ndarray:
        m = centres[rng.integers(0, len(centres), count)] + rng.normal(scale=0.9, size=(count, DIM))
        return (m / np.linalg.norm(m, axis=1, keepdims=True)).astype(np.float32)

    return draw(n), draw(100)


def exact_top(matrix: np.ndarray, docs: np.ndarray, query: np.ndarray, k: int) -> set[int]:
    """The oracle: the k best docs by a plain float64 dot product and a full sort."""
    scores = matrix.astype(np.float64) @ query.astype(np.float64)
    return {int(docs[i]) for i in np.argsort(-scores, kind="stable")[:k]}


def graph_index(probes: np.ndarray, **options: Any) -> ScopeAnn:
    """A graph index that has observed ``probes`` (the queries a build checks its graph with) and
    builds after one; the graph is used whatever it costs beside the exact product (these scopes
    are small enough for the product to win: the cost rule is not what these tests are about)."""
    ann = ScopeAnn(DIM, probes_min=1, cheaper_only=False, **options)
    for query in probes:
        ann.observe(query)
    return ann


def build_here(ann: ScopeAnn, docs: np.ndarray, matrix: np.ndarray) -> None:
    """Run ``ann``'s build on this thread, at this thread's priority: a build lowers the priority
    of the thread it runs on, and this one runs the rest of the test process's tests (and every
    thread it starts after inherits the niceness)."""
    ann._nice = 0
    ann._build(docs, matrix)


@pytest.fixture(autouse=True)
def _priority_kept() -> Iterator[None]:
    """No test of this module leaves the test thread at a lower priority."""
    if not hasattr(os, "getpriority"):
        yield
        return
    before = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    yield
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == before


def settled(docs: np.ndarray, matrix: np.ndarray) -> ScopeVectors:
    """A scope whose graph build has finished: built, or refused (too many rows it cannot reach, or
    too little of the exact top 10 found for the probes, which are some of its own rows)."""
    ann = graph_index(matrix[:: max(len(matrix) // 64, 1)])
    ann.start(docs, matrix)
    ann.wait(60)
    assert not ann._building
    return ScopeVectors(docs, matrix, (0,), ann)


def built(docs: np.ndarray, matrix: np.ndarray, probes: np.ndarray | None = None) -> ScopeVectors:
    """A scope with its graph built, checked with ``probes`` (queries like clustered's; default:
    fresh ones drawn around the same centres)."""
    ann = graph_index(clustered(len(matrix))[1] if probes is None else probes)
    ann.start(docs, matrix)
    assert ann.wait(60), "the graph was not built"
    return ScopeVectors(docs, matrix, (0,), ann)


def test_the_graph_finds_at_least_95_percent_of_the_exact_top_10() -> None:
    matrix, queries = clustered(6_000)
    docs = np.arange(10, 10 + len(matrix), dtype=np.int64)
    scope = built(docs, matrix)
    found = 0
    for q in queries:
        hits = nearest(scope, q, 10)
        assert scope.ann is not None
        assert hits == scope.ann.nearest(docs, matrix, q, 10)  # the graph answered, not the product
        assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)  # best first
        found += len({d for d, _ in hits} & exact_top(matrix, docs, q, 10))
    assert found / (10 * len(queries)) >= 0.95


def test_scores_are_cosines() -> None:
    matrix, queries = clustered(2_000)
    docs = np.arange(len(matrix), dtype=np.int64)
    scope = built(docs, matrix)
    for doc, score in nearest(scope, queries[0], 5):
        assert score == pytest.approx(float(matrix[doc] @ queries[0]), abs=2e-3)  # float16 inside


def test_vectors_added_after_the_build_are_found() -> None:
    matrix, queries = clustered(2_000)
    docs = np.arange(1, len(matrix) + 1, dtype=np.int64)
    scope = built(docs, matrix)
    newcomer = queries[7]  # the query itself, as a new doc: it must be the nearest
    grown = ScopeVectors(np.append(docs, 5_000), np.vstack([matrix, newcomer[None, :]]), (1,), scope.ann)
    assert nearest(grown, queries[7], 3)[0][0] == 5_000


def test_a_vector_far_from_a_graph_of_near_duplicates_is_found_once_written() -> None:
    """One template written a thousand times, then a record unlike it: inserted into the graph it
    was unreachable (measured with usearch); searched beside the graph, it is the nearest."""
    rng = np.random.default_rng(5)
    base = rng.normal(size=DIM)
    same = base + rng.normal(scale=0.05, size=(1_000, DIM))
    matrix = (same / np.linalg.norm(same, axis=1, keepdims=True)).astype(np.float32)
    docs = np.arange(1, 1_001, dtype=np.int64)
    scope = settled(docs, matrix)
    outlier = rng.normal(size=DIM).astype(np.float32)
    outlier /= np.linalg.norm(outlier)
    grown = ScopeVectors(np.append(docs, 1_001), np.vstack([matrix, outlier[None, :]]), (1,), scope.ann)
    assert nearest(grown, outlier, 10)[0][0] == 1_001


def _without(scope: ScopeVectors, row: int, *, orphans: list[int]) -> ScopeVectors:
    """The scope with ``row``'s doc taken out of its graph (a vector the graph cannot reach) and the
    graph's list of unreachable rows set to ``orphans``."""
    ann = scope.ann
    assert ann is not None and ann._graph is not None
    index, upto, size, _ = ann._graph
    index.remove(int(scope.docs[row]))
    rows = np.array(orphans, dtype=np.int64)
    ann._graph = (index, upto, size, _Rows(scope.docs[rows], scope.matrix[rows]))
    return scope


def test_a_vector_the_graph_cannot_reach_is_reported_and_searched_exactly() -> None:
    matrix, _ = clustered(2_000)
    docs = np.arange(1, 2_001, dtype=np.int64)
    scope = built(docs, matrix)
    assert scope.ann is not None and scope.ann._graph is not None
    index = scope.ann._graph[0]
    index.remove(int(docs[1_234]))
    assert 1_234 in _unreachable(index, docs, matrix, 1)  # the check after a build finds it
    _without(scope, 1_500, orphans=[1_500])
    assert nearest(scope, matrix[1_500], 10)[0][0] == docs[1_500]


def test_a_graph_that_reaches_too_few_rows_is_built_again_denser() -> None:
    """A graph too sparse for its vectors (M 2, one candidate at a time) leaves many rows
    unreachable; the build tries the next graph rather than giving the scope up to exact search,
    and gives it up only when none reaches enough."""
    matrix, queries = clustered(4_000)
    docs = np.arange(1, 4_001, dtype=np.int64)
    sparse = graph_index(queries, attempts=((2, 1),))
    build_here(sparse, docs, matrix)
    assert sparse.failed and sparse._graph is None  # the sparse graph alone is refused
    ann = graph_index(queries, attempts=((2, 1), (16, 128)))
    build_here(ann, docs, matrix)
    assert ann.ready and ann.connectivity == 16 and not ann.failed
    found = sum(
        len({d for d, _ in ann.nearest(docs, matrix, q, 10) or []} & exact_top(matrix, docs, q, 10))
        for q in queries
    )
    assert found / (10 * len(queries)) >= 0.95


def test_a_graph_answer_below_the_similarity_floor_is_checked_exactly() -> None:
    """A record the graph misses, and no orphan list naming it: the graph's best answer for a query
    near it is far below MIN_SIMILARITY, so the exact product decides. (The scope is clustered
    records and one unlike them all; a graph of near-duplicates would be refused for the rows it
    cannot reach, and the test would not reach its subject.)"""
    same, _ = clustered(1_500)
    far = np.random.default_rng(7).normal(size=(1, DIM))
    matrix = np.vstack([same, (far / np.linalg.norm(far)).astype(np.float32)])
    docs = np.arange(1, 1_502, dtype=np.int64)
    scope = _without(built(docs, matrix), 1_500, orphans=[])
    assert scope.ann is not None
    graph_says = scope.ann.nearest(docs, matrix, matrix[1_500], 10)
    assert graph_says is not None and graph_says[0][1] < MIN_SIMILARITY  # the graph alone misses it
    assert nearest(scope, matrix[1_500], 10)[0][0] == 1_501


def test_a_graph_is_rebuilt_once_enough_was_written_after_it() -> None:
    matrix, queries = clustered(3_000)
    docs = np.arange(1, 3_001, dtype=np.int64)
    scope = built(docs[:1_500], matrix[:1_500])
    ann = scope.ann
    assert ann is not None and ann._graph is not None and ann._graph[1] == 1_500
    grown = ScopeVectors(docs, matrix, (1,), ann)  # 1,500 past the graph: past REBUILD_MIN
    before = {d for d, _ in nearest(grown, queries[0], 10)}
    assert (
        before == exact_top(matrix, docs, queries[0], 10)
        or len(before & exact_top(matrix, docs, queries[0], 10)) >= 9
    )
    deadline = time.monotonic() + 60
    while ann._graph is not None and ann._graph[1] != 3_000 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ann._graph is not None and ann._graph[1:3] == (3_000, 3_000)  # the new graph holds all


def test_a_graph_that_misses_the_exact_top_10_of_the_queries_asked_is_not_used() -> None:
    """Queries unlike the records (random directions, none near a cluster) through a sparse graph
    searched narrowly: it reaches its rows, yet finds too little of their exact top 10, so the
    scope stays with exact search, and tries again only once it has doubled."""
    matrix, _ = clustered(4_000)
    docs = np.arange(1, 4_001, dtype=np.int64)
    rng = np.random.default_rng(11)
    asked = rng.normal(size=(64, DIM))
    asked = (asked / np.linalg.norm(asked, axis=1, keepdims=True)).astype(np.float32)
    ann = graph_index(asked, attempts=((8, 64),), expansions=(1,))
    build_here(ann, docs, matrix)
    assert not ann.ready and not ann.failed and ann._refused_at == 4_000
    scope = ScopeVectors(docs, matrix, (0,), ann)
    assert {d for d, _ in nearest(scope, asked[0], 10)} == exact_top(matrix, docs, asked[0], 10)
    ann.start(docs, matrix)
    assert not ann._building  # not before the scope has doubled
    ann.start(np.arange(1, 8_001, dtype=np.int64), np.vstack([matrix, matrix]))
    assert ann._building
    deadline = time.monotonic() + 60
    while ann._building and time.monotonic() < deadline:
        time.sleep(0.01)


def test_a_graph_in_use_finds_what_it_was_checked_for() -> None:
    """The graph a build keeps found at least RECALL_MIN of the exact top 10 of the queries asked;
    the recall it reports is what those queries find through it."""
    matrix, queries = clustered(4_000)
    docs = np.arange(1, 4_001, dtype=np.int64)
    scope = built(docs, matrix, queries)
    assert scope.ann is not None and scope.ann.recall is not None
    assert scope.ann.recall >= RECALL_MIN and scope.ann.expansion is not None
    found = sum(len({d for d, _ in nearest(scope, q, 10)} & exact_top(matrix, docs, q, 10)) for q in queries)
    assert found / (10 * len(queries)) >= RECALL_MIN - 0.02  # float16 inside: near the float64 oracle


@pytest.mark.parametrize("exact_costs_ms", [0.0, 5.0])
def test_a_graph_is_kept_only_where_it_undercuts_the_scopes_own_exact_search(exact_costs_ms: float) -> None:
    """The graph's cost is weighed against the search the scope gets without it (the one the
    store hands the build: through a sketch, where the scope has one), not a bare product."""
    matrix, queries = clustered(4_000)
    docs = np.arange(1, 4_001, dtype=np.int64)
    ann = ScopeAnn(DIM, probes_min=1, cheaper_only=True)
    for query in queries:
        ann.observe(query)

    def exact(query: np.ndarray, limit: int) -> None:
        if exact_costs_ms:  # (a sleep of 0 yields the thread, which under load can take long)
            time.sleep(exact_costs_ms / 1000)

    ann.start(docs, matrix, exact)
    ann.wait(60)
    assert not ann._building
    if exact_costs_ms:
        assert ann.ready  # 5 ms a query: any graph of 4,000 vectors is cheaper
    else:
        assert not ann.ready and ann._refused_at == 4_000  # free: no graph is


def test_until_the_graph_is_built_search_is_exact() -> None:
    matrix, queries = clustered(1_500)
    docs = np.arange(len(matrix), dtype=np.int64)
    waiting = ScopeAnn(DIM)  # never started: not ready
    scope = ScopeVectors(docs, matrix, (0,), waiting)
    assert {d for d, _ in nearest(scope, queries[0], 10)} == exact_top(matrix, docs, queries[0], 10)


def test_exact_search_of_a_large_scope_through_its_int8_rows_finds_the_exact_top() -> None:
    """A scope read from stored vectors keeps their int8 components; past INT8_MIN rows exact
    search ranks those first and rescores the rows found in float32: the same top 10 as the
    float64 oracle, with the float32 cosines."""
    matrix, queries = clustered(5_000)
    rows = [(i + 1, vector_bytes(v)) for i, v in enumerate(matrix)]
    scope = extended(None, rows, DIM, (5_000,), ann_min=None)
    assert scope.codes is not None and len(scope.docs) >= INT8_MIN
    for q in queries[:40]:
        hits = nearest(scope, q, 10)
        assert {d for d, _ in hits} == exact_top(scope.matrix, scope.docs, q, 10)
        for doc, score in hits:
            assert score == pytest.approx(float(scope.matrix[doc - 1] @ q), abs=1e-6)
        deep = nearest(scope, q, 100)
        assert len(deep) == 100 and [s for _, s in deep] == sorted((s for _, s in deep), reverse=True)


def low_rank(n: int, rank: int = 24, seed: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """``n`` unit vectors whose variance lies mostly in ``rank`` directions (as text embeddings'
    does: most of it in a few dozen), and 100 queries drawn the same way."""
    rng = np.random.default_rng(seed)
    basis = rng.normal(size=(rank, DIM))

    def draw(count: int) -> np.ndarray:
        m = rng.normal(size=(count, rank)) @ basis + rng.normal(scale=1.8, size=(count, DIM))
        return (m / np.linalg.norm(m, axis=1, keepdims=True)).astype(np.float32)

    return draw(n), draw(100)


def test_a_scope_whose_variance_lies_in_few_directions_is_ranked_in_its_sketch_first() -> None:
    """Past SKETCH_MIN vectors a scope whose variance lies in few directions is sketched in them;
    its search ranks the sketch first and rescores the rows found from their stored int8
    components: the float64 oracle's top 10 and nearly all of its top 100, with the cosines of
    the float32 rows."""
    matrix, queries = low_rank(6_000)
    rows = [(i + 1, vector_bytes(v)) for i, v in enumerate(matrix)]
    scope = extended(None, rows, DIM, (6_000,), ann_min=None)
    assert scope.sketch is not None and scope.sketch.projection is not None and scope.sketch.rows is not None
    assert scope.sketch.projection.shape[1] < DIM // 3 and len(scope.sketch.rows) == 6_000
    top10 = top100 = 0
    for q in queries:
        hits = nearest(scope, q, 10)
        top10 += len({d for d, _ in hits} & exact_top(scope.matrix, scope.docs, q, 10))
        for doc, score in hits:
            assert score == pytest.approx(float(scope.matrix[doc - 1] @ q), abs=1e-6)
        deep = nearest(scope, q, 100)
        assert len(deep) == 100 and [s for _, s in deep] == sorted((s for _, s in deep), reverse=True)
        top100 += len({d for d, _ in deep} & exact_top(scope.matrix, scope.docs, q, 100))
    assert top10 / (10 * len(queries)) >= 0.99 and top100 / (100 * len(queries)) >= 0.97


def test_a_sketch_rescored_from_the_stored_components_finds_the_rows_the_float32_rows_rank_first() -> None:
    """The sketch's rows rescored from their int8 components (narrowed by the query as int8, then
    their products over their norms) are the rows the float32 matrix ranks first among them, with
    its cosines; a stored vector of zeros scores 0 either way."""
    matrix, queries = low_rank(6_000, seed=8)
    matrix[17] = 0.0
    rows = [(i + 1, vector_bytes(v)) for i, v in enumerate(matrix)]
    scope = extended(None, rows, DIM, (6_000,), ann_min=None)
    sketch = scope.sketch
    assert sketch is not None and sketch.projection is not None and sketch.rows is not None
    assert sketch.scales is not None and scope.codes is not None
    limit, depth = 100, 500
    for q in [*queries, matrix[17] + queries[0]]:
        q = q.astype(np.float32)
        q8 = neighbours_module._sketch_query(np.einsum("j,jk->k", q, sketch.projection))
        assert q8 is not None
        args = (sketch.rows, sketch.scales, q8, q, depth, limit)
        top, scores = neighbours_module.sketch_scan(scope.matrix, scope.codes, *args)
        f_top, f_scores = neighbours_module.sketch_scan(scope.matrix, None, *args)
        assert set(top.tolist()) == set(f_top.tolist())
        by_row = dict(zip(f_top.tolist(), f_scores.tolist(), strict=True))
        for row, score in zip(top.tolist(), scores.tolist(), strict=True):
            assert score == pytest.approx(by_row[row], abs=1e-6)
    # The row of zeros: among the rows a search of its neighbours rescored, at 0.
    coarse = np.arange(0, 600)
    found = neighbours_module._code_rescored(scope.codes, coarse, queries[1], 600)
    assert found is not None
    top, scores = found
    assert dict(zip(top.tolist(), scores.tolist(), strict=True))[17] == 0.0


def test_a_search_begun_with_its_scan_on_another_thread_answers_as_one_run_here() -> None:
    """A sketched scope's scan runs on the offload's thread (the rest on the caller's) and the
    answer is the one the search gives run in one go: over two scopes (one sketched, one not),
    with and without a doc filter; the merged top 10 is the float64 oracle's over both."""
    sketched_m, queries = low_rank(6_000)
    plain_m, _ = clustered(3_000)
    first = extended(None, [(i + 1, vector_bytes(v)) for i, v in enumerate(sketched_m)], DIM, (1,))
    second = extended(None, [(10_001 + i, vector_bytes(v)) for i, v in enumerate(plain_m)], DIM, (1,))
    assert first.sketch is not None and first.sketch.projection is not None
    assert second.sketch is not None and second.sketch.projection is None
    search = ScopesSearch(lambda: [first, second])
    scanned_on: list[str] = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="offload") as pool:

        def offload(scan: Any) -> Any:
            def run() -> Any:
                scanned_on.append(threading.current_thread().name)
                return scan()

            return pool.submit(run)

        allowed = set(range(1, 6_001, 3)) | set(range(10_001, 13_001, 5))
        both = np.concatenate([first.matrix, second.matrix])
        docs = np.concatenate([first.docs, second.docs])
        found = 0
        for q in queries[:30]:
            begun = search.begin(q, 100, None, offload)
            assert begun() == search(q, 100)
            found += len({d for d, _ in begun()[:10]} & exact_top(both, docs, q, 10))
            assert search.begin(q, 10, allowed, offload)() == search(q, 10, allowed)
    assert found >= 0.99 * 10 * 30
    # At most one scan per unfiltered search of the sketched scope (a filtered search scans
    # nothing), on the offload's thread; one that thread had not taken up when asked ran here.
    assert 0 < len(scanned_on) <= 30 and all(name.startswith("offload") for name in scanned_on)
    # A scan no thread has taken up yet when its answer is asked for runs on the asking thread.
    gate = threading.Event()
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as busy:
        blocker = busy.submit(gate.wait, 60)
        try:
            assert search.begin(queries[0], 100, None, busy.submit)() == search(queries[0], 100)
            assert not blocker.done()  # answered without waiting for the pool's thread
        finally:
            gate.set()


def test_a_scope_whose_variance_is_spread_is_not_sketched_and_is_searched_exactly() -> None:
    """Vectors spread over most directions (clustered's noise): no few directions hold enough of
    their variance, the fit is refused and search ranks every row (through the int8 pass)."""
    matrix, queries = clustered(5_000)
    rows = [(i + 1, vector_bytes(v)) for i, v in enumerate(matrix)]
    scope = extended(None, rows, DIM, (5_000,), ann_min=None)
    assert scope.sketch is not None and scope.sketch.projection is None and scope.sketch.fitted == 5_000
    for q in queries[:20]:
        assert {d for d, _ in nearest(scope, q, 10)} == exact_top(scope.matrix, scope.docs, q, 10)


def test_a_sketch_is_fitted_at_its_size_carried_as_the_scope_grows_and_fitted_again_later() -> None:
    matrix, _ = low_rank(SKETCH_MIN * SKETCH_REFIT + 1)
    rows = [(i + 1, vector_bytes(v)) for i, v in enumerate(matrix)]
    small = extended(None, rows[: SKETCH_MIN - 1], DIM, (1,), ann_min=None)
    assert small.sketch is None
    first = extended(small, rows[SKETCH_MIN - 1 : SKETCH_MIN], DIM, (2,), ann_min=None)
    assert first.sketch is not None and first.sketch.fitted == SKETCH_MIN
    upto = SKETCH_MIN * SKETCH_REFIT - 1
    grown = extended(first, rows[SKETCH_MIN:upto], DIM, (3,), ann_min=None)
    assert grown.sketch is not None and grown.sketch.projection is first.sketch.projection
    assert grown.sketch.rows is not None and len(grown.sketch.rows) == upto
    # The rows added since the fit are in the sketch: each is its own nearest neighbour.
    for row in (upto - 1, upto - 500):
        assert nearest(grown, grown.matrix[row], 3)[0][0] == row + 1
    refit = extended(grown, rows[upto:], DIM, (4,), ann_min=None)
    assert refit.sketch is not None and refit.sketch.fitted == len(matrix)
    assert refit.sketch.projection is not grown.sketch.projection


def test_a_doc_filter_is_searched_exactly_over_its_docs_only() -> None:
    matrix, queries = clustered(3_000)
    docs = np.arange(0, 2 * len(matrix), 2, dtype=np.int64)  # even docs
    scope = built(docs, matrix)
    allowed = {int(d) for d in docs[::7]} | {1, 3, 10**9}  # odd and huge docs are no rows
    rows = np.isin(docs, sorted(allowed))
    hits = nearest(scope, queries[2], 10, allowed)
    assert {d for d, _ in hits} == exact_top(matrix[rows], docs[rows], queries[2], 10)


def test_the_index_is_started_at_the_configured_size_and_carried_as_the_scope_grows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ann_module, "CHEAPER_ONLY", False)  # 1,000 vectors: the product is cheaper
    matrix, _ = clustered(1_200)
    rows = [(i + 1, vector_bytes(v)) for i, v in enumerate(matrix)]
    small = extended(None, rows[:999], DIM, (999,), ann_min=1_000)
    assert small.ann is None
    grown = extended(small, rows[999:1_000], DIM, (1_000,), ann_min=1_000)
    assert grown.ann is not None
    assert not grown.ann.ready  # the store that keeps this copy starts the build
    grown.ann.start(grown.docs, grown.matrix)
    assert not grown.ann._building  # once PROBES_MIN queries were asked
    for query in matrix[:PROBES_MIN]:
        assert nearest(grown, query, 10)  # searched exactly, observed
    assert grown.ann.wait(60)
    later = extended(grown, rows[1_000:], DIM, (1_200,), ann_min=1_000)
    assert later.ann is grown.ann  # one graph per scope, extended, not rebuilt
    assert extended(None, rows, DIM, (1_200,), ann_min=None).ann is None  # never, when not asked


def test_ann_min_vectors_is_bounded_and_named() -> None:
    assert load_config_dict({"agent_memory": {}}).agent_memory.ann_min_vectors == ANN_MIN_VECTORS
    with pytest.raises(ConfigError, match="ann_min_vectors"):
        load_config_dict({"agent_memory": {"ann_min_vectors": 10}})


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    yield from make_backend(request.param, request)


QUESTION = "which colleague does not eat meat or nuts?"  # cosine 0.55 to Diet, no word shared
TOPICS = [
    ("Diet", "Sam is vegetarian and allergic to peanuts."),
    ("Flights", "The team flies to Lisbon on the ninth for the offsite."),
    ("Laptop", "Priya's laptop battery swells; a replacement is on order."),
]


def test_a_scope_past_the_size_is_recalled_by_meaning_through_its_graph(
    tmp_path: Path, backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A graph is built once the scope was asked PROBES_MIN queries (4 here), and used whatever
    it costs beside the exact product over these 1,003 vectors (the product would win)."""
    monkeypatch.setattr(ann_module, "PROBES_MIN", 4)
    monkeypatch.setattr(ann_module, "CHEAPER_ONLY", False)
    state = tmp_path / "state"
    stored: dict[str, Any] = backend.store_config()
    meta = (
        Meta.builder()
        .persistent_state(state)
        .memory()
        .agent_memory(recall="hybrid", ann_min_vectors=1_000, **stored)
        .build()
    )
    with meta:
        _plants_then_topics(meta, 1_000)
        params = {"identity": "lead", "query_text": QUESTION, "max_entries": 1, "wait_for_vectors": True}
        found: list[str] = []
        deadline = time.monotonic() + 120  # vectors are embedded, then the graph built, in the background
        while time.monotonic() < deadline:
            found = [r["title"] for r in meta.call("meta/agent_memory/recall", params)["records"]]
            if _graph_in_use(meta):
                break
            time.sleep(0.2)
        assert _graph_in_use(meta)
        reply = meta.call("meta/agent_memory/recall", params)
        found = [r["title"] for r in reply["records"]]
        assert found == ["Diet"], (reply, _debug(meta))


def _plants_then_topics(meta: MetaHandle, plants: int) -> None:
    """``plants`` near-duplicate records about office plants, then TOPICS, for identity lead."""
    for i in range(plants):
        meta.remember_agent_memory(
            "lead", title=f"Plant {i}", body=f"Office plant {i} needs water on day {i}."
        )
    for title, body in TOPICS:
        meta.remember_agent_memory("lead", title=title, body=body)


def test_a_scope_past_the_sketch_size_is_recalled_by_meaning_through_its_sketch(
    tmp_path: Path, backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past SKETCH_MIN vectors (500 here) the store's copy of the scope carries a sketch, on either
    backend, and the record that shares no word with the question is still the one recalled."""
    monkeypatch.setattr(neighbours_module, "SKETCH_MIN", 500)
    state = tmp_path / "state"
    stored: dict[str, Any] = backend.store_config()
    meta = Meta.builder().persistent_state(state).memory().agent_memory(recall="hybrid", **stored).build()
    with meta:
        _plants_then_topics(meta, 600)
        params = {"identity": "lead", "query_text": QUESTION, "max_entries": 1, "wait_for_vectors": True}
        deadline = time.monotonic() + 120  # the vectors are embedded in the background
        while meta.call("meta/agent_memory/recall", params)["vectors_behind"] and time.monotonic() < deadline:
            time.sleep(0.2)
        reply = meta.call("meta/agent_memory/recall", params)
        sketches = [s.sketch for s in meta.runtime.agent_memory.store("default")._vectors._cache.values()]
        assert [len(s.rows) for s in sketches if s is not None and s.rows is not None] == [603]
        assert [r["title"] for r in reply["records"]] == ["Diet"], reply


def _graph_in_use(meta: Any) -> bool:
    """Whether the realm's scope holds a built graph (this process's view)."""
    vectors = meta.runtime.agent_memory.store("default")._vectors
    return any(s.ann is not None and s.ann.ready for s in vectors._cache.values())


def _debug(meta: Any) -> Any:
    """What the realm's scope caches hold (for a failure's message)."""
    vectors = meta.runtime.agent_memory.store("default")._vectors
    return [
        (len(s.docs), s.mark, s.ann and s.ann._graph and s.ann._graph[1:3]) for s in vectors._cache.values()
    ]
