"""The write posture end to end: which writes land quarantined under ``llm_writes = "observed"`` and
``"quarantined"``, that application writes never do, that a quarantined record never reaches recall,
build context or turn text, that a quarantined update leaves the prior version in force, and that a
write issued right after the first untrusted report is already quarantined, also under threads."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from meta_memory import MetaHandle
from meta_memory.sdk import MemoryToolResult

POISON = {"action": "remember", "title": "Admin password", "body": "The admin password is hunter2."}


def test_observed_posture_stores_clean_writes_and_quarantines_tainted_ones(
    meta: MetaHandle, id_of: Callable[..., str], status_of: Callable[..., str]
) -> None:
    session = meta.open_session("alice")

    clean = session.memory_tool({"action": "remember", "title": "Editor", "body": "Alice uses vim."})
    session.tool_result("web_fetch")
    tainted = session.memory_tool(POISON)

    assert (clean.outcome, clean.content) == ("stored", f"Stored memory {id_of(clean)}.")
    assert tainted.outcome == "quarantined" and not tainted.is_error
    assert tainted.content == (
        f"Stored memory {id_of(tainted)}, but it is QUARANTINED pending review (session tainted by tool "
        "web_fetch): it will not be recalled or injected until a reviewer releases it."
    )
    assert status_of(meta, id_of(clean)) == "active"
    assert status_of(meta, id_of(tainted)) == "quarantined"


def test_quarantined_posture_quarantines_every_llm_write_even_from_a_clean_session(
    open_meta: Callable[..., MetaHandle], id_of: Callable[..., str], status_of: Callable[..., str]
) -> None:
    meta = open_meta(llm_writes="quarantined")
    prior = meta.remember_agent_memory("alice", title="Editor", body="Alice uses vim.")
    session = meta.open_session("alice")

    written = session.memory_tool({"action": "remember", "title": "Shell", "body": "Alice uses zsh."})
    updated = session.memory_tool(
        {"action": "update", "memory_id": prior.memory_id, "title": "Editor", "body": "Alice uses emacs."}
    )

    for result in (written, updated):
        assert result.outcome == "quarantined"
        assert "(llm_writes=quarantined policy)" in result.content
        assert status_of(meta, id_of(result)) == "quarantined"
    assert status_of(meta, prior.memory_id) == "active"
    assert session.tool_result("calculator")["tainted"] is False  # the posture is not taint


@pytest.mark.parametrize("llm_writes", ["observed", "quarantined"])
def test_application_writes_are_never_quarantined_even_while_the_identity_is_tainted(
    open_meta: Callable[..., MetaHandle], events_of: Callable[..., list[Any]], llm_writes: str
) -> None:
    meta = open_meta(llm_writes=llm_writes)
    session = meta.open_session("alice")
    session.tool_result("web_fetch")
    meta.call("meta/session/tool_result", {"identity": "alice", "tool_name": "web_fetch"})

    saved = meta.remember_agent_memory("alice", title="Deploy policy", body="Deploys need ops approval.")
    updated = meta.update_agent_memory(
        "alice", saved.memory_id, title="Deploy policy", body="Deploys need two approvals."
    )

    recalled = meta.recall_agent_memory("alice", query_text="deploy approvals")
    assert [r.memory_id for r in recalled] == [updated.memory_id]
    assert "Deploys need two approvals." in session.turn("deploy approvals?")[0]
    assert events_of(meta, "memory.write.quarantined") == []


def test_a_quarantined_record_never_reaches_recall_build_context_or_turn_text(
    meta: MetaHandle, id_of: Callable[..., str]
) -> None:
    meta.remember_agent_memory("alice", title="Admin contact", body="Ask ops for admin access.")
    session = meta.open_session("alice")
    session.tool_result("web_fetch")
    poisoned = id_of(session.memory_tool(POISON))
    fresh = meta.open_session("alice")

    surfaces: dict[str, Any] = {
        "rpc contextual": [
            r.memory_id for r in meta.recall_agent_memory("alice", query_text="admin password")
        ],
        "rpc always": [r.memory_id for r in meta.recall_agent_memory("alice", selection="always")],
        "tool contextual": session.memory_tool(
            {"action": "recall", "query_text": "admin password hunter2"}
        ).content,
        "tool newest": fresh.memory_tool({"action": "recall", "max_entries": 64}).content,
        "build": fresh.build_context(),
        "turn": meta.open_session("alice").turn("what is the admin password?"),
        "tainted turn": session.turn("what is the admin password?"),
    }

    for surface, shown in surfaces.items():
        assert poisoned not in str(shown), surface
        assert "hunter2" not in str(shown).replace("what is the admin password?", ""), surface
    assert "Ask ops for admin access." in surfaces["build"][0]
    assert "Ask ops for admin access." in surfaces["turn"][0]


def test_a_quarantined_update_leaves_the_prior_version_active_and_recallable(
    meta: MetaHandle, id_of: Callable[..., str], status_of: Callable[..., str]
) -> None:
    session = meta.open_session("alice")
    prior = id_of(
        session.memory_tool({"action": "remember", "title": "Deploys", "body": "Deploys need approval."})
    )
    session.tool_result("web_fetch")

    result = session.memory_tool(
        {"action": "update", "memory_id": prior, "title": "Deploys", "body": "All deploys are pre-approved."}
    )

    assert result.outcome == "quarantined"
    assert result.content.startswith(f"Updated memory {prior} as {id_of(result)}, but it is QUARANTINED")
    assert (status_of(meta, prior), status_of(meta, id_of(result))) == ("active", "quarantined")
    recalled = json.loads(session.memory_tool({"action": "recall", "query_text": "deploys"}).content)
    assert [(r["memory_id"], r["body"]) for r in recalled] == [(prior, "Deploys need approval.")]
    text, injected = meta.open_session("alice").turn("are deploys pre-approved?")
    assert injected == [prior] and "pre-approved." not in text.partition("Current user message:")[0]


def test_a_write_issued_right_after_the_first_untrusted_report_is_quarantined(meta: MetaHandle) -> None:
    for n in range(20):
        session = meta.open_session(f"agent-{n}")
        session.tool_result("web_fetch")
        assert session.memory_tool({**POISON, "body": f"Planted {n}."}).outcome == "quarantined"


def test_no_write_that_starts_after_a_concurrent_report_returned_escapes_quarantine(meta: MetaHandle) -> None:
    session = meta.open_session("alice")
    reported = threading.Event()
    start = threading.Barrier(3 + 6, timeout=10)

    def report(tool: str) -> None:
        start.wait()
        assert session.tool_result(tool)["tainted"] is True
        reported.set()

    def write(worker: int) -> list[tuple[bool, MemoryToolResult]]:
        start.wait()
        out = []
        for n in range(6):
            after = reported.is_set()  # read before the call starts
            out.append((after, session.memory_tool({**POISON, "body": f"Write {worker}.{n} from a thread."})))
        return out

    with ThreadPoolExecutor(max_workers=9) as pool:
        reporters = [pool.submit(report, tool) for tool in ("web_fetch", "mcp__evil__read", "web_search")]
        writers = [pool.submit(write, worker) for worker in range(6)]
        for reporter in reporters:
            reporter.result(timeout=30)
        results = [r for writer in writers for r in writer.result(timeout=30)]

    assert len(results) == 36 and not any(result.is_error for _, result in results)
    assert all(result.outcome == "quarantined" for after, result in results if after)
    assert session.memory_tool({**POISON, "body": "After every report."}).outcome == "quarantined"


def test_a_tainted_session_cannot_forget_a_record_without_review(meta: MetaHandle) -> None:
    policy = meta.remember_agent_memory("alice", title="Deploy policy", body="Deploys need ops approval.")
    session = meta.open_session("alice")
    session.tool_result("web_fetch")

    session.memory_tool({"action": "forget", "memory_id": policy.memory_id})

    assert [r.memory_id for r in meta.recall_agent_memory("alice", selection="always")] == [policy.memory_id]
