"""The shared protocol suite: the same calls, results and errors through every way in (``api``:
the in-process handle, MetaClient over HTTP and stdio, AsyncMetaClient over HTTP and stdio)."""

from __future__ import annotations

from typing import Any

import pytest

from meta_memory.api import (
    AgentMemoryEntry,
    AgentMemoryForgetResult,
    AgentMemoryLookup,
    AgentMemoryPage,
    AgentMemoryRecord,
    AgentMemoryUpdateResult,
    MemoryIndexResult,
    MemoryStoreInfo,
    MemoryToolResult,
)
from meta_memory.errors import (
    CapabilityUnavailable,
    InvalidParams,
    MethodNotFound,
    QuarantineReviewRefused,
    UnknownRecord,
    WriteRefused,
)

from .conftest import STDIO_WAYS

AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE"


def test_remember_then_recall_returns_the_typed_record(api: Any, identity: str) -> None:
    made = api.remember_agent_memory(
        identity, title="Deploys", body="Deploys need ops approval on Tuesdays.", tags=["Ops", "deploy"]
    )
    assert isinstance(made, AgentMemoryRecord)
    assert (made.title, made.tags) == ("Deploys", ("deploy", "ops"))
    assert made.created_at_ms == made.updated_at_ms > 0

    recalled = api.recall_agent_memory(identity, query_text="who approves deploys?")
    assert recalled == [made]
    assert api.recall_agent_memory(identity, query_text="who approves deploys?", tags=["ops", "nope"]) == []
    assert api.recall_agent_memory(identity, selection="always", tags=["deploy"]) == [made]


def test_update_supersedes_and_get_names_the_successor(api: Any, identity: str) -> None:
    first = api.remember_agent_memory(identity, title="Window", body="Deploys happen on Tuesdays.")
    updated = api.update_agent_memory(
        identity, first.memory_id, title="Window", body="Deploys happen on Fridays."
    )
    assert isinstance(updated, AgentMemoryUpdateResult) and updated.supersedes == first.memory_id

    old = api.get_agent_memory(identity, first.memory_id)
    assert isinstance(old, AgentMemoryLookup) and isinstance(old.record, AgentMemoryEntry)
    assert (old.record.status, old.record.superseded_by, old.successor) == (
        "superseded",
        updated.memory_id,
        updated.memory_id,
    )
    new = api.get_agent_memory(identity, updated.memory_id)
    assert (new.record.status, new.record.body, new.successor) == (
        "active",
        "Deploys happen on Fridays.",
        None,
    )
    assert [r.body for r in api.recall_agent_memory(identity, selection="always")] == [
        "Deploys happen on Fridays."
    ]


def test_forget_says_whether_it_deleted(api: Any, identity: str) -> None:
    made = api.remember_agent_memory(identity, title="Scratch", body="A note to forget.")
    assert api.forget_agent_memory(identity, made.memory_id) == AgentMemoryForgetResult(made.memory_id, True)
    assert api.forget_agent_memory(identity, made.memory_id) == AgentMemoryForgetResult(made.memory_id, False)
    assert api.recall_agent_memory(identity, selection="always") == []
    assert api.get_agent_memory(identity, made.memory_id).record.status == "tombstoned"


def test_list_pages_newest_first_by_filter(api: Any, identity: str) -> None:
    made = [
        api.remember_agent_memory(
            identity, title=f"Note {i}", body=f"Body {i}", tags=["even" if i % 2 == 0 else "odd"]
        )
        for i in range(5)
    ]
    seen: list[str] = []
    cursor = None
    while True:
        page = api.list_agent_memory(identity, limit=2, cursor=cursor)
        assert isinstance(page, AgentMemoryPage) and len(page.records) <= 2
        seen += [r.memory_id for r in page.records]
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert seen == [m.memory_id for m in reversed(made)]
    evens = api.list_agent_memory(identity, tags_all=["even"])
    assert [r.title for r in evens.records] == ["Note 4", "Note 2", "Note 0"]


def test_unknown_and_bad_params_are_refused_naming_the_key(api: Any, identity: str) -> None:
    with pytest.raises(InvalidParams) as bad:
        api.remember_agent_memory(identity, title="  ", body="x")
    assert (bad.value.code, bad.value.message) == (-32602, "title must be a non-empty string")
    with pytest.raises(InvalidParams) as unknown:
        api.call("meta/agent_memory/recall", {"identity": identity, "tagz": ["ops"]})
    assert unknown.value.message == "unknown param 'tagz' (did you mean 'tags'?)"
    assert unknown.value.data == {"unknown": ["tagz"], "accepted": unknown.value.data["accepted"]}
    assert "tags" in unknown.value.data["accepted"]


def test_a_secret_is_refused_by_the_validator_with_its_rule(api: Any, identity: str) -> None:
    with pytest.raises(WriteRefused) as refused:
        api.remember_agent_memory(identity, title="Keys", body=f"the key is {AWS_KEY}")
    assert refused.value.code == -32602
    assert refused.value.rule == "secret-detected"
    assert refused.value.data == {"kind": "memory_write_refused", "rule": "secret-detected"}


def test_unknown_ids_and_methods_get_their_own_errors(api: Any, identity: str) -> None:
    with pytest.raises(UnknownRecord) as unknown:
        api.get_agent_memory(identity, "mem-does-not-exist")
    assert unknown.value.code == -32001
    with pytest.raises(MethodNotFound) as missing:
        api.call("meta/no/such/method", {})
    assert missing.value.code == -32601


def test_the_ledger_indexes_and_queries(api: Any, fresh: Any) -> None:
    entity = fresh("deploy")
    made = api.memory_index(entity, "window", fact="Tuesdays only", metadata={"Source": "runbook"})
    assert isinstance(made, MemoryIndexResult) and made.assertion_id
    found = api.memory_query(entity=entity)
    assert [(a["fact"], a["metadata"]) for a in found.assertions] == [
        ("Tuesdays only", {"Source": "runbook"})
    ]
    stores = api.memory_stores()
    assert all(isinstance(s, MemoryStoreInfo) for s in stores)
    assert next(s.record_count for s in stores if s.store == made.store) >= 1


def test_a_session_turns_and_quarantines_its_llm_writes(api: Any, identity: str) -> None:
    api.remember_agent_memory(identity, title="Deploys", body="Deploys need ops approval.")
    session = api.open_session(identity)
    text, injected = session.turn("how do deploys work?")
    assert "Deploys need ops approval." in text and len(injected) == 1
    stored = session.memory_tool({"action": "remember", "title": "Window", "body": "Fridays."})
    assert isinstance(stored, MemoryToolResult) and stored.outcome == "quarantined" and not stored.is_error
    assert session.tool_result(
        "web_fetch", provenance={"kind": "url", "source_id": "https://example.com"}
    ) == {
        "trusted": False,
        "tainted": True,
    }
    old_key = session.key
    assert session.reset() != old_key and session.key != old_key
    session.close()
    with pytest.raises(InvalidParams):
        session.turn("after close")


def test_tool_definitions_come_in_each_shape(api: Any) -> None:
    (openai,) = api.memory_tool_definitions("openai")
    assert openai["type"] == "function" and openai["function"]["name"] == "memory"
    with pytest.raises(InvalidParams):
        api.memory_tool_definitions("nope")


def test_gating_evaluates_waits_and_decides(api: Any, fresh: Any) -> None:
    actor = fresh("actor")
    verdict = api.gating_evaluate("deploy", actor, "r3", rationale="a release")
    assert verdict["pending_id"]
    assert verdict["pending_id"] in [p["pending_id"] for p in api.gating_pending()]
    # Over HTTP the token's subject is the approver, and naming it holds on every transport.
    decided = api.gating_decide(verdict["pending_id"], "suite", "approve")
    assert decided["pending_id"] == verdict["pending_id"]
    assert any(e["pending_id"] == verdict["pending_id"] for e in api.gating_audit(limit=50))


def test_status_capabilities_discover_and_the_timeline(api: Any, identity: str) -> None:
    assert api.status()["contract_version"] == "0.9.9"
    methods = api.capabilities()["methods"]
    assert "meta/agent_memory/list" in methods and "meta/memory/panel/records" not in methods
    assert [m["name"] for m in api.discover()["methods"]] == methods
    api.remember_agent_memory(identity, title="Timeline", body="An event for the timeline.")
    page = api.timeline_query(limit=500)
    assert set(page) == {"events", "next_after"}


def _quarantined(api: Any, identity: str) -> str:
    session = api.open_session(identity)
    session.memory_tool({"action": "remember", "title": "Window", "body": "Deploys on Fridays."})
    session.close()
    (entry,) = api.list_agent_memory(identity, status="quarantined").records
    return str(entry.memory_id)


def test_the_console_reviews_the_quarantine_bound_to_the_hash(api: Any, way: str, identity: str) -> None:
    if way in STDIO_WAYS:
        with pytest.raises(CapabilityUnavailable):
            api.console.quarantine()
        return
    memory_id = _quarantined(api, identity)
    queue = api.console.quarantine(limit=200)
    assert memory_id in [r["memory_id"] for r in queue["records"]]
    detail = api.console.record(memory_id)
    digest = detail["record"]["content_hash"]
    with pytest.raises(QuarantineReviewRefused) as stale:
        api.console.decide(identity, memory_id, "release", expected_content_hash="0" * 64)
    assert stale.value.code == -32043 and stale.value.reason
    api.console.decide(identity, memory_id, "release", expected_content_hash=digest)
    after = api.get_agent_memory(identity, memory_id)
    assert after.successor is not None and after.successor != memory_id
    assert api.get_agent_memory(identity, after.successor).record.status == "active"
    assert [r.memory_id for r in api.recall_agent_memory(identity, selection="always")] == [after.successor]
