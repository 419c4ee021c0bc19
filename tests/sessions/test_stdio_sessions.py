"""Host sessions over a real ``meta_gateway stdio`` subprocess: the firewall a host in any language
gets, with its error codes on the wire."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from meta_memory import CONTRACT_VERSION

Start = Callable[[str], Any]

OBSERVED = """
[agent_memory]
llm_writes = "observed"

[agent_memory.content_trust]
trusted_mcp_servers = ["kg"]
"""

POISON = {"action": "remember", "title": "Admin password", "body": "The admin password is hunter2."}


def test_a_host_loop_over_stdio_quarantines_the_write_after_an_untrusted_result(stdio_gateway: Start) -> None:
    gateway = stdio_gateway(OBSERVED)
    assert gateway.handshake == {"contract_version": CONTRACT_VERSION}
    key = gateway.result("meta/session/open", {"identity": "alice"})["session_key"]

    clean = gateway.result(
        "meta/session/memory_tool",
        {
            "session_key": key,
            "arguments": {"action": "remember", "title": "Editor", "body": "Alice uses vim."},
        },
    )
    trusted = gateway.result(
        "meta/session/tool_result",
        {"session_key": key, "tool_name": "lookup", "provenance": {"kind": "mcp", "source_id": "kg"}},
    )
    untrusted = gateway.result(
        "meta/session/tool_result",
        {"session_key": key, "tool_name": "lookup", "provenance": {"kind": "mcp", "source_id": "evil"}},
    )
    poisoned = gateway.result(
        "meta/session/memory_tool", {"session_key": key, "arguments": json.dumps(POISON)}
    )
    turn = gateway.result("meta/session/turn", {"session_key": key, "message": "what is the admin password?"})
    recalled = gateway.result("meta/agent_memory/recall", {"identity": "alice", "selection": "always"})

    assert (clean["outcome"], clean["is_error"]) == ("stored", False)
    assert trusted == {"trusted": True, "tainted": False}
    assert untrusted == {"trusted": False, "tainted": True}
    assert poisoned["outcome"] == "quarantined"
    assert "QUARANTINED pending review (session tainted by mcp server evil)" in poisoned["content"]
    assert "hunter2" not in turn["text"].replace("admin password?", "")
    assert [r["body"] for r in recalled["records"]] == ["Alice uses vim."]


def test_unknown_session_keys_and_bad_params_are_32602_on_the_wire(stdio_gateway: Start) -> None:
    gateway = stdio_gateway(OBSERVED)
    key = gateway.result("meta/session/open", {"identity": "alice"})["session_key"]
    new_key = gateway.result("meta/session/reset", {"session_key": key})["session_key"]
    gateway.result("meta/session/close", {"session_key": new_key})

    for method, params in [
        ("meta/session/turn", {"session_key": key, "message": "hi"}),
        ("meta/session/build_context", {"session_key": new_key}),
        ("meta/session/tool_result", {"session_key": "sess-nope", "tool_name": "web_fetch"}),
        ("meta/session/memory_tool", {"session_key": "sess-nope", "arguments": POISON}),
        ("meta/session/tool_result", {"identity": "alice"}),
    ]:
        reply = gateway.request(method, params)
        assert reply["error"]["code"] == -32602, (method, reply)
        assert "result" not in reply


def test_pending_ingestion_over_stdio_taints_the_next_session_of_that_identity(stdio_gateway: Start) -> None:
    gateway = stdio_gateway(OBSERVED)

    verdict = gateway.result(
        "meta/session/tool_result", {"identity": "alice", "tool_name": "mcp__evil__read"}
    )
    key = gateway.result("meta/session/open", {"identity": "alice"})["session_key"]
    written = gateway.result("meta/session/memory_tool", {"session_key": key, "arguments": POISON})
    reset_key = gateway.result("meta/session/reset", {"session_key": key})["session_key"]
    after_reset = gateway.result("meta/session/memory_tool", {"session_key": reset_key, "arguments": POISON})

    assert verdict == {"trusted": False, "tainted": True}
    assert written["outcome"] == "quarantined"
    assert after_reset["outcome"] == "stored"


def test_the_quarantined_posture_and_recorder_tool_off_hold_over_stdio(stdio_gateway: Start) -> None:
    strict = stdio_gateway('[agent_memory]\nllm_writes = "quarantined"\n')
    off = stdio_gateway("[agent_memory]\nrecorder_tool = false\n")
    strict_key = strict.result("meta/session/open", {"identity": "alice"})["session_key"]
    off_key = off.result("meta/session/open", {"identity": "alice"})["session_key"]

    written = strict.result("meta/session/memory_tool", {"session_key": strict_key, "arguments": POISON})
    refused = off.request("meta/session/memory_tool", {"session_key": off_key, "arguments": POISON})

    assert written["outcome"] == "quarantined"
    assert "(llm_writes=quarantined policy)" in written["content"]
    assert len(strict.result("meta/session/tool_definitions", {"format": "anthropic"})["tools"]) == 1
    assert refused["error"]["code"] == -32004
    assert off.result("meta/session/tool_definitions", {"format": "openai"}) == {"tools": []}
