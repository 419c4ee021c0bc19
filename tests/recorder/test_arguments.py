"""Parsing the `memory` tool's arguments: every action and its required fields, unknown fields, type errors,
byte caps at and one past the limit, JSON-string arguments and the epistemic rules. Every refusal is a
ToolArgumentError whose message is one sentence naming the field."""

from __future__ import annotations

import json
from typing import Any

import pytest

from meta_memory.memory.records import RecordKind
from meta_memory.recorder import (
    MEMORY_TOOL_FIELDS,
    Epistemic,
    MemoryAction,
    ToolArgumentError,
    ToolCall,
    parse_memory_tool_arguments,
)

# Fake secrets are assembled from fragments so no provider-shaped literal sits in the source.
AWS_KEY = "AK" + "IA" + "IOSFODNN7EXAMPLE"
WRITE = {"title": "Deploys", "body": "Deploys need approval."}


def _refusal(arguments: object) -> str:
    with pytest.raises(ToolArgumentError) as info:
        parse_memory_tool_arguments(arguments)
    assert str(info.value) == info.value.message
    return info.value.message


# -- actions and their required fields ------------------------------------------------------------


@pytest.mark.parametrize("action", ["remember", "update", "propose_to_mob"])
@pytest.mark.parametrize("missing", ["title", "body"])
@pytest.mark.parametrize("blank", [None, "", "   \n\t"])
def test_write_actions_require_a_non_blank_title_and_body(
    action: str, missing: str, blank: str | None
) -> None:
    arguments = {"action": action, "memory_id": "mem-1", **WRITE}
    if blank is None:
        del arguments[missing]
    else:
        arguments[missing] = blank
    assert _refusal(arguments) == f'`{missing}` is required for action "{action}"'


@pytest.mark.parametrize("action", ["update", "forget"])
@pytest.mark.parametrize("blank", [None, "", "  "])
def test_update_and_forget_require_a_memory_id(action: str, blank: str | None) -> None:
    arguments: dict[str, Any] = {"action": action, **WRITE}
    if blank is not None:
        arguments["memory_id"] = blank
    assert _refusal(arguments) == f'`memory_id` is required for action "{action}"'


def test_remember_returns_the_normalized_write() -> None:
    call = parse_memory_tool_arguments(
        {
            "action": "remember",
            "title": "  Deploys \n need\tapproval  ",
            "body": "\n  Ask the on-call lead first.  \n",
            "description": "  deploy rule ",
            "tags": [" Ops", "deploy", "ops "],
            "kind": "procedure",
        }
    )
    assert call == ToolCall(
        action=MemoryAction.REMEMBER,
        title="Deploys need approval",
        body="Ask the on-call lead first.",
        description="deploy rule",
        tags=("deploy", "ops"),
        kind=RecordKind.PROCEDURE,
        epistemic=Epistemic.OBSERVED,
    )


def test_remember_defaults_to_an_observed_fact_without_tags_or_description() -> None:
    call = parse_memory_tool_arguments({"action": "remember", **WRITE})
    assert (call.kind, call.epistemic, call.tags, call.description) == (
        RecordKind.FACT,
        Epistemic.OBSERVED,
        (),
        "",
    )
    assert (call.memory_id, call.query_text, call.max_entries, call.verification_evidence) == (
        None,
        None,
        None,
        (),
    )


def test_update_carries_the_trimmed_memory_id_with_the_new_version() -> None:
    call = parse_memory_tool_arguments(
        {"action": "update", "memory_id": " mem-1 ", **WRITE, "kind": "gotcha"}
    )
    assert (call.action, call.memory_id, call.title, call.kind) == (
        "update",
        "mem-1",
        "Deploys",
        RecordKind.GOTCHA,
    )


def test_propose_to_mob_parses_like_a_write_without_a_memory_id() -> None:
    call = parse_memory_tool_arguments({"action": "propose_to_mob", **WRITE, "memory_id": "mem-1"})
    assert (call.action, call.title, call.body, call.memory_id) == (
        "propose_to_mob",
        "Deploys",
        WRITE["body"],
        None,
    )


def test_forget_needs_only_a_memory_id() -> None:
    assert parse_memory_tool_arguments({"action": "forget", "memory_id": "mem-9"}) == ToolCall(
        MemoryAction.FORGET, memory_id="mem-9"
    )


def test_recall_takes_no_required_field() -> None:
    assert parse_memory_tool_arguments({"action": "recall"}) == ToolCall(MemoryAction.RECALL)


def test_recall_carries_its_query_text_and_max_entries_unclamped() -> None:
    call = parse_memory_tool_arguments(
        {"action": "recall", "query_text": "  deploy rules ", "max_entries": 500}
    )
    assert (call.query_text, call.max_entries) == ("deploy rules", 500)


def test_recall_treats_a_blank_query_text_as_no_query() -> None:
    assert parse_memory_tool_arguments({"action": "recall", "query_text": "   "}).query_text is None


def test_fields_an_action_does_not_use_are_accepted_and_come_back_at_their_defaults() -> None:
    everything = {
        "title": "x" * 500,
        "body": " ",
        "description": "d" * 1000,
        "tags": ["", AWS_KEY],
        "kind": "gotcha",
        "epistemic": "verified_claim",
        "verification_evidence": [],
        "memory_id": "",
        "query_text": "q" * 20_000,
        "max_entries": 3,
    }
    assert parse_memory_tool_arguments({**everything, "action": "forget", "memory_id": "m"}) == ToolCall(
        MemoryAction.FORGET, memory_id="m"
    )
    assert parse_memory_tool_arguments({**everything, "action": "recall", "query_text": "q"}) == ToolCall(
        MemoryAction.RECALL, query_text="q", max_entries=3
    )
    write = parse_memory_tool_arguments(
        {**everything, "action": "remember", **WRITE, "tags": [], "description": "", "epistemic": "observed"}
    )
    assert (write.memory_id, write.query_text, write.max_entries) == (None, None, None)


# -- the action field ------------------------------------------------------------------------------


def test_a_missing_action_is_named_with_its_choices() -> None:
    assert _refusal({"title": "t"}) == (
        "`action` is required (one of: remember, update, forget, recall, propose_to_mob)"
    )


@pytest.mark.parametrize("action", ["delete", "Remember", "", 1, None, ["recall"]])
def test_an_unknown_action_is_refused_with_its_choices(action: object) -> None:
    assert (
        _refusal({"action": action})
        == "action must be one of: remember, update, forget, recall, propose_to_mob"
    )


# -- unknown fields -------------------------------------------------------------------------------


def test_an_unknown_field_is_named_with_the_allowed_fields() -> None:
    assert _refusal({"action": "remember", **WRITE, "foo": 1}) == (
        "unknown field 'foo' (allowed: action, title, body, description, tags, kind, epistemic, "
        "verification_evidence, memory_id, query_text, max_entries)"
    )


def test_several_unknown_fields_are_all_named_in_sorted_order() -> None:
    message = _refusal({"zeta": 1, "action": "recall", "alpha": 2, "trust": "operator"})
    assert message.startswith("unknown fields 'alpha', 'trust', 'zeta' (allowed: action, ")


def test_unknown_fields_are_refused_before_the_action_is_looked_at() -> None:
    assert _refusal({"scope": "mob"}).startswith("unknown field 'scope'")


def test_the_allowed_fields_are_exactly_the_schema_fields() -> None:
    assert MEMORY_TOOL_FIELDS == (
        "action",
        "title",
        "body",
        "description",
        "tags",
        "kind",
        "epistemic",
        "verification_evidence",
        "memory_id",
        "query_text",
        "max_entries",
    )


# -- type errors (checked whatever the action) -----------------------------------------------------


@pytest.mark.parametrize("field", ["title", "body", "description", "memory_id", "query_text"])
@pytest.mark.parametrize("value", [None, 3, 1.5, True, ["x"], {"x": 1}])
@pytest.mark.parametrize("action", ["remember", "recall"])
def test_string_fields_must_be_strings(field: str, value: object, action: str) -> None:
    arguments = {"action": action, "memory_id": "m", **WRITE, field: value}
    assert _refusal(arguments) == f"{field} must be a string"


@pytest.mark.parametrize("tags", ["ops", None, {"ops": 1}, ["ops", 1], ["ops", None], [["ops"]]])
def test_tags_must_be_an_array_of_strings_whatever_the_action(tags: object) -> None:
    assert _refusal({"action": "recall", "tags": tags}) == "tags must be an array of non-empty strings"


@pytest.mark.parametrize("tags", [[""], ["ops", "  "]])
def test_blank_tags_are_refused_for_a_write(tags: list[str]) -> None:
    assert (
        _refusal({"action": "remember", **WRITE, "tags": tags})
        == "tags must be an array of non-empty strings"
    )


@pytest.mark.parametrize("kind", ["opinion", "Fact", "", None, 1])
def test_kind_must_be_one_of_the_seven_record_kinds(kind: object) -> None:
    assert _refusal({"action": "remember", **WRITE, "kind": kind}) == (
        "kind must be one of: preference, fact, gotcha, procedure, relationship, open_loop, reference"
    )


@pytest.mark.parametrize("epistemic", ["verified", "OBSERVED", None, 0])
def test_epistemic_must_be_one_of_the_three_states(epistemic: object) -> None:
    assert _refusal({"action": "recall", "epistemic": epistemic}) == (
        "epistemic must be one of: observed, operator_said, verified_claim"
    )


@pytest.mark.parametrize("evidence", [None, 3, ["ok", 3], {"ran": "tests"}])
def test_verification_evidence_must_be_a_string_or_an_array_of_strings(evidence: object) -> None:
    assert _refusal({"action": "remember", **WRITE, "verification_evidence": evidence}) == (
        "verification_evidence must be a string or an array of strings"
    )


@pytest.mark.parametrize("value", [0, -1, True, False, 2.0, 2.5, "5", None, [5]])
@pytest.mark.parametrize("action", ["recall", "remember"])
def test_max_entries_must_be_an_integer_of_at_least_one(value: object, action: str) -> None:
    assert (
        _refusal({"action": action, **WRITE, "max_entries": value}) == "max_entries must be an integer >= 1"
    )


def test_max_entries_of_one_is_accepted() -> None:
    assert parse_memory_tool_arguments({"action": "recall", "max_entries": 1}).max_entries == 1


# -- byte caps: at the limit, and one byte past (multibyte characters) -----------------------------


@pytest.mark.parametrize(
    ("field", "at_limit"),
    [
        ("title", "é" * 100),  # 200 bytes
        ("body", "€" * 21_845 + "a"),  # 65536 bytes
        ("description", "é" * 200),  # 400 bytes
    ],
)
def test_write_fields_are_accepted_at_their_byte_cap_and_refused_one_byte_past(
    field: str, at_limit: str
) -> None:
    limit = len(at_limit.encode())
    call = parse_memory_tool_arguments({"action": "remember", **WRITE, field: at_limit})
    assert getattr(call, field) == at_limit
    assert _refusal({"action": "remember", **WRITE, field: at_limit + "a"}) == (
        f"{field} must be at most {limit} bytes"
    )


def test_a_title_is_measured_after_its_whitespace_is_collapsed_and_a_body_after_trimming() -> None:
    title = "é" * 99 + " \n\t  " + "a"  # 203 bytes as sent, 200 once collapsed
    body = "   " + "b" * 65_536 + " \n"
    call = parse_memory_tool_arguments({"action": "update", "memory_id": "m", "title": title, "body": body})
    assert call.title == "é" * 99 + " a"
    assert len(call.title.encode()) == 200
    assert call.body == "b" * 65_536


def test_a_collapsed_title_one_byte_past_the_cap_is_refused() -> None:
    assert (
        _refusal({"action": "remember", **WRITE, "title": "é" * 99 + "   a" + "b"})
        == "title must be at most 200 bytes"
    )


def test_query_text_is_accepted_at_16384_bytes_and_refused_one_byte_past() -> None:
    at_limit = "é" * 8192
    assert parse_memory_tool_arguments({"action": "recall", "query_text": at_limit}).query_text == at_limit
    assert (
        _refusal({"action": "recall", "query_text": at_limit + "a"})
        == "query_text must be at most 16384 bytes"
    )


def test_a_tag_is_accepted_at_64_bytes_and_refused_one_byte_past() -> None:
    at_limit = "é" * 32
    assert parse_memory_tool_arguments({"action": "remember", **WRITE, "tags": [at_limit]}).tags == (
        at_limit,
    )
    assert (
        _refusal({"action": "remember", **WRITE, "tags": [at_limit + "a"]}) == "tags must be at most 64 bytes"
    )


def test_thirty_two_tags_are_accepted_and_thirty_three_refused() -> None:
    tags = [f"t{i}" for i in range(33)]
    assert len(parse_memory_tool_arguments({"action": "remember", **WRITE, "tags": tags[:32]}).tags) == 32
    assert _refusal({"action": "remember", **WRITE, "tags": tags}) == "tags must contain at most 32 entries"


def test_a_secret_in_a_tag_is_a_tool_error_naming_its_class() -> None:
    message = _refusal({"action": "remember", **WRITE, "tags": [AWS_KEY]})
    assert message == "tags matches secret class 'aws-access-key-id'; secrets are refused, never stored"
    assert AWS_KEY not in message


# -- epistemic ------------------------------------------------------------------------------------


def test_operator_said_adds_the_epistemic_tag_to_the_sorted_tags() -> None:
    call = parse_memory_tool_arguments(
        {"action": "remember", **WRITE, "tags": ["zeta", "alpha"], "epistemic": "operator_said"}
    )
    assert call.epistemic is Epistemic.OPERATOR_SAID
    assert call.tags == ("alpha", "epistemic:operator_said", "zeta")


def test_operator_said_does_not_duplicate_an_epistemic_tag_already_given() -> None:
    call = parse_memory_tool_arguments(
        {
            "action": "update",
            "memory_id": "m",
            **WRITE,
            "tags": ["Epistemic:Operator_Said"],
            "epistemic": "operator_said",
        }
    )
    assert call.tags == ("epistemic:operator_said",)


def test_operator_said_leaves_room_for_its_tag_under_the_tag_cap() -> None:
    tags = [f"t{i}" for i in range(32)]
    assert _refusal({"action": "remember", **WRITE, "tags": tags, "epistemic": "operator_said"}) == (
        'tags must contain at most 31 entries when epistemic is "operator_said"'
    )
    call = parse_memory_tool_arguments(
        {"action": "remember", **WRITE, "tags": tags[:31], "epistemic": "operator_said"}
    )
    assert len(call.tags) == 32


@pytest.mark.parametrize("action", ["remember", "update", "propose_to_mob"])
@pytest.mark.parametrize("evidence", [None, "", "   ", [], ["  "]])
def test_verified_claim_requires_non_empty_verification_evidence(action: str, evidence: object) -> None:
    arguments: dict[str, Any] = {"action": action, "memory_id": "m", **WRITE, "epistemic": "verified_claim"}
    if evidence is not None:
        arguments["verification_evidence"] = evidence
    assert _refusal(arguments) == '`verification_evidence` is required when epistemic is "verified_claim"'


def test_verified_claim_refuses_a_blank_piece_among_its_evidence() -> None:
    arguments = {
        "action": "remember",
        **WRITE,
        "epistemic": "verified_claim",
        "verification_evidence": ["ran it", ""],
    }
    assert _refusal(arguments) == "verification_evidence must contain only non-empty strings"


def test_verified_claim_takes_free_text_evidence_as_one_item_or_an_array() -> None:
    base = {"action": "remember", **WRITE, "epistemic": "verified_claim"}
    one = parse_memory_tool_arguments({**base, "verification_evidence": "  ran the deploy dry-run  "})
    many = parse_memory_tool_arguments({**base, "verification_evidence": ["read runbook", " asked lead "]})
    assert one.verification_evidence == ("ran the deploy dry-run",)
    assert many.verification_evidence == ("read runbook", "asked lead")
    assert one.epistemic is Epistemic.VERIFIED_CLAIM
    assert one.tags == ()


def test_evidence_is_ignored_unless_the_claim_is_verified() -> None:
    call = parse_memory_tool_arguments({"action": "remember", **WRITE, "verification_evidence": ["ran it"]})
    assert call.verification_evidence == ()


# -- arguments as JSON text ------------------------------------------------------------------------


def test_arguments_may_arrive_as_the_json_text_of_an_object() -> None:
    arguments = {"action": "remember", **WRITE, "tags": ["ops"], "epistemic": "operator_said"}
    assert parse_memory_tool_arguments(json.dumps(arguments)) == parse_memory_tool_arguments(arguments)
    assert parse_memory_tool_arguments(json.dumps(arguments).encode()) == parse_memory_tool_arguments(
        arguments
    )


def test_json_text_is_held_to_the_same_rules_as_an_object() -> None:
    assert _refusal('{"action": "recall", "max_entries": 0}') == "max_entries must be an integer >= 1"
    assert _refusal('{"action": "forget"}') == '`memory_id` is required for action "forget"'


def test_an_empty_string_reads_as_no_arguments() -> None:
    assert _refusal("") == "`action` is required (one of: remember, update, forget, recall, propose_to_mob)"


@pytest.mark.parametrize("text", ["not json", '{"action": "recall"', "{'action': 'recall'}", "[" * 100_000])
def test_text_that_is_not_json_is_a_tool_error(text: str) -> None:
    assert _refusal(text) == "arguments must be a JSON object (the string given is not valid JSON)"


@pytest.mark.parametrize("text", ['["recall"]', '"recall"', "42", "null", "true"])
def test_json_text_that_is_not_an_object_is_a_tool_error(text: str) -> None:
    assert _refusal(text) == "arguments must be a JSON object"


@pytest.mark.parametrize("arguments", [None, 42, ["action", "recall"], ("recall",)])
def test_arguments_that_are_neither_an_object_nor_text_are_a_tool_error(arguments: object) -> None:
    assert _refusal(arguments) == "arguments must be a JSON object"


def test_bytes_that_are_not_utf8_are_a_tool_error() -> None:
    assert (
        _refusal(b'{"action": "\xff"}') == "arguments must be a JSON object (the bytes given are not UTF-8)"
    )


def test_the_parsed_call_is_frozen() -> None:
    call = parse_memory_tool_arguments({"action": "recall"})
    with pytest.raises(AttributeError):
        call.action = MemoryAction.FORGET  # type: ignore[misc]
