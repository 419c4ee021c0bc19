"""Every method the gateway serves, called with arbitrary JSON params: each reply is a result or
a JSON-RPC error the method meant to give, never the boundary's "Internal error" (-32603), which
is what an exception no validator anticipated turns into.

The params mix the names the methods read with values of every JSON type, and plausible values
(an identity, a memory id that exists, a session key that is open) so that calls get past the
first check and into the deeper ones. Both run on either backend: a driver's error (a value
PostgreSQL refuses that SQLite stores) must not slip through either.

Two kinds of input are not left to chance but enumerated: a lone surrogate at every string
position of every method's params, at every depth (object keys too, and inside the JSON text the
``memory`` tool takes as ``arguments``), sent as the raw bytes a transport reads; and integers
past 64 bits in every cursor, limit and ``*_ms`` (the event-id cursor of the timeline and its
stream too).
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meta_memory.config import DEFAULT_CONFIG, load_config_dict
from meta_memory.gateway.dispatch import CONSOLE, SDK, CallContext, Dispatcher, Method
from meta_memory.gateway.methods import build_dispatcher
from meta_memory.gateway.signatures import SIGNATURES
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
    "x" * 70_000, "../../etc/passwd", "%2e%2e/", "-", "\ud800", "a\udfffb",
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
        "meta/agent_memory/remember": {
            "identity": "alice", "title": "T", "body": "B", "tags": ["x"], "realm": "default", "ttl_ms": 60_000,
        },
        "meta/agent_memory/recall": {
            "identity": "alice", "query_text": "deploys", "query_terms": ["deploy"], "selection": "contextual",
            "max_entries": 5, "realm": "default",
        },
        "meta/agent_memory/forget": {"identity": "alice", "memory_id": memory_id},
        "meta/agent_memory/update": {
            "identity": "alice", "memory_id": memory_id, "title": "T2", "body": "B2", "expires_at_ms": 2**50,
        },
        "meta/agent_memory/list": {
            "identity": "alice", "realm": "default", "status": "active", "kind": "fact", "tags_any": ["x"],
            "tags_all": ["x"], "created_after_ms": 0, "created_before_ms": 2**62, "updated_after_ms": 0,
            "updated_before_ms": 2**62, "limit": 5, "cursor": f"{2**40}:{memory_id}",
        },
        "meta/agent_memory/get": {"identity": "alice", "memory_id": memory_id, "realm": "default"},
        "meta/agent_memory/history": {"identity": "alice", "memory_id": memory_id, "realm": "default"},
        "meta/agent_memory/purge": {"identity": "alice", "memory_id": memory_id, "realm": "default"},
        "meta/memory/index": {
            "entity": "svc", "topic": "owner", "fact": "ops", "store": "knowledge_graph",
            "metadata": {"team": {"name": "ops", "on_call": ["ana", {"pager": "p-1"}]}},
            "conflict_reason": "r",
        },
        "meta/memory/query": {"entity": "svc", "topic": "owner", "store": "knowledge_graph", "query": "owner"},
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
                "epistemic": "verified_claim", "verification_evidence": ["ran it"], "memory_id": memory_id,
                "query_text": "deploys", "max_entries": 3,
            },
        },
        "meta/session/reset": {"session_key": session_key},
        "meta/session/compact": {"session_key": session_key},
        "meta/session/close": {"session_key": session_key, "cause": "retired"},
        "meta/session/peer_message": {"session_key": session_key, "sender_session_key": session_key},
        "meta/session/tool_definitions": {"format": "openai"},
        "meta/gating/evaluate": {
            "action": "deploy", "actor_id": "alice", "risk_tier": "r2", "rationale": "r",
            "requested_approver": "ops", "approval_recipient": "ops", "approval_channel": "chat",
            "approval_timeout_ms": 60_000, "entity": "svc", "topic": "owner",
        },
        "meta/gating/decide": {"pending_id": "p-1", "approver_id": "ops", "decision": "approve", "reason": "r"},
        "meta/gating/audit": {"limit": 5},
        "meta/timeline/query": {"after": "console-evt-1", "limit": 5},
        "meta/memory/steward/dream": {"realm": "default", "mob": "crew"},
        "meta/memory/panel/records": {
            "identity": "alice", "status": "active", "limit": 5, "realm": "default", "scope": "identity",
            "scope_key": "alice", "cursor": f"{2**40}:{memory_id}",
        },
        "meta/memory/panel/record": {"memory_id": memory_id, "realm": "default"},
        "meta/memory/panel/overview": {"realm": "default"},
        **{
            f"meta/memory/panel/{listing}": {"realm": "default", "limit": 5}
            for listing in (
                "audit_verdicts", "dream_runs", "dreams", "harvests", "injections", "proposals", "quarantine",
            )
        },
        "meta/storage/doctor": {"state_dir": "no-such-state-dir", "identity": "alice"},
        "meta/memory/audit_verdicts/resolve": {
            "realm": "default", "run_id": "dream-1", "record_id": memory_id, "action": "tombstone",
            "expected_content_hash": "0" * 64, "rationale": "checked",
        },
        "meta/memory/quarantine/decide": {
            "identity": "alice", "memory_id": memory_id, "verdict": "release",
            "expected_content_hash": "0" * 64, "rationale": "checked",
        },
        "meta/agent_memory/propose": {
            "realm": "default", "scope": {"kind": "mob", "key": "crew"}, "title": "T", "body": "B",
            "description": "d", "tags": ["x"], "kind": "fact",
        },
        "meta/memory/panel/proposal": {"proposal_id": "prop-x", "realm": "default"},
        "meta/memory/proposals/decide": {
            "realm": "default", "proposal_id": "prop-x", "verdict": "accept",
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


# Hypothesis takes a change of the global `random` state during a draw for a strategy using it, and
# formats a warning with the strategy's repr (77 kB here, itself a warning). On PostgreSQL the
# connection pool's own threads draw from `random` (psycopg_pool jitters each new connection's
# lifetime) whenever they open a connection, so a draw that overlaps one failed the test, once, at
# random. Nothing under test draws from `random`; these two warnings say nothing about the gateway.
@pytest.mark.filterwarnings("ignore:Do not use the `random` module inside strategies")
@pytest.mark.filterwarnings("ignore:Generating overly large repr")
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


# -- lone surrogates at every string position, as raw bytes ---------------------------------------

LONE_SURROGATES = ("\ud800", "a\udfffb")


@dataclass(frozen=True)
class _Key:
    """A position that is an object's key (the key itself is replaced), not its value."""

    name: str


Position = tuple[Any, ...]  # object keys, list indexes, and a final _Key for a key position


def _positions(value: Any, path: Position = ()) -> list[Position]:
    """Every string position in ``value``, at every depth: values, list items and object keys."""
    if isinstance(value, str):
        return [path]
    found: list[Position] = []
    if isinstance(value, dict):
        for key, item in value.items():
            found.append((*path, _Key(key)))
            found.extend(_positions(item, (*path, key)))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found.extend(_positions(item, (*path, i)))
    return found


def _put(value: Any, path: Position, text: str) -> Any:
    """``value`` with the string at ``path`` replaced by ``text`` (a key position: the key)."""
    if not path:
        return text
    head, *rest = path
    if isinstance(head, _Key):
        return {(text if k == head.name else k): v for k, v in value.items()}
    if isinstance(value, list):
        return [_put(v, tuple(rest), text) if i == head else v for i, v in enumerate(value)]
    return {k: (_put(v, tuple(rest), text) if k == head else v) for k, v in value.items()}


def _field(path: Position) -> str:
    """The field a refusal must name: object keys joined by dots; list indexes name their list,
    and a key position names the object holding it (``params`` at the top)."""
    names = [p for p in path if isinstance(p, str)]
    return ".".join(names) or "params"


def _encodings(request: dict[str, Any]) -> dict[str, bytes]:
    """The request as a client may send it: ``\\ud800`` escapes (valid JSON), and raw surrogate
    bytes (``ED A0 80``: what a JSON library refuses to encode, and a transport still reads)."""
    return {
        "escaped": json.dumps(request, ensure_ascii=True).encode("ascii"),
        "raw": json.dumps(request, ensure_ascii=False).encode("utf-8", "surrogatepass"),
    }


def _surface(dispatcher: Dispatcher, method: str) -> CallContext:
    sdk = CallContext(SDK)
    return sdk if method in dispatcher.method_names(SDK) else CallContext(CONSOLE)


def _fresh(dispatcher: Dispatcher) -> tuple[str, str]:
    sdk = CallContext(SDK)
    memory_id = dispatcher.call(
        "meta/agent_memory/remember", {"identity": "alice", "title": "T", "body": "On Tuesdays."}, sdk
    )["memory_id"]
    return memory_id, dispatcher.call("meta/session/open", {"identity": "alice"}, sdk)["session_key"]


def test_every_method_has_a_template_so_the_enumerations_reach_its_params(tmp_path: Path) -> None:
    """A method added without valid params here would escape the enumerations below."""
    with MetaRuntime.open(tmp_path / "state", load_config_dict(dict(DEFAULT_CONFIG))) as runtime:
        dispatcher = build_dispatcher(runtime)
        with_params = {
            name
            for surface in (SDK, CONSOLE)
            for name in dispatcher.method_names(surface)
            if SIGNATURES[name].params.fields
        }
        assert with_params - set(templates("m", "s")) == set()


def test_a_lone_surrogate_at_any_string_position_of_any_method_is_refused_naming_its_field(
    tmp_path: Path, backend: Backend
) -> None:
    with MetaRuntime.open(tmp_path / "state", load_config_dict(backend.config(DEFAULT_CONFIG))) as runtime:
        dispatcher = build_dispatcher(runtime)
        memory_id, session_key = _fresh(dispatcher)
        calls = 0
        for method, valid in sorted(templates(memory_id, session_key).items()):
            ctx = _surface(dispatcher, method)
            for path in _positions(valid):
                for surrogate in LONE_SURROGATES:
                    params = _put(valid, path, surrogate)
                    request = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
                    for encoding, raw in _encodings(request).items():
                        reply = dispatcher.handle_bytes(raw, ctx)
                        calls += 1
                        assert reply is not None
                        where = (method, path, encoding)
                        error = reply.get("error")
                        assert error is not None and error["code"] == -32602, (where, reply)
                        assert (
                            error["message"]
                            == f"{_field(path)} must be valid Unicode text (it holds a lone surrogate)"
                        ), (where, error)
                        strict_json(reply)
        assert calls > 500


def test_a_lone_surrogate_inside_the_memory_tool_s_json_text_arguments_is_a_tool_error_naming_it(
    tmp_path: Path, backend: Backend
) -> None:
    """The ``arguments`` an LLM sends as JSON text are a second document, which the dispatcher sees
    as one string: a ``\\ud800`` escape inside it is judged when it is read, at every depth."""
    with MetaRuntime.open(tmp_path / "state", load_config_dict(backend.config(DEFAULT_CONFIG))) as runtime:
        dispatcher = build_dispatcher(runtime)
        memory_id, session_key = _fresh(dispatcher)
        arguments = templates(memory_id, session_key)["meta/session/memory_tool"]["arguments"]
        positions = _positions(arguments)
        assert ("verification_evidence", 0) in positions and ("title",) in positions
        for path in positions:
            for surrogate in LONE_SURROGATES:
                for escaped in (True, False):
                    text = json.dumps(_put(arguments, path, surrogate), ensure_ascii=escaped)
                    params = {"session_key": session_key, "arguments": text}
                    request = {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "meta/session/memory_tool",
                        "params": params,
                    }
                    raw = json.dumps(request, ensure_ascii=escaped).encode("utf-8", "surrogatepass")
                    reply = dispatcher.handle_bytes(raw, CallContext(SDK))
                    assert reply is not None
                    strict_json(reply)
                    if escaped and isinstance(path[-1], _Key):  # a field no tool call has
                        assert reply["result"]["is_error"] is True, (path, reply)
                        assert reply["result"]["content"].startswith("unknown field '"), (path, reply)
                    elif escaped:  # the outer text is valid: the tool reads the inner one and refuses
                        field = _field(("arguments", *path))
                        assert reply.get("result") == {
                            "content": f"{field} must be valid Unicode text (it holds a lone surrogate)",
                            "is_error": True,
                            "outcome": "none",
                        }, (path, reply)
                    else:  # the surrogate is already in the outer string: the boundary refuses it
                        assert reply["error"]["code"] == -32602, (path, reply)
                        assert reply["error"]["message"].startswith("arguments must be valid Unicode text")
        page = dispatcher.call("meta/agent_memory/list", {"identity": "alice"}, CallContext(SDK))
        assert len(page["records"]) == 1  # nothing was stored by any of them


# -- integers past 64 bits in every cursor, limit and *_ms -----------------------------------------

HUGE_INTEGERS = (2**63 - 1, 2**63, 2**64, 10**30, -(2**63) - 1, -(10**30))
HUGE_CURSORS = {
    "after": (
        "console-evt-99999999999999999999999", f"console-evt-{2**63}", "console-evt-" + "9" * 5000,
        "console-evt-²", "console-evt-١٢",
    ),
    "cursor": (f"{2**63}:mem-x", f"{10**30}:mem-x", "9" * 5000 + ":mem-x", "²:mem-x", "-1:mem-x"),
}  # fmt: skip


def _integer_positions(value: Any, path: Position = ()) -> list[Position]:
    if isinstance(value, int) and not isinstance(value, bool):
        return [path]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _integer_positions(v, (*path, k))]
    return []


# Integer params a method takes one of, never both: a template holds one, a variant the other.
EXCLUSIVE = {"ttl_ms": "expires_at_ms", "expires_at_ms": "ttl_ms"}


def _integer_params(method: str) -> list[str]:
    """Every declared integer param of ``method`` (its signature, not the template)."""
    names = []
    for param in SIGNATURES[method].params.fields:
        schemas = [param.schema, *param.schema.get("anyOf", ())]
        if any(s.get("type") == "integer" for s in schemas):
            names.append(param.name)
    return names


def test_an_oversized_integer_in_any_cursor_limit_or_ms_field_is_refused_naming_it_or_answered(
    tmp_path: Path, backend: Backend
) -> None:
    with MetaRuntime.open(tmp_path / "state", load_config_dict(backend.config(DEFAULT_CONFIG))) as runtime:
        dispatcher = build_dispatcher(runtime)
        memory_id, session_key = _fresh(dispatcher)
        valid = templates(memory_id, session_key)
        cases: list[tuple[str, Position, Any]] = []
        variants: dict[tuple[str, str], dict[str, Any]] = {}  # (method, param) -> its template
        for method, params in sorted(valid.items()):
            for name in _integer_params(method):
                other = EXCLUSIVE.get(name)
                if name not in params and other in params:  # one of two exclusive params: a variant
                    variants[(method, name)] = {**{k: v for k, v in params.items() if k != other}, name: 1}
            declared = {(name,) for name in _integer_params(method) if (method, name) not in variants}
            assert declared <= set(_integer_positions(params)), (method, declared)  # the template has them
            for path in _integer_positions(params):  # declared, and nested (the tool's max_entries)
                cases += [(method, path, n) for n in HUGE_INTEGERS]
            for name, values in HUGE_CURSORS.items():
                if name in params:
                    cases += [(method, (name,), v) for v in values]
        assert {m for m, _, _ in cases} >= {
            "meta/agent_memory/list", "meta/timeline/query", "meta/memory/panel/records",
            "meta/gating/evaluate", "meta/session/memory_tool", "meta/agent_memory/recall",
        }  # fmt: skip
        cases += [(method, (name,), n) for method, name in variants for n in HUGE_INTEGERS]
        for method, path, value in cases:
            memory_id, session_key = _fresh(dispatcher)
            template = templates(memory_id, session_key)[method]
            if (method, path[0]) in variants:
                other = EXCLUSIVE[path[0]]
                template = {**{k: v for k, v in template.items() if k != other}, path[0]: 1}
            params = _put(template, path, value)
            request = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
            reply = dispatcher.handle_bytes(json.dumps(request).encode(), _surface(dispatcher, method))
            assert reply is not None
            strict_json(reply)
            error = reply.get("error")
            if error is None:
                result = reply["result"]
                if isinstance(result, dict) and result.get("is_error"):  # the memory tool's refusal
                    assert path[-1] in result["content"], (method, path, value, result)
                continue
            assert error["code"] == -32602, (method, path, value, error)
            assert path[-1] in error["message"], (method, path, value, error)


def test_the_timeline_stream_refuses_a_cursor_no_event_could_have_naming_the_header_or_param(
    tmp_path: Path, backend: Backend
) -> None:
    from starlette.testclient import TestClient

    from meta_memory.gateway.http import build_app

    config = load_config_dict(backend.config(DEFAULT_CONFIG))
    with (
        MetaRuntime.open(tmp_path / "state", config) as runtime,
        TestClient(build_app(runtime), base_url="http://127.0.0.1:8765") as client,
    ):
        for bad in (*HUGE_CURSORS["after"], "evt-1", "console-evt-"):
            header = {"Last-Event-ID": bad.encode()}  # bytes: httpx sends them as they are
            by_header = client.get("/console/timeline/stream", headers=header)
            by_param = client.get("/console/timeline/stream", params={"after": bad})
            for field, response in (("Last-Event-ID", by_header), ("after", by_param)):
                assert response.status_code == 400, (field, bad, response.text)
                error = json.loads(response.text)["error"]
                assert error["code"] == -32602 and error["message"].startswith(f"{field} must be"), error
