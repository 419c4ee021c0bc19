"""Quarantine leaves only through a reviewer: a promotion the steward staged (``promote_pending_gate``)
is decided on the console by a caller with ``memory.quarantine.review``, never through the
application surface (the in-process handle, stdio, ``POST /rpc``), and an authenticated caller is
the approver recorded. Each surface is the real one: the handle's dispatcher, a ``meta_gateway
stdio`` child with a model steward, the Starlette app with real tokens."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from meta_memory.clock import ManualClock
from meta_memory.config import load_config_dict
from meta_memory.errors import AccessDenied
from meta_memory.gateway.http import build_app
from meta_memory.runtime import MetaRuntime
from meta_memory.sdk import MetaHandle
from meta_memory.steward import DreamInput, DreamVerdicts
from meta_memory.steward.model import QuarantineVerdict

from ..conftest import StdioGateway, chat_completions_server

BODY = "The crew rotates on-call every Monday at 09:00 UTC."
APP_TOKEN, OPS_TOKEN, VIEWER_TOKEN, ROOT_TOKEN = "app-token", "ops-token", "viewer-token", "root-token"


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class StageEverything:
    """The steward's reviewer seam answered as a model might: every quarantined record it is shown
    is staged for the crew."""

    name = "stages-everything"

    def review(self, dream: DreamInput) -> DreamVerdicts:
        return DreamVerdicts(
            quarantine=tuple(
                QuarantineVerdict(item.record.id, "promote_pending_gate", "crew-wide", "crew")
                for item in dream.quarantined
            )
        )


def config(**extra: Any) -> dict[str, Any]:
    return {
        "memory": {"kind": "local_json"},
        "agent_memory": {"llm_writes": "quarantined", "steward": {"enabled": False}},
        "roster": [{"identity": "scout", "mob": "crew"}, {"identity": "lead", "mob": "crew"}],
        **extra,
    }


def stage(meta: MetaHandle) -> tuple[str, str]:
    """A session's LLM write (quarantined), then a dream that stages it: (record id, pending id)."""
    written = meta.open_session("scout", mob="crew").memory_tool(
        {"action": "remember", "title": "On-call rota", "body": BODY}
    )
    assert written.outcome == "quarantined"
    [outcome] = [o for o in meta.steward_dream()["outcomes"] if o["subject"] == "quarantine"]
    assert outcome["outcome"] == "gated", outcome
    return outcome["target"], outcome["pending_id"]


@contextmanager
def staged(tmp_path: Path, **extra: Any) -> Iterator[tuple[MetaHandle, str, str]]:
    runtime = MetaRuntime.open(
        tmp_path / "state",
        load_config_dict(config(**extra)),
        clock=ManualClock(),
        steward_reviewer=StageEverything(),
    )
    meta = MetaHandle(runtime)
    try:
        yield (meta, *stage(meta))
    finally:
        meta.close()


def assert_still_quarantined(meta: MetaHandle, record_id: str, reader: str | None = None) -> None:
    console = meta.console if reader is None else meta.console_as(reader)
    assert console.record(record_id)["record"]["status"]["status"] == "quarantined"
    assert console.call("meta/memory/panel/records", {"scope": "mob"})["records"] == []
    text, injected = meta.open_session("scout", mob="crew").turn("When does the on-call rota rotate?")
    assert BODY not in text and injected == []  # nothing injected


@pytest.mark.parametrize("verdict", ["approve", "reject", "escalate"])
def test_the_in_process_handle_cannot_decide_a_staged_promotion(tmp_path: Path, verdict: str) -> None:
    with staged(tmp_path) as (meta, record_id, pending_id):
        with pytest.raises(AccessDenied) as refused:
            meta.gating_decide(pending_id, "ops:alice", verdict)
        assert refused.value.data == {
            "kind": "access_denied",
            "action": "memory.quarantine.review",
            "resource": pending_id,
        }
        assert meta.gating_pending() == []  # the application surface is not shown what it cannot decide
        assert [p["pending_id"] for p in meta.console.call("meta/gating/pending")["pending"]] == [pending_id]
        assert_still_quarantined(meta, record_id)


def test_the_in_process_console_decides_and_records_the_approver_it_names(tmp_path: Path) -> None:
    with staged(tmp_path) as (meta, record_id, pending_id):
        params = {"pending_id": pending_id, "approver_id": "ops:alice", "decision": "approve"}
        decided = meta.console.call("meta/gating/decide", params)  # no principal: the name as given
        assert (decided["approver_id"], decided["outcome"]) == ("ops:alice", "allowed")
        mob = meta.console.call("meta/memory/panel/records", {"scope": "mob"})["records"]
        assert [r["title"] for r in mob] == ["On-call rota"]
        assert meta.console.record(record_id)["record"]["status"]["status"] == "tombstoned"


def test_a_stdio_gateway_cannot_decide_what_its_model_steward_staged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def respond(body: dict[str, Any]) -> tuple[int, bytes]:
        dream = json.loads(body["messages"][1]["content"])
        verdicts = [
            {
                "record_id": q["id"],
                "verdict": "promote_pending_gate",
                "rationale": "all",
                "target_mob": "crew",
            }
            for q in dream["quarantined"]
        ]
        content = json.dumps({"quarantine_verdicts": verdicts})
        return 200, json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]}).encode()

    (tmp_path / "gateway.toml").write_text(
        '[memory]\nkind = "local_json"\n[agent_memory]\nllm_writes = "quarantined"\n[agent_memory.steward]\nenabled = false\n'
        'model = "judge"\n[[roster]]\nidentity = "scout"\nmob = "crew"\n'
    )
    state = tmp_path / "state"
    with chat_completions_server(respond, []) as url:
        monkeypatch.setenv("META_STEWARD_BASE_URL", url)
        gateway = StdioGateway(
            ["--state-dir", str(state), "--config", str(tmp_path / "gateway.toml")], tmp_path / "stderr.log"
        )
        try:
            key = gateway.result("meta/session/open", {"identity": "scout", "mob": "crew"})["session_key"]
            remember = {"action": "remember", "title": "On-call rota", "body": BODY}
            gateway.result("meta/session/memory_tool", {"session_key": key, "arguments": remember})
            report = gateway.result("meta/memory/steward/dream", {"realm": "default"})
            [gated] = [o for o in report["outcomes"] if o["outcome"] == "gated"]
            decide = {"pending_id": gated["pending_id"], "approver_id": "ops:alice", "decision": "approve"}
            error = gateway.request("meta/gating/decide", decide)["error"]
            assert (error["code"], error["data"]["action"]) == (-32030, "memory.quarantine.review")
            assert gateway.result("meta/gating/pending") == {"pending": []}
        finally:
            gateway.close()
    with MetaHandle(MetaRuntime.open(state, load_config_dict(config()))) as meta:
        assert_still_quarantined(meta, gated["target"])


# -- over HTTP, with tokens -------------------------------------------------------------------------


def http_config() -> dict[str, Any]:
    return config(
        rpc={"auth": {"tokens": [{"token_sha256": digest(APP_TOKEN), "subject": "app"}]}},
        console={
            "auth": {
                "tokens": [
                    {"token_sha256": digest(OPS_TOKEN), "subject": "ops"},
                    {"token_sha256": digest(VIEWER_TOKEN), "subject": "viewer"},
                    {"token_sha256": digest(ROOT_TOKEN), "subject": "root"},
                ]
            }
        },
        access={
            "enabled": True,
            "admins": ["root"],
            "rules": [
                {"id": "reviewers", "subjects": ["ops"], "actions": ["gating.*", "memory.quarantine.review"]},
                {"id": "gatekeepers", "subjects": ["viewer"], "actions": ["gating.*"]},
            ],
        },
    )


@contextmanager
def served(tmp_path: Path) -> Iterator[tuple[TestClient, MetaHandle, str, str]]:
    runtime = MetaRuntime.open(
        tmp_path / "state",
        load_config_dict(http_config()),
        clock=ManualClock(),
        steward_reviewer=StageEverything(),
    )
    meta = MetaHandle(runtime)
    try:
        record_id, pending_id = stage(meta)
        with TestClient(build_app(runtime), base_url="http://127.0.0.1:8765") as client:
            yield client, meta, record_id, pending_id
    finally:
        meta.close()


def call(client: TestClient, token: str, method: str, params: Any = None, *, console: bool = False) -> Any:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    path = "/console/rpc" if console else "/rpc"
    response = client.post(path, json=body, headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200, response.text
    return response.json()


@pytest.mark.parametrize("verdict", ["approve", "reject", "escalate"])
def test_the_application_token_cannot_decide_a_staged_promotion(tmp_path: Path, verdict: str) -> None:
    with served(tmp_path) as (client, meta, record_id, pending_id):
        params = {"pending_id": pending_id, "approver_id": "app", "decision": verdict}
        error = call(client, APP_TOKEN, "meta/gating/decide", params)["error"]
        assert error["code"] == -32030
        assert error["data"] == {
            "kind": "access_denied",
            "action": "memory.quarantine.review",
            "resource": pending_id,
        }
        assert call(client, APP_TOKEN, "meta/gating/pending")["result"] == {"pending": []}
        assert_still_quarantined(meta, record_id, reader="root")


def test_a_console_caller_without_the_review_grant_cannot_decide_or_see_a_promotion(tmp_path: Path) -> None:
    with served(tmp_path) as (client, meta, record_id, pending_id):
        params = {"pending_id": pending_id, "approver_id": "viewer", "decision": "approve"}
        error = call(client, VIEWER_TOKEN, "meta/gating/decide", params, console=True)["error"]
        assert (error["code"], error["data"]["action"]) == (-32030, "memory.quarantine.review")
        assert call(client, VIEWER_TOKEN, "meta/gating/pending", console=True)["result"] == {"pending": []}
        assert_still_quarantined(meta, record_id, reader="root")


def test_a_console_reviewer_approves_as_itself_and_no_one_else(tmp_path: Path) -> None:
    with served(tmp_path) as (client, meta, record_id, pending_id):
        listed = call(client, OPS_TOKEN, "meta/gating/pending", console=True)["result"]["pending"]
        assert [p["pending_id"] for p in listed] == [pending_id]
        posing = {"pending_id": pending_id, "approver_id": "ops:alice", "decision": "approve"}
        error = call(client, OPS_TOKEN, "meta/gating/decide", posing, console=True)["error"]
        assert (error["code"], error["data"]["reason"]) == (-32602, "approver_not_caller")
        assert "approver_id 'ops:alice'" in error["message"]
        assert_still_quarantined(meta, record_id, reader="root")

        decided = call(
            client, OPS_TOKEN, "meta/gating/decide", {**posing, "approver_id": "ops"}, console=True
        )
        assert (decided["result"]["approver_id"], decided["result"]["outcome"]) == ("ops", "allowed")
        audit = call(client, OPS_TOKEN, "meta/gating/audit", {"limit": 1}, console=True)["result"]["entries"]
        assert audit[-1]["detail"]["approver_id"] == "ops"
        mob = meta.console_as("root").call("meta/memory/panel/records", {"scope": "mob"})["records"]
        assert [r["title"] for r in mob] == ["On-call rota"]


def test_the_application_token_decides_ordinary_entries_only_as_its_own_subject(tmp_path: Path) -> None:
    with served(tmp_path) as (client, _, _, _):
        gate = {"action": "deploy", "actor_id": "lead", "risk_tier": "r3"}
        pending_id = call(client, APP_TOKEN, "meta/gating/evaluate", gate)["result"]["pending_id"]
        listed = call(client, APP_TOKEN, "meta/gating/pending")["result"]["pending"]
        assert [p["pending_id"] for p in listed] == [pending_id]
        posing = {"pending_id": pending_id, "approver_id": "ops:alice", "decision": "approve"}
        error = call(client, APP_TOKEN, "meta/gating/decide", posing)["error"]
        assert (error["code"], error["data"]["reason"]) == (-32602, "approver_not_caller")
        decided = call(client, APP_TOKEN, "meta/gating/decide", {**posing, "approver_id": "app"})["result"]
        assert (decided["approver_id"], decided["outcome"]) == ("app", "allowed")
