"""The stdio transport's envelope rules, over one real ``meta_gateway stdio`` process shared by the
module (default config: ledger persisted, agent memory on). Every test sends its own requests with
its own ids, so the tests do not depend on each other's order."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from meta_memory import CONTRACT_VERSION, InvalidParams, MetaHandle

MiB = 1024 * 1024

INVALID_REQUEST = {"code": -32600, "message": "Invalid Request"}


@pytest.fixture(scope="module")
def session(launch_stdio: Callable[..., Any], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    root = tmp_path_factory.mktemp("stdio-session")
    gateway = launch_stdio(root / "state", stderr_path=root / "stderr.log")
    yield gateway
    gateway.kill()


def test_the_first_line_is_the_contract_version_handshake(session: Any) -> None:
    assert session.handshake == {"contract_version": CONTRACT_VERSION}
    assert json.loads(session.transcript[0]) == session.handshake


def test_notifications_get_no_reply_even_when_they_fail(session: Any) -> None:
    session.send({"jsonrpc": "2.0", "method": "meta/status"})
    session.send({"jsonrpc": "2.0", "method": "meta/no-such-method"})
    session.send({"jsonrpc": "2.0", "method": "meta/memory/index", "params": {"entity": 1}})
    # The next line on the wire must be the answer to this request, not to a notification.
    assert session.call("meta/capabilities", id="after-notifications")["result"]["contract_version"]


def test_malformed_json_is_a_parse_error_with_a_null_id_and_where_it_broke(session: Any) -> None:
    session.send_raw(b'{"jsonrpc": "2.0", "id": 7, "method": \n')
    assert session.read() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32700,
            "message": "Parse error",
            "data": {"detail": "Expecting value at line 1, column 39"},
        },
    }


@pytest.mark.parametrize(
    "batch", [[{"jsonrpc": "2.0", "id": 1, "method": "meta/status"}], []], ids=["one", "empty"]
)
def test_a_batch_array_is_an_invalid_request(session: Any, batch: list[Any]) -> None:
    session.send(batch)
    reply = session.read()
    assert reply["id"] is None
    assert {k: reply["error"][k] for k in ("code", "message")} == INVALID_REQUEST
    assert "result" not in reply


@pytest.mark.parametrize("value", [42, "meta/status", None, True, 1.5])
def test_a_json_value_that_is_not_an_object_is_an_invalid_request(session: Any, value: Any) -> None:
    session.send(value)
    assert session.read() == {"jsonrpc": "2.0", "id": None, "error": INVALID_REQUEST}


@pytest.mark.parametrize("version", ["absent", "1.0", 2.0, None], ids=["absent", "1.0", "number", "null"])
def test_a_missing_or_wrong_jsonrpc_member_is_an_invalid_request_echoing_the_id(
    session: Any, version: Any
) -> None:
    message: dict[str, Any] = {"id": f"v-{version}", "method": "meta/status"}
    if version != "absent":
        message["jsonrpc"] = version
    session.send(message)
    assert session.read() == {"jsonrpc": "2.0", "id": f"v-{version}", "error": INVALID_REQUEST}


@pytest.mark.parametrize("method", [None, 5, ["meta/status"]], ids=["null", "number", "array"])
def test_a_method_that_is_not_a_string_is_an_invalid_request(session: Any, method: Any) -> None:
    session.send({"jsonrpc": "2.0", "id": "m", "method": method})
    assert session.read() == {"jsonrpc": "2.0", "id": "m", "error": INVALID_REQUEST}


@pytest.mark.parametrize("request_id", [{"k": 1}, [1], True], ids=["object", "array", "boolean"])
def test_an_id_of_the_wrong_type_is_an_invalid_request_with_a_null_id(session: Any, request_id: Any) -> None:
    session.send({"jsonrpc": "2.0", "id": request_id, "method": "meta/status"})
    assert session.read() == {"jsonrpc": "2.0", "id": None, "error": INVALID_REQUEST}


def test_an_unknown_method_is_method_not_found_naming_it(session: Any) -> None:
    reply = session.call("meta/memory/delete", {"entity": "e"}, id=41)
    assert reply == {
        "jsonrpc": "2.0",
        "id": 41,
        "error": {
            "code": -32601,
            "message": "Method not found",
            "data": {"detail": "no method 'meta/memory/delete' here (rpc.discover lists them)"},
        },
    }


def test_ids_without_a_json_spelling_are_refused_and_every_reply_stays_strict_json(session: Any) -> None:
    session.send_raw(b'{"jsonrpc": "2.0", "id": NaN, "method": "meta/status"}\n')
    assert session.read()["error"]["code"] == -32700  # NaN is not JSON
    session.send_raw(b'{"jsonrpc": "2.0", "id": 1e400, "method": "meta/status"}\n')
    assert session.read() == {"jsonrpc": "2.0", "id": None, "error": INVALID_REQUEST}  # 1e400 overflows
    session.send_raw(
        b'{"jsonrpc": "2.0", "id": 2, "method": "meta/memory/index", "params": '
        b'{"entity": "e", "topic": "t", "fact": "f", "metadata": {"x": Infinity}}}\n'
    )
    assert session.read()["error"]["code"] == -32700


IDX, QRY, STO = "meta/memory/index", "meta/memory/query", "meta/memory/stores"
REM, REC, FGT = "meta/agent_memory/remember", "meta/agent_memory/recall", "meta/agent_memory/forget"
ENTRY = {"entity": "e", "topic": "t", "fact": "f"}
NOTE = {"identity": "lead:main", "title": "t", "body": "b"}
PARAM_CASES = [
    (IDX, [1], "params must be a JSON object"),
    (IDX, None, "params must be a JSON object"),
    (IDX, {"topic": "t", "fact": "f"}, "entity must be a non-empty string"),
    (IDX, {**ENTRY, "entity": 7}, "entity must be a non-empty string"),
    (IDX, {**ENTRY, "entity": "   "}, "entity must be a non-empty string"),
    (IDX, {**ENTRY, "topic": False}, "topic must be a non-empty string"),
    (IDX, {**ENTRY, "store": 5}, "store must be a non-empty string when provided"),
    (IDX, {**ENTRY, "store": ""}, "store must be a non-empty string when provided"),
    (
        IDX,
        {**ENTRY, "store": " Graph "},
        "store 'graph' is unsupported (allowed: knowledge_graph, vector, timeline, todo, top_of_mind)",
    ),
    (IDX, {**ENTRY, "fact": 3}, "fact must be a non-empty string when provided"),
    (IDX, {**ENTRY, "fact": " "}, "fact must be a non-empty string when provided"),
    (IDX, {**ENTRY, "conflict": True, "fact": ""}, "fact must be a non-empty string when provided"),
    (IDX, {**ENTRY, "metadata": ["x"]}, "metadata must be a JSON object when provided"),
    (IDX, {**ENTRY, "conflict": "yes"}, "conflict must be a boolean when provided"),
    (IDX, {**ENTRY, "conflict": 1}, "conflict must be a boolean when provided"),
    (IDX, {**ENTRY, "conflict_reason": 5}, "conflict_reason must be a string when provided"),
    (IDX, {"entity": "e", "topic": "t"}, "fact is required unless conflict=true"),
    (IDX, {"entity": "e", "topic": "t", "conflict": False}, "fact is required unless conflict=true"),
    (QRY, "x", "params must be a JSON object"),
    (QRY, {"entity": 1}, "entity filter must be a string"),
    (QRY, {"topic": []}, "topic filter must be a string"),
    (STO, 5, "params must be a JSON object"),
    (STO, [], "params must be a JSON object"),
    (REM, {"title": "t", "body": "b"}, "identity must be a valid non-empty string"),
    (REM, {**NOTE, "title": ""}, "title must be a non-empty string"),
    (REM, {**NOTE, "body": 5}, "body must be a non-empty string"),
    (REM, {**NOTE, "title": "x" * 201}, "title must be at most 200 bytes"),
    (REM, {**NOTE, "tags": "ops"}, "tags must be an array when provided"),
    (REM, {**NOTE, "tags": ["ops", " "]}, "tags must contain only non-empty strings"),
    (REM, {**NOTE, "tags": [str(i) for i in range(33)]}, "tags must contain at most 32 entries"),
    (REM, {**NOTE, "tags": ["x" * 65]}, "tags must be at most 64 bytes"),
    (REM, {**NOTE, "realm": ""}, "realm must be a non-empty string when provided"),
    (
        REC,
        {"identity": "a", "selection": "never"},
        "selection must be 'always' or 'contextual' (got 'never')",
    ),
    (REC, {"identity": "a", "query_text": " "}, "query_text must be a non-empty string when provided"),
    (REC, {"identity": "a", "query_terms": "deploy"}, "query_terms must be an array when provided"),
    (REC, {"identity": "a", "query_terms": [1]}, "query_terms must contain only non-empty strings"),
    (REC, {"identity": "a", "max_entries": "8"}, "max_entries must be a positive integer when provided"),
    (REC, {"identity": "a", "max_entries": 65}, "max_entries must be between 1 and 64"),
    (FGT, {"identity": "a"}, "memory_id must be a non-empty string"),
]


@pytest.mark.parametrize(("method", "params", "message"), PARAM_CASES)
def test_bad_params_get_the_reference_message_on_the_wire_and_from_the_python_handle(
    session: Any, handle: MetaHandle, method: str, params: Any, message: str
) -> None:
    if method.startswith("meta/memory/"):
        message = "Invalid params: " + message  # ledger methods prefix, as upstream (REFERENCE 1.2)
    reply = session.call(method, params, id="params")
    assert reply == {"jsonrpc": "2.0", "id": "params", "error": {"code": -32602, "message": message}}
    with pytest.raises(InvalidParams) as raised:
        handle.call(method, params)
    assert (raised.value.code, raised.value.message) == (-32602, message)


def test_a_line_over_4_mib_is_refused_and_the_next_request_on_the_connection_is_answered(
    session: Any,
) -> None:
    padding = "a" * (4 * MiB + 1)
    session.send({"jsonrpc": "2.0", "id": "huge", "method": "meta/status", "params": {"pad": padding}})
    reply = session.read()
    assert reply["id"] is None
    assert {k: reply["error"][k] for k in ("code", "message")} == INVALID_REQUEST
    assert session.call("meta/status", id="after-huge")["result"]["contract_version"] == CONTRACT_VERSION


def test_a_line_just_under_the_cap_is_served(session: Any) -> None:
    def big(pad: str) -> dict[str, Any]:
        params = {"entity": "e", "topic": "t", "fact": "f", "metadata": {"pad": pad}}
        return {"jsonrpc": "2.0", "id": "big", "method": "meta/memory/index", "params": params}

    padding = "a" * (4 * MiB - len(json.dumps(big(""))))
    session.send(big(padding))
    assert session.read()["result"]["entity"] == "e"


HOSTILE_LINES = [
    b"\xff\xfe\x00garbage",
    b"[" * 200_000,
    b'{"jsonrpc": "2.0", "id": 9, "method": "meta/status", "params": {"n": 1' + b"0" * 5000 + b"}}",
    b'{"jsonrpc": "2.0", "id": 9, "method": "meta/agent_memory/remember", '
    b'"params": {"identity": "a", "title": "\\ud800", "body": "b"}}',
    b'{"jsonrpc": "2.0", "id": 9, "method": "meta/memory/index", '
    b'"params": {"entity": "e", "topic": "t", "fact": "f", "metadata": {"deep": '
    + b"[" * 50_000
    + b"]" * 50_000
    + b"}}}",
    b'{"jsonrpc": "2.0", "id": 9, "method": "meta/agent_memory/recall", "params": {"identity": "\\u0000"}}',
]


@pytest.mark.parametrize(
    "line", HOSTILE_LINES, ids=["bad-utf8", "deep-array", "huge-int", "surrogate", "deep-meta", "nul"]
)
def test_hostile_input_gets_a_json_rpc_error_and_never_a_traceback_on_stdout(
    session: Any, line: bytes
) -> None:
    session.send_raw(line + b"\n")
    reply = session.read()
    assert set(reply) == {"jsonrpc", "id", "error"}
    assert isinstance(reply["error"]["code"], int)
    assert session.call("meta/status", id="still-alive")["result"]
    assert not [seen for seen in session.transcript if b"Traceback" in seen or b'File "' in seen]


def test_status_reports_contract_version_state_dir_and_the_built_in_default_features(session: Any) -> None:
    result = session.call("meta/status", id="status")["result"]
    assert result["contract_version"] == CONTRACT_VERSION
    assert Path(result["state_dir"]).name == "state" and Path(result["state_dir"]).is_absolute()
    assert result["features"]["ledger"]["persisted"] is True
    assert result["features"]["agent_memory"]["enabled"] is True
    assert result["features"]["agent_memory"]["store"] == "sqlite"


def test_capabilities_over_stdio_list_the_whole_sdk_surface(session: Any) -> None:
    result = session.call("meta/capabilities", id="caps")["result"]
    assert result["contract_version"] == CONTRACT_VERSION
    assert {IDX, QRY, STO, REM, REC, FGT, "meta/status", "meta/capabilities"} <= set(result["methods"])
