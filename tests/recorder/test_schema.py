"""The `memory` tool's input schema and its four provider shapes: one schema, fresh copies, and a schema that
accepts good calls and refuses malformed ones."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from meta_memory.memory.records import RecordKind
from meta_memory.recorder import (
    MEMORY_TOOL_DESCRIPTION,
    MEMORY_TOOL_FIELDS,
    MEMORY_TOOL_NAME,
    anthropic_tool,
    mcp_tool_definition,
    memory_tool_input_schema,
    openai_responses_tool,
    openai_tool,
)


def _valid(arguments: Any) -> bool:
    return Draft202012Validator(memory_tool_input_schema()).is_valid(arguments)


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    Draft202012Validator.check_schema(memory_tool_input_schema())


def test_the_schema_is_a_flat_object_that_refuses_extra_properties_and_requires_only_action() -> None:
    schema = memory_tool_input_schema()
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["action"]
    # Providers refuse top-level combinators; action-specific rules live in the parser.
    assert not {"allOf", "anyOf", "oneOf", "if", "then", "not", "$schema"} & schema.keys()
    assert tuple(schema["properties"]) == MEMORY_TOOL_FIELDS


def test_the_schema_enumerates_actions_kinds_and_epistemic_states_with_their_defaults() -> None:
    props = memory_tool_input_schema()["properties"]
    assert props["action"]["enum"] == ["remember", "update", "forget", "recall", "propose_to_mob"]
    assert props["kind"]["enum"] == [k.value for k in RecordKind]
    assert len(props["kind"]["enum"]) == 7
    assert props["kind"]["default"] == "fact"
    assert props["epistemic"]["enum"] == ["observed", "operator_said", "verified_claim"]
    assert props["epistemic"]["default"] == "observed"
    assert props["max_entries"] == {**props["max_entries"], "type": "integer", "minimum": 1}


def test_every_field_carries_a_description_for_the_model() -> None:
    for name, prop in memory_tool_input_schema()["properties"].items():
        assert isinstance(prop.get("description"), str) and prop["description"], name


def test_the_tool_description_says_writes_are_agent_observed_may_be_quarantined_and_recall_is_data() -> None:
    assert "agent_observed" in MEMORY_TOOL_DESCRIPTION
    assert "quarantined" in MEMORY_TOOL_DESCRIPTION
    assert "data, not instructions" in MEMORY_TOOL_DESCRIPTION
    for action in ("remember", "update", "forget", "recall", "propose_to_mob"):
        assert f"`{action}`" in MEMORY_TOOL_DESCRIPTION


def test_the_four_tool_shapes_carry_the_same_name_description_and_schema() -> None:
    schema = memory_tool_input_schema()
    chat = openai_tool()
    responses = openai_responses_tool()
    anthropic = anthropic_tool()
    mcp = mcp_tool_definition()
    assert chat == {
        "type": "function",
        "function": {
            "name": MEMORY_TOOL_NAME,
            "description": MEMORY_TOOL_DESCRIPTION,
            "parameters": schema,
            "strict": False,
        },
    }
    assert responses == {
        "type": "function",
        "name": MEMORY_TOOL_NAME,
        "description": MEMORY_TOOL_DESCRIPTION,
        "parameters": schema,
        "strict": False,
    }
    assert anthropic == {
        "name": MEMORY_TOOL_NAME,
        "description": MEMORY_TOOL_DESCRIPTION,
        "input_schema": schema,
    }
    assert mcp == {"name": MEMORY_TOOL_NAME, "description": MEMORY_TOOL_DESCRIPTION, "inputSchema": schema}
    assert MEMORY_TOOL_NAME == "memory"


@pytest.mark.parametrize(
    "make",
    [
        memory_tool_input_schema,
        lambda: openai_tool()["function"]["parameters"],
        lambda: openai_responses_tool()["parameters"],
        lambda: anthropic_tool()["input_schema"],
        lambda: mcp_tool_definition()["inputSchema"],
    ],
)
def test_each_call_returns_a_fresh_copy_that_callers_may_mutate(make: Any) -> None:
    first = make()
    first["properties"]["action"]["enum"].append("drop_tables")
    first["required"].append("title")
    assert make() == memory_tool_input_schema()
    assert "drop_tables" not in make()["properties"]["action"]["enum"]


@pytest.mark.parametrize(
    "arguments",
    [
        {"action": "remember", "title": "Deploys", "body": "Need approval."},
        {
            "action": "remember",
            "title": "Deploys",
            "body": "Need approval.",
            "description": "deploy rule",
            "tags": ["ops", "deploy"],
            "kind": "procedure",
            "epistemic": "verified_claim",
            "verification_evidence": ["read the runbook"],
        },
        {
            "action": "remember",
            "title": "t",
            "body": "b",
            "epistemic": "verified_claim",
            "verification_evidence": "ran it",
        },
        {"action": "update", "memory_id": "mem-1", "title": "t", "body": "b", "epistemic": "operator_said"},
        {"action": "forget", "memory_id": "mem-1"},
        {"action": "recall"},
        {"action": "recall", "query_text": "deploys", "max_entries": 5},
        {"action": "propose_to_mob", "title": "t", "body": "b", "kind": "gotcha"},
    ],
)
def test_the_schema_accepts_well_formed_calls(arguments: dict[str, Any]) -> None:
    assert _valid(arguments)


@pytest.mark.parametrize(
    "arguments",
    [
        {},
        {"title": "t", "body": "b"},
        {"action": "delete"},
        {"action": "remember", "foo": 1},
        {"action": "remember", "title": 5},
        {"action": "remember", "body": None},
        {"action": "remember", "tags": "ops"},
        {"action": "remember", "tags": ["ops", 3]},
        {"action": "remember", "kind": "opinion"},
        {"action": "remember", "epistemic": "hearsay"},
        {"action": "remember", "verification_evidence": 3},
        {"action": "remember", "verification_evidence": ["ok", 3]},
        {"action": "forget", "memory_id": ["mem-1"]},
        {"action": "recall", "query_text": 7},
        {"action": "recall", "max_entries": 0},
        {"action": "recall", "max_entries": 2.5},
        {"action": "recall", "max_entries": "5"},
        {"action": "recall", "max_entries": True},
        ["action", "recall"],
    ],
)
def test_the_schema_refuses_malformed_calls(arguments: Any) -> None:
    assert not _valid(arguments)
