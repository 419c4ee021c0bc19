"""``meta/agent_memory/propose``: the application queues a proposal for a mob or, with
``operator_scope = "provisional"``, an operator scope; the LLM's ``memory`` tool keeps its schema
(``propose_to_mob``, mob only). With ``operator_scope = "off"`` operator scope has no proposals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from meta_memory.clock import ManualClock
from meta_memory.memory.records import ScopeKind, content_hash

from ...conftest import Backend
from .conftest import Floor, floor_config, serve

PROPOSE = "meta/agent_memory/propose"
BILLING = {
    "scope": {"kind": "operator", "key": "acme"},
    "title": "Billing",
    "body": "Invoices go out monthly.",
}


def test_the_application_queues_an_operator_proposal_an_operator_accepts(floor: Floor) -> None:
    made = floor.rpc(PROPOSE, {**BILLING, "tags": ["Finance"], "kind": "procedure"})

    assert made == {
        "proposal_id": made["proposal_id"],
        "realm": "default",
        "scope_kind": "operator",
        "scope_key": "acme",
        "status": "pending",
        "tainted": False,
        "content_hash": content_hash("Billing", "Invoices go out monthly."),
    }
    row = floor.listed()[made["proposal_id"]]
    assert (row["author"], row["kind"]) == ({"author": "application"}, "procedure")
    done = floor.decide(made["proposal_id"], "accept", subject="olga")
    record = floor.record(done["record"]["memory_id"])
    assert (record.scope.kind, record.scope.key, record.tags) == (ScopeKind.OPERATOR, "acme", ("finance",))


def test_with_operator_scope_off_an_operator_proposal_is_refused_naming_the_setting(
    tmp_path: Path, backend: Backend, clock: ManualClock
) -> None:
    with serve(tmp_path / "state", floor_config(operator_scope="off"), backend, clock) as floor:
        refused = floor.refused(lambda: floor.rpc(PROPOSE, BILLING))

        assert refused.code == -32602 and "operator_scope" in refused.message
        assert floor.listed() == {}
        assert floor.rpc(PROPOSE, {**BILLING, "scope": {"kind": "mob", "key": "crew"}})["status"] == "pending"


def test_operator_proposals_left_from_provisional_are_only_rejected_once_it_is_off(
    tmp_path: Path, backend: Backend, clock: ManualClock
) -> None:
    state = tmp_path / "state"
    with serve(state, floor_config(), backend, clock) as floor:
        first, second = (
            floor.rpc(PROPOSE, {**BILLING, "body": body})["proposal_id"] for body in ("One.", "Two.")
        )

    with serve(state, floor_config(operator_scope="off"), backend, clock) as floor:
        refused = floor.refused(lambda: floor.decide(first, "accept", subject="olga"))
        rejected = floor.decide(second, "reject", subject="olga")

        assert refused.code == -32043 and refused.data is not None
        assert refused.data["reason"] == "operator_scope_off" and "operator_scope" in refused.message
        assert rejected["outcome"] == "rejected" and floor.status(first) == "pending"


def test_the_memory_tool_keeps_propose_to_mob_and_refuses_a_scope_field(floor: Floor) -> None:
    key = floor.rpc("meta/session/open", {"identity": "scout", "mob": "crew"})["session_key"]
    arguments = {
        "action": "propose_to_mob",
        "title": "T",
        "body": "B",
        "scope": {"kind": "operator", "key": "acme"},
    }

    done = floor.rpc("meta/session/memory_tool", {"session_key": key, "arguments": arguments})

    assert done["is_error"] is True and "scope" in done["content"]
    assert floor.listed() == {}


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"scope": None}, "scope"),
        ({"scope": "operator"}, "scope"),
        ({"scope": {"kind": "identity", "key": "lead"}}, "scope.kind"),
        ({"scope": {"kind": "realm", "key": ""}}, "scope.kind"),
        ({"scope": {"kind": "mob", "key": " crew"}}, "scope.key"),
        ({"scope": {"kind": "mob", "key": "a\nb"}}, "scope.key"),
        ({"scope": {"kind": "mob", "key": "crew", "extra": 1}}, "scope"),
        ({"title": "  "}, "title"),
        ({"body": None}, "body"),
        ({"description": 5}, "description"),
        ({"description": "x" * 401}, "description"),
        ({"tags": "ops"}, "tags"),
        ({"kind": "rumour"}, "kind"),
    ],
)
def test_bad_params_are_refused_naming_the_field(floor: Floor, params: dict[str, Any], field: str) -> None:
    sent = {k: v for k, v in {**BILLING, **params}.items() if v is not None}

    refused = floor.refused(lambda: floor.rpc(PROPOSE, sent))

    assert refused.code == -32602 and refused.message.startswith(field), refused.message


def test_a_secret_in_a_proposal_is_refused_and_nothing_is_queued(floor: Floor) -> None:
    refused = floor.refused(lambda: floor.rpc(PROPOSE, {**BILLING, "body": "aws key AKIAABCDEFGHIJKLMNOP"}))

    assert refused.data is not None and refused.data["rule"] == "secret-detected"
    assert floor.listed() == {}
