"""``meta/agent_memory/purge`` over HTTP: an application key confined to some realms purges
within them only, and the receipt names the key's subject as who purged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

PURGE = "meta/agent_memory/purge"


def test_an_application_key_purges_only_within_its_realms(http_gateway: Any, tmp_path: Path) -> None:
    from meta_memory.access import hash_token
    from meta_memory.config import DEFAULT_CONFIG

    tenant = "tenant-token"
    config = {
        **DEFAULT_CONFIG,
        "console": {"auth": {"tokens": [{"token_sha256": hash_token("ops-token"), "subject": "ops"}]}},
        "rpc": {
            "auth": {
                "tokens": [
                    {"token_sha256": hash_token(tenant), "subject": "tenant-a", "realms": ["tenant-a"]}
                ]
            }
        },
    }

    def rpc(client: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
        reply: dict[str, Any] = client.post(
            "/rpc",
            json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
            headers={"Authorization": f"Bearer {tenant}"},
        ).json()
        return reply

    with http_gateway(tmp_path / "state", config) as client:
        mine = rpc(
            client,
            "meta/agent_memory/remember",
            {"identity": "lead", "realm": "tenant-a", "title": "T", "body": "B."},
        )
        refused = rpc(client, PURGE, {"identity": "lead", "realm": "default", "all": True})
        assert refused["error"]["code"] == -32030, refused
        done = rpc(
            client, PURGE, {"identity": "lead", "realm": "tenant-a", "memory_id": mine["result"]["memory_id"]}
        )
        assert done["result"]["by"] == {"kind": "application", "principal": "tenant-a"}
        assert [r["memory_id"] for r in done["result"]["records"]] == [mine["result"]["memory_id"]]
