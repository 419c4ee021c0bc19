"""``meta/storage/doctor`` on both surfaces: params and their error codes, the result shape, the live
census attached only for the runtime's own directory, per-identity counts, and access control."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from meta_memory.access import Principal
from meta_memory.clock import ManualClock
from meta_memory.config import load_config_dict
from meta_memory.gateway.dispatch import CONSOLE, SDK, CallContext
from meta_memory.gateway.methods import build_dispatcher
from meta_memory.memory.records import (
    Author,
    Provenance,
    Record,
    RecordKind,
    Scope,
    Status,
    Trust,
    content_hash,
)
from meta_memory.memory.validator import CreateOp, WriteBatch
from meta_memory.runtime import MetaRuntime
from meta_memory.sdk import MetaHandle

DOCTOR = "meta/storage/doctor"
SURFACES = [SDK, CONSOLE]


def reply(runtime: MetaRuntime, params: Any, *, surface: str = SDK, principal: Any = None) -> dict[str, Any]:
    """The wire reply to one doctor request (``params`` omitted when it is ``...``)."""
    request: dict[str, Any] = {"jsonrpc": "2.0", "id": 7, "method": DOCTOR}
    if params is not ...:
        request["params"] = params
    answer = build_dispatcher(runtime).handle_payload(request, CallContext(surface, principal))
    assert answer is not None
    return answer


def quarantine(runtime: MetaRuntime, identity: str, title: str, now: int) -> None:
    author = Author("agent", identity=identity)
    body = f"{title} body"
    record = Record(
        id=f"quarantined-{identity}",
        scope=Scope.identity("default", identity),
        kind=RecordKind.FACT,
        title=title,
        description="",
        body=body,
        tags=(),
        provenance=Provenance(author=author),
        trust=Trust.AGENT_OBSERVED,
        status=Status.QUARANTINED,
        quarantine_reason="tainted session",
        created_at_ms=now,
        updated_at_ms=now,
        content_hash=content_hash(title, body),
    )
    assert runtime.agent_memory is not None
    runtime.agent_memory.store("default").commit(WriteBatch("default", author, (CreateOp(record),)))


@pytest.mark.parametrize("surface", SURFACES)
@pytest.mark.parametrize(
    "params", [..., None, {}, {"state_dir": None}], ids=["absent", "null", "empty", "null-dir"]
)
def test_a_missing_state_dir_is_capability_unavailable_on_both_surfaces(
    runtime: MetaRuntime, surface: str, params: Any
) -> None:
    error = reply(runtime, params, surface=surface)["error"]
    assert error["code"] == -32004 and "state_dir" in error["message"]


@pytest.mark.parametrize("surface", SURFACES)
@pytest.mark.parametrize(
    ("params", "message"),
    [
        ([], "params must be a JSON object"),
        ("state", "params must be a JSON object"),
        ({"state_dir": 5}, "state_dir must be a non-empty string"),
        ({"state_dir": ""}, "state_dir must be a non-empty string"),
        ({"state_dir": "   "}, "state_dir must be a non-empty string"),
        ({"state_dir": "a\x00b"}, "state_dir must not contain NUL (U+0000) characters"),
        ({"state_dir": ["/tmp"]}, "state_dir must be a non-empty string"),
        ({"state_dir": "/tmp", "identity": 5}, "identity must be a non-empty string"),
        ({"state_dir": "/tmp", "identity": ""}, "identity must be a non-empty string"),
    ],
)
def test_params_of_the_wrong_type_are_invalid_params(
    runtime: MetaRuntime, surface: str, params: Any, message: str
) -> None:
    error = reply(runtime, params, surface=surface)["error"]
    assert error["code"] == -32602 and error["message"].startswith(message)


@pytest.mark.parametrize("surface", SURFACES)
def test_the_doctor_is_advertised_on_both_surfaces(runtime: MetaRuntime, surface: str) -> None:
    methods = build_dispatcher(runtime).call("meta/capabilities", None, CallContext(surface))["methods"]
    assert DOCTOR in methods


def test_a_runtime_diagnosing_its_own_dir_attaches_its_live_census(runtime: MetaRuntime) -> None:
    result = reply(runtime, {"state_dir": str(runtime.state_dir)})["result"]
    assert set(result) == {"state_dir", "diagnosis", "storage"}
    assert set(result["diagnosis"]) == {"findings", "inventory"}
    assert result["state_dir"] == str(runtime.state_dir)
    status = build_dispatcher(runtime).call("meta/status", None, CallContext(SDK))
    assert result["storage"] == status["storage"]
    codes = [f["code"] for f in result["diagnosis"]["findings"]]
    assert "durability-census" in codes and "durability-census-unavailable" not in codes


def test_another_spelling_of_its_own_dir_still_counts_as_its_own(runtime: MetaRuntime) -> None:
    spelled = f"{runtime.state_dir}/../{runtime.state_dir.name}/"
    assert reply(runtime, {"state_dir": spelled})["result"]["storage"] is not None


def test_any_other_dir_is_diagnosed_cold_with_a_null_census(runtime: MetaRuntime, tmp_path: Path) -> None:
    (tmp_path / "other").mkdir()
    result = reply(runtime, {"state_dir": str(tmp_path / "other")}, surface=CONSOLE)["result"]
    assert result["storage"] is None
    assert [f["code"] for f in result["diagnosis"]["findings"]] == ["durability-census-unavailable"]


def test_a_missing_dir_is_a_finding_not_an_error_reply(runtime: MetaRuntime, tmp_path: Path) -> None:
    result = reply(runtime, {"state_dir": str(tmp_path / "nowhere")})["result"]
    missing = [f for f in result["diagnosis"]["findings"] if f["code"] == "state-dir-missing"]
    assert missing == [
        {
            "severity": "error",
            "code": "state-dir-missing",
            "message": f"state dir {tmp_path / 'nowhere'} does not exist",
            "path": str(tmp_path / "nowhere"),
        }
    ]
    assert not (tmp_path / "nowhere").exists()


def test_inventory_counts_records_by_status_and_per_identity(
    runtime: MetaRuntime, clock: ManualClock
) -> None:
    handle = MetaHandle(runtime)
    kept = handle.remember_agent_memory("alice", title="Kept", body="Kept note.")
    old = handle.remember_agent_memory("alice", title="Old", body="Old note.")
    gone = handle.remember_agent_memory("alice", title="Gone", body="Gone note.")
    handle.remember_agent_memory("bob", title="Bob", body="Bob's note.")
    handle.remember_agent_memory("bob", title="Elsewhere", body="Another realm.", realm="ops")
    quarantine(runtime, "alice", "Tainted", clock.now_ms())
    clock.advance(10)
    handle.update_agent_memory("alice", old.memory_id, title="New", body="New note.")
    handle.forget_agent_memory("alice", gone.memory_id)
    assert kept.memory_id

    result = reply(runtime, {"state_dir": str(runtime.state_dir), "identity": "alice"})["result"]
    rows = {row["realm"]: row for row in result["diagnosis"]["inventory"]}
    assert set(rows) == {"default", "ops"}
    default = rows["default"]
    assert default["records"] == {"active": 3, "quarantined": 1, "superseded": 1, "tombstoned": 1}
    assert default["identity"] == "alice"
    assert default["identity_records"] == {"active": 2, "quarantined": 1, "superseded": 1, "tombstoned": 1}
    assert rows["ops"]["identity_records"] == {
        "active": 0,
        "quarantined": 0,
        "superseded": 0,
        "tombstoned": 0,
    }
    assert default["schema_version"] >= 1 and default["bytes"] > 0
    assert isinstance(default["pending_index"], int) and isinstance(default["unmerged_index"], int)
    assert default["path"] == str(runtime.state_dir / "agent-memory" / "default.sqlite3")

    without = reply(runtime, {"state_dir": str(runtime.state_dir)})["result"]["diagnosis"]["inventory"]
    assert all("identity" not in row and "identity_records" not in row for row in without)


def test_the_console_doctor_needs_runtime_admin(tmp_path: Path) -> None:
    config = load_config_dict({"access": {"enabled": True, "admins": ["root"]}})
    with MetaRuntime.open(tmp_path / "state", config) as runtime:
        params = {"state_dir": str(runtime.state_dir)}
        denied = reply(runtime, params, surface=CONSOLE, principal=Principal("stranger"))["error"]
        allowed = reply(runtime, params, surface=CONSOLE, principal=Principal("root"))
    assert (denied["code"], denied["data"]["action"]) == (-32030, "runtime.admin")
    assert "result" in allowed
