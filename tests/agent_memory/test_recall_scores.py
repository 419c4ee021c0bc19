"""Recall's ``score`` and ``min_score`` on both backends: every contextually recalled record carries
a score in [0, 1] that never rises down the list (the best lexical match scores 1), ``min_score``
keeps exactly the records an unfiltered recall scores at least that high, ``always`` recall scores
nothing and refuses a bound, and hybrid recall scores a paraphrase the lexical ranking cannot see."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meta_memory import InvalidParams, Meta, MetaHandle

from ..conftest import Backend

RECALL = "meta/agent_memory/recall"
WORDS = ["deploy", "review", "coffee", "espresso", "grinder", "harbor", "budget", "friday", "oslo", "cello"]


@pytest.fixture
def meta(tmp_path: Path, backend: Backend) -> Iterator[MetaHandle]:
    with (
        Meta.builder()
        .persistent_state(tmp_path / "state")
        .agent_memory(**backend.store_config())
        .build() as m
    ):
        yield m


def _recall(meta: MetaHandle, identity: str = "alice", **params: Any) -> list[dict[str, Any]]:
    return list(meta.call(RECALL, {"identity": identity, **params})["records"])


def _check_scores(records: list[dict[str, Any]]) -> None:
    scores = [r["score"] for r in records]
    assert all(isinstance(s, float) and 0.0 <= s <= 1.0 for s in scores), scores
    assert scores == sorted(scores, reverse=True), scores
    if scores:
        assert scores[0] == 1.0


def test_a_fuller_match_scores_higher_and_the_best_scores_one(meta: MetaHandle) -> None:
    both = meta.remember_agent_memory("alice", title="Grinder", body="The espresso grinder is on setting 12.")
    one = meta.remember_agent_memory("alice", title="Beans", body="Espresso beans come on Fridays.")
    meta.remember_agent_memory("alice", title="Budget", body="The budget review moved.")
    records = _recall(meta, query_text="espresso grinder")
    _check_scores(records)
    assert [r["memory_id"] for r in records] == [both.memory_id, one.memory_id]
    assert records[0]["score"] == 1.0 and 0.0 < records[1]["score"] < 1.0
    # The Python API carries the same scores; a score is not part of a record's equality.
    typed = meta.recall_agent_memory("alice", query_text="espresso grinder")
    assert [r.score for r in typed] == [r["score"] for r in records]
    assert typed[0] == both


def test_min_score_keeps_what_an_unfiltered_recall_scores_that_high(meta: MetaHandle) -> None:
    for i, word in enumerate(WORDS):
        meta.remember_agent_memory("alice", title=f"Note {i}", body=f"deploy {word} " + "deploy " * (i % 3))
    everything = _recall(meta, query_text="deploy review friday", max_entries=20)
    _check_scores(everything)
    assert len({r["score"] for r in everything}) > 2  # not vacuous: the bounds below cut somewhere
    for bound in (0.0, 0.25, 0.5, everything[1]["score"], 0.99, 1.0):
        kept = _recall(meta, query_text="deploy review friday", max_entries=20, min_score=bound)
        assert kept == [r for r in everything if r["score"] >= bound], bound
    typed = meta.recall_agent_memory(
        "alice", query_text="deploy review friday", max_entries=20, min_score=0.5
    )
    assert [r.memory_id for r in typed] == [r["memory_id"] for r in everything if r["score"] >= 0.5]


def test_always_recall_scores_nothing_and_refuses_a_bound(meta: MetaHandle) -> None:
    meta.remember_agent_memory("alice", title="Deploys", body="Deploys on Tuesdays.")
    (record,) = _recall(meta, selection="always")
    assert record["score"] is None
    with pytest.raises(InvalidParams, match="min_score needs selection 'contextual'"):
        _recall(meta, selection="always", min_score=0.5)


@pytest.mark.parametrize("bound", [-0.1, 1.5, "high", True, float("nan")])
def test_a_bound_outside_zero_to_one_is_refused_naming_min_score(meta: MetaHandle, bound: object) -> None:
    with pytest.raises(InvalidParams, match="min_score must be a number from 0 to 1"):
        _recall(meta, query_text="deploys", min_score=bound)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    bodies=st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6), min_size=1, max_size=12),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
    bound=st.floats(min_value=0.0, max_value=1.0),
)
def test_scores_never_rise_and_a_bound_is_a_prefix_of_the_unbounded_list(
    tmp_path_factory: pytest.TempPathFactory,
    backend: Backend,
    bodies: list[list[str]],
    query: list[str],
    bound: float,
) -> None:
    state = tmp_path_factory.mktemp("scores")
    identity = f"alice-{uuid.uuid4().hex[:12]}"  # the backend's database outlives one example
    with Meta.builder().persistent_state(state).agent_memory(**backend.store_config()).build() as meta:
        for i, words in enumerate(bodies):
            meta.remember_agent_memory(identity, title=f"Note {i}", body=" ".join(words))
        text = " ".join(query)
        everything = _recall(meta, identity, query_text=text, max_entries=64)
        _check_scores(everything)
        # Records holding a query word are found; records holding none are not.
        holding = {f"Note {i}" for i, words in enumerate(bodies) if set(words) & set(query)}
        assert {r["title"] for r in everything} == holding
        kept = _recall(meta, identity, query_text=text, max_entries=64, min_score=bound)
        assert kept == [r for r in everything if r["score"] >= bound]
