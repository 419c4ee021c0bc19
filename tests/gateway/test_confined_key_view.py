"""What an application key confined to some realms (a tenant's) sees of the server itself: its
own API description, and the runtime's status without where the server keeps its state. An
unconfined key and the trusted channels keep the whole status."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from meta_memory import Meta
from meta_memory.access import hash_token
from meta_memory.access.keys import APP_KEY_SCOPE
from meta_memory.config import DEFAULT_CONFIG

TENANT, APP = "tenant-token", "app-token"
CONFIG: dict[str, Any] = {
    **DEFAULT_CONFIG,
    "rpc": {
        "auth": {
            "tokens": [
                {"token_sha256": hash_token(TENANT), "subject": "tenant-a", "realms": ["tenant-a"]},
                {"token_sha256": hash_token(APP), "subject": "app"},
            ]
        }
    },
    "console": {"auth": {"tokens": [{"token_sha256": hash_token("ops-token"), "subject": "ops"}]}},
}


@pytest.fixture
def client(http_gateway: Callable[..., TestClient], tmp_path: Path) -> Iterator[TestClient]:
    with http_gateway(tmp_path / "state", CONFIG) as client:
        yield client


def _call(client: TestClient, token: str, method: str) -> dict[str, Any]:
    response = client.post(
        "/rpc",
        json={"jsonrpc": "2.0", "id": 1, "method": method},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status_code == 200, response.text
    reply: dict[str, Any] = response.json()
    return reply


def test_a_confined_key_s_status_names_no_path_and_no_database_of_the_server(
    client: TestClient, tmp_path: Path
) -> None:
    status = _call(client, TENANT, "meta/status")["result"]
    assert "state_dir" not in status
    assert status["contract_version"] and status["features"]["agent_memory"]["enabled"] is True
    slots = status["storage"]["slots"]
    assert {s["domain"] for s in slots} >= {"agent_memory", "event_log"}
    assert all("detail" not in s for s in slots)
    capabilities = _call(client, TENANT, "meta/capabilities")["result"]
    assert all("detail" not in s for s in capabilities["storage"]["slots"])
    for answer in (status, capabilities):
        assert str(tmp_path) not in json.dumps(answer)


def test_an_unconfined_key_and_the_trusted_channel_keep_the_state_dir(
    client: TestClient, tmp_path: Path
) -> None:
    status = _call(client, APP, "meta/status")["result"]
    assert status["state_dir"] == str(tmp_path / "state")
    assert any("detail" in s for s in status["storage"]["slots"])
    with Meta.builder().persistent_state(tmp_path / "other").build() as meta:  # in process, like stdio
        assert meta.call("meta/status")["state_dir"] == str(tmp_path / "other")


def test_openrpc_json_for_a_confined_key_describes_the_methods_that_key_may_call(client: TestClient) -> None:
    response = client.get("/openrpc.json", headers={"Authorization": f"Bearer {TENANT}"})
    assert response.status_code == 200, response.text
    described = [m["name"] for m in response.json()["methods"]]
    assert described == sorted(_call(client, TENANT, "meta/capabilities")["result"]["methods"])
    assert set(described) <= set(APP_KEY_SCOPE)
    assert "meta/agent_memory/remember" in described and "meta/memory/index" not in described
    assert _call(client, TENANT, "rpc.discover")["result"]["methods"] == response.json()["methods"]
    unconfined = client.get("/openrpc.json", headers={"Authorization": f"Bearer {APP}"}).json()
    assert "meta/memory/index" in [m["name"] for m in unconfined["methods"]]
