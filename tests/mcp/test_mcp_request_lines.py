"""``meta_gateway mcp`` writes no per-request log line unless asked (``--log-requests`` or
``--log-level debug``): its MCP client often pipes stderr and never reads it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

pytestmark = pytest.mark.anyio

DEADLINE_S = 60.0
REQUEST_LINE = "meta_memory.gateway.requests: mcp meta/session/memory_tool -> ok"


async def _two_tool_calls(serve_mcp: Any, root: Path, *flags: str) -> str:
    stderr_path = root / "stderr.log"
    async with serve_mcp(root / "state", *flags, stderr_path=stderr_path) as server:
        with anyio.fail_after(DEADLINE_S):
            for title in ("Deploys", "Builds"):
                body = f"{title} need an approval from ops."
                result = await server.session.call_tool(
                    "memory", {"action": "remember", "title": title, "body": body}
                )
                assert result.is_error is False
    return stderr_path.read_text(errors="replace")


@pytest.mark.parametrize(
    ("flags", "lines"),
    [((), 0), (("--log-requests",), 2), (("--log-level", "debug"), 2)],
    ids=["default", "flag", "debug"],
)
async def test_request_lines_are_written_only_when_asked(
    serve_mcp: Any, tmp_path: Path, flags: tuple[str, ...], lines: int
) -> None:
    stderr = await _two_tool_calls(serve_mcp, tmp_path, *flags)
    assert stderr.count(REQUEST_LINE) == lines, stderr
