"""The HTTP transport in process (Starlette TestClient): routes, envelope rules, the two surfaces,
and a reload of the ledger and agent memory through a second app on the same state dir."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from meta_memory import CONTRACT_VERSION

Rpc = Callable[..., dict[str, Any]]
LEDGER_METHODS = ["meta/memory/index", "meta/memory/query", "meta/memory/stores"]
AGENT_MEMORY_METHODS = [
    "meta/agent_memory/forget",
    "meta/agent_memory/get",
    "meta/agent_memory/history",
    "meta/agent_memory/list",
    "meta/agent_memory/purge",
    "meta/agent_memory/recall",
    "meta/agent_memory/remember",
    "meta/agent_memory/update",
]
INVALID_REQUEST = {"code": -32600, "message": "Invalid Request"}


@pytest.fixture
def client(http_gateway: Callable[..., TestClient]) -> Iterator[TestClient]:
    with http_gateway() as client:
        yield client


def test_health_answers_200_ok(client: TestClient) -> None:
    response = client.get("/v1/health")
    assert (response.status_code, response.json()) == (200, {"status": "ok"})


def test_status_on_rpc_reports_contract_version_state_dir_and_features(
    client: TestClient, rpc: Rpc, tmp_path: Path
) -> None:
    reply = rpc(client, "meta/status", id="s")
    assert reply["id"] == "s"
    assert reply["result"]["contract_version"] == CONTRACT_VERSION
    assert reply["result"]["state_dir"] == str(tmp_path / "state")
    assert reply["result"]["features"] == {
        "ledger": {"persisted": True, "health_check": False},
        "agent_memory": {
            "enabled": True,
            "store": "sqlite",
            "realm": "default",
            "selection": "contextual",
            "llm_writes": "observed",
            "recall": "lexical",
            "embedding": None,
        },
    }


@pytest.mark.parametrize("method", LEDGER_METHODS)
def test_the_ledger_methods_exist_on_rpc_only_and_are_not_found_on_console_rpc(
    client: TestClient, rpc: Rpc, method: str
) -> None:
    params = {"entity": "e", "topic": "t", "fact": "f"} if method.endswith("index") else None
    assert "result" in rpc(client, method, params)
    assert rpc(client, method, params, path="/console/rpc")["error"] == {
        "code": -32601,
        "message": "Method not found",
        "data": {"detail": f"no method {method!r} here (rpc.discover lists them)"},
    }


GATING_METHODS = ["meta/gating/evaluate", "meta/gating/decide", "meta/gating/pending", "meta/gating/audit"]
PANEL_METHODS = [
    f"meta/memory/panel/{verb}"
    for verb in (
        "records",
        "record",
        "quarantine",
        "dreams",
        "dream_runs",
        "audit_verdicts",
        "overview",
        "proposals",
        "proposal",
        "injections",
        "harvests",
    )
]


def test_capabilities_list_the_methods_of_each_surface(client: TestClient, rpc: Rpc) -> None:
    sdk = rpc(client, "meta/capabilities")["result"]["methods"]
    console = rpc(client, "meta/capabilities", path="/console/rpc")["result"]["methods"]
    sessions = [
        f"meta/session/{verb}"
        for verb in (
            "open",
            "build_context",
            "turn",
            "tool_result",
            "peer_message",
            "memory_tool",
            "reset",
            "compact",
            "close",
            "tool_definitions",
        )
    ]
    assert sorted(sdk) == sorted(
        [
            *LEDGER_METHODS,
            *AGENT_MEMORY_METHODS,
            *sessions,
            *GATING_METHODS,
            "meta/agent_memory/propose",  # the application's proposals (SDK only)
            "meta/capabilities",
            "meta/status",
            "meta/timeline/query",
            "meta/memory/steward/dream",
            "meta/storage/doctor",
            "rpc.discover",
        ]
    )
    assert sorted(console) == sorted(
        [
            *AGENT_MEMORY_METHODS,
            *GATING_METHODS[1:],  # evaluate is an SDK call
            "meta/memory/quarantine/decide",
            "meta/memory/proposals/decide",
            "meta/memory/audit_verdicts/resolve",
            *PANEL_METHODS,  # console only
            "meta/capabilities",
            "meta/status",
            "meta/timeline/query",
            "meta/memory/steward/dream",
            "meta/storage/doctor",
            "rpc.discover",
        ]
    )


def test_agent_memory_is_served_on_both_surfaces(client: TestClient, rpc: Rpc) -> None:
    note = {"identity": "lead:main", "title": "Deploys", "body": "Deploys need ops approval."}
    made = rpc(client, "meta/agent_memory/remember", note, path="/console/rpc")["result"]
    recalled = rpc(client, "meta/agent_memory/recall", {"identity": "lead:main", "selection": "always"})[
        "result"
    ]
    assert [r["memory_id"] for r in recalled["records"]] == [made["memory_id"]]


def test_a_notification_gets_204_with_an_empty_body(client: TestClient) -> None:
    response = client.post("/rpc", json={"jsonrpc": "2.0", "method": "meta/memory/index", "params": {}})
    assert (response.status_code, response.content) == (204, b"")


def test_a_body_over_4_mib_is_http_413_and_an_invalid_request_declared_or_streamed(
    client: TestClient,
) -> None:
    json_type = {"content-type": "application/json"}
    declared = client.post("/rpc", content=b" " * (4 * 1024 * 1024 + 1), headers=json_type)
    streamed = client.post("/rpc", content=iter([b" " * (1024 * 1024)] * 5), headers=json_type)  # chunked
    for response in (declared, streamed):
        assert response.status_code == 413
        body = response.json()
        assert body["error"]["data"] == {"detail": f"request exceeds {4 * 1024 * 1024} bytes"}
        assert body["id"] is None and {k: body["error"][k] for k in ("code", "message")} == INVALID_REQUEST
    assert client.get("/v1/health").status_code == 200


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{not json", -32700),
        (b'{"jsonrpc": "2.0", "id": NaN, "method": "meta/status"}', -32700),
        (b'[{"jsonrpc": "2.0", "id": 1, "method": "meta/status"}]', -32600),
        (b"42", -32600),
        (b'{"jsonrpc": "1.0", "id": 1, "method": "meta/status"}', -32600),
        (b'{"jsonrpc": "2.0", "id": 1e400, "method": "meta/status"}', -32600),
    ],
    ids=["parse", "nan-id", "batch", "non-object", "wrong-version", "overflowing-id"],
)
def test_envelope_errors_are_json_rpc_errors_with_http_200(
    client: TestClient, body: bytes, code: int
) -> None:
    response = client.post("/rpc", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 200
    assert response.json()["error"]["code"] == code
    assert "Traceback" not in response.text


def test_a_restarted_app_on_the_same_state_dir_reloads_the_ledger_and_agent_memory(
    http_gateway: Callable[..., TestClient], rpc: Rpc, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    with http_gateway(state) as first:
        indexed = rpc(first, "meta/memory/index", {"entity": "Deploy", "topic": "window", "fact": "Tuesdays"})
        rpc(first, "meta/memory/index", {"entity": "deploy", "topic": "window", "conflict": True}, id=2)
        note = rpc(
            first, "meta/agent_memory/remember", {"identity": "a", "title": "T", "body": "Kept body."}, id=3
        )
    with http_gateway(state) as second:  # the first app's shutdown released the state dir
        query = rpc(second, "meta/memory/query", {"topic": "WINDOW"})["result"]
        assert [a["assertion_id"] for a in query["assertions"]] == [indexed["result"]["assertion_id"]]
        assert [(c["entity"], c["reason"]) for c in query["conflicts"]] == [("deploy", None)]
        recalled = rpc(second, "meta/agent_memory/recall", {"identity": "a", "selection": "always"})["result"]
        assert [r["memory_id"] for r in recalled["records"]] == [note["result"]["memory_id"]]
        stores = rpc(second, "meta/memory/stores")["result"]["stores"]
        assert stores[0] == {"store": "knowledge_graph", "record_count": 2}


def test_without_agent_memory_its_methods_answer_32004_and_are_hidden_from_capabilities(
    http_gateway: Callable[..., TestClient], rpc: Rpc
) -> None:
    with http_gateway(config={"memory": {"kind": "local_json"}}) as client:
        methods = rpc(client, "meta/capabilities")["result"]["methods"]
        assert not set(AGENT_MEMORY_METHODS) & set(methods)
        assert set(LEDGER_METHODS) <= set(methods)
        full = {"identity": "a", "title": "t", "body": "b", "memory_id": "m"}
        taken = {
            "meta/agent_memory/recall": {"identity"},
            "meta/agent_memory/list": {"identity"},
            "meta/agent_memory/remember": {"identity", "title", "body"},
        }
        for method in AGENT_MEMORY_METHODS:
            keys = taken.get(
                method,
                {"identity", "title", "body", "memory_id"}
                if method.endswith("update")
                else {"identity", "memory_id"},
            )
            reply = rpc(client, method, {k: v for k, v in full.items() if k in keys})
            assert reply["error"]["code"] == -32004
        assert rpc(client, "meta/status")["result"]["features"]["agent_memory"]["enabled"] is False
