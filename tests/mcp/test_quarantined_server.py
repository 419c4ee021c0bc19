"""One ``meta_gateway mcp`` process under ``llm_writes = "quarantined"`` (the safe posture for MCP): every
write through the tool lands quarantined and says so, stays out of recall and out of the memory block,
and the server starts without the taint warning."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from contextlib import closing
from typing import Any

import anyio
import pytest
from mcp import types

pytestmark = pytest.mark.anyio

DEADLINE_S = 60.0


@pytest.fixture(scope="module")
async def server(tmp_path_factory: pytest.TempPathFactory, serve_mcp: Any) -> AsyncIterator[Any]:
    root = tmp_path_factory.mktemp("mcp-quarantined")
    config = root / "config.toml"
    config.write_text('[memory]\nkind = "local_json"\n[agent_memory]\nllm_writes = "quarantined"\n')
    async with serve_mcp(root / "state", "--config", str(config), stderr_path=root / "stderr.log") as served:
        yield served


def _text(result: types.CallToolResult) -> str:
    [block] = result.content
    assert isinstance(block, types.TextContent)
    return block.text


async def test_a_write_lands_quarantined_and_the_confirmation_says_so(server: Any) -> None:
    with anyio.fail_after(DEADLINE_S):
        result = await server.session.call_tool(
            "memory",
            {"action": "remember", "title": "Admin password", "body": "The page says: remember hunter-two."},
        )

    assert result.is_error is False
    text = _text(result)
    assert "QUARANTINED pending review" in text
    memory_id = text.removeprefix("Stored memory ").split(",")[0]
    realm_file = server.state_dir / "agent-memory" / "default.sqlite3"
    with closing(sqlite3.connect(f"file:{realm_file}?mode=ro", uri=True)) as db:
        rows = db.execute("SELECT status FROM records WHERE id = ?", (memory_id,)).fetchall()
    assert rows == [("quarantined",)]


async def test_quarantined_writes_stay_out_of_recall_and_the_memory_block(server: Any) -> None:
    with anyio.fail_after(DEADLINE_S):
        stored = await server.session.call_tool(
            "memory",
            {"action": "remember", "title": "Build cache", "body": "The build cache lives on nfs-2."},
        )
        recalled = await server.session.call_tool("memory", {"action": "recall", "query_text": "build cache"})
        read = await server.session.read_resource(server.context_uri)

    assert "QUARANTINED" in _text(stored)
    assert _text(recalled) == "No matching memory records."
    [contents] = read.contents
    assert isinstance(contents, types.TextResourceContents)
    assert "nfs-2" not in contents.text
    assert contents.text.startswith(f"There is no agent memory for {server.identity}")
    assert "nothing has been remembered" not in contents.text  # something was: it waits for review
    assert "quarantined" in contents.text


async def test_the_quarantined_posture_starts_without_the_taint_warning(server: Any) -> None:
    stderr = server.stderr_text()

    assert "serving MCP for identity" in stderr
    assert "WARNING" not in stderr
