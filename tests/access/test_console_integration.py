"""Access control on the console surface, end to end: bearer tokens over HTTP, grants per method,
capabilities per caller, the reviewer taken from the token, and the timeline filtered by access."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from meta_memory.access import hash_token
from meta_memory.clock import ManualClock
from meta_memory.config import load_config_dict
from meta_memory.gateway.http import build_app
from meta_memory.runtime import MetaRuntime
from meta_memory.sessions import MemoryToolParams, parse_open

ADMIN, READER, OUTSIDER = "tok-admin-1", "tok-reader-1", "tok-outsider-1"


def _config(**console: Any) -> dict[str, Any]:
    return {
        "agent_memory": {"enabled": True, "llm_writes": "quarantined"},
        "roster": [{"identity": "lead", "mob": "ops", "role": "lead", "labels": {"team": "infra"}}],
        "console": {
            **console,
            "auth": {
                # Anonymous callers beside tokens (explicitly allowed): the rules judge them too.
                "allow_anonymous": True,
                "tokens": [
                    {"token_sha256": hash_token(ADMIN), "subject": "root"},
                    {"token_sha256": hash_token(READER), "subject": "rita", "groups": ["ops"]},
                    {"token_sha256": hash_token(OUTSIDER), "subject": "otto"},
                ],
            },
        },
        "access": {
            "enabled": True,
            "admins": ["root"],
            "rules": [
                {
                    "id": "ops-read",
                    "groups": ["ops"],
                    "actions": [
                        "agent.memory.read",
                        "agent.view",
                        "memory.quarantine.review",
                        "agent.memory.write",
                        "timeline.read",
                    ],
                    "roles": ["lead"],
                }
            ],
        },
    }


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[MetaRuntime, TestClient]]:
    rt = MetaRuntime.open(tmp_path / "state", load_config_dict(_config()), clock=ManualClock())
    assert rt.timeline is not None
    app = build_app(rt)
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        yield rt, client
    rt.close()


def _rpc(
    client: TestClient, method: str, params: dict[str, Any] | None = None, token: str | None = None
) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}
    return client.post("/console/rpc", json=body, headers=headers)


def test_a_wrong_token_is_401_never_anonymous(served: tuple[MetaRuntime, TestClient]) -> None:
    _, client = served
    response = _rpc(client, "meta/status", token="not-a-configured-token")
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert response.json()["error"]["data"]["kind"] == "unauthenticated"


def test_anonymous_callers_are_denied_what_no_unconstrained_rule_grants(
    served: tuple[MetaRuntime, TestClient],
) -> None:
    _, client = served
    error = _rpc(client, "meta/agent_memory/recall", {"identity": "lead", "selection": "always"}).json()[
        "error"
    ]
    assert error["code"] == -32030
    assert error["data"] == {"kind": "access_denied", "action": "agent.memory.read", "resource": "lead"}


def test_a_group_grant_on_a_role_allows_exactly_what_it_names(served: tuple[MetaRuntime, TestClient]) -> None:
    _, client = served
    made = _rpc(client, "meta/agent_memory/remember", {"identity": "lead", "title": "t", "body": "b"}, READER)
    assert "result" in made.json()
    recalled = _rpc(client, "meta/agent_memory/recall", {"identity": "lead", "selection": "always"}, READER)
    assert len(recalled.json()["result"]["records"]) == 1
    forget = {"identity": "lead", "memory_id": made.json()["result"]["memory_id"]}
    denied = _rpc(client, "meta/agent_memory/forget", forget, READER).json()["error"]
    assert denied["data"]["action"] == "agent.memory.delete"
    other = _rpc(client, "meta/agent_memory/recall", {"identity": "stranger", "selection": "always"}, READER)
    assert other.json()["error"]["code"] == -32030  # an unknown identity fails the role selector closed


def test_capabilities_advertise_only_what_the_caller_could_use(
    served: tuple[MetaRuntime, TestClient],
) -> None:
    _, client = served
    admin = set(_rpc(client, "meta/capabilities", token=ADMIN).json()["result"]["methods"])
    outsider = set(_rpc(client, "meta/capabilities", token=OUTSIDER).json()["result"]["methods"])
    assert {"meta/memory/quarantine/decide", "meta/gating/decide"} <= admin
    assert "meta/memory/quarantine/decide" not in outsider and "meta/gating/decide" not in outsider


def test_decide_takes_the_reviewer_from_the_token_and_needs_the_grants(
    served: tuple[MetaRuntime, TestClient],
) -> None:
    rt, client = served
    assert rt.sessions is not None and rt.agent_memory is not None
    session = rt.sessions.open(parse_open({"identity": "lead"}, default_realm="default"))
    rt.sessions.memory_tool(MemoryToolParams(session.key, {"action": "remember", "title": "T", "body": "B"}))
    (record,) = [
        r for r in rt.agent_memory.store("default")._db.execute("SELECT id, content_hash FROM records")
    ]
    params = {
        "identity": "lead",
        "memory_id": record[0],
        "verdict": "tombstone",
        "expected_content_hash": record[1],
    }
    denied = _rpc(client, "meta/memory/quarantine/decide", params, READER).json()["error"]
    assert denied["data"]["action"] == "agent.memory.delete"  # tombstone needs delete; rita has write
    claimed = _rpc(client, "meta/memory/quarantine/decide", {**params, "reviewer": "mallory"}, ADMIN).json()
    assert claimed["error"]["code"] == -32602 and "unknown param 'reviewer'" in claimed["error"]["message"]
    decided = _rpc(client, "meta/memory/quarantine/decide", params, ADMIN).json()
    assert decided["result"]["decision"]["review"]["reviewer"] == {"kind": "console", "principal": "root"}


def test_the_timeline_shows_a_caller_only_events_it_may_read(served: tuple[MetaRuntime, TestClient]) -> None:
    rt, client = served
    rt.events.emit("memory.taint.transition", {"identity": "lead"}, identity="lead")
    rt.events.emit("memory.taint.transition", {"identity": "ghost"}, identity="ghost")
    seen = _rpc(client, "meta/timeline/query", {}, READER).json()["result"]["events"]
    assert [e["identity"] for e in seen] == ["lead"]
    assert len(_rpc(client, "meta/timeline/query", {}, ADMIN).json()["result"]["events"]) == 2


def test_the_python_builder_declares_a_roster_and_a_roster_provider(tmp_path: Path) -> None:
    from meta_memory import Meta
    from meta_memory.config import RosterEntry

    def provider(identity: str) -> RosterEntry | None:
        return RosterEntry(identity=identity, role="lead") if identity == "late:joiner" else None

    builder = Meta.builder().persistent_state(tmp_path / "state").agent_memory()
    with builder.roster({"identity": "lead", "mob": "ops"}).roster_provider(provider).build() as meta:
        roster = meta.runtime.access.roster if meta.runtime.access is not None else None
        assert roster is not None
        assert roster.attributes("lead").mob == "ops"
        assert roster.attributes("late:joiner").role == "lead"
        assert roster.attributes("stranger") is None
