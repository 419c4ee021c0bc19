"""Fixtures for the MCP server tests: the real ``meta_gateway mcp`` process, driven by the official
``mcp`` client library over stdio. Every request is bounded (``anyio.fail_after`` in the tests, the
session's read timeout underneath) and the server's stderr goes to a file the tests read."""

from __future__ import annotations

import shutil
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

# Generous: the interpreter alone takes a second or two to import everything on a busy machine.
DEADLINE_S = 60.0

ServeMcp = Callable[..., AbstractAsyncContextManager["McpServer"]]


def _gateway_command() -> list[str]:
    """The installed console script of *this* interpreter (not a shim), else the same entry point."""
    beside = Path(sys.executable).with_name("meta_gateway")
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("meta_gateway")
    return [found] if found else [sys.executable, "-c", "from meta_memory.cli import main; main()"]


@dataclass(frozen=True)
class McpServer:
    """A connected, initialized client session on one ``meta_gateway mcp`` process."""

    session: ClientSession
    identity: str
    state_dir: Path
    stderr_path: Path

    @property
    def context_uri(self) -> str:
        return f"memory://{self.identity.replace(':', '%3A')}/context"

    def stderr_text(self) -> str:
        return self.stderr_path.read_text(errors="replace")


@asynccontextmanager
async def _serve_mcp(
    state_dir: Path,
    *extra_args: str,
    identity: str = "lead:main",
    modern: bool = False,
    stderr_path: Path,
) -> AsyncIterator[McpServer]:
    command, *prefix = _gateway_command()
    params = StdioServerParameters(
        command=command,
        args=[*prefix, "mcp", "--state-dir", str(state_dir), "--identity", identity, *extra_args],
    )
    with stderr_path.open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write, read_timeout_seconds=DEADLINE_S) as session,
        ):
            with anyio.fail_after(DEADLINE_S):
                if modern:  # the 2026-07-28 era: server/discover, no initialize handshake
                    await session.discover()
                else:
                    await session.initialize()
            yield McpServer(session, identity, state_dir, stderr_path)


@pytest.fixture(scope="session")
def serve_mcp() -> ServeMcp:
    """``async with serve_mcp(state_dir, "--config", path, stderr_path=...) as server:`` starts
    ``meta_gateway mcp`` and initializes a client session on it (``modern=True``: by ``server/discover``);
    leaving the block closes the server's stdin (its clean shutdown), as MCP clients do."""
    return _serve_mcp


@pytest.fixture(scope="session")
def gateway_argv() -> list[str]:
    return _gateway_command()


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    # Module scope, so one server process can serve every test of a module.
    return "asyncio"
