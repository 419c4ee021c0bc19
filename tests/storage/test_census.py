"""The storage census (REFERENCE 8) on ``meta/status`` and ``meta/capabilities``: its shape, the
agent-memory and event-log slots this runtime persists, the required domains it does not provide,
and who sees it on the console."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from meta_memory.access import Principal
from meta_memory.clock import ManualClock
from meta_memory.config import load_config_dict
from meta_memory.events import MemoryEventSink
from meta_memory.gateway.dispatch import CONSOLE, SDK, CallContext
from meta_memory.gateway.methods import build_dispatcher
from meta_memory.runtime import MetaRuntime
from meta_memory.sdk import MetaHandle
from meta_memory.storage.census import NOT_PROVIDED_DOMAINS, REQUIRED_DOMAINS

SLOT_KEYS = {"domain", "class", "resolution", "backend", "degraded"}


def call(runtime: MetaRuntime, method: str, *, surface: str = SDK, principal: Any = None) -> dict[str, Any]:
    result: dict[str, Any] = build_dispatcher(runtime).call(method, None, CallContext(surface, principal))
    return result


def slots_by_domain(storage: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {slot["domain"]: slot for slot in storage["slots"]}


def test_status_carries_the_storage_object_with_blob_session_and_slot_fields(runtime: MetaRuntime) -> None:
    storage = call(runtime, "meta/status")["storage"]
    assert set(storage) == {"blob_durability", "blob_store_persistent", "session_store_incremental", "slots"}
    assert (storage["blob_durability"], storage["blob_store_persistent"]) == ("none", False)
    assert storage["session_store_incremental"] is None
    for slot in storage["slots"]:
        assert SLOT_KEYS <= set(slot) <= SLOT_KEYS | {"detail"}, slot
        assert slot["class"] in ("durable", "scratch")
        assert slot["resolution"] in ("persistent", "declared_ephemeral", "non_persistent")
        assert isinstance(slot["backend"], str) and isinstance(slot["degraded"], bool)
    domains = [slot["domain"] for slot in storage["slots"]]
    assert len(domains) == len(set(domains))
    assert set(REQUIRED_DOMAINS) <= set(domains)


def test_the_agent_memory_store_is_a_durable_persistent_sqlite_slot_naming_its_root_and_realms(
    runtime: MetaRuntime,
) -> None:
    handle = MetaHandle(runtime)
    assert slots_by_domain(call(runtime, "meta/status")["storage"])["agent_memory"]["detail"] == (
        f"{runtime.state_dir / 'agent-memory'} (0 realms)"
    )
    handle.remember_agent_memory("alice", title="Deploys", body="Deploys happen on Tuesdays.")
    handle.remember_agent_memory("alice", title="Pager", body="The pager rotates weekly.", realm="ops team")
    slot = slots_by_domain(call(runtime, "meta/status")["storage"])["agent_memory"]
    assert slot == {
        "domain": "agent_memory",
        "class": "durable",
        "resolution": "persistent",
        "backend": "sqlite",
        "degraded": False,
        "detail": f"{runtime.state_dir / 'agent-memory'} (2 realms)",
    }


def test_the_realm_count_ignores_files_whose_names_no_realm_encodes_to(runtime: MetaRuntime) -> None:
    MetaHandle(runtime).remember_agent_memory("alice", title="Deploys", body="Deploys happen on Tuesdays.")
    root = runtime.state_dir / "agent-memory"
    (root / "not a realm.sqlite3").write_bytes(b"")
    (root / "notes.txt").write_bytes(b"")
    assert slots_by_domain(call(runtime, "meta/status")["storage"])["agent_memory"]["detail"].endswith(
        "(1 realm)"
    )


def test_the_event_log_is_a_durable_persistent_slot_at_the_timeline_file(runtime: MetaRuntime) -> None:
    slot = slots_by_domain(call(runtime, "meta/status")["storage"])["event_log"]
    assert slot == {
        "domain": "event_log",
        "class": "durable",
        "resolution": "persistent",
        "backend": "sqlite",
        "degraded": False,
        "detail": str(runtime.state_dir / "event_log.sqlite3"),
    }
    assert (runtime.state_dir / "event_log.sqlite3").is_file()


@pytest.mark.parametrize("domain", NOT_PROVIDED_DOMAINS)
def test_required_domains_this_runtime_lacks_are_reported_non_persistent_not_omitted(
    runtime: MetaRuntime, domain: str
) -> None:
    slot = slots_by_domain(call(runtime, "meta/status")["storage"])[domain]
    assert slot == {
        "domain": domain,
        "class": "durable",
        "resolution": "non_persistent",
        "backend": "none",
        "degraded": False,
        "detail": "not provided by this runtime",
    }


def test_in_memory_state_is_declared_scratch_and_the_ledger_is_not_a_slot(runtime: MetaRuntime) -> None:
    slots = slots_by_domain(call(runtime, "meta/status")["storage"])
    scratch = {d for d, s in slots.items() if s["class"] == "scratch"}
    assert scratch == {"host_sessions", "gating"}
    assert all(slots[d]["resolution"] == "declared_ephemeral" for d in scratch)
    assert not [d for d in slots if "ledger" in d]


def test_disabled_agent_memory_is_a_non_persistent_slot_that_is_not_degraded(tmp_path: Path) -> None:
    config = load_config_dict({"agent_memory": {"enabled": False}})
    with MetaRuntime.open(tmp_path / "state", config) as runtime:
        slot = slots_by_domain(call(runtime, "meta/status")["storage"])["agent_memory"]
    assert (slot["resolution"], slot["backend"], slot["degraded"]) == ("non_persistent", "disabled", False)
    assert "not enabled" in slot["detail"]


def test_a_caller_provided_event_sink_makes_the_event_log_a_declared_ephemeral_slot(tmp_path: Path) -> None:
    with MetaRuntime.open(tmp_path / "state", events=MemoryEventSink(), clock=ManualClock()) as runtime:
        slot = slots_by_domain(call(runtime, "meta/status")["storage"])["event_log"]
    assert (slot["class"], slot["resolution"]) == ("durable", "declared_ephemeral")
    assert not (tmp_path / "state" / "event_log.sqlite3").exists()


def test_a_legacy_agent_memory_root_is_the_root_the_census_names(tmp_path: Path) -> None:
    state = tmp_path / "state"
    (state / "agent-memory-sqlite").mkdir(parents=True)
    with MetaRuntime.open(state) as runtime:
        detail = slots_by_domain(call(runtime, "meta/status")["storage"])["agent_memory"]["detail"]
    assert detail == f"{state / 'agent-memory-sqlite'} (0 realms)"


@pytest.mark.parametrize("surface", [SDK, CONSOLE])
def test_capabilities_carry_the_same_storage_object_as_status(runtime: MetaRuntime, surface: str) -> None:
    status = call(runtime, "meta/status", surface=surface)
    capabilities = call(runtime, "meta/capabilities", surface=surface)
    assert capabilities["storage"] == status["storage"]


def test_the_console_shows_the_census_only_to_callers_who_may_read_status(tmp_path: Path) -> None:
    config = load_config_dict({"access": {"enabled": True, "admins": ["root"]}})
    with MetaRuntime.open(tmp_path / "state", config) as runtime:
        stranger = call(runtime, "meta/capabilities", surface=CONSOLE, principal=Principal("stranger"))
        admin = call(runtime, "meta/capabilities", surface=CONSOLE, principal=Principal("root"))
        sdk = call(runtime, "meta/capabilities")
    assert "storage" not in stranger and "meta/status" not in stranger["methods"]
    assert admin["storage"] == sdk["storage"]
