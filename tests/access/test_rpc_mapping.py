"""The console method table: which method needs which actions, read-only refusals, and agreement
with the gateway's own method table."""

from __future__ import annotations

import re

import pytest

from meta_memory.access import ANONYMOUS, RPC_ACCESS, authorize_method, decide_actions, method_access
from meta_memory.errors import AccessDenied, ReadOnly
from meta_memory.gateway.dispatch import CONSOLE
from meta_memory.gateway.methods import build_methods
from meta_memory.runtime import MetaRuntime

from .conftest import ALICE, MakeEngine


@pytest.mark.parametrize(
    ("method", "actions"),
    [
        ("meta/agent_memory/remember", ("agent.memory.write",)),
        ("meta/agent_memory/forget", ("agent.memory.delete",)),
        ("meta/agent_memory/recall", ("agent.memory.read", "agent.view")),
        ("meta/agent_memory/manifest", ("agent.memory.read", "agent.view")),
        ("meta/storage/doctor", ("runtime.admin",)),
    ],
)
def test_the_reference_rpc_mapping_is_in_the_table(method: str, actions: tuple[str, ...]) -> None:
    assert RPC_ACCESS[method].actions == actions


def test_a_quarantine_decision_needs_review_view_read_and_write_or_delete() -> None:
    base = ("memory.quarantine.review", "agent.memory.read", "agent.view")
    assert decide_actions("release") == (*base, "agent.memory.write")
    assert decide_actions("tombstone") == (*base, "agent.memory.delete")
    with pytest.raises(ValueError, match="verdict must be"):
        decide_actions("hold")


def test_recall_needs_both_read_and_view_on_the_identity(make_engine: MakeEngine) -> None:
    engine = make_engine({"subjects": ["alice"], "actions": ["agent.memory.read"], "agents": ["red-writer"]})
    with pytest.raises(AccessDenied) as denied:
        authorize_method(engine, ALICE, "meta/agent_memory/recall", identity="red-writer")
    assert denied.value.data == {"kind": "access_denied", "action": "agent.view", "resource": "red-writer"}
    granted = make_engine(
        {"subjects": ["alice"], "actions": ["agent.memory.read", "agent.view"], "agents": ["red-writer"]}
    )
    authorize_method(granted, ALICE, "meta/agent_memory/recall", identity="red-writer")
    with pytest.raises(AccessDenied):
        authorize_method(granted, ALICE, "meta/agent_memory/recall", identity="blue-writer")


def test_a_read_only_console_refuses_mutating_methods_before_access_is_judged(
    make_engine: MakeEngine,
) -> None:
    engine = make_engine(enabled=False, admins=())
    for method in ("meta/agent_memory/remember", "meta/agent_memory/forget", "meta/memory/quarantine/decide"):
        with pytest.raises(ReadOnly) as refused:
            authorize_method(engine, ALICE, method, read_only=True, identity="x", verdict="release")
        assert refused.value.code == -32010 and refused.value.data == {"kind": "read_only"}
    authorize_method(engine, ALICE, "meta/agent_memory/recall", read_only=True, identity="x")


def test_a_decision_is_denied_naming_the_record_and_the_first_missing_action(make_engine: MakeEngine) -> None:
    engine = make_engine(
        {
            "subjects": ["alice"],
            "actions": ["memory.quarantine.review", "agent.view", "agent.memory.read", "agent.memory.delete"],
        }
    )
    authorize_method(
        engine,
        ALICE,
        "meta/memory/quarantine/decide",
        identity="red-writer",
        record_id="mem-1",
        verdict="tombstone",
    )
    with pytest.raises(AccessDenied) as denied:
        authorize_method(
            engine,
            ALICE,
            "meta/memory/quarantine/decide",
            identity="red-writer",
            record_id="mem-1",
            verdict="release",
        )
    assert denied.value.data == {"kind": "access_denied", "action": "agent.memory.write", "resource": "mem-1"}


def test_anonymous_is_held_to_the_same_grants_for_a_decision(make_engine: MakeEngine) -> None:
    engine = make_engine({"subjects": ["*"], "actions": ["*"]})
    with pytest.raises(AccessDenied, match=re.escape("memory.quarantine.review")):
        authorize_method(engine, ANONYMOUS, "meta/memory/quarantine/decide", identity="x", verdict="release")


def test_unscoped_panel_reads_need_an_unscoped_read_grant(make_engine: MakeEngine) -> None:
    scoped = make_engine({"subjects": ["alice"], "actions": ["agent.memory.read"], "roles": ["writer"]})
    with pytest.raises(AccessDenied) as denied:
        authorize_method(scoped, ALICE, "meta/memory/panel/overview")
    assert denied.value.data == {"kind": "access_denied", "action": "agent.memory.read", "resource": None}
    authorize_method(
        make_engine({"subjects": ["alice"], "actions": ["agent.memory.read"]}),
        ALICE,
        "meta/memory/panel/overview",
    )


def test_the_quarantine_queue_is_gated_by_holding_review_anywhere(make_engine: MakeEngine) -> None:
    scoped = make_engine(
        {"subjects": ["alice"], "actions": ["memory.quarantine.review"], "roles": ["writer"]}
    )
    authorize_method(scoped, ALICE, "meta/memory/panel/quarantine")
    with pytest.raises(AccessDenied, match=re.escape("memory.quarantine.review")):
        authorize_method(
            make_engine({"subjects": ["alice"], "actions": ["agent.*"]}),
            ALICE,
            "meta/memory/panel/quarantine",
        )


def test_a_console_method_missing_from_the_table_needs_runtime_admin(make_engine: MakeEngine) -> None:
    assert method_access("meta/some/new_method").actions == ("runtime.admin",)
    engine = make_engine({"subjects": ["alice"], "actions": ["agent.*", "memory.*", "mob.*"]})
    with pytest.raises(AccessDenied, match=re.escape("runtime.admin")):
        authorize_method(engine, ALICE, "meta/some/new_method")


def test_an_identity_gated_method_without_an_identity_is_a_caller_bug(make_engine: MakeEngine) -> None:
    with pytest.raises(ValueError, match="pass identity="):
        authorize_method(make_engine(), ALICE, "meta/agent_memory/remember")


def test_every_console_method_of_the_gateway_is_mapped_with_the_same_mutating_flag(
    runtime: MetaRuntime,
) -> None:
    console = {name: m for name, m in build_methods(runtime).items() if CONSOLE in m.surfaces}
    assert console, "the gateway serves no console method"
    unmapped = sorted(set(console) - set(RPC_ACCESS))
    assert unmapped == [], f"console methods without an access entry: {unmapped}"
    assert {n: m.mutating for n, m in console.items()} == {n: RPC_ACCESS[n].mutating for n in console}
