"""Hypothesis: every call the parser accepts validates against the published schema, the parser refuses
anything else only with a ToolArgumentError naming a field, and a call reads the same as an object or as JSON
text."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, Phase, event, find, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from meta_memory.memory.records import RecordKind
from meta_memory.recorder import (
    MEMORY_TOOL_FIELDS,
    OPERATOR_SAID_TAG,
    Epistemic,
    MemoryAction,
    ToolArgumentError,
    ToolCall,
    memory_tool_input_schema,
    parse_memory_tool_arguments,
)

_settings = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_validator = Draft202012Validator(memory_tool_input_schema())

_scalars = (
    st.none() | st.booleans() | st.integers(-5, 10**20) | st.floats(allow_nan=False) | st.text(max_size=12)
)
_junk = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)
_nonblank = st.text(min_size=1, max_size=40).filter(str.strip)
# Blank strings, and strings near the byte caps that only normalization brings under them.
_edge = st.sampled_from(["", "  ", "a\n\tb", "é" * 100, "é" * 101, "a" * 200, "a  " * 80, " " + "b" * 250])
_text = st.one_of(_nonblank, _nonblank, _nonblank, _edge)
_good: dict[str, st.SearchStrategy[Any]] = {
    "action": st.sampled_from([a.value for a in MemoryAction]),
    "title": _text,
    "body": _text | st.text(max_size=300),
    "description": _text,
    "tags": st.lists(_text, max_size=4)
    | st.lists(st.sampled_from(["", " ", "Ops", "ops ", OPERATOR_SAID_TAG]), max_size=3),
    "kind": st.sampled_from([k.value for k in RecordKind]),
    "epistemic": st.sampled_from([e.value for e in Epistemic]),
    "verification_evidence": _text | st.lists(_text, max_size=3),
    "memory_id": _text,
    "query_text": _text,
    "max_entries": st.integers(-2, 100),
}
_needs = {
    "remember": ("title", "body"),
    "update": ("memory_id", "title", "body"),
    "forget": ("memory_id",),
    "recall": (),
    "propose_to_mob": ("title", "body"),
}


def _well_formed(action: str) -> st.SearchStrategy[dict[str, Any]]:
    required = {"action": st.just(action), **{name: _good[name] for name in _needs[action]}}
    return st.fixed_dictionaries(required, optional={k: v for k, v in _good.items() if k not in required})


well_formed = st.sampled_from(list(_needs)).flatmap(_well_formed)
# Well-shaped calls, calls with one field (or an unknown field) set to junk, and calls missing one field.
arguments = st.one_of(
    well_formed,
    well_formed,
    st.builds(
        lambda args, name, junk: {**args, name: junk},
        well_formed,
        st.sampled_from([*MEMORY_TOOL_FIELDS, "trust"]),
        _junk,
    ),
    st.builds(
        lambda args, name: {k: v for k, v in args.items() if k != name},
        well_formed,
        st.sampled_from(MEMORY_TOOL_FIELDS),
    ),
)


def _outcome(args: object) -> ToolCall | str:
    try:
        return parse_memory_tool_arguments(args)
    except ToolArgumentError as exc:
        return exc.message


@_settings
@given(arguments)
def test_every_call_the_parser_accepts_validates_against_the_schema(args: dict[str, Any]) -> None:
    outcome = _outcome(args)
    event("accepted" if isinstance(outcome, ToolCall) else "refused")
    if isinstance(outcome, ToolCall):
        _validator.validate(args)


@_settings
@given(arguments)
def test_an_accepted_call_is_normalized_within_the_store_caps(args: dict[str, Any]) -> None:
    call = _outcome(args)
    if not isinstance(call, ToolCall):
        return
    assert call.action == args["action"]
    if call.action in ("remember", "update", "propose_to_mob"):
        assert call.title and call.title == " ".join(call.title.split()) and len(call.title.encode()) <= 200
        assert call.body and call.body == call.body.strip() and len(call.body.encode()) <= 65_536
        assert list(call.tags) == sorted({t.strip().lower() for t in call.tags}) and len(call.tags) <= 32
        assert (OPERATOR_SAID_TAG in call.tags) >= (call.epistemic is Epistemic.OPERATOR_SAID)
        assert bool(call.verification_evidence) == (call.epistemic is Epistemic.VERIFIED_CLAIM)
    else:
        assert (call.title, call.body, call.tags, call.verification_evidence) == ("", "", (), ())
    assert (call.memory_id is not None) == (call.action in ("update", "forget"))
    if call.action != "recall":
        assert (call.query_text, call.max_entries) == (None, None)


@_settings
@given(arguments | _junk)
def test_the_parser_refuses_only_with_a_sentence_naming_a_field(args: Any) -> None:
    outcome = _outcome(args)
    if isinstance(outcome, str):
        assert any(name in outcome for name in (*MEMORY_TOOL_FIELDS, "arguments")), outcome
        assert "\n" not in outcome


@_settings
@given(arguments)
def test_a_call_reads_the_same_as_an_object_and_as_json_text(args: dict[str, Any]) -> None:
    assert _outcome(json.dumps(args)) == _outcome(args)


def test_the_generated_calls_reach_an_accepted_call_of_every_action() -> None:
    # Guards the properties above against passing vacuously on refusals only.
    for action in MemoryAction:
        found = find(
            arguments,
            lambda a, action=action: a.get("action") == action and isinstance(_outcome(a), ToolCall),
            settings=settings(max_examples=500, database=None, phases=[Phase.generate]),
        )
        assert parse_memory_tool_arguments(found).action is action
