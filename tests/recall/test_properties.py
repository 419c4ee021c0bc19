"""Hypothesis invariants of ranking: only matching docs, insertion-order independence, exact pruning."""

from __future__ import annotations

import dataclasses
import math
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from meta_memory.memory.recall import (
    DEFAULT_PARAMS,
    InMemoryTermIndex,
    analyze_record,
    index_terms,
    query_terms,
    rank,
)
from meta_memory.memory.recall.scorer import Ranking

VOCAB = ["pottery", "running", "ran", "unwind", "relax", "Caroline", "Melanie", "violin", "the", "yesterday",
         "kitten", "cats", "support", "group", "went", "attended", "book", "novels", "a", "when"]  # fmt: skip

texts = st.lists(st.sampled_from(VOCAB), min_size=1, max_size=8).map(" ".join)
corpora = st.lists(st.tuples(st.sampled_from(["Caroline", "Melanie"]), texts), min_size=1, max_size=40)


def build(corpus: list[tuple[str, str]], order: list[int]) -> InMemoryTermIndex:
    index = InMemoryTermIndex()
    for doc in order:
        title, body = corpus[doc]
        index.add(doc + 1, title=title, body=body, created_at_ms=doc, updated_at_ms=doc % 3)
    return index


@settings(max_examples=150, deadline=None)
@given(corpora, texts, st.integers(min_value=1, max_value=15))
def test_returned_docs_always_contain_a_query_word_or_concept(
    corpus: list[tuple[str, str]], query: str, limit: int
) -> None:
    index = build(corpus, list(range(len(corpus))))
    terms = query_terms(query, None)
    words = {t for t in terms if not t.startswith("#")}
    for doc, score in rank(index, terms, limit):
        title, body = corpus[doc - 1]
        assert score > 0
        assert words & set(index_terms(title) + index_terms(body))


@settings(max_examples=100, deadline=None)
@given(corpora, texts, st.randoms(use_true_random=False))
def test_ranking_does_not_depend_on_insertion_order(
    corpus: list[tuple[str, str]], query: str, rnd: random.Random
) -> None:
    order = list(range(len(corpus)))
    shuffled = order[:]
    rnd.shuffle(shuffled)
    terms = query_terms(query, None)
    assert rank(build(corpus, order), terms, 10) == rank(build(corpus, shuffled), terms, 10)


def brute_force(corpus: list[tuple[str, str]], terms: list[str]) -> dict[int, float]:
    """Exhaustive BM25F with the default parameters, for comparison with the pruned ranker."""
    p = DEFAULT_PARAMS
    records = {doc + 1: analyze_record(title, body) for doc, (title, body) in enumerate(corpus)}
    n = len(records)
    avg = max(sum(r.length for r in records.values()) / n, 1.0)
    scores: dict[int, float] = {}
    for term in set(terms):
        df = sum(term in r.fields for r in records.values())
        if df == 0:
            continue
        weight = math.log(1 + (n - df + 0.5) / (df + 0.5))
        weight *= p.concept_weight if term.startswith("~") else p.cue_weight if term.startswith("#") else 1.0
        for doc, r in records.items():
            if term in r.fields:
                t, b, g = r.fields[term]
                tf = p.title_weight * t + p.body_weight * b + p.tags_weight * g
                norm = p.k1 * (1 - p.b + p.b * r.length / avg)
                scores[doc] = scores.get(doc, 0.0) + weight * tf * (p.k1 + 1) / (tf + norm)
    matched = {d for d, r in records.items() if any(t in r.fields for t in terms if not t.startswith("#"))}
    return {d: s for d, s in scores.items() if d in matched}


@settings(max_examples=150, deadline=None)
@given(corpora, texts, st.integers(min_value=1, max_value=8))
def test_pruned_scores_equal_exhaustive_scores_when_no_term_is_common(
    corpus: list[tuple[str, str]], query: str, limit: int
) -> None:
    params = dataclasses.replace(DEFAULT_PARAMS, rare_floor=0, common_floor=10**9)
    terms = query_terms(query, None)
    expected = brute_force(corpus, terms)
    got = rank(build(corpus, list(range(len(corpus)))), terms, limit, params)
    best = sorted(expected.values(), reverse=True)[:limit]
    assert len(got) == len(best)
    assert all(math.isclose(g, e, abs_tol=1e-8) for (_, g), e in zip(got, best, strict=True))
    for doc, score in got:
        assert math.isclose(score, expected[doc], abs_tol=1e-8)


@settings(max_examples=150, deadline=None)
@given(
    corpora,
    texts,
    st.integers(min_value=1, max_value=8),
    st.sets(st.integers(min_value=1, max_value=45), max_size=20),
    st.sampled_from([0, 2, 64]),
)
def test_the_scores_of_named_docs_equal_exhaustive_scores(
    corpus: list[tuple[str, str]], query: str, limit: int, named: set[int], rare_floor: int
) -> None:
    """Hybrid recall ranks the lexical head and scores the embedding's other finds by name: those
    scores are the exhaustive BM25F ones (docs without a query word are not scored), whichever
    postings the opening read in full."""
    params = dataclasses.replace(DEFAULT_PARAMS, rare_floor=rare_floor)
    terms = query_terms(query, None)
    expected = brute_force(corpus, terms)
    ranking = Ranking(build(corpus, list(range(len(corpus)))), terms, params)
    assert ranking.top(limit) == rank(build(corpus, list(range(len(corpus)))), terms, limit, params)
    got = ranking.scores_of(named)  # the terms top() read in full are not read again
    assert set(got) == named & set(expected)
    for doc, score in got.items():
        assert math.isclose(score, expected[doc], abs_tol=1e-8)
    unranked = Ranking(build(corpus, list(range(len(corpus)))), terms, params).scores_of(named)
    assert set(unranked) == set(got)  # without top() first: every term read for the docs named
    for doc, score in unranked.items():
        assert math.isclose(score, expected[doc], abs_tol=1e-8)


@settings(max_examples=200, deadline=None)
@given(
    corpora,
    texts,
    st.integers(min_value=1, max_value=8),
    st.sets(st.integers(min_value=1, max_value=45), max_size=20),
    st.sampled_from([(0, 0, 0.0), (2, 1, 0.05), (64, 256, 0.05)]),
)
def test_score_ceilings_bound_the_exhaustive_scores_without_a_read(
    corpus: list[tuple[str, str]],
    query: str,
    limit: int,
    named: set[int],
    pruning: tuple[int, int, float],
) -> None:
    """What hybrid recall prunes its reads by (fusion.contenders): each named doc's ceiling is at
    least its exhaustive score, and a ceiling of 0 means the doc holds no query word. Small
    common thresholds make top() leave most terms unread, so the ceilings carry their bounds."""
    rare_floor, common_floor, common_fraction = pruning
    params = dataclasses.replace(
        DEFAULT_PARAMS, rare_floor=rare_floor, common_floor=common_floor, common_fraction=common_fraction
    )
    terms = query_terms(query, None)
    expected = brute_force(corpus, terms)
    index = build(corpus, list(range(len(corpus))))
    ranking = Ranking(index, terms, params)
    assert ranking.score_ceilings(named) == {}  # before top(): nothing known
    ranking.top(limit)
    ceilings = ranking.score_ceilings(named)
    if not expected and not ceilings:
        return  # no query word in the scope: nothing ranked, nothing bounded
    assert set(ceilings) == named
    for doc in named:
        assert ceilings[doc] >= expected.get(doc, 0.0) - 1e-12
        if ceilings[doc] == 0.0:
            assert doc not in expected
