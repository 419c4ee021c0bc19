"""The `memory` recorder tool an agent uses to write and recall its own memory: the tool's input schema and
provider tool shapes (:mod:`.schema`) and the parsing of an LLM's call into a :class:`ToolCall`
(:mod:`.arguments`). Running a parsed call against the store, the write gate and the confirmation text
belong to the host session, not to this package.
"""

from __future__ import annotations

from .arguments import ToolArgumentError, ToolCall, parse_memory_tool_arguments
from .schema import (
    MEMORY_TOOL_DESCRIPTION,
    MEMORY_TOOL_FIELDS,
    MEMORY_TOOL_NAME,
    OPERATOR_SAID_TAG,
    Epistemic,
    MemoryAction,
    anthropic_tool,
    mcp_tool_definition,
    memory_tool_input_schema,
    openai_responses_tool,
    openai_tool,
)

__all__ = [
    "MEMORY_TOOL_DESCRIPTION",
    "MEMORY_TOOL_FIELDS",
    "MEMORY_TOOL_NAME",
    "OPERATOR_SAID_TAG",
    "Epistemic",
    "MemoryAction",
    "ToolArgumentError",
    "ToolCall",
    "anthropic_tool",
    "mcp_tool_definition",
    "memory_tool_input_schema",
    "openai_responses_tool",
    "openai_tool",
    "parse_memory_tool_arguments",
]
