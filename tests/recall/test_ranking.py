"""Ranking behaviour through the public API: matching, ordering, ties, paraphrase, neighbors and pruning."""

from __future__ import annotations

import dataclasses
import re

from meta_memory.memory.recall import (
    DEFAULT_PARAMS,
    InMemoryTermIndex,
    RankParams,
    TermIndex,
    query_terms,
    rank,
)
from meta_memory.memory.recall.lexicon import UPSTREAM_STOPWORDS


def make_index(*bodies: str, title: str = "note") -> InMemoryTermIndex:
    index = InMemoryTermIndex()
    for doc, body in enumerate(bodies, start=1):
        index.add(doc, title=title, body=body, created_at_ms=doc)
    return index


def ranked(index: TermIndex, query: str, limit: int = 10, params: RankParams = DEFAULT_PARAMS) -> list[int]:
    return [doc for doc, _ in rank(index, query_terms(query, None), limit, params)]


def test_only_records_matching_a_query_term_are_returned() -> None:
    index = make_index("the blue kettle whistled", "a red lamp flickered", "a quiet afternoon")
    assert ranked(index, "Which kettle is blue?") == [1]


def test_query_without_terms_returns_nothing() -> None:
    index = make_index("anything at all")
    assert rank(index, [], 5) == []
    assert ranked(index, "What would you do about that?") == []


def test_a_when_cue_alone_never_adds_a_record() -> None:
    index = make_index("yesterday was long", "pottery class was fun")
    assert ranked(index, "When was the pottery class?") == [2]


def test_better_match_ranks_first_and_limit_truncates() -> None:
    index = make_index("garden tomatoes", "garden tomatoes and basil in the garden", "basil pesto recipe")
    result = ranked(index, "garden basil", limit=2)
    assert result == [2, 1]


def test_equal_scores_order_by_updated_then_created_then_id() -> None:
    index = InMemoryTermIndex()
    index.add(1, title="t", body="pottery", created_at_ms=10, updated_at_ms=50, record_id="b")
    index.add(2, title="t", body="pottery", created_at_ms=20, updated_at_ms=40, record_id="a")
    index.add(3, title="t", body="pottery", created_at_ms=30, updated_at_ms=50, record_id="c")
    index.add(4, title="t", body="pottery", created_at_ms=10, updated_at_ms=50, record_id="a")
    result = rank(index, query_terms("pottery", None), 10)
    assert [doc for doc, _ in result] == [3, 4, 1, 2]
    assert len({score for _, score in result}) == 1


def test_tie_at_the_limit_is_decided_by_the_tie_key_not_by_arrival() -> None:
    index = InMemoryTermIndex()
    for doc, updated in [(1, 5), (2, 9), (3, 7)]:
        index.add(doc, title="t", body="kayak", created_at_ms=doc, updated_at_ms=updated)
    assert [doc for doc, _ in rank(index, ["kayak"], 1)] == [2]


def test_paraphrase_and_inflection_match_where_plain_term_overlap_finds_nothing() -> None:
    evidence = "Nothing helps me unwind like running along the river."
    index = make_index("The river flooded the road last spring.", evidence, "Work was busy today.")
    query = "What does she do to destress? She runs."

    def upstream_tokens(text: str) -> set[str]:
        return {t.lower() for t in re.split(r"[^A-Za-z0-9_-]+", text) if len(t) >= 3} - UPSTREAM_STOPWORDS

    assert upstream_tokens(query) & upstream_tokens(evidence) == set()
    assert ranked(index, query)[0] == 2


def test_speaker_name_in_title_prefers_that_speakers_turn() -> None:
    index = InMemoryTermIndex()
    index.add(1, title="Caroline", body="I adopted a kitten named Bailey.", created_at_ms=1)
    index.add(2, title="Melanie", body="I adopted a kitten named Pepper.", created_at_ms=2)
    assert ranked(index, "What kitten did Caroline adopt?")[0] == 1


def test_turn_after_a_strong_match_outranks_an_equal_distant_turn() -> None:
    index = InMemoryTermIndex()
    turns = [
        ("Jon", "What do you do to relax, Melanie?"),
        ("Melanie", "Mostly pottery, it clears my head."),
        ("Jon", "Cool."),
        ("Melanie", "The weather is nice."),
        ("Jon", "Sure is."),
        ("Melanie", "See you soon."),
    ]
    for doc, (speaker, body) in enumerate(turns, start=1):
        index.add(doc, title=speaker, body=body, created_at_ms=doc)
    params = dataclasses.replace(DEFAULT_PARAMS, neighbor_weight=0.2)
    result = ranked(index, "How does Melanie relax?", params=params)
    assert result.index(2) < result.index(4)
    assert result.index(2) < result.index(6)


def test_removed_record_is_no_longer_recalled() -> None:
    index = make_index("pottery class on Tuesday", "pottery wheel for sale")
    assert index.remove(1) is True
    assert index.remove(1) is False
    assert ranked(index, "pottery") == [2]


def test_common_terms_only_score_candidates_found_through_rarer_terms() -> None:
    index = InMemoryTermIndex()
    for doc in range(1, 401):
        index.add(doc, title="Caroline", body=f"small talk number {doc}", created_at_ms=doc)
    index.add(401, title="Melanie", body="my violin teacher", created_at_ms=401)
    index.add(402, title="Caroline", body="I play the violin", created_at_ms=402)
    # "caroline" is in most titles: it re-ranks the violin turns instead of pulling in 400 small-talk turns.
    assert ranked(index, "What instrument does Caroline play, the violin?", limit=3) == [402, 401]
