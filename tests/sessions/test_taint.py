"""Session taint through the host API: what a reported tool result does to the session and to the next
LLM write, how taint lives through compaction and dies at reset, pending (pre-session) ingestion, and
the ``memory.taint.transition`` / ``memory.write.quarantined`` events (REFERENCE 4.2-4.4, 5.4)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from meta_memory import InvalidParams, MetaHandle, SessionRefused
from meta_memory.clock import ManualClock

TRUST = {"trusted_mcp_servers": ["kg"], "untrusted_tools": ["scrape_page"], "trusted_tools": ["internal_db"]}
NOTE = {"action": "remember", "title": "Deploy policy", "body": "Deploys need ops approval."}

UNTRUSTED = [
    pytest.param({"tool_name": "web_fetch"}, "tool web_fetch", id="builtin-web_fetch"),
    pytest.param({"tool_name": "http_request", "is_error": True}, "tool http_request", id="builtin-error"),
    pytest.param({"tool_name": "scrape_page"}, "tool scrape_page", id="untrusted_tools"),
    pytest.param(
        {"tool_name": "search", "provenance": {"kind": "mcp", "source_id": "evil"}},
        "mcp server evil",
        id="mcp-provenance-off-allowlist",
    ),
    pytest.param({"tool_name": "mcp__evil__search"}, "mcp server evil", id="mcp-qualified-name"),
    pytest.param(
        {"tool_name": "mcp__kg__search", "provenance": {"kind": "mcp", "source_id": "evil"}},
        "mcp server evil",
        id="typed-provenance-beats-the-name",
    ),
    pytest.param(
        {"tool_name": "web_search", "server_tool": True}, "server tool web_search", id="server-tool"
    ),
    pytest.param(
        {"tool_name": "internal_db", "server_tool": True}, "server tool internal_db", id="server-tool-x"
    ),
]

TRUSTED = [
    pytest.param({"tool_name": "calculator"}, id="plain-tool"),
    pytest.param({"tool_name": "internal_db"}, id="trusted_tools"),
    pytest.param({"tool_name": "mcp__kg__lookup"}, id="mcp-qualified-allowlisted"),
    pytest.param(
        {"tool_name": "lookup", "provenance": {"kind": "mcp", "source_id": "kg"}}, id="mcp-provenance"
    ),
    pytest.param(
        {"tool_name": "mcp__evil__lookup", "provenance": {"kind": "mcp", "source_id": "kg"}},
        id="typed-provenance-beats-the-name",
    ),
    pytest.param({"tool_name": "read_file", "provenance": {"kind": "builtin"}}, id="non-mcp-provenance"),
    pytest.param({"tool_name": "calculator", "is_error": True}, id="trusted-error"),
]


@pytest.mark.parametrize(("report", "source"), UNTRUSTED)
def test_an_untrusted_tool_result_taints_the_session_and_quarantines_the_next_llm_write(
    open_meta: Callable[..., MetaHandle],
    events_of: Callable[..., list[dict[str, Any]]],
    report: dict[str, Any],
    source: str,
) -> None:
    meta = open_meta(content_trust=TRUST)
    session = meta.open_session("alice")

    verdict = session.tool_result(**report)
    written = session.memory_tool(NOTE)

    assert verdict == {"trusted": False, "tainted": True}
    assert written.outcome == "quarantined"
    assert f"QUARANTINED pending review (session tainted by {source})" in written.content
    [event] = events_of(meta, "memory.taint.transition")
    assert event["data"] == {
        "identity": "alice",
        "session_key": session.key,
        "kind": "tainted",
        "source": source,
    }


@pytest.mark.parametrize("report", TRUSTED)
def test_a_trusted_tool_result_leaves_the_session_clean(
    open_meta: Callable[..., MetaHandle],
    events_of: Callable[..., list[dict[str, Any]]],
    report: dict[str, Any],
) -> None:
    meta = open_meta(content_trust=TRUST)
    session = meta.open_session("alice")

    verdict = session.tool_result(**report)
    written = session.memory_tool(NOTE)

    assert verdict == {"trusted": True, "tainted": False}
    assert written.outcome == "stored"
    assert events_of(meta, "memory.taint.transition") == []


def test_trusted_tools_cannot_override_the_builtin_web_tools(open_meta: Callable[..., MetaHandle]) -> None:
    meta = open_meta(content_trust={"trusted_tools": ["web_fetch", "fetch"]})
    session = meta.open_session("alice")

    assert session.tool_result("fetch") == {"trusted": False, "tainted": True}
    assert session.memory_tool(NOTE).outcome == "quarantined"


def test_taint_is_sticky_a_later_trusted_result_still_reports_the_session_tainted(meta: MetaHandle) -> None:
    session = meta.open_session("alice")
    session.tool_result("web_fetch")

    assert session.tool_result("calculator") == {"trusted": True, "tainted": True}
    assert session.memory_tool(NOTE).outcome == "quarantined"


def test_taint_survives_compaction(meta: MetaHandle) -> None:
    session = meta.open_session("alice")
    session.tool_result("web_fetch")

    session.compact()

    assert session.tool_result("calculator")["tainted"] is True
    assert session.memory_tool(NOTE).outcome == "quarantined"


def test_reset_starts_a_clean_session_and_marks_the_old_one_a_reset_boundary(
    meta: MetaHandle, events_of: Callable[..., list[dict[str, Any]]]
) -> None:
    session = meta.open_session("alice")
    session.tool_result("web_fetch")
    old_key = session.key

    new_key = session.reset()

    assert session.tool_result("calculator") == {"trusted": True, "tainted": False}
    assert session.memory_tool(NOTE).outcome == "stored"
    kinds = [
        (e["data"]["kind"], e["data"]["session_key"]) for e in events_of(meta, "memory.taint.transition")
    ]
    assert kinds == [("tainted", old_key), ("reset_boundary", old_key), ("rotated_clean", new_key)]
    with pytest.raises(SessionRefused, match="was reset"):
        meta.call("meta/session/memory_tool", {"session_key": old_key, "arguments": NOTE})


def test_taint_of_one_session_does_not_spread_to_another_session_or_identity(meta: MetaHandle) -> None:
    tainted, sibling, other = meta.open_session("alice"), meta.open_session("alice"), meta.open_session("bob")

    tainted.tool_result("web_fetch")

    assert sibling.memory_tool(NOTE).outcome == "stored"
    assert other.memory_tool(NOTE).outcome == "stored"
    assert tainted.memory_tool({**NOTE, "body": "Other words."}).outcome == "quarantined"


def test_a_result_reported_before_any_session_taints_the_next_session_of_that_identity(
    meta: MetaHandle, events_of: Callable[..., list[dict[str, Any]]]
) -> None:
    verdict = meta.call("meta/session/tool_result", {"identity": "alice", "tool_name": "web_fetch"})
    assert verdict == {"trusted": False, "tainted": True}
    assert events_of(meta, "memory.taint.transition") == []  # held as pending: no session yet

    session, bob = meta.open_session("alice"), meta.open_session("bob")

    assert session.memory_tool(NOTE).outcome == "quarantined"
    assert session.tool_result("calculator")["tainted"] is True
    assert bob.memory_tool(NOTE).outcome == "stored"
    [event] = events_of(meta, "memory.taint.transition")
    assert event["data"] == {
        "identity": "alice",
        "session_key": session.key,
        "kind": "tainted",
        "source": "tool web_fetch",
    }
    assert session.reset() and session.memory_tool(NOTE).outcome == "stored"  # the pending taint was spent


def test_a_sessionless_untrusted_result_taints_the_identitys_open_sessions(meta: MetaHandle) -> None:
    session = meta.open_session("alice")

    meta.call("meta/session/tool_result", {"identity": "alice", "tool_name": "mcp__evil__read"})

    assert session.memory_tool(NOTE).outcome == "quarantined"


def test_a_sessionless_trusted_result_leaves_nothing_pending(meta: MetaHandle) -> None:
    verdict = meta.call("meta/session/tool_result", {"identity": "alice", "tool_name": "calculator"})

    assert verdict == {"trusted": True, "tainted": False}
    assert meta.open_session("alice").memory_tool(NOTE).outcome == "stored"


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"identity": "alice"}, "tool_name must be a non-empty string"),
        ({"tool_name": "web_fetch"}, "identity must be a valid non-empty string"),
        ({"identity": "alice", "tool_name": "x", "server_tool": "yes"}, "server_tool must be a boolean"),
        ({"identity": "alice", "tool_name": "x", "is_error": 1}, "is_error must be a boolean"),
        ({"identity": "alice", "tool_name": "x", "provenance": "mcp"}, "provenance must be an object"),
        ({"identity": "alice", "tool_name": "x", "provenance": {"source_id": "kg"}}, "provenance.kind"),
        (
            {"identity": "alice", "tool_name": "x", "provenance": {"kind": "mcp", "server": "kg"}},
            "unsupported provenance fields: server",
        ),
    ],
)
def test_malformed_tool_result_reports_are_invalid_params_and_taint_nothing(
    meta: MetaHandle, params: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidParams, match=re.escape(message)) as caught:
        meta.call("meta/session/tool_result", params)

    assert caught.value.code == -32602
    assert meta.open_session("alice").memory_tool(NOTE).outcome == "stored"


def test_taint_and_quarantine_events_have_the_timeline_envelope_and_fire_once_per_transition_or_write(
    meta: MetaHandle, events_of: Callable[..., list[dict[str, Any]]], clock: ManualClock
) -> None:
    session = meta.open_session("alice")
    session.tool_result("web_fetch")
    session.tool_result("web_search")  # already tainted: no second transition
    session.memory_tool(NOTE)
    session.memory_tool({**NOTE, "title": "Second"})

    [taint] = events_of(meta, "memory.taint.transition")
    quarantined = events_of(meta, "memory.write.quarantined")

    assert set(taint) == {"event_id", "identity", "event_type", "timestamp_ms", "data"}
    assert re.fullmatch(r"console-evt-\d+", taint["event_id"])
    assert (taint["identity"], taint["timestamp_ms"]) == ("alice", clock.now_ms())
    assert taint["data"]["source"] == "tool web_fetch"
    assert len(quarantined) == 2
    assert all(e["identity"] == "alice" for e in quarantined)
    assert quarantined[0]["data"] == {
        "realm": "default",
        "author": {"author": "agent", "identity": "alice"},
        "reason": "session tainted by tool web_fetch",
    }


def test_no_quarantine_event_fires_for_a_tainted_write_that_was_refused_or_deduplicated(
    meta: MetaHandle, events_of: Callable[..., list[dict[str, Any]]]
) -> None:
    meta.remember_agent_memory("alice", title=NOTE["title"], body=NOTE["body"])
    session = meta.open_session("alice")
    session.tool_result("web_fetch")

    refused = session.memory_tool({**NOTE, "body": "api_key = sk1234567890abcdef1234"})
    duplicate = session.memory_tool(NOTE)

    assert refused.is_error and refused.outcome == "none"
    assert duplicate.content.startswith("Already remembered as ")
    assert events_of(meta, "memory.write.quarantined") == []
