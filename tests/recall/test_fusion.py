"""Rank fusion: worked examples, a doc-by-doc reference implementation, and Hypothesis invariants."""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Sequence
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meta_memory.memory.recall.fusion import (
    DEFAULT_HYBRID,
    Ceilings,
    Fusion,
    HybridParams,
    contenders,
    convex,
    hybrid,
    hybrid_scored,
    lexical_candidates,
    monotone,
    near_enough,
    rrf,
)

# ----------------------------------------------------------------------------------------------------
# Reference implementations: doc-major (every ranking searched for each doc) and a pairwise comparator,
# where the module is ranking-major with a sort key. Only the definitions in its docstring are shared.


def _compare(a: tuple[float, int, int], b: tuple[float, int, int]) -> int:
    (sa, ba, da), (sb, bb, db) = a, b
    if sa != sb:
        return -1 if sa > sb else 1
    if ba != bb:
        return -1 if ba < bb else 1
    return -1 if da < db else (1 if da > db else 0)


def reference_rrf(
    rankings: Sequence[Sequence[int]], k: float, weights: Sequence[float], limit: int
) -> list[int]:
    rows = []
    for doc in sorted({d for r in rankings for d in r}):
        # w / (k + r), r the 1-based rank: (k + index) + 1 rounds differently for a k of about 1e-16.
        terms = [
            w / (k + (list(r).index(doc) + 1)) for r, w in zip(rankings, weights, strict=True) if doc in r
        ]
        best = min(list(r).index(doc) + 1 for r in rankings if doc in r)
        rows.append((math.fsum(terms), best, doc))
    rows.sort(key=functools.cmp_to_key(_compare))
    return [doc for _, _, doc in rows[:limit]]


def reference_convex(
    scored: Sequence[Sequence[tuple[int, float]]],
    weights: Sequence[float],
    floors: Sequence[float | None],
    limit: int,
) -> list[int]:
    rows = []
    for doc in sorted({d for r in scored for d, _ in r}):
        terms, positions = [], []
        for ranking, w, floor in zip(scored, weights, floors, strict=True):
            as_dict = dict(ranking)
            if doc not in as_dict:
                continue
            top = max(as_dict.values())
            bottom = min(as_dict.values()) if floor is None else floor
            if top <= bottom:
                norm = 1.0
            else:
                norm = (as_dict[doc] - bottom) / (top - bottom)
                norm = 0.0 if norm < 0 else (1.0 if norm > 1 else norm)
            terms.append(w * norm)
            positions.append([d for d, _ in ranking].index(doc) + 1)
        rows.append((math.fsum(terms), min(positions), doc))
    rows.sort(key=functools.cmp_to_key(_compare))
    return [doc for _, _, doc in rows[:limit]]


def reference_convex_score(
    scored: Sequence[Sequence[tuple[int, float]]],
    weights: Sequence[float],
    floors: Sequence[float | None],
    doc: int,
) -> float:
    """The reference's fused score of ``doc`` (reference_convex ranks by it)."""
    terms = []
    for ranking, w, floor in zip(scored, weights, floors, strict=True):
        as_dict = dict(ranking)
        if doc in as_dict:
            top = max(as_dict.values())
            bottom = min(as_dict.values()) if floor is None else floor
            norm = 1.0 if top <= bottom else min(1.0, max(0.0, (as_dict[doc] - bottom) / (top - bottom)))
            terms.append(w * norm)
    return math.fsum(terms)


rankings_st = st.lists(st.lists(st.integers(0, 25), unique=True, max_size=12), min_size=1, max_size=4)
limits = st.integers(0, 30)
ks = st.one_of(st.sampled_from([0.0, 1.0, 10.0, 60.0]), st.floats(0, 200, allow_nan=False))


@st.composite
def weighted_rankings(draw: st.DrawFn) -> tuple[list[list[int]], list[float]]:
    rankings = draw(rankings_st)
    weights = draw(
        st.lists(st.sampled_from([0.0, 0.3, 0.5, 1.0, 2.0]), min_size=len(rankings), max_size=len(rankings))
    )
    return rankings, weights


@st.composite
def scored_rankings(draw: st.DrawFn) -> tuple[list[list[tuple[int, float]]], list[float], list[float | None]]:
    rankings = draw(rankings_st)
    scored = []
    for r in rankings:
        scores = sorted(
            draw(
                st.lists(
                    st.sampled_from([-1.0, 0.0, 0.25, 0.5, 0.9, 3.0, 7.5]), min_size=len(r), max_size=len(r)
                )
            ),
            reverse=True,
        )
        scored.append(list(zip(r, scores, strict=True)))
    n = len(scored)
    weights = draw(st.lists(st.sampled_from([0.0, 0.4, 0.6, 1.0]), min_size=n, max_size=n))
    floors = draw(st.lists(st.sampled_from([None, 0.0, -1.0]), min_size=n, max_size=n))
    return scored, weights, floors


# ----------------------------------------------------------------------------------------------------
# Worked examples


def test_rrf_adds_reciprocal_ranks_with_offset_k() -> None:
    # doc 1: 1/61 + 1/62, doc 3: 1/63 + 1/61, doc 2: 1/62
    assert rrf([[1, 2, 3], [3, 1]], limit=10) == [1, 3, 2]


def test_rrf_weights_scale_each_rankings_contribution() -> None:
    assert rrf([[1, 2], [2, 1]], k=0, weights=[1.0, 3.0], limit=2) == [2, 1]
    assert rrf([[1, 2], [2, 1]], k=0, weights=[3.0, 1.0], limit=2) == [1, 2]


def test_rrf_equal_scores_break_by_best_rank_then_smaller_doc() -> None:
    # 7 and 9 are both first once: equal score, equal best rank, so the smaller id leads.
    assert rrf([[9, 4], [7, 4]], k=60, limit=3) == [4, 7, 9]
    assert rrf([[9], [7]], limit=2) == [7, 9]


def test_convex_normalises_against_floors_and_counts_a_missing_doc_as_zero() -> None:
    lexical = [(1, 10.0), (2, 5.0)]  # with floor 0: 1.0, 0.5
    semantic = [(2, 0.9), (3, 0.45)]  # with floor 0: 1.0, 0.5
    assert convex([lexical, semantic], weights=[0.5, 0.5], floors=[0.0, 0.0], limit=5) == [2, 1, 3]
    # Against each list's own minimum instead: doc 1 = 0.5, doc 2 = 0.5, doc 3 = 0; doc 1 is ranked first once.
    assert convex([lexical, semantic], weights=[0.5, 0.5], limit=5) == [1, 2, 3]


def test_convex_gives_every_doc_of_a_flat_ranking_full_score() -> None:
    assert convex([[(4, 2.0), (5, 2.0)], [(6, 0.7)]], limit=3) == [4, 6, 5]


def test_hybrid_protect_keeps_the_lexical_top_in_its_order() -> None:
    lexical = [(1, 3.0), (2, 2.9), (3, 0.1)]
    semantic = [(8, 0.9), (9, 0.88), (3, 0.87), (2, 0.2)]
    params = HybridParams("convex", lexical_weight=0.2, protect=2)
    got = hybrid(lexical, semantic, limit=4, params=params)
    assert got[:2] == [1, 2]
    assert len(got) == len(set(got)) == 4


def test_hybrid_with_all_weight_on_one_side_keeps_that_sides_order() -> None:
    lexical = [(5, 9.0), (1, 4.0), (7, 1.0)]
    semantic = [(7, 0.9), (2, 0.8), (5, 0.1)]
    for method in ("rrf", "convex"):
        lex_only = HybridParams(method, lexical_weight=1.0)
        sem_only = HybridParams(method, lexical_weight=0.0)
        assert hybrid(lexical, semantic, limit=3, params=lex_only) == [5, 1, 7]
        assert hybrid(lexical, semantic, limit=3, params=sem_only) == [7, 2, 5]


def test_hybrid_reads_only_depth_docs_of_each_ranking() -> None:
    lexical = [(d, 10.0 - d) for d in range(1, 8)]
    params = HybridParams("rrf", depth=3)
    assert set(hybrid(lexical, [], limit=10, params=params)) == {1, 2, 3}
    assert hybrid(lexical, [], limit=10) == [1, 2, 3, 4, 5, 6, 7]  # DEFAULT_HYBRID.depth > 7
    assert DEFAULT_HYBRID.depth >= 10


@pytest.mark.parametrize(
    "call",
    [
        lambda: rrf([[1, 2, 1]], limit=3),
        lambda: rrf([[1]], k=-1, limit=3),
        lambda: rrf([[1]], k=math.inf, limit=3),
        lambda: rrf([[1], [2]], weights=[1.0], limit=3),
        lambda: rrf([[1]], weights=[-0.5], limit=3),
        lambda: rrf([[1]], limit=-1),
        lambda: convex([[(1, 1.0), (1, 0.5)]], limit=3),
        lambda: convex([[(1, math.nan)]], limit=3),
        lambda: convex([[(1, 1.0)]], floors=[0.0, 0.0], limit=3),
        lambda: hybrid([(1, 1.0)], [], limit=3, params=HybridParams(lexical_weight=1.5)),
    ],
)
def test_fusion_refuses_malformed_input(call: object) -> None:
    with pytest.raises(ValueError):
        call()  # type: ignore[operator]


# ----------------------------------------------------------------------------------------------------
# Against the reference, and invariants


@settings(max_examples=300, deadline=None)
@given(weighted_rankings(), ks, limits)
def test_rrf_agrees_with_the_reference(wr: tuple[list[list[int]], list[float]], k: float, limit: int) -> None:
    rankings, weights = wr
    assert rrf(rankings, k=k, weights=weights, limit=limit) == reference_rrf(rankings, k, weights, limit)


@settings(max_examples=300, deadline=None)
@given(scored_rankings(), limits)
def test_convex_agrees_with_the_reference(
    swf: tuple[list[list[tuple[int, float]]], list[float], list[float | None]], limit: int
) -> None:
    scored, weights, floors = swf
    got = convex(scored, weights=weights, floors=floors, limit=limit)
    assert got == reference_convex(scored, weights, floors, limit)


@settings(max_examples=200, deadline=None)
@given(weighted_rankings(), ks, limits, st.randoms(use_true_random=False))
def test_rrf_does_not_depend_on_the_order_of_the_rankings(
    wr: tuple[list[list[int]], list[float]], k: float, limit: int, rnd: random.Random
) -> None:
    rankings, weights = wr
    order = list(range(len(rankings)))
    rnd.shuffle(order)
    shuffled = rrf([rankings[i] for i in order], k=k, weights=[weights[i] for i in order], limit=limit)
    assert shuffled == rrf(rankings, k=k, weights=weights, limit=limit)


@settings(max_examples=200, deadline=None)
@given(scored_rankings(), limits, st.randoms(use_true_random=False))
def test_convex_does_not_depend_on_the_order_of_the_rankings(
    swf: tuple[list[list[tuple[int, float]]], list[float], list[float | None]], limit: int, rnd: random.Random
) -> None:
    scored, weights, floors = swf
    order = list(range(len(scored)))
    rnd.shuffle(order)
    again = convex(
        [scored[i] for i in order],
        weights=[weights[i] for i in order],
        floors=[floors[i] for i in order],
        limit=limit,
    )
    assert again == convex(scored, weights=weights, floors=floors, limit=limit)


@settings(max_examples=200, deadline=None)
@given(weighted_rankings(), ks, limits)
def test_rrf_returns_distinct_known_docs_up_to_the_limit(
    wr: tuple[list[list[int]], list[float]], k: float, limit: int
) -> None:
    rankings, weights = wr
    got = rrf(rankings, k=k, weights=weights, limit=limit)
    union = {d for r in rankings for d in r}
    assert len(got) == len(set(got)) == min(limit, len(union))
    assert set(got) <= union


@settings(max_examples=200, deadline=None)
@given(weighted_rankings(), ks, st.integers(0, 25))
def test_a_doc_ranked_first_by_every_ranking_comes_first(
    wr: tuple[list[list[int]], list[float]], k: float, doc: int
) -> None:
    rankings, weights = wr
    rankings = [[doc, *(d for d in r if d != doc)] for r in rankings]
    assert rrf(rankings, k=k, weights=weights, limit=5)[0] == doc
    scored = [[(d, float(len(r) - i)) for i, d in enumerate(r)] for r in rankings]
    assert convex(scored, weights=weights, limit=5)[0] == doc
    for method in ("rrf", "convex"):
        params = HybridParams(method, protect=1)
        assert hybrid(scored[0], scored[-1], limit=5, params=params)[0] == doc


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 40), st.floats(0, 30, allow_nan=False)),
        unique_by=lambda t: t[0],
        max_size=20,
    ),
    st.lists(
        st.tuples(st.integers(0, 40), st.floats(-1, 1, allow_nan=False)),
        unique_by=lambda t: t[0],
        max_size=20,
    ),
    st.integers(0, 15),
    st.sampled_from(["rrf", "convex"]),
    st.integers(0, 4),
)
def test_hybrid_returns_distinct_docs_of_either_ranking_up_to_the_limit(
    lexical: list[tuple[int, float]], semantic: list[tuple[int, float]], limit: int, method: str, protect: int
) -> None:
    lexical.sort(key=lambda t: -t[1])
    semantic.sort(key=lambda t: -t[1])
    params = HybridParams(method, protect=protect)  # type: ignore[arg-type]
    got = hybrid(lexical, semantic, limit=limit, params=params)
    union = {d for d, _ in lexical} | {d for d, _ in semantic}
    assert len(got) == len(set(got)) == min(limit, len(union))
    assert set(got) <= union
    head = [d for d, _ in lexical[: min(protect, limit)]]
    assert got[: len(head)] == head


def test_the_default_keeps_the_lexical_top_five_whatever_the_embedding_says() -> None:
    lexical = [(d, 10.0 - d) for d in range(1, 9)]  # a confident lexical ranking: docs 1..8
    semantic = [(d, 0.9) for d in range(50, 60)] + [(8, 0.95)]  # other docs, all very near
    fused = hybrid(lexical, semantic, limit=10)
    assert fused[:5] == [1, 2, 3, 4, 5]  # never demoted by the embedding
    assert 8 in fused[5:] and set(fused[5:]) & set(range(50, 60))  # the rest is a contest
    assert hybrid([(1, 3.0)], semantic, limit=3)[0] == 1  # a short lexical list leads, then neighbours


def test_hybrid_scored_gives_hybrids_order_and_scores_that_never_rise() -> None:
    lexical = [(1, 10.0), (2, 1.0)]
    semantic = [(3, 0.9), (2, 0.1)]
    params = HybridParams(protect=2)
    scored = hybrid_scored(lexical, semantic, limit=10, params=params)
    assert [doc for doc, _ in scored] == hybrid(lexical, semantic, limit=10, params=params) == [1, 2, 3]
    # Fused: doc 1 0.4 x 1; doc 2 0.4 x 0.1 + 0.6 x 0.1 / 0.9; doc 3 0.6 x 1. The protected head
    # places 1 and 2 above 3, so each is raised to 3's score.
    assert [score for _, score in scored] == pytest.approx([0.6, 0.6, 0.6])
    unprotected = hybrid_scored(lexical, semantic, limit=10, params=HybridParams())
    assert [doc for doc, _ in unprotected] == [3, 1, 2]
    assert [score for _, score in unprotected] == pytest.approx([0.6, 0.4, 0.04 + 0.6 * 0.1 / 0.9])


def test_near_enough_places_cosines_between_the_least_neighbour_or_the_cut_floor_and_the_best() -> None:
    crowd = [(d, 0.89 - d / 1000) for d in range(1, 151)]  # a static model's cosines: all crowded high
    kept, params = near_enough(crowd, 0.3)
    assert kept == crowd[:100] and params.semantic_floor is None  # the 100th neighbour's cosine is 0
    scored = dict(hybrid_scored([], kept, limit=100, params=params))
    cosine_weight = 1.0 - DEFAULT_HYBRID.lexical_weight
    assert scored[1] == pytest.approx(cosine_weight) and scored[100] == pytest.approx(0.0)
    assert scored[50] == pytest.approx(cosine_weight * 50 / 99)  # spread over the crowd, not ~0.99 x each
    # The similarity floor cut the list: the least kept neighbour is a candidate, scored above 0.
    few = [(1, 0.62), (2, 0.45), (3, 0.2), (4, 0.1)]
    kept, params = near_enough(few, 0.3)
    assert kept == few[:2] and params.semantic_floor == 0.3
    scored = dict(hybrid_scored([(9, 4.0)], kept, limit=10, params=params))
    assert scored[2] == pytest.approx(cosine_weight * (0.45 - 0.3) / (0.62 - 0.3)) and scored[2] > 0
    # Without the cut's floor the lesser of two neighbours would count for nothing.
    assert dict(hybrid_scored([(9, 4.0)], kept, limit=10, params=DEFAULT_HYBRID))[2] == 0.0
    assert near_enough([], 0.3) == ([], DEFAULT_HYBRID)


@settings(max_examples=300, deadline=None)
@given(
    cosines=st.lists(
        st.one_of(
            st.floats(min_value=-1.0, max_value=1.0),
            st.sampled_from([math.nan, math.inf, -math.inf, 0.3]),
        ),
        max_size=120,
    ),
    floor=st.sampled_from([0.3, 0.0, -1.0, 0.9, math.nan]),
)
def test_near_enough_keeps_each_neighbour_at_least_the_floor_near_in_any_order(
    cosines: list[float], floor: float
) -> None:
    neighbours = list(enumerate(cosines))
    kept, params = near_enough(neighbours, floor)
    # The definition, read plainly: the first ``depth``, those at least ``floor`` near (NaN never is).
    nearest = neighbours[: DEFAULT_HYBRID.depth]
    expected = [(doc, c) for doc, c in nearest if c >= floor]
    assert kept == expected
    cut = len(expected) < len(nearest)
    assert params == (replace(DEFAULT_HYBRID, semantic_floor=floor) if cut else DEFAULT_HYBRID)


def test_monotone_raises_each_score_to_the_best_after_it() -> None:
    assert monotone([(1, 0.2), (2, 0.5), (3, 0.1), (4, 0.3)]) == [(1, 0.5), (2, 0.5), (3, 0.3), (4, 0.3)]
    assert monotone([]) == []


@st.composite
def recall_rankings(draw: st.DrawFn) -> tuple[list[tuple[int, float]], list[tuple[int, float]], int]:
    """A scope's whole lexical ranking (doc, BM25, best first; scores drawn from a few values, so
    ties happen), the embedding's neighbours (doc, cosine, best first, overlapping it) and the
    depth of the lexical head the recall provider reads."""
    docs = list(range(1, draw(st.integers(1, 60)) + 1))
    matching = draw(st.lists(st.sampled_from(docs), unique=True, max_size=40))
    scores = sorted(
        (draw(st.sampled_from([0.5, 1.0, 1.5, 2.25, 3.0, 4.5, 7.0])) for _ in matching), reverse=True
    )
    lexical = list(zip(matching, scores, strict=True))
    near = draw(st.lists(st.sampled_from(docs), unique=True, min_size=1, max_size=40))
    cosines = sorted(
        (draw(st.sampled_from([0.31, 0.4, 0.55, 0.6, 0.72, 0.8, 0.93])) for _ in near), reverse=True
    )
    return lexical, list(zip(near, cosines, strict=True)), draw(st.integers(1, 20))


@settings(max_examples=500, deadline=None)
@given(
    recall_rankings(),
    st.integers(1, 12),
    st.sampled_from([0.5, 0.7, 0.9]),
    st.lists(st.sampled_from([None, 0.0, 0.0, 1e-9, 0.5]), min_size=60, max_size=60),
    st.one_of(st.none(), st.randoms(use_true_random=False)),
)
def test_only_the_contenders_lexical_scores_change_the_first_places(
    rankings: tuple[list[tuple[int, float]], list[tuple[int, float]], int],
    places: int,
    weight: float,
    slack: list[float | None],
    shuffle: random.Random | None,
) -> None:
    """The oracle is the fusion with every neighbour's lexical score (lexical_candidates over all of
    them): fused with the contenders' scores only, the first ``places`` places hold docs with the
    same fused scores (a tie may seat another doc of the same score). With ceilings (what the
    ranking knows of a doc's score: at least the score, 0 only for a doc without one; some docs
    without), the same holds with fewer contenders. Neighbours out of order (``shuffle``) are
    read whole, never cut short as a best-first list may be."""
    lexical, semantic, head_depth = rankings
    if shuffle is not None:
        shuffle.shuffle(semantic)
    params = HybridParams(lexical_weight=weight, semantic_floor=None, protect=min(5, places - 1))
    head = lexical[:head_depth]
    every = dict(lexical)  # what Ranking.scores_of gives: a score for each doc holding a query word
    full = hybrid_scored(lexical_candidates(head, semantic, every), semantic, limit=100, params=params)
    ceilings = {
        doc: every.get(doc, 0.0) + extra for doc, _ in semantic if (extra := slack[doc - 1]) is not None
    }
    needed = contenders(head, semantic, places=places, params=params)
    narrowed = contenders(head, semantic, places=places, params=params, ceilings=ceilings)
    assert set(narrowed) <= set(needed)
    for asked in (needed, narrowed):
        some = {doc: every[doc] for doc in asked if doc in every}
        pruned = hybrid_scored(
            lexical_candidates(head, semantic, some), semantic, limit=places, params=params
        )
        assert [score for _, score in pruned] == [score for _, score in full[:places]]
        by_doc = dict(full)
        assert all(by_doc[doc] == score for doc, score in pruned)


@settings(max_examples=300, deadline=None)
@given(scored_rankings(), limits)
def test_hybrid_scored_fuses_two_rankings_as_the_reference_convex(
    swf: tuple[list[list[tuple[int, float]]], list[float], list[float | None]], limit: int
) -> None:
    """hybrid_scored's own two-ranking path (no protected head) against the reference: the same
    docs in the same order, each with the reference's fused score."""
    scored, _, floors = swf
    lexical, semantic = scored[0], scored[-1]
    if len(scored) == 1:
        semantic = []
    params = HybridParams(lexical_weight=0.7, lexical_floor=floors[0], semantic_floor=floors[-1], depth=100)
    got = hybrid_scored(lexical, semantic, limit=limit, params=params)
    weights, fl = [0.7, 1.0 - 0.7], [floors[0], floors[-1]]  # as hybrid_scored weighs them
    assert [doc for doc, _ in got] == reference_convex([lexical, semantic], weights, fl, limit)
    for doc, score in got:
        assert score == reference_convex_score([lexical, semantic], weights, fl, doc)


@settings(max_examples=300, deadline=None)
@given(scored_rankings(), limits, st.randoms(use_true_random=False))
def test_hybrid_scored_fuses_an_unsorted_embedding_ranking_whole(
    swf: tuple[list[list[tuple[int, float]]], list[float], list[float | None]],
    limit: int,
    rnd: random.Random,
) -> None:
    """hybrid_scored leaves out the docs only the embedding ranks past the first it can place, which
    holds only of a best-first list: a list out of order is fused whole, as the reference fuses it."""
    scored, _, floors = swf
    lexical, semantic = scored[0], list(scored[-1]) if len(scored) > 1 else []
    rnd.shuffle(semantic)
    params = HybridParams(lexical_weight=0.7, lexical_floor=floors[0], semantic_floor=floors[-1], depth=100)
    got = hybrid_scored(lexical, semantic, limit=limit, params=params)
    weights, fl = [0.7, 1.0 - 0.7], [floors[0], floors[-1]]
    assert [doc for doc, _ in got] == reference_convex([lexical, semantic], weights, fl, limit)


def test_contenders_leave_out_a_neighbour_whose_cosine_cannot_lift_it() -> None:
    """Head scores 10, 9, 2, 1.5, 1 (protect 2, 4 places, lexical weight 0.7). Neighbours 20, 21, 22
    (cosines 0.9, 0.5, 0.3) normalise to 1, 1/3, 0: at least 0.3, 0.1, 0 fused. The 4th place needs
    the 2nd best known score: 0.14 (the head's 2). Below the head a doc's lexical part is at most
    0.7 x 1/10 = 0.07, so 22 (0.07 at most) cannot reach it; 20 and 21 can (unless a ceiling says
    less)."""
    head = [(1, 10.0), (2, 9.0), (3, 2.0), (4, 1.5), (5, 1.0)]
    semantic = [(20, 0.9), (21, 0.5), (22, 0.3)]
    params = HybridParams(lexical_weight=0.7, semantic_floor=None, protect=2)
    assert contenders(head, semantic, places=4, params=params) == [20, 21]
    assert contenders(head, semantic, places=9, params=params) == [20, 21, 22]
    # Out of order, the list is read whole: 22 first (its bound 0.07 short of 0.14) ends nothing.
    assert contenders(head, semantic[::-1], places=4, params=params) == [21, 20]
    # A ceiling lowers a doc's bound: 21 with a lexical score of at most 0.5 reaches 0.7 x 0.05 +
    # 0.1 = 0.135 < 0.14 at most; at most 0.6, 0.142. A ceiling of 0: 20 holds no query word.
    assert contenders(head, semantic, places=4, params=params, ceilings={21: 0.5}) == [20]
    assert contenders(head, semantic, places=4, params=params, ceilings={21: 0.6}) == [20, 21]
    assert contenders(head, semantic, places=4, params=params, ceilings={20: 0.0}) == [21]
    assert contenders(head, semantic, places=4, params=params, ceilings={21: 50.0}) == [20, 21]  # capped
    rrf_params = HybridParams("rrf", 0.7, protect=2)
    assert contenders(head, semantic, places=4, params=rrf_params) == [20, 21, 22]
    # As the ranking gives them (Ceilings): a doc's known sum plus what the terms not read in full
    # can add, and one bound for every doc holding no word read in full (0: it scores nothing).
    fusion = Fusion(head, semantic, params)
    assert fusion.contenders(4, Ceilings({}, 0.0, 0.0)) == []
    assert fusion.contenders(4, Ceilings({21: 0.6}, 0.0, 0.0)) == [21]
    assert fusion.contenders(4, Ceilings({}, 0.0, 0.5)) == [20]  # 21: 0.035 + 0.1 < 0.14
    assert fusion.contenders(4, Ceilings({21: 0.5}, 0.1, None)) == [20, 21]  # 21 at most 0.6
    assert fusion.contenders(4, Ceilings({21: 0.5}, 0.0, None)) == [20]


@settings(max_examples=1000, deadline=None)
@given(
    recall_rankings(),
    st.integers(0, 14),
    st.sampled_from([0.0, 0.5, 0.7, 1.0]),
    st.sampled_from([None, 0.0, 0.3]),
    st.sampled_from([None, 0.0, 0.0]),
    st.sampled_from([0, 2, 5]),
    st.sampled_from([3, 10, 100, 100, 100, 100]),
    st.sampled_from(["convex", "convex", "convex", "convex", "rrf"]),
    st.lists(st.booleans(), min_size=60, max_size=60),
    st.one_of(st.none(), st.none(), st.none(), st.randoms(use_true_random=False)),
)
def test_the_providers_fusion_is_hybrid_scored_over_the_lexical_candidates(
    rankings: tuple[list[tuple[int, float]], list[tuple[int, float]], int],
    limit: int,
    weight: float,
    semantic_floor: float | None,
    lexical_floor: float | None,
    protect: int,
    depth: int,
    method: str,
    known: list[bool],
    shuffle: random.Random | None,
) -> None:
    """Fusion.fused (the recall provider's one pass over its neighbours) against the general
    functions as the oracle: its places are hybrid_scored's over lexical_candidates (docs and
    scores, in order), whatever the params, with the neighbours out of order or deeper than
    ``depth``. (Its contenders are contenders()'s, held to the whole fusion above.)"""
    lexical, semantic, head_depth = rankings
    if shuffle is not None:
        shuffle.shuffle(semantic)
    params = HybridParams(
        method,  # type: ignore[arg-type]
        weight,
        lexical_floor=lexical_floor,
        semantic_floor=semantic_floor,
        depth=depth,
        protect=protect,
    )
    head = lexical[:head_depth]
    scored = {doc: score for doc, score in lexical if known[doc - 1]}
    candidates = lexical_candidates(head, semantic, scored)
    deep = replace(params, depth=max(params.depth, len(candidates)))
    expected = hybrid_scored(candidates, semantic, limit=limit, params=deep)
    assert Fusion(head, semantic, params).fused(scored, limit) == expected


def test_the_providers_fusion_adds_the_cosine_of_a_lexical_doc_past_the_neighbours_it_cannot_place() -> None:
    """Head doc 1 (BM25 10) is the third neighbour (cosine 0.5 between 0.4 and 0.9: 0.2 of the
    way): for one place the fusion reads past neighbours 2 and 3, whose cosines alone cannot place
    them, to add doc 1's cosine part: 0.7 + 0.3 x 0.2 = 0.76."""
    params = HybridParams(lexical_weight=0.7, semantic_floor=None, protect=0)
    semantic = [(2, 0.9), (3, 0.8), (1, 0.5), (4, 0.4)]
    [(doc, score)] = Fusion([(1, 10.0)], semantic, params).fused({}, 1)
    assert doc == 1 and score == pytest.approx(0.76)
