"""``meta/agent_memory/recall`` as the API sees it: which records are eligible, ``always`` order,
contextual filtering, parameter errors and usage counters. (Ranking quality is tested in tests/recall.)"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from meta_memory import InvalidParams, MetaHandle
from meta_memory.clock import ManualClock
from meta_memory.memory.records import (
    Author,
    Provenance,
    Record,
    RecordKind,
    Scope,
    Status,
    Trust,
    content_hash,
)
from meta_memory.memory.validator import CreateOp, WriteBatch

from ..conftest import SQLITE_ONLY, Backend

RECALL = "meta/agent_memory/recall"


def _quarantine(handle: MetaHandle, identity: str, title: str, body: str, now: int) -> Record:
    """An LLM-authored record landing quarantined, committed straight through the realm store."""
    author = Author("agent", identity=identity)
    record = Record(
        id=f"quarantined-{identity}",
        scope=Scope.identity("default", identity),
        kind=RecordKind.FACT,
        title=title,
        description="",
        body=body,
        tags=(),
        provenance=Provenance(author=author),
        trust=Trust.AGENT_OBSERVED,
        status=Status.QUARANTINED,
        quarantine_reason="tainted session",
        created_at_ms=now,
        updated_at_ms=now,
        content_hash=content_hash(title, body),
    )
    assert handle.runtime.agent_memory is not None
    store = handle.runtime.agent_memory.store("default")
    return store.commit(WriteBatch("default", author, (CreateOp(record),))).records[0]


def test_recall_returns_only_active_records_of_that_identity(handle: MetaHandle, clock: ManualClock) -> None:
    kept = handle.remember_agent_memory("alice", title="Espresso kept", body="Espresso grinder setting 12.")
    old = handle.remember_agent_memory("alice", title="Espresso old", body="Espresso grinder setting 9.")
    gone = handle.remember_agent_memory("alice", title="Espresso gone", body="Espresso beans from Lisbon.")
    handle.remember_agent_memory("bob", title="Espresso bob", body="Espresso for bob only.")
    quarantined = _quarantine(
        handle, "alice", "Espresso quarantined", "Espresso tainted note.", clock.now_ms()
    )
    clock.advance(10)
    newer = handle.update_agent_memory(
        "alice", old.memory_id, title="Espresso new", body="Espresso setting 10."
    )
    handle.forget_agent_memory("alice", gone.memory_id)

    for params in ({"selection": "always"}, {"query_text": "espresso"}, {"query_terms": ["espresso"]}):
        ids = {r.memory_id for r in handle.recall_agent_memory("alice", max_entries=64, **params)}
        assert ids == {kept.memory_id, newer.memory_id}, params
    assert quarantined.status is Status.QUARANTINED


@pytest.mark.parametrize("selection", ["always", "ALWAYS", "Always", " always "])
def test_selection_is_case_insensitive(handle: MetaHandle, selection: str) -> None:
    record = handle.remember_agent_memory("alice", title="Standup", body="Standup is at nine.")
    assert handle.recall_agent_memory("alice", selection=selection) == [record]


def test_contextual_selection_is_case_insensitive_too(handle: MetaHandle) -> None:
    record = handle.remember_agent_memory("alice", title="Standup", body="Standup is at nine.")
    assert handle.recall_agent_memory("alice", selection="CONTEXTUAL", query_text="standup") == [record]


def test_always_returns_newest_updated_first_and_truncates(handle: MetaHandle, clock: ManualClock) -> None:
    first = handle.remember_agent_memory("alice", title="One", body="First.")
    clock.advance(1_000)
    second = handle.remember_agent_memory("alice", title="Two", body="Second.")
    clock.advance(1_000)
    third = handle.remember_agent_memory("alice", title="Three", body="Third.")
    clock.advance(1_000)
    update = handle.update_agent_memory("alice", first.memory_id, title="One v2", body="First, revised.")

    newest = handle.recall_agent_memory("alice", selection="always")
    assert [r.memory_id for r in newest] == [update.memory_id, third.memory_id, second.memory_id]
    assert [r.updated_at_ms for r in newest] == sorted((r.updated_at_ms for r in newest), reverse=True)
    two = handle.recall_agent_memory("alice", selection="always", max_entries=2)
    assert [r.memory_id for r in two] == [update.memory_id, third.memory_id]


def test_contextual_is_the_default_and_returns_only_matching_records(handle: MetaHandle) -> None:
    coffee = handle.remember_agent_memory("alice", title="Coffee", body="Espresso grinder setting 12.")
    handle.remember_agent_memory("alice", title="Bikes", body="Tyre pressure is 4 bar.")
    handle.remember_agent_memory("alice", title="Plants", body="Water the ficus weekly.")
    assert handle.recall_agent_memory("alice", query_text="what grinder setting for espresso?") == [coffee]
    assert handle.recall_agent_memory("alice", query_terms=["Espresso"]) == [coffee]
    assert handle.recall_agent_memory("alice", query_text="submarine periscope") == []


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"query_text": "the and what would you"},
        {"query_terms": ["the", "of"]},
        {"selection": "contextual"},
    ],
)
def test_contextual_recall_without_usable_terms_is_empty(handle: MetaHandle, params: dict[str, Any]) -> None:
    handle.remember_agent_memory("alice", title="The thing", body="What would you do and the rest.")
    assert handle.call(RECALL, {"identity": "alice", **params}) == {"records": [], "vectors_behind": None}


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"identity": ""}, "identity must be a valid non-empty string"),
        ({"realm": ""}, "realm must be a non-empty string when provided"),
        ({"selection": "sometimes"}, "selection must be 'always' or 'contextual' (got 'sometimes')"),
        ({"selection": 3}, "selection must be 'always' or 'contextual' (got '3')"),
        ({"max_entries": 0}, "max_entries must be a positive integer when provided"),
        ({"max_entries": -1}, "max_entries must be a positive integer when provided"),
        ({"max_entries": "8"}, "max_entries must be a positive integer when provided"),
        ({"max_entries": 2.5}, "max_entries must be a positive integer when provided"),
        ({"max_entries": True}, "max_entries must be a positive integer when provided"),
        ({"max_entries": 65}, "max_entries must be between 1 and 64"),
        ({"query_text": "  "}, "query_text must be a non-empty string when provided"),
        ({"query_text": "q" * 16385}, "query_text must be at most 16384 bytes"),
        ({"query_terms": "deploy"}, "query_terms must be an array when provided"),
        ({"query_terms": ["ok", " "]}, "query_terms must contain only non-empty strings"),
    ],
)
def test_recall_refuses_each_bad_parameter_with_the_reference_message(
    handle: MetaHandle, overrides: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidParams) as refused:
        handle.call(RECALL, {"identity": "alice", **overrides})
    assert refused.value.code == -32602
    assert refused.value.message == message


@pytest.mark.parametrize("max_entries", [1, 64])
def test_recall_accepts_max_entries_at_both_bounds(handle: MetaHandle, max_entries: int) -> None:
    for i in range(3):
        handle.remember_agent_memory("alice", title=f"Fact {i}", body=f"Body {i}.")
    assert len(handle.recall_agent_memory("alice", selection="always", max_entries=max_entries)) == min(
        3, max_entries
    )


def test_explicit_recall_counts_usage_of_the_returned_records_only(
    handle: MetaHandle, clock: ManualClock
) -> None:
    coffee = handle.remember_agent_memory("alice", title="Coffee", body="Espresso grinder setting 12.")
    bikes = handle.remember_agent_memory("alice", title="Bikes", body="Tyre pressure is 4 bar.")
    assert handle.runtime.agent_memory is not None
    store = handle.runtime.agent_memory.store("default")

    clock.advance(100)
    handle.recall_agent_memory("alice", query_text="espresso")
    clock.advance(100)
    handle.recall_agent_memory("alice", query_text="espresso grinder")

    coffee_usage = store.get(coffee.memory_id).usage  # type: ignore[union-attr]
    assert coffee_usage.explicit_recall_count == 2
    assert coffee_usage.last_recalled_at_ms == clock.now_ms()
    bikes_usage = store.get(bikes.memory_id).usage  # type: ignore[union-attr]
    assert (bikes_usage.explicit_recall_count, bikes_usage.last_recalled_at_ms) == (0, None)


def _usage_stored(backend: Backend, handle: MetaHandle, memory_id: str) -> tuple[int, int | None]:
    """The counters as the store holds them (another connection: nothing in memory counts)."""
    [row] = backend.stored(
        handle.runtime.layout.root,
        "SELECT explicit_recall_count, last_recalled_at_ms FROM records WHERE id = ?",
        (memory_id,),
    )
    return row[0], row[1]


def test_recall_usage_is_written_back_with_the_next_write(
    handle: MetaHandle, clock: ManualClock, backend: Backend
) -> None:
    """A recall costs no commit of its own: its counters ride on the next write transaction."""
    coffee = handle.remember_agent_memory("alice", title="Coffee", body="Espresso grinder setting 12.")
    clock.advance(100)
    handle.recall_agent_memory("alice", query_text="espresso")
    handle.remember_agent_memory("alice", title="Tea", body="Green tea at 80 degrees.")
    assert _usage_stored(backend, handle, coffee.memory_id) == (1, clock.now_ms())


def test_recall_usage_is_written_back_in_a_quiet_spell(
    handle: MetaHandle, eventually: Callable[..., bool], backend: Backend
) -> None:
    """With no write to carry them, the background thread writes pending counters once the realm is quiet."""
    coffee = handle.remember_agent_memory("alice", title="Coffee", body="Espresso grinder setting 12.")
    handle.recall_agent_memory("alice", query_text="espresso")
    handle.recall_agent_memory("alice", query_text="grinder")
    assert eventually(lambda: _usage_stored(backend, handle, coffee.memory_id)[0] == 2)


def test_recall_usage_survives_a_clean_restart(open_handle: Callable[[], MetaHandle]) -> None:
    handle = open_handle()
    coffee = handle.remember_agent_memory("alice", title="Coffee", body="Espresso grinder setting 12.")
    for _ in range(3):
        handle.recall_agent_memory("alice", query_text="espresso")
    handle.close()
    reopened = open_handle()
    store = reopened.runtime.agent_memory.store("default")  # type: ignore[union-attr]
    assert store.get(coffee.memory_id).usage.explicit_recall_count == 3  # type: ignore[union-attr]


@SQLITE_ONLY
def test_panel_reads_see_pending_recall_usage(handle: MetaHandle) -> None:
    """Panel reads go through ``reading()``, which writes pending counters back first."""
    coffee = handle.remember_agent_memory("alice", title="Coffee", body="Espresso grinder setting 12.")
    handle.recall_agent_memory("alice", query_text="espresso")
    store = handle.runtime.agent_memory.store("default")  # type: ignore[union-attr]
    with store.reading() as db:
        (count,) = db.execute(
            "SELECT explicit_recall_count FROM records WHERE id = ?", (coffee.memory_id,)
        ).fetchone()
    assert count == 1
