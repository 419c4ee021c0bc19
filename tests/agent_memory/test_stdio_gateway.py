"""Agent memory over a real ``meta_gateway stdio`` subprocess: the same rules on the wire, and no
acknowledged write lost to ``kill -9``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from meta_memory import CONTRACT_VERSION

Start = Callable[[Path], Any]


def test_remember_recall_update_forget_over_stdio(stdio_gateway: Start, state_dir: Path) -> None:
    gateway = stdio_gateway(state_dir)
    assert gateway.handshake == {"contract_version": CONTRACT_VERSION}

    saved = gateway.request(
        "meta/agent_memory/remember",
        {
            "identity": "alice",
            "title": " Espresso  grinder ",
            "body": "Setting 12. ",
            "tags": ["Coffee", "coffee"],
        },
    )["result"]
    assert set(saved) == {
        "memory_id",
        "title",
        "body",
        "tags",
        "created_at_ms",
        "updated_at_ms",
        "scope_kind",
        "scope_key",
    }
    assert (saved["scope_kind"], saved["scope_key"]) == ("identity", "alice")
    assert (saved["title"], saved["body"], saved["tags"]) == ("Espresso grinder", "Setting 12.", ["coffee"])
    recalled = gateway.request(
        "meta/agent_memory/recall", {"identity": "alice", "query_text": "espresso grinder"}
    )
    # The record as remember returned it, with its score: the only match is the best.
    assert recalled == {
        "jsonrpc": "2.0",
        "id": 2,
        "result": {"records": [{**saved, "score": 1.0}], "vectors_behind": None},
    }

    updated = gateway.request(
        "meta/agent_memory/update",
        {
            "identity": "alice",
            "memory_id": saved["memory_id"],
            "title": "Espresso grinder",
            "body": "Setting 10.",
        },
    )["result"]
    assert updated["supersedes"] == saved["memory_id"]
    forgot = gateway.request(
        "meta/agent_memory/forget", {"identity": "alice", "memory_id": updated["memory_id"]}
    )
    assert forgot["result"] == {"memory_id": updated["memory_id"], "deleted": True}
    again = gateway.request(
        "meta/agent_memory/forget", {"identity": "alice", "memory_id": updated["memory_id"]}
    )
    assert again["result"]["deleted"] is False
    empty = gateway.request("meta/agent_memory/recall", {"identity": "alice", "selection": "always"})
    assert empty["result"] == {"records": [], "vectors_behind": None}


def test_parameter_and_validator_errors_reach_the_wire_as_32602_with_the_same_message(
    stdio_gateway: Start, state_dir: Path
) -> None:
    gateway = stdio_gateway(state_dir)
    cases = [
        (
            "meta/agent_memory/remember",
            {"identity": "alice", "title": "é" * 100 + "a", "body": "b"},
            "title must be at most 200 bytes",
        ),
        (
            "meta/agent_memory/remember",
            {"identity": "alice", "title": "t", "body": "b", "tags": ["x", " "]},
            "tags must contain only non-empty strings",
        ),
        (
            "meta/agent_memory/recall",
            {"identity": "alice", "max_entries": 65},
            "max_entries must be between 1 and 64",
        ),
        (
            "meta/agent_memory/recall",
            {"identity": "alice", "selection": "never"},
            "selection must be 'always' or 'contextual' (got 'never')",
        ),
        ("meta/agent_memory/forget", {"identity": "alice"}, "memory_id must be a non-empty string"),
    ]
    for method, params, message in cases:
        reply = gateway.request(method, params)
        assert "result" not in reply
        assert reply["error"]["code"] == -32602 and reply["error"]["message"] == message

    leaky = gateway.request(
        "meta/agent_memory/remember", {"identity": "alice", "title": "t", "body": "gh" + "p_" + "a1B2" * 9}
    )
    assert leaky["error"]["code"] == -32602
    assert leaky["error"]["data"] == {"kind": "memory_write_refused", "rule": "secret-detected"}


def test_a_corrupt_realm_is_an_error_on_the_wire_not_an_empty_result(
    stdio_gateway: Start, state_dir: Path
) -> None:
    path = state_dir / "agent-memory" / "default.sqlite3"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"garbage" * 1000)
    gateway = stdio_gateway(state_dir)
    reply = gateway.request("meta/agent_memory/recall", {"identity": "alice", "selection": "always"})
    assert "result" not in reply
    assert reply["error"]["code"] == -32014
    assert "agent-memory/default.sqlite3" in reply["error"]["message"]
    assert str(state_dir) not in reply["error"]["message"]  # no server path on the wire
    assert reply["error"]["data"] == {
        "kind": "realm_refused",
        "realm": "default",
        "file": "agent-memory/default.sqlite3",
    }


def test_no_acknowledged_remember_is_lost_when_the_gateway_is_killed(
    stdio_gateway: Start, state_dir: Path, sql: Any
) -> None:
    gateway = stdio_gateway(state_dir)
    acknowledged = []
    for i in range(48):
        reply = gateway.request(
            "meta/agent_memory/remember",
            {"identity": "alice", "title": f"Fact {i}", "body": f"Durable body {i}."},
        )
        acknowledged.append(reply["result"]["memory_id"])
    gateway.kill()  # SIGKILL straight after the last reply: no close, no checkpoint
    assert gateway.proc.returncode == -9
    realm_file = state_dir / "agent-memory" / "default.sqlite3"
    assert sorted(r[0] for r in sql(realm_file, "SELECT id FROM records")) == sorted(acknowledged)

    restarted = stdio_gateway(state_dir)
    recalled = restarted.request(
        "meta/agent_memory/recall", {"identity": "alice", "selection": "always", "max_entries": 64}
    )
    assert sorted(r["memory_id"] for r in recalled["result"]["records"]) == sorted(acknowledged)
    restarted.close()
    rows = sql(realm_file, "SELECT id FROM records WHERE status = 'active'")
    assert sorted(r[0] for r in rows) == sorted(acknowledged)
