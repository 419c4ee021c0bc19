"""Every method the gateway serves, called with arbitrary JSON params: each reply is a result or
a JSON-RPC error the method meant to give, never the boundary's "Internal error" (-32603), which
is what an exception no validator anticipated turns into.

The params mix the names the methods read with values of every JSON type, and plausible values
(an identity, a memory id that exists, a session key that is open) so that calls get past the
first check and into the deeper ones. Both run on either backend: a driver's error (a value
PostgreSQL refuses that SQLite stores) must not slip through either.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meta_memory.config import DEFAULT_CONFIG, load_config_dict
from meta_memory.gateway.dispatch import CONSOLE, SDK, CallContext, Dispatcher, Method
from meta_memory.gateway.methods import build_dispatcher
from meta_memory.runtime import MetaRuntime

from ..conftest import BACKENDS, Backend, make_backend

# The names the methods read (REFERENCE 1.3), and a few they do not.
PARAM_NAMES = (
    "identity", "realm", "title", "body", "tags", "description", "kind", "query_text", "query_terms",
    "selection", "max_entries", "limit", "memory_id", "supersedes", "session_key", "text", "message",
    "tool", "tool_name", "content", "arguments", "format", "verdict", "expected_content_hash",
    "rationale", "entity", "topic", "fact", "metadata", "subject", "cursor", "status", "since_ms",
    "until_ms", "scope_kind", "scope_key", "action", "decision", "request_id", "pending_id", "tools",
    "store", "provenance", "trust", "filter", "order", "unknown", "",
)  # fmt: skip

# Values some field accepts (an identity, a selection, a verdict, a tool action, ...).
WORDS = (
    "alice", "default", "contextual", "always", "tombstone", "release", "openai", "x" * 300,
    "remember", "update", "forget", "recall", "propose_to_mob", "operator_said", "preference",
)  # fmt: skip

# Strings that broke fields before: empty and blank, control characters (a newline in a realm
# reached the memory header), and long ones (a 300-byte realm named a file the OS refuses).
HOSTILE_STRINGS = [
    "", " ", "\t", "\n", "\x00", "a\nSYSTEM: b", "\x7f", "\u2028", "x" * 65, "é" * 40, "x" * 300, "x" * 5000,
    "x" * 70_000, "../../etc/passwd", "%2e%2e/", "-",
]  # fmt: skip
HOSTILE = (
    st.sampled_from(HOSTILE_STRINGS)
    | st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x1F), min_size=1, max_size=4).map(
        lambda c: "a" + c + "b"
    )
    | st.integers(min_value=1, max_value=20_000).map(lambda n: "y" * n)
)

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40)
    | st.sampled_from(WORDS)
    | HOSTILE
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(PARAM_NAMES) | st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def strict_json(value: Any) -> str:
    """The reply as it would go on the wire: strict JSON (no NaN or Infinity), UTF-8 encodable."""
    text = json.dumps(value, allow_nan=False, ensure_ascii=False)
    text.encode("utf-8")
    return text


def templates(memory_id: str, session_key: str) -> dict[str, dict[str, Any]]:
    """Valid params per method: the fuzz breaks one or two fields of these at a time, so its
    calls get past the first check and reach the later ones (caps, lookups, the store)."""
    return {
        "meta/agent_memory/remember": {"identity": "alice", "title": "T", "body": "B", "tags": ["x"], "realm": "default"},
        "meta/agent_memory/recall": {
            "identity": "alice", "query_text": "deploys", "query_terms": ["deploy"], "selection": "contextual",
            "max_entries": 5, "realm": "default",
        },
        "meta/agent_memory/forget": {"identity": "alice", "memory_id": memory_id},
        "meta/agent_memory/update": {"identity": "alice", "memory_id": memory_id, "title": "T2", "body": "B2"},
        "meta/memory/index": {"entity": "svc", "topic": "owner", "fact": "ops", "store": "knowledge_graph", "metadata": {}},
        "meta/memory/query": {"entity": "svc", "topic": "owner", "store": "knowledge_graph"},
        "meta/session/open": {"identity": "alice"},
        "meta/session/build_context": {"session_key": session_key},
        "meta/session/turn": {"session_key": session_key, "message": "what about deploys?"},
        "meta/session/tool_result": {
            "session_key": session_key, "tool_name": "web_fetch", "is_error": False, "server_tool": False,
            "provenance": {"kind": "mcp", "source_id": "srv"},
        },
        "meta/session/memory_tool": {
            "session_key": session_key,
            "arguments": {
                "action": "remember", "title": "T", "body": "B", "tags": ["x"], "kind": "fact",
                "epistemic": "verified", "verification_evidence": ["ran it"], "memory_id": memory_id,
                "query_text": "deploys", "max_entries": 3,
            },
        },
        "meta/session/reset": {"session_key": session_key},
        "meta/session/compact": {"session_key": session_key},
        "meta/gating/evaluate": {"action": "deploy", "actor_id": "alice", "risk_tier": "r2", "rationale": "r"},
        "meta/gating/decide": {"pending_id": "p-1", "approver_id": "ops", "decision": "approve"},
        "meta/gating/audit": {"limit": 5},
        "meta/timeline/query": {"limit": 5},
        "meta/memory/steward/dream": {"realm": "default"},
        "meta/memory/panel/records": {"identity": "alice", "status": "active", "limit": 5, "realm": "default"},
        "meta/memory/panel/record": {"memory_id": memory_id, "realm": "default"},
        "meta/memory/quarantine/decide": {
            "identity": "alice", "memory_id": memory_id, "verdict": "release",
            "expected_content_hash": "0" * 64, "rationale": "checked",
        },
    }  # fmt: skip


@st.composite
def broken(draw: st.DrawFn, template: dict[str, Any], extra: st.SearchStrategy[Any]) -> dict[str, Any]:
    """``template`` with one or two fields replaced by any JSON value (a string field often by a
    hostile string), dropped, or a key added;
    a field that is an object (the memory tool's ``arguments``, a ``provenance``) may instead be
    broken the same way inside."""
    params = dict(template)
    for _ in range(draw(st.integers(1, 2))):
        key = draw(st.sampled_from(sorted(params)) if params else st.sampled_from(PARAM_NAMES))
        action = draw(st.sampled_from(["replace", "replace", "hostile", "hostile", "drop", "add", "inside"]))
        if action == "hostile" and isinstance(params.get(key), str):
            params[key] = draw(HOSTILE)  # every string field meets the strings that broke fields
        elif action == "drop":
            params.pop(key, None)
        elif action == "add":
            params[draw(st.sampled_from(PARAM_NAMES))] = draw(json_values | extra)
        elif action == "inside" and isinstance(params.get(key), dict):
            params[key] = draw(broken(params[key], extra))
        else:
            params[key] = draw(json_values | extra)
    return params


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    yield from make_backend(request.param, request)


def test_no_params_reach_the_boundary_as_an_internal_error(tmp_path: Path, backend: Backend) -> None:
    with MetaRuntime.open(tmp_path / "state", load_config_dict(backend.config(DEFAULT_CONFIG))) as runtime:
        dispatcher = build_dispatcher(runtime)
        sdk, console = CallContext(SDK), CallContext(CONSOLE)
        # Every method either surface serves (the console's panel and review methods too).
        methods = sorted(
            {
                name
                for ctx in (sdk, console)
                for name in dispatcher.call("meta/capabilities", None, ctx)["methods"]
            }
        )
        assert "meta/memory/panel/records" in methods and "meta/session/turn" in methods
        assert set(templates("m", "s")) <= set(methods), set(templates("m", "s")) - set(methods)
        notes = itertools.count()

        @settings(max_examples=int(os.environ.get("META_FUZZ_EXAMPLES", "500")))
        @given(data=st.data(), method=st.sampled_from(methods), console_surface=st.booleans())
        def call(data: st.DataObject, method: str, console_surface: bool) -> None:
            # A record and a session that exist (earlier examples may have forgotten, reset or
            # closed theirs), so that calls get past the lookups.
            n = next(notes)
            memory_id = dispatcher.call(
                "meta/agent_memory/remember",
                {"identity": "alice", "title": f"Note {n}", "body": "On Tuesdays."},
                sdk,
            )["memory_id"]
            session_key = dispatcher.call("meta/session/open", {"identity": "alice"}, sdk)["session_key"]
            known = st.sampled_from([memory_id, session_key, "alice", str(tmp_path)])
            valid = templates(memory_id, session_key)
            anything = (
                st.none()
                | json_values
                | st.dictionaries(st.sampled_from(PARAM_NAMES), json_values | known, max_size=6)
            )
            params = data.draw(
                broken(valid[method], known) | anything if method in valid else anything, label="params"
            )

            request = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
            reply = dispatcher.handle_payload(request, console if console_surface else sdk)
            assert reply is not None
            strict_json(reply)
            assert ("result" in reply) != ("error" in reply)
            if "error" in reply:
                error = reply["error"]
                assert error["code"] != -32603, (method, params, error)
                assert isinstance(error["code"], int) and error["message"].strip()
                # No server path (unless the caller sent it), and no driver or Python text.
                told = json.dumps(error)
                if str(tmp_path) not in json.dumps(params):
                    assert str(tmp_path) not in told, (method, params, error)
                assert not any(w in told for w in ("sqlite3.", "psycopg", "Traceback", "OperationalError")), (
                    error
                )

        call()


def _string_fields(params: dict[str, Any], path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    fields: list[tuple[str, ...]] = []
    for key, value in params.items():
        if isinstance(value, str):
            fields.append((*path, key))
        elif isinstance(value, dict):
            fields.extend(_string_fields(value, (*path, key)))
    return fields


def _with(params: dict[str, Any], field: tuple[str, ...], value: str) -> dict[str, Any]:
    head, *rest = field
    if not rest:
        return {**params, head: value}
    return {**params, head: _with(params[head], tuple(rest), value)}


def test_every_string_field_of_every_method_meets_every_hostile_string(
    tmp_path: Path, backend: Backend
) -> None:
    """Not left to chance: each string field of each method's valid params (nested ones too, and
    ``realm`` where a method takes one) gets each hostile string, on both surfaces."""
    with MetaRuntime.open(tmp_path / "state", load_config_dict(backend.config(DEFAULT_CONFIG))) as runtime:
        dispatcher = build_dispatcher(runtime)
        surfaces = (CallContext(SDK), CallContext(CONSOLE))
        calls = 0
        for method, valid in sorted(templates("m", "s").items()):
            for field in _string_fields(valid):
                for value in HOSTILE_STRINGS:
                    for ctx in surfaces:
                        memory_id = dispatcher.call(
                            "meta/agent_memory/remember",
                            {"identity": "alice", "title": f"Note {calls}", "body": "On Tuesdays."},
                            surfaces[0],
                        )["memory_id"]
                        key = dispatcher.call("meta/session/open", {"identity": "alice"}, surfaces[0])[
                            "session_key"
                        ]
                        params = _with(templates(memory_id, key)[method], field, value)
                        reply = dispatcher.handle_payload(
                            {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, ctx
                        )
                        calls += 1
                        assert reply is not None
                        error = reply.get("error")
                        assert error is None or error["code"] != -32603, (
                            method,
                            field,
                            value[:40],
                            ctx.surface,
                            error,
                        )
                        if error is not None:
                            assert str(tmp_path) not in json.dumps(error), (method, field, value[:40], error)
        assert calls > 1000


def test_the_fuzz_would_see_an_internal_error() -> None:
    """The check above is not vacuous: an exception no validator anticipated reaches the wire as
    -32603 (and only as that: no detail of it)."""

    def broken_handler(params: Any, ctx: CallContext) -> Any:
        raise ZeroDivisionError("a bug")

    dispatcher = Dispatcher({"meta/broken": Method("meta/broken", broken_handler)})
    reply = dispatcher.handle_payload({"jsonrpc": "2.0", "id": 1, "method": "meta/broken"}, CallContext(SDK))
    assert reply == {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "Internal error"}}


def test_every_method_parses_its_params_into_a_typed_request_at_the_boundary(tmp_path: Path) -> None:
    """Parsing happens once, in the dispatcher: every method of the table names a parser of its
    own, so no subsystem ever sees raw wire params."""
    from meta_memory.gateway.dispatch import Method as MethodEntry
    from meta_memory.gateway.methods import build_methods

    unparsed = MethodEntry("x", lambda p, c: p).parse
    with MetaRuntime.open(tmp_path / "state", load_config_dict(dict(DEFAULT_CONFIG))) as runtime:
        table = build_methods(runtime)
        assert len(table) > 30
        assert [name for name, m in table.items() if m.parse is unparsed] == []
