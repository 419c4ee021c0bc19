"""Review outside the console: ``meta_gateway mcp --gateway`` writes through a running gateway (its
LLM writes quarantined), and ``meta_gateway review`` lists, shows and releases them, through the
gateway with a console token or directly on a state dir; the hash binding holds either way."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from meta_memory.client import MetaClient

from ..conftest import gateway_command
from .conftest import APP_TOKEN, CONSOLE_TOKEN, DEADLINE_S, Served, gateway_config, serve


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    base = tmp_path_factory.mktemp("review")
    yield from serve(base / "state", gateway_config(), base / "serve.log")


def review(*args: str, console_token: str | None = CONSOLE_TOKEN) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "META_CONSOLE_TOKEN"}
    if console_token is not None:
        env["META_CONSOLE_TOKEN"] = console_token
    return subprocess.run(
        [gateway_command(), "review", *args], capture_output=True, text=True, env=env, timeout=DEADLINE_S
    )


async def _remember_over_mcp(url: str, identity: str, tmp_path: Path, body: str) -> str:
    params = StdioServerParameters(
        command=gateway_command(),
        args=["mcp", "--gateway", url, "--identity", identity],
        env={**os.environ, "META_GATEWAY_TOKEN": APP_TOKEN},
    )
    with (tmp_path / "mcp.log").open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write, read_timeout_seconds=DEADLINE_S) as session,
        ):
            with anyio.fail_after(DEADLINE_S):
                await session.initialize()
                result = await session.call_tool(
                    "memory", {"action": "remember", "title": "Window", "body": body}
                )
    (content,) = result.content
    return str(getattr(content, "text", ""))


def _queued(listing: subprocess.CompletedProcess[str], identity: str) -> list[dict[str, Any]]:
    assert listing.returncode == 0, listing.stderr
    return [row for row in json.loads(listing.stdout) if row["scope_key"] == identity]


def test_an_mcp_server_on_a_gateway_writes_a_quarantined_record_that_review_releases(
    gateway: Served, tmp_path: Path
) -> None:
    identity = "mcp:writer"
    said = anyio.run(_remember_over_mcp, gateway.url, identity, tmp_path, "Deploys move to Fridays.")
    assert "quarantin" in said.lower()

    (row,) = _queued(review("list", "--gateway", gateway.url, "--json"), identity)
    shown = review("show", row["memory_id"], "--gateway", gateway.url, "--json")
    assert shown.returncode == 0, shown.stderr
    record = json.loads(shown.stdout)["record"]
    assert record["body"] == "Deploys move to Fridays."
    human = review("show", row["memory_id"], "--gateway", gateway.url)
    assert f"--hash {record['content_hash']}" in human.stdout

    stale = review("release", row["memory_id"], "--hash", "0" * 64, "--gateway", gateway.url)
    assert stale.returncode == 2 and "meta_gateway:" in stale.stderr and "hash" in stale.stderr.lower()

    released = review("release", row["memory_id"], "--hash", record["content_hash"], "--gateway", gateway.url)
    assert released.returncode == 0, released.stderr
    assert f"{row['memory_id']} released as " in released.stdout

    with MetaClient.connect(gateway.url, token=APP_TOKEN) as client:
        successor = client.get_agent_memory(identity, row["memory_id"]).successor
        assert successor is not None
        recalled = client.recall_agent_memory(identity, query_text="when do deploys happen?")
    assert [r.memory_id for r in recalled] == [successor]
    assert _queued(review("list", "--gateway", gateway.url, "--json"), identity) == []


def test_review_through_a_gateway_needs_the_console_token(gateway: Served) -> None:
    for token in (None, APP_TOKEN):
        refused = review("list", "--gateway", gateway.url, console_token=token)
        assert refused.returncode == 2
        assert "meta_gateway:" in refused.stderr and "Traceback" not in refused.stderr


def test_an_mcp_server_refuses_to_start_on_a_gateway_it_cannot_use(gateway: Served, tmp_path: Path) -> None:
    env = {**os.environ, "META_GATEWAY_TOKEN": "not-the-token"}
    run = subprocess.run(
        [gateway_command(), "mcp", "--gateway", gateway.url, "--identity", "x"],
        capture_output=True,
        text=True,
        env=env,
        timeout=DEADLINE_S,
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 2 and "meta_gateway:" in run.stderr and "Traceback" not in run.stderr
    both = subprocess.run(
        [gateway_command(), "mcp", "--gateway", gateway.url, "--state-dir", str(tmp_path), "--identity", "x"],
        capture_output=True,
        text=True,
        timeout=DEADLINE_S,
        stdin=subprocess.DEVNULL,
    )
    assert both.returncode == 2 and "exactly one of --state-dir" in both.stderr


def test_review_directly_on_a_state_dir_no_runtime_holds(tmp_path: Path) -> None:
    state = tmp_path / "state"
    config = {"memory": {"kind": "local_json"}, "agent_memory": {"llm_writes": "quarantined"}}
    config_path = tmp_path / "config.toml"
    from meta_memory.client.transport import toml_text

    config_path.write_text(toml_text(config))
    with MetaClient.spawn(state_dir=state, config=config_path) as client:
        session = client.open_session("lead")
        assert session.memory_tool(
            {"action": "remember", "title": "Keys", "body": "Rotate keys monthly."}
        ).outcome == ("quarantined")
        held = review("list", "--state-dir", str(state), "--config", str(config_path))
        assert held.returncode == 2 and "already serves state dir" in held.stderr

    where = ["--state-dir", str(state), "--config", str(config_path)]
    (row,) = _queued(review("list", *where, "--json"), "lead")
    record = json.loads(review("show", row["memory_id"], *where, "--json").stdout)["record"]
    discarded = review("discard", row["memory_id"], "--hash", record["content_hash"], *where, "--json")
    assert discarded.returncode == 0, discarded.stderr
    decision = json.loads(discarded.stdout)["decision"]
    assert decision["review"]["reviewer"]["principal"].startswith("local:")
    again = review("discard", row["memory_id"], "--hash", record["content_hash"], *where)
    assert again.returncode == 0 and "(already_tombstoned)" in again.stdout  # a replay changes nothing
    reversed_ = review("release", row["memory_id"], "--hash", record["content_hash"], *where)
    assert reversed_.returncode == 2 and "meta_gateway:" in reversed_.stderr
    assert _queued(review("list", *where, "--json"), "lead") == []
