"""The sketch's best rows (neighbours._deepest): found among the rows above a sampled threshold,
they are the rows a whole sort finds, whatever the scores' order (the oracle: a full sort)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from meta_memory.memory.recall.neighbours import DEEPEST_MIN, DEEPEST_STRIDE, _deepest


def best_rows(scores: np.ndarray, depth: int) -> set[int]:
    order = sorted(range(len(scores)), key=lambda i: -float(scores[i]))
    return set(order[:depth])


@settings(max_examples=60, deadline=None)
@given(
    st.integers(DEEPEST_MIN - 100, 3 * DEEPEST_MIN),
    st.sampled_from([256, 300, 500, 1000]),
    st.sampled_from(["random", "ascending", "descending", "sampled rows lowest", "sampled rows highest"]),
    st.integers(0, 2**32 - 1),
)
def test_the_deepest_rows_are_those_a_whole_sort_finds(n: int, depth: int, shape: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    products = rng.permutation(n).astype(np.float64)  # distinct: one right answer
    if shape == "ascending":
        products.sort()
    elif shape == "descending":
        products[::-1].sort()
    elif shape.startswith("sampled rows"):
        # The rows the threshold is read off are the scope's worst (a threshold too low: many
        # candidates) or its best (too high: too few, the whole scope is sorted).
        sampled = products[::DEEPEST_STRIDE]
        sampled += -4.0 * n if shape.endswith("lowest") else 4.0 * n
    scales = rng.uniform(0.5, 2.0, n).astype(np.float32)
    scores = products * scales
    got = _deepest(products, scales, depth)
    assert len(got) == depth
    assert set(got.tolist()) == best_rows(scores, depth)
