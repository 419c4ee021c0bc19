"""The public surface of the recorder package is pinned."""

from __future__ import annotations

import meta_memory.recorder as recorder
from meta_memory.errors import MetaError


def test_recorder_package_exports_exactly_its_public_api() -> None:
    assert sorted(recorder.__all__) == [
        "Epistemic",
        "MEMORY_TOOL_DESCRIPTION",
        "MEMORY_TOOL_FIELDS",
        "MEMORY_TOOL_NAME",
        "MemoryAction",
        "OPERATOR_SAID_TAG",
        "ToolArgumentError",
        "ToolCall",
        "anthropic_tool",
        "mcp_tool_definition",
        "memory_tool_input_schema",
        "openai_responses_tool",
        "openai_tool",
        "parse_memory_tool_arguments",
    ]
    assert all(hasattr(recorder, name) for name in recorder.__all__)


def test_tool_argument_error_is_not_a_meta_error_so_it_never_becomes_a_wire_error() -> None:
    assert not issubclass(recorder.ToolArgumentError, MetaError)
    assert recorder.ToolArgumentError("title must be a string").message == "title must be a string"
