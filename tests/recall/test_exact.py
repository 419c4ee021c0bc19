"""Exact search at int8 speed (recall/exact.py): the int8 first pass keeps enough rows that the
float32 second pass returns the same neighbours, with the same scores, as a plain float64 product
and a full sort, on uniform, clustered and near-duplicate vectors; and a scope's search through
``nearest`` takes that path once the scope is large enough."""

from __future__ import annotations

import numpy as np
import pytest

from meta_memory.memory.recall import exact
from meta_memory.memory.recall.exact import INT8_FROM, quantize, top
from meta_memory.memory.recall.neighbours import ScopeVectors, nearest

DIM = 384


def unit(m: np.ndarray) -> np.ndarray:
    return (m / np.linalg.norm(m, axis=1, keepdims=True)).astype(np.float32)


def oracle(matrix: np.ndarray, query: np.ndarray, k: int) -> tuple[list[int], np.ndarray]:
    scores = matrix.astype(np.float64) @ query.astype(np.float64)
    order = np.argsort(-scores, kind="stable")[:k]
    return sorted(int(i) for i in order), scores


def sets(rng: np.random.Generator, n: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    centres = rng.normal(size=(max(n // 50, 4), DIM))
    picks = rng.integers(0, len(centres), n + 50)
    clustered = unit(centres[picks] + rng.normal(scale=0.9, size=(n + 50, DIM)))
    base = rng.normal(size=DIM)
    near_duplicates = unit(base + rng.normal(scale=0.05, size=(n + 50, DIM)))
    uniform = unit(rng.normal(size=(n + 50, DIM)))
    return {
        "uniform": (uniform[:n], uniform[n:]),
        "clustered": (clustered[:n], clustered[n:]),
        "near duplicates": (near_duplicates[:n], near_duplicates[n:]),
    }


def test_the_int8_path_is_the_one_taken_here() -> None:
    # The semantic extra brings numkong (with usearch): without it the tests below would check the
    # float32 fallback only.
    assert exact._numkong() is not None


@pytest.mark.parametrize("k", [1, 10, 100])
def test_the_two_passes_find_the_exact_neighbours_with_exact_scores(k: int) -> None:
    rng = np.random.default_rng(k)
    for name, (matrix, queries) in sets(rng, 6_000).items():
        int8 = quantize(matrix)
        for query in queries:
            rows, scores = top(matrix, int8, query, k)
            want, full = oracle(matrix, query, k)
            ranked = np.sort(full)[::-1]
            tied = ranked[k - 1] - ranked[k] < 1e-6  # then either doc may take the k-th place
            assert sorted(int(r) for r in rows) == want or tied, name
            assert np.allclose(scores, full[rows], atol=1e-5), name


def test_small_matrices_and_odd_queries_take_the_float32_product() -> None:
    rng = np.random.default_rng(5)
    matrix = unit(rng.normal(size=(INT8_FROM - 1, DIM)))
    query = matrix[7]
    rows, scores = top(matrix, quantize(matrix), query, 3)
    assert 7 in rows and np.isclose(scores.max(), 1.0, atol=1e-5)
    big = unit(rng.normal(size=(INT8_FROM * 2, DIM)))
    rows, scores = top(big, quantize(big), np.zeros(DIM, dtype=np.float32), 5)  # nothing to scale
    assert len(rows) == 5 and np.all(scores == 0)
    rows, _ = top(big, quantize(big), big[11], 0)
    assert len(rows) == 0


def test_a_scope_search_returns_what_the_float_product_ranks_first() -> None:
    rng = np.random.default_rng(9)
    matrix, queries = sets(rng, 10_000)["clustered"]
    docs = np.arange(1, len(matrix) + 1, dtype=np.int64) * 3
    scope = ScopeVectors(docs, matrix, (0,))
    for query in queries[:20]:
        hits = nearest(scope, query, 10)
        want, full = oracle(matrix, query, 10)
        assert [doc for doc, _ in hits] == [int(docs[i]) for i in sorted(want, key=lambda i: -full[i])]
        assert all(np.isclose(score, full[doc // 3 - 1], atol=1e-5) for doc, score in hits)
    assert scope.int8 is not None  # made once, on first use, and kept
