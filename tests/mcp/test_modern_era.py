"""The SDK serves two protocol eras on one stdio server; a 2026-07-28 client (``server/discover``, no
``initialize`` handshake) gets the same tool, tool results and memory block as a handshake client."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import types

from meta_memory.recorder.schema import mcp_tool_definition

DEADLINE_S = 60.0


@pytest.mark.anyio
async def test_a_discover_client_gets_the_tool_and_the_memory_block(serve_mcp: Any, tmp_path: Path) -> None:
    async with serve_mcp(tmp_path / "state", modern=True, stderr_path=tmp_path / "stderr.log") as server:
        with anyio.fail_after(DEADLINE_S):
            listed = await server.session.list_tools()
            stored = await server.session.call_tool(
                "memory", {"action": "remember", "title": "Standup", "body": "Standup is at 09:30 CET."}
            )
            read = await server.session.read_resource(server.context_uri)

    [tool] = listed.tools
    assert tool.model_dump(by_alias=True, exclude_none=True) == mcp_tool_definition()
    assert stored.is_error is False
    [contents] = read.contents
    assert isinstance(contents, types.TextResourceContents)
    assert "Standup is at 09:30 CET." in contents.text
    # The block changes with every write: it must never be served as cacheable.
    assert read.ttl_ms == 0
