"""The method on the wire: console surface only, params refused with -32602, unknown records -32001,
read-only consoles -32010 (and the method left out of their capabilities), and ``POST /console/rpc``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from meta_memory.clock import ManualClock
from meta_memory.config import DEFAULT_CONFIG, load_config_dict
from meta_memory.errors import MetaError
from meta_memory.gateway.dispatch import CONSOLE, CallContext
from meta_memory.gateway.http import build_app
from meta_memory.gateway.methods import build_dispatcher
from meta_memory.memory.params import parse_remember
from meta_memory.memory.records import Status
from meta_memory.runtime import MetaRuntime

DECIDE = "meta/memory/quarantine/decide"
HASH = "ab" * 32


def base_params(**overrides: Any) -> dict[str, Any]:
    params: dict[str, Any] = {
        "identity": "lead",
        "memory_id": "mem-x",
        "verdict": "release",
        "expected_content_hash": HASH,
    }
    params.update(overrides)
    return {k: v for k, v in params.items() if v is not None}


@pytest.mark.parametrize(
    ("params", "fragment"),
    [
        (base_params(expected_content_hash=None), "expected_content_hash"),
        (base_params(expected_content_hash=""), "expected_content_hash"),
        (base_params(expected_content_hash="zz" * 32), "expected_content_hash"),
        (base_params(expected_content_hash="AB" * 32), "expected_content_hash"),
        (base_params(expected_content_hash="ab" * 31), "expected_content_hash"),
        (base_params(expected_content_hash=HASH + "\n"), "expected_content_hash"),
        (base_params(expected_content_hash=7), "expected_content_hash"),
        (base_params(verdict="hold"), "verdict"),
        (base_params(verdict="RELEASE"), "verdict"),
        (base_params(verdict=None), "verdict"),
        (base_params(identity=None), "identity"),
        (base_params(identity=""), "identity"),
        (base_params(memory_id=None), "memory_id"),
        (base_params(memory_id="  "), "memory_id"),
        (base_params(rationale="x" * 4097), "rationale"),
        (base_params(rationale="é" * 2049), "rationale"),
        (base_params(rationale=5), "rationale"),
        (base_params(realm=""), "realm"),
        ([], "params"),
        (None, "params"),
    ],
)
def test_bad_params_are_refused_with_invalid_params_naming_the_param(desk, params, fragment) -> None:
    with pytest.raises(MetaError) as refused:
        desk.call(DECIDE, params)

    assert refused.value.code == -32602
    assert fragment in refused.value.message


def test_a_rationale_of_exactly_4096_bytes_is_accepted(desk) -> None:
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")

    assert desk.decide(origin.id, "release", rationale="x" * 4096)["outcome"] == "released"


@pytest.mark.parametrize("where", ["unknown id", "another identity", "another realm"])
def test_a_record_unknown_to_this_identity_and_realm_is_unknown_memory_record(desk, where) -> None:
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    memory_id, kwargs = origin.id, {}
    if where == "unknown id":
        memory_id = "mem-nope"
    elif where == "another identity":
        kwargs = {"identity": "bob"}
    else:
        kwargs = {"realm": "elsewhere"}

    with pytest.raises(MetaError) as refused:
        desk.decide(memory_id, "release", expected=origin.content_hash, **kwargs)

    assert (refused.value.code, refused.value.message) == (-32001, f"unknown memory record '{memory_id}'")
    assert refused.value.data is None
    assert desk.record(origin.id).status is Status.QUARANTINED


def test_the_method_does_not_exist_on_the_sdk_surface(desk) -> None:
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    params = {
        "identity": "lead",
        "memory_id": origin.id,
        "verdict": "release",
        "expected_content_hash": origin.content_hash,
    }

    with pytest.raises(MetaError) as refused:
        desk.meta.call(DECIDE, params)

    assert (refused.value.code, refused.value.message) == (-32601, "Method not found")
    assert DECIDE not in desk.meta.call("meta/capabilities")["methods"]
    assert DECIDE in desk.call("meta/capabilities", None)["methods"]
    assert desk.record(origin.id).status is Status.QUARANTINED


@pytest.fixture
def read_only(tmp_path: Path, clock: ManualClock) -> Iterator[MetaRuntime]:
    config = load_config_dict({**DEFAULT_CONFIG, "console": {"read_only": True}})
    runtime = MetaRuntime.open(tmp_path / "read-only", config, clock=clock)
    yield runtime
    runtime.close()


def test_a_read_only_console_refuses_the_decision_and_does_not_advertise_it(read_only) -> None:
    dispatcher = build_dispatcher(read_only)
    store = read_only.agent_memory.store("default")
    record = read_only.agent_memory.remember(
        parse_remember(
            {"identity": "lead", "title": "Editor", "body": "Lead uses vim."}, default_realm="default"
        )
    )
    ctx = CallContext(CONSOLE)

    with pytest.raises(MetaError) as refused:
        dispatcher.call(DECIDE, base_params(memory_id=record.id), ctx)

    assert (refused.value.code, refused.value.message) == (-32010, "console is read-only")
    assert refused.value.data == {"kind": "read_only"}
    assert DECIDE not in dispatcher.call("meta/capabilities", None, ctx)["methods"]
    assert len(store.audit_rows()) == 1


def test_the_console_http_route_decides_and_the_sdk_http_route_does_not_know_the_method(desk) -> None:
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    params = {
        "identity": "lead",
        "memory_id": origin.id,
        "verdict": "release",
        "expected_content_hash": origin.content_hash,
    }
    body = {"jsonrpc": "2.0", "id": 9, "method": DECIDE, "params": params}

    with TestClient(build_app(desk.meta.runtime), base_url="http://127.0.0.1:8765") as client:
        sdk = client.post("/rpc", json=body).json()
        console = client.post("/console/rpc", json=body).json()
        replay = client.post("/console/rpc", json=body).json()
        opposite = client.post(
            "/console/rpc", json={**body, "params": {**params, "verdict": "tombstone"}}
        ).json()

    assert (sdk["error"]["code"], sdk["error"]["message"]) == (-32601, "Method not found")
    assert console["id"] == 9 and console["result"]["outcome"] == "released"
    assert console["result"]["decision"]["review"]["reviewer"] == {"kind": "console", "principal": None}
    assert replay["result"]["outcome"] == "already_released"
    assert opposite["error"]["code"] == -32043
    assert opposite["error"]["data"]["kind"] == "memory_quarantine_review_refused"
    assert opposite["error"]["data"]["reason"] == "not_quarantined"


def test_without_agent_memory_the_method_is_not_advertised_and_unavailable(tmp_path: Path) -> None:
    with MetaRuntime.open(tmp_path / "bare", load_config_dict({})) as runtime:
        dispatcher = build_dispatcher(runtime)
        ctx = CallContext(CONSOLE)
        assert DECIDE not in dispatcher.call("meta/capabilities", None, ctx)["methods"]
        with pytest.raises(MetaError) as refused:
            dispatcher.call(DECIDE, base_params(), ctx)
    assert refused.value.code == -32004


def test_a_decision_in_a_named_realm_reviews_that_realms_file(desk) -> None:
    session = desk.meta.open_session("lead", realm="ops")
    session.memory_tool({"action": "remember", "title": "Runbook", "body": "The runbook lives in the wiki."})
    ops = desk.meta.runtime.agent_memory.store("ops")
    [origin_id] = [r["record_id"] for r in ops.audit_rows() if r["op"] == "create"]

    answer = desk.decide(origin_id, "release", realm="ops", expected=ops.get(origin_id).content_hash)

    assert answer["outcome"] == "released"
    assert ops.get(f"{origin_id}-released").status is Status.ACTIVE
    assert desk.store.get(f"{origin_id}-released") is None
    assert desk.events()[-1]["data"]["realm"] == "ops"
    assert [r.memory_id for r in desk.meta.recall_agent_memory("lead", realm="ops", selection="always")] == [
        f"{origin_id}-released"
    ]
