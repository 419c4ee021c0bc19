"""Parsing of the arguments an LLM sends to the `memory` tool into a typed :class:`ToolCall`. Parsing runs in
two passes: the shape of every field present (type, enum, ``max_entries >= 1``) is checked whatever the action,
exactly as the input schema states it, and then the content rules of the fields the chosen action uses
(required fields, whitespace normalization, byte caps, tag normalization, the epistemic rules). Fields an
action does not use are accepted but ignored: they come back at their defaults, so a caller cannot act on
them by mistake. Every refusal is a :class:`ToolArgumentError` whose message is one sentence naming the field;
it is meant to be returned to the LLM as a tool error (``is_error: true``), not raised to the host, which is
why it is not a :class:`~meta_memory.errors.MetaError`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidParams
from ..memory.params import QUERY_TEXT_MAX_BYTES, normalize_tags
from ..memory.records import RecordKind
from ..memory.validator import (
    BODY_MAX_BYTES,
    DESCRIPTION_MAX_BYTES,
    TAGS_MAX,
    TITLE_MAX_BYTES,
    VERIFICATION_EVIDENCE_ENTRY_MAX_BYTES,
    VERIFICATION_EVIDENCE_MAX,
    VERIFICATION_EVIDENCE_MAX_BYTES,
)
from ..text import text_problem
from .schema import MEMORY_TOOL_FIELDS, OPERATOR_SAID_TAG, Epistemic, MemoryAction

__all__ = ["ToolArgumentError", "ToolCall", "parse_memory_tool_arguments"]

_WS = re.compile(r"\s+")
_STRING_FIELDS = ("title", "body", "description", "memory_id", "query_text")


class ToolArgumentError(ValueError):
    """The `memory` tool's arguments broke a rule. ``message`` is one sentence naming the field, written for
    the LLM that made the call."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


@dataclass(frozen=True)
class ToolCall:
    """One parsed `memory` tool call. Fields the action does not use hold their defaults."""

    action: MemoryAction
    title: str = ""
    body: str = ""
    description: str = ""
    tags: tuple[str, ...] = ()
    kind: RecordKind = RecordKind.FACT
    epistemic: Epistemic = Epistemic.OBSERVED
    verification_evidence: tuple[str, ...] = ()
    memory_id: str | None = None
    query_text: str | None = None
    max_entries: int | None = None


def _nbytes(text: str) -> int:
    return len(text.encode("utf-8"))


def _one_of(values: type[MemoryAction] | type[RecordKind] | type[Epistemic]) -> str:
    return ", ".join(v.value for v in values)


def _decode(arguments: object) -> Mapping[Any, Any]:
    if isinstance(arguments, bytes | bytearray):
        try:
            arguments = bytes(arguments).decode("utf-8")
        except UnicodeDecodeError:
            raise ToolArgumentError(
                "arguments must be a JSON object (the bytes given are not UTF-8)"
            ) from None
    if isinstance(arguments, str):
        if not arguments.strip():
            # Some providers send an empty string for a call without arguments.
            return {}
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):
            raise ToolArgumentError(
                "arguments must be a JSON object (the string given is not valid JSON)"
            ) from None
    if not isinstance(arguments, Mapping):
        raise ToolArgumentError("arguments must be a JSON object")
    return arguments


def _check_text(args: Mapping[Any, Any]) -> None:
    """Judged whatever the form: the dispatcher sees JSON text as one string, whose escapes may
    spell a lone surrogate or a NUL that no store can hold, and an object and its JSON text must
    read the same. After the field names are known, so a message names only a real field."""
    problem = text_problem(dict(args), "arguments")
    if problem is not None:
        raise ToolArgumentError(problem)


def _check_fields(args: Mapping[Any, Any]) -> None:
    unknown = sorted(str(k) for k in args if k not in MEMORY_TOOL_FIELDS)
    if unknown:
        # Quoted with repr: a field name is model output and must not break the one-line sentence.
        names = ", ".join(repr(name[:64]) for name in unknown[:8])
        plural = "s" if len(unknown) > 1 else ""
        raise ToolArgumentError(f"unknown field{plural} {names} (allowed: {', '.join(MEMORY_TOOL_FIELDS)})")


def _action(args: Mapping[Any, Any]) -> MemoryAction:
    if "action" not in args:
        raise ToolArgumentError(f"`action` is required (one of: {_one_of(MemoryAction)})")
    value = args["action"]
    if not isinstance(value, str) or value not in MemoryAction.__members__.values():
        raise ToolArgumentError(f"action must be one of: {_one_of(MemoryAction)}")
    return MemoryAction(value)


def _check_shapes(args: Mapping[Any, Any]) -> None:
    """The schema's rules, applied to every field present whatever the action."""
    for name in _STRING_FIELDS:
        if name in args and not isinstance(args[name], str):
            raise ToolArgumentError(f"{name} must be a string")
    if "tags" in args:
        tags = args["tags"]
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            raise ToolArgumentError("tags must be an array of non-empty strings")
    if "kind" in args and args["kind"] not in RecordKind.__members__.values():
        raise ToolArgumentError(f"kind must be one of: {_one_of(RecordKind)}")
    if "epistemic" in args and args["epistemic"] not in Epistemic.__members__.values():
        raise ToolArgumentError(f"epistemic must be one of: {_one_of(Epistemic)}")
    if "verification_evidence" in args:
        evidence = args["verification_evidence"]
        if not isinstance(evidence, str) and not (
            isinstance(evidence, list) and all(isinstance(e, str) for e in evidence)
        ):
            raise ToolArgumentError("verification_evidence must be a string or an array of strings")
    if "max_entries" in args:
        value = args["max_entries"]
        # bool is an int in Python but not in JSON; floats are refused even when integral.
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ToolArgumentError("max_entries must be an integer >= 1")


def _required(args: Mapping[Any, Any], name: str, action: MemoryAction) -> str:
    value: str = args.get(name, "")
    if not value.strip():
        raise ToolArgumentError(f'`{name}` is required for action "{action.value}"')
    return value


def _capped(name: str, value: str, limit: int) -> str:
    if _nbytes(value) > limit:
        raise ToolArgumentError(f"{name} must be at most {limit} bytes")
    return value


def _tags(args: Mapping[Any, Any], epistemic: Epistemic) -> tuple[str, ...]:
    raw: list[str] = args.get("tags", [])
    if not all(t.strip() for t in raw):
        raise ToolArgumentError("tags must be an array of non-empty strings")
    try:
        tags = normalize_tags(raw)
    except InvalidParams as exc:
        # Includes the secret scan's WriteRefused: to the LLM it is one more refused argument.
        raise ToolArgumentError(str(exc)) from exc
    if epistemic is Epistemic.OPERATOR_SAID and OPERATOR_SAID_TAG not in tags:
        if len(tags) >= TAGS_MAX:
            raise ToolArgumentError(
                f'tags must contain at most {TAGS_MAX - 1} entries when epistemic is "operator_said"'
            )
        tags = tuple(sorted((*tags, OPERATOR_SAID_TAG)))
    return tags


def _evidence(args: Mapping[Any, Any]) -> tuple[str, ...]:
    raw: str | list[str] = args.get("verification_evidence", [])
    items = [raw] if isinstance(raw, str) else raw
    evidence = tuple(item.strip() for item in items)
    if not any(evidence):
        raise ToolArgumentError('`verification_evidence` is required when epistemic is "verified_claim"')
    if not all(evidence):
        raise ToolArgumentError("verification_evidence must contain only non-empty strings")
    # The store validator caps it too (every path meets the caps); refused here, the LLM reads why.
    if len(evidence) > VERIFICATION_EVIDENCE_MAX:
        raise ToolArgumentError(
            f"verification_evidence must contain at most {VERIFICATION_EVIDENCE_MAX} entries"
        )
    if any(_nbytes(item) > VERIFICATION_EVIDENCE_ENTRY_MAX_BYTES for item in evidence):
        raise ToolArgumentError(
            f"verification_evidence entries must be at most {VERIFICATION_EVIDENCE_ENTRY_MAX_BYTES} bytes"
        )
    if sum(_nbytes(item) for item in evidence) > VERIFICATION_EVIDENCE_MAX_BYTES:
        raise ToolArgumentError(
            f"verification_evidence must be at most {VERIFICATION_EVIDENCE_MAX_BYTES} bytes in total"
        )
    return evidence


def _write_call(args: Mapping[Any, Any], action: MemoryAction, memory_id: str | None) -> ToolCall:
    title = _capped("title", _WS.sub(" ", _required(args, "title", action)).strip(), TITLE_MAX_BYTES)
    body = _capped("body", _required(args, "body", action).strip(), BODY_MAX_BYTES)
    description = _capped("description", args.get("description", "").strip(), DESCRIPTION_MAX_BYTES)
    epistemic = Epistemic(args.get("epistemic", Epistemic.OBSERVED))
    return ToolCall(
        action,
        title=title,
        body=body,
        description=description,
        tags=_tags(args, epistemic),
        kind=RecordKind(args.get("kind", RecordKind.FACT)),
        epistemic=epistemic,
        verification_evidence=_evidence(args) if epistemic is Epistemic.VERIFIED_CLAIM else (),
        memory_id=memory_id,
    )


def parse_memory_tool_arguments(arguments: object) -> ToolCall:
    """Parse one `memory` tool call.

    Args:
        arguments: the call's arguments, as a mapping (Anthropic, MCP) or as the JSON text of an object
            (OpenAI); bytes are read as UTF-8 JSON text and an empty string as ``{}``.

    Returns:
        The call, normalized: title whitespace-collapsed, body, description, memory_id, query_text and each
        piece of evidence trimmed, tags trimmed, lowercased, de-duplicated and sorted (plus
        ``epistemic:operator_said`` for ``operator_said``). ``max_entries`` is not clamped to the recall
        limit; that is the caller's job.

    Raises:
        ToolArgumentError: the first rule the arguments break (unknown fields, then ``action``, then the
            shape of each field, then the action's own rules), as one sentence naming the field.
    """
    args = _decode(arguments)
    _check_fields(args)
    _check_text(args)
    action = _action(args)
    _check_shapes(args)
    if action is MemoryAction.RECALL:
        query_text = _capped("query_text", args.get("query_text", "").strip(), QUERY_TEXT_MAX_BYTES)
        return ToolCall(action, query_text=query_text or None, max_entries=args.get("max_entries"))
    if action is MemoryAction.FORGET:
        return ToolCall(action, memory_id=_required(args, "memory_id", action).strip())
    memory_id = _required(args, "memory_id", action).strip() if action is MemoryAction.UPDATE else None
    return _write_call(args, action, memory_id)
