"""The MCP server object in process, through the SDK's in-memory ``Client``: the configurations a
subprocess test would spend a server start on."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp import Client, types
from mcp.shared.exceptions import MCPError

from meta_memory.config import load_config_dict
from meta_memory.errors import ConfigError
from meta_memory.mcp_server import MemoryMcpServer, context_uri
from meta_memory.runtime import MetaRuntime
from meta_memory.sdk import MetaHandle

DEADLINE_S = 30.0


@pytest.mark.anyio
async def test_recorder_tool_off_lists_no_tool_and_refuses_a_call_but_serves_the_block(
    tmp_path: Path,
) -> None:
    config = load_config_dict({"agent_memory": {"recorder_tool": False}})
    with MetaRuntime.open(tmp_path / "state", config) as runtime:
        mcp_server = MemoryMcpServer(MetaHandle(runtime), "alice")
        try:
            with anyio.fail_after(DEADLINE_S):
                async with Client(mcp_server.server) as client:
                    listed = await client.list_tools()
                    with pytest.raises(MCPError) as caught:
                        await client.call_tool("memory", {"action": "recall"})
                    read = await client.read_resource(context_uri("alice"))
        finally:
            mcp_server.close()

    assert listed.tools == []
    assert caught.value.code == -32004 and "recorder_tool" in caught.value.message
    [contents] = read.contents
    assert isinstance(contents, types.TextResourceContents)
    assert contents.text.startswith("There is no agent memory for alice")


def test_a_runtime_without_agent_memory_is_refused(tmp_path: Path) -> None:
    with (
        MetaRuntime.open(tmp_path / "state", load_config_dict({})) as runtime,
        pytest.raises(ConfigError, match="agent memory is not enabled"),
    ):
        MemoryMcpServer(MetaHandle(runtime), "alice")


def test_the_context_uri_percent_encodes_the_identity() -> None:
    assert context_uri("lead:main") == "memory://lead%3Amain/context"
    assert context_uri("team/ops bot") == "memory://team%2Fops%20bot/context"
