"""One ``meta_gateway mcp`` process on the built-in default config (``llm_writes = "observed"``): the
published tool, the remember / recall round trip, tool errors, the memory block as prompt and resource,
and the start-up warning that taint cannot be observed over MCP."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from mcp import types
from mcp.shared.exceptions import MCPError

from meta_memory.recorder.schema import mcp_tool_definition

pytestmark = pytest.mark.anyio

DEADLINE_S = 60.0


@pytest.fixture(scope="module")
async def server(tmp_path_factory: pytest.TempPathFactory, serve_mcp: Any) -> AsyncIterator[Any]:
    root = tmp_path_factory.mktemp("mcp-observed")
    async with serve_mcp(root / "state", stderr_path=root / "stderr.log") as served:
        yield served


def _text(result: types.CallToolResult) -> str:
    [block] = result.content
    assert isinstance(block, types.TextContent)
    return block.text


async def test_tools_list_publishes_the_memory_tool_with_the_exact_schema(server: Any) -> None:
    with anyio.fail_after(DEADLINE_S):
        listed = await server.session.list_tools()

    [tool] = listed.tools
    assert tool.model_dump(by_alias=True, exclude_none=True) == mcp_tool_definition()


async def test_remember_then_recall_round_trips_through_the_tool(server: Any) -> None:
    with anyio.fail_after(DEADLINE_S):
        stored = await server.session.call_tool(
            "memory",
            {"action": "remember", "title": "Deploy policy", "body": "Production deploys need ops approval."},
        )
        recalled = await server.session.call_tool(
            "memory", {"action": "recall", "query_text": "who approves production deploys?"}
        )

    assert stored.is_error is False
    assert _text(stored).startswith("Stored memory mem-") and "QUARANTINED" not in _text(stored)
    memory_id = _text(stored).removeprefix("Stored memory ").rstrip(".")
    assert recalled.is_error is False
    hits = json.loads(_text(recalled))
    assert [(h["memory_id"], h["title"], h["body"]) for h in hits] == [
        (memory_id, "Deploy policy", "Production deploys need ops approval.")
    ]


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"action": "remember", "titel": "Typo", "body": "b"}, "titel"),
        ({"action": "remember", "title": "No body"}, "body"),
        ({"action": "recall", "max_entries": 0}, "max_entries"),
        ({"action": "memorize"}, "action"),
    ],
    ids=["unknown-field", "missing-body", "max-entries-zero", "unknown-action"],
)
async def test_bad_arguments_come_back_as_a_tool_error_naming_the_field(
    server: Any, arguments: dict[str, object], named: str
) -> None:
    with anyio.fail_after(DEADLINE_S):
        result = await server.session.call_tool("memory", arguments)

    assert result.is_error is True
    assert named in _text(result)


async def test_an_unknown_tool_is_an_invalid_params_error(server: Any) -> None:
    with anyio.fail_after(DEADLINE_S), pytest.raises(MCPError) as caught:
        await server.session.call_tool("web_fetch", {"url": "https://example.com"})

    assert caught.value.code == types.INVALID_PARAMS
    assert "web_fetch" in caught.value.message


async def test_prompt_and_resource_carry_a_record_remembered_through_the_tool(server: Any) -> None:
    with anyio.fail_after(DEADLINE_S):
        stored = await server.session.call_tool(
            "memory",
            {"action": "remember", "title": "On-call rota", "body": "Mira covers the weekend pager."},
        )
        prompts = await server.session.list_prompts()
        prompt = await server.session.get_prompt("memory_context")
        resources = await server.session.list_resources()
        first = await server.session.read_resource(server.context_uri)
        again = await server.session.read_resource(server.context_uri)

    assert stored.is_error is False
    assert [p.name for p in prompts.prompts] == ["memory_context"]
    [message] = prompt.messages
    assert message.role == "user" and isinstance(message.content, types.TextContent)
    block = message.content.text
    assert f"identity `{server.identity}`" in block and "Mira covers the weekend pager." in block
    assert [(str(r.uri), r.mime_type) for r in resources.resources] == [(server.context_uri, "text/plain")]
    # Every read renders the whole block, not only what an earlier read has not shown yet.
    for read in (first, again):
        [contents] = read.contents
        assert isinstance(contents, types.TextResourceContents)
        assert "Mira covers the weekend pager." in contents.text


async def test_an_unknown_resource_or_prompt_is_an_invalid_params_error(server: Any) -> None:
    for request in (
        lambda: server.session.read_resource("memory://someone-else/context"),
        lambda: server.session.get_prompt("other_prompt"),
    ):
        with anyio.fail_after(DEADLINE_S), pytest.raises(MCPError) as caught:
            await request()
        assert caught.value.code == types.INVALID_PARAMS


async def test_start_warns_on_stderr_that_taint_cannot_be_observed_over_mcp(server: Any) -> None:
    stderr = server.stderr_text()

    [warning] = [line for line in stderr.splitlines() if "WARNING" in line]
    assert "taint cannot be observed over MCP" in warning
    assert 'llm_writes = "quarantined"' in warning
