"""A scope's vectors grow in place (recall/neighbours.py, GROWTH): a read that finds a few new
vectors writes them past the rows of the copies handed out, instead of copying the whole scope,
and no copy handed out ever changes. The oracle is the scope built at once from all its rows."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meta_memory.memory.recall import neighbours
from meta_memory.memory.recall.neighbours import ScopeVectors, extended, vector_bytes

DIM = 192


def _rows(n: int, seed: int = 3, start: int = 1) -> list[tuple[int, bytes]]:
    """``n`` stored vectors of docs ``start``.. whose variance lies in 4 directions (a sketch
    takes them)."""
    rng = np.random.default_rng(seed)
    m = rng.normal(size=(n, 4)) @ rng.normal(size=(4, DIM)) + 0.05 * rng.normal(size=(n, DIM))
    return [(start + i, vector_bytes(v)) for i, v in enumerate(m)]


def _same(copy: ScopeVectors, oracle: ScopeVectors) -> None:
    assert np.array_equal(copy.docs, oracle.docs)
    assert np.array_equal(copy.matrix, oracle.matrix)
    assert (copy.codes is None) == (oracle.codes is None)
    if copy.codes is not None and oracle.codes is not None:
        assert np.array_equal(copy.codes, oracle.codes)
    if copy.sketch is not None and copy.sketch.rows is not None:
        assert copy.sketch.projection is not None and copy.sketch.scales is not None
        # The sketch's rows are the copy's rows projected by its fit, over their largest component
        # x 127 (float64 here: a rounding may differ by one), and its scales one over their lengths.
        projected = copy.matrix.astype(np.float64) @ copy.sketch.projection.astype(np.float64)
        projected *= 127.0 / np.abs(projected).max(axis=1, keepdims=True)
        assert copy.sketch.rows.dtype == np.int8 and len(copy.sketch.rows) == len(copy.docs)
        assert np.abs(copy.sketch.rows.astype(np.float64) - projected).max() <= 1.0
        lengths = np.linalg.norm(copy.sketch.rows.astype(np.float64), axis=1)
        assert np.allclose(copy.sketch.scales, 1.0 / lengths, rtol=1e-6)


@pytest.fixture(autouse=True)
def small_sketches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(neighbours, "SKETCH_MIN", 64)
    monkeypatch.setattr(neighbours, "SKETCH_SAMPLE", 256)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=90), min_size=1, max_size=12))
def test_every_copy_is_the_scope_built_at_once_and_never_changes(chunks: list[int]) -> None:
    rows = _rows(sum(chunks) + 1)
    copies: list[tuple[ScopeVectors, int]] = []
    scope = extended(None, rows[:1], DIM, (1,))
    copies.append((scope, 1))
    upto = 1
    for size in chunks:
        scope = extended(scope, rows[upto : upto + size], DIM, (upto + size,))
        upto += size
        copies.append((scope, upto))
    for copy, n in copies:  # the earliest ones too, after every later write
        _same(copy, extended(None, rows[:n], DIM, (n,)))


def test_a_scope_that_grows_by_a_few_vectors_is_written_in_place() -> None:
    rows = _rows(400)
    first = extended(None, rows[:300], DIM, (300,))
    second = extended(first, rows[300:301], DIM, (301,))  # a room past its rows
    later = [second]
    for n in range(302, 340):
        later.append(extended(later[-1], rows[n - 1 : n], DIM, (n,)))
    for copy in later[1:]:  # the same arrays, longer
        assert copy.matrix.ctypes.data == second.matrix.ctypes.data
        assert copy.sketch is not None and second.sketch is not None
        assert copy.sketch.rows is not None and second.sketch.rows is not None
        assert copy.sketch.rows.ctypes.data == second.sketch.rows.ctypes.data
        assert copy.sketch.scales is not None and second.sketch.scales is not None
        assert copy.sketch.scales.ctypes.data == second.sketch.scales.ctypes.data
    _same(later[-1], extended(None, rows[:339], DIM, (339,)))
    _same(first, extended(None, rows[:300], DIM, (300,)))


def test_two_reads_from_one_copy_never_write_over_each_other() -> None:
    """Two copies grown from the same one with different rows (as two readers could, a scope's
    vectors rebuilt between them): the second gets arrays of its own."""
    rows = _rows(200)
    base = extended(extended(None, rows[:100], DIM, (100,)), rows[100:101], DIM, (101,))
    other = _rows(50, seed=9, start=102)
    one = extended(base, rows[101:150], DIM, (150,))
    two = extended(base, other, DIM, (151,))
    _same(one, extended(None, rows[:150], DIM, (150,)))
    _same(two, extended(None, rows[:101] + other, DIM, (151,)))
    assert two.matrix.ctypes.data != one.matrix.ctypes.data


def test_readers_growing_one_copy_at_once_each_get_the_whole_scope() -> None:
    rows = _rows(3_000)
    base = extended(extended(None, rows[:1_000], DIM, (1,)), rows[1_000:1_001], DIM, (2,))
    found: list[ScopeVectors] = []
    start = threading.Barrier(4)

    def read(n: int) -> None:
        start.wait(10)
        found.append(extended(base, rows[1_001:n], DIM, (n,)))

    readers = [threading.Thread(target=read, args=(n,)) for n in (1_500, 2_000, 2_500, 3_000)]
    for r in readers:
        r.start()
    for r in readers:
        r.join(30)
    assert len(found) == 4
    for copy in found:
        n = len(copy.docs)
        _same(copy, extended(None, rows[:n], DIM, (n,)))


def test_the_int8_products_are_exact_with_or_without_simsimd(monkeypatch: pytest.MonkeyPatch) -> None:
    """A sketch's scan (SimSIMD's kernel, numpy's int32 einsum without it) against float64 products
    of the same int8 rows: integer sums, so equal, extremes included (127 x 127 x 96 overflows
    int16)."""
    rng = np.random.default_rng(5)
    rows = rng.integers(-127, 128, size=(500, 96)).astype(np.int8)
    rows[0] = 127
    query = np.full(96, 127, dtype=np.int8)
    query[1::2] = rng.integers(-127, 128, size=48)
    oracle = rows.astype(np.float64) @ query.astype(np.float64)
    assert neighbours._simsimd() is not None  # the `semantic` extra carries it
    assert np.array_equal(neighbours._int8_products(rows, query), oracle)
    monkeypatch.setattr(neighbours, "_simsimd", lambda: None)
    assert np.array_equal(neighbours._int8_products(rows, query), oracle)
