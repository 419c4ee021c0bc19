"""The hybrid recall defaults that ship are the ones the benchmark measured.

These are literal on purpose: the values were chosen by `benchmarks/recall_quality/hybrid.py` (its grid
and `--sweep`) and their quality is recorded in docs/benchmarks.md ("Hybrid recall"). Changing any of
them needs a new benchmark run recorded there, and then this test updated to the new values."""

from __future__ import annotations

import inspect

from meta_memory.memory.recall import hybrid as hybrid_provider
from meta_memory.memory.recall.fusion import DEFAULT_HYBRID, HybridParams


def test_the_default_fusion_is_the_benchmarked_convex_combination_behind_a_lexical_head() -> None:
    assert HybridParams(lexical_weight=0.7, semantic_floor=None, protect=5) == DEFAULT_HYBRID
    assert DEFAULT_HYBRID.method == "convex"
    assert DEFAULT_HYBRID.lexical_weight == 0.7  # the embedding ranking weighs 0.3
    assert DEFAULT_HYBRID.lexical_floor == 0.0  # BM25's minimum
    assert DEFAULT_HYBRID.semantic_floor is None  # the least neighbour's cosine (fusion.near_enough)
    assert DEFAULT_HYBRID.depth == 100
    assert DEFAULT_HYBRID.protect == 5  # the lexical ranking's first five places stay
    assert DEFAULT_HYBRID.k == 60.0  # RRF's offset, used only if method = "rrf"


def test_the_recall_provider_drops_neighbours_below_the_benchmarked_cosine_floor() -> None:
    floor = inspect.signature(hybrid_provider.HybridRecallProvider).parameters["min_similarity"].default
    assert floor == 0.3
