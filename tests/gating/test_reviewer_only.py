"""Gated memory promotions (the steward's ``memory.quarantine_promote`` / ``memory.proposal_promote``
entries) are decided only through a reviewer check the calling surface supplies, and an authenticated
caller is the approver it records: the engine's half of "quarantine leaves only through a reviewer"."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from meta_memory.errors import AccessDenied
from meta_memory.gateway.dispatch import to_wire_error
from meta_memory.gating import (
    REVIEWER_ONLY_ACTIONS,
    DecideRequest,
    EvaluateResult,
    Gating,
    GatingDecisionRefused,
    PendingEntry,
    Resolution,
    parse_decide_params,
)
from meta_memory.steward.promotions import PROMOTE_PROPOSAL_ACTION, PROMOTE_QUARANTINE_ACTION

Evaluate = Callable[..., EvaluateResult]
Events = Callable[[Gating], list[str]]
DECISIONS = ["approve", "reject", "escalate"]


def promotion(gating: Gating, action: str = PROMOTE_QUARANTINE_ACTION) -> PendingEntry:
    """An entry as the steward opens one when it stages a promotion."""
    return gating.create_pending(
        action, "memory-steward:run-1", "crew", "mem-1", f"{action}: record mem-1 into mob scope 'crew'"
    )


def decision(pending_id: str, verdict: str, approver: str = "ops") -> DecideRequest:
    return parse_decide_params({"pending_id": pending_id, "approver_id": approver, "decision": verdict})


def test_the_reviewer_only_actions_are_exactly_the_steward_promotion_actions() -> None:
    assert {PROMOTE_QUARANTINE_ACTION, PROMOTE_PROPOSAL_ACTION} == REVIEWER_ONLY_ACTIONS


@pytest.mark.parametrize("action", sorted(REVIEWER_ONLY_ACTIONS))
@pytest.mark.parametrize("verdict", DECISIONS)
def test_a_gated_promotion_is_not_decided_without_a_reviewer(
    gating: Gating, events: Events, notices: list[Resolution], action: str, verdict: str
) -> None:
    entry = promotion(gating, action)
    with pytest.raises(AccessDenied) as refused:
        gating.decide(decision(entry.pending_id, verdict))
    wire = to_wire_error(refused.value)
    assert wire["code"] == -32030
    assert wire["data"] == {
        "kind": "access_denied",
        "action": "memory.quarantine.review",
        "resource": entry.pending_id,
    }
    assert "quarantine reviewer" in wire["message"] and action in wire["message"]
    assert gating.pending().pending == (entry,)  # nothing changed
    assert events(gating) == ["pending_created"] and notices == []


def test_a_reviewer_check_that_refuses_leaves_the_promotion_pending(
    gating: Gating, notices: list[Resolution]
) -> None:
    entry = promotion(gating)
    seen: list[PendingEntry] = []

    def no_grant(checked: PendingEntry) -> None:
        seen.append(checked)
        raise AccessDenied("memory.quarantine.review", checked.pending_id)

    with pytest.raises(AccessDenied):
        gating.decide(decision(entry.pending_id, "approve"), reviewer=no_grant)
    assert seen == [entry]
    assert gating.pending().pending == (entry,) and notices == []


@pytest.mark.parametrize("verdict", DECISIONS)
def test_a_reviewer_decides_a_gated_promotion(
    gating: Gating, notices: list[Resolution], verdict: str
) -> None:
    entry = promotion(gating)
    result = gating.decide(decision(entry.pending_id, verdict), reviewer=lambda _: None)
    assert (result.decision, result.approver_id) == (verdict, "ops")
    assert [n.pending_id for n in notices] == [entry.pending_id]


def test_an_ordinary_r3_entry_needs_no_reviewer(gating: Gating, evaluate: Evaluate) -> None:
    pending = evaluate(gating, risk_tier="r3", action="deploy")
    assert pending.pending_id is not None
    result = gating.decide(decision(pending.pending_id, "approve"))
    assert result.outcome == "allowed"


def test_an_authenticated_caller_must_name_itself_as_approver(
    gating: Gating, evaluate: Evaluate, events: Events, notices: list[Resolution]
) -> None:
    pending = evaluate(gating, risk_tier="r3")
    assert pending.pending_id is not None
    with pytest.raises(GatingDecisionRefused) as refused:
        gating.decide(decision(pending.pending_id, "approve", approver="ops:alice"), caller="app")
    assert refused.value.reason == "approver_not_caller"
    assert refused.value.code == -32602
    assert refused.value.message.startswith("Invalid params: approver_id 'ops:alice' must be")
    assert "'app'" in refused.value.message
    assert events(gating) == ["pending_created"] and notices == []
    result = gating.decide(decision(pending.pending_id, "approve", approver="app"), caller="app")
    assert result.approver_id == "app"
    assert gating.audit().entries[-1].detail["approver_id"] == "app"


def test_an_authenticated_actor_still_cannot_approve_its_own_action(
    gating: Gating, evaluate: Evaluate
) -> None:
    pending = evaluate(gating, risk_tier="r3", actor_id="app")
    assert pending.pending_id is not None
    with pytest.raises(GatingDecisionRefused) as refused:
        gating.decide(decision(pending.pending_id, "approve", approver="app"), caller="app")
    assert refused.value.reason == "self_approval"


def test_the_steward_cannot_approve_the_promotion_it_staged(gating: Gating) -> None:
    entry = promotion(gating)
    with pytest.raises(GatingDecisionRefused) as refused:
        gating.decide(decision(entry.pending_id, "approve", approver=entry.actor_id), reviewer=lambda _: None)
    assert refused.value.reason == "self_approval"


def test_pending_can_leave_out_what_only_a_reviewer_decides(gating: Gating, evaluate: Evaluate) -> None:
    staged = promotion(gating)
    ordinary = evaluate(gating, risk_tier="r3")
    assert [e.pending_id for e in gating.pending().pending] == [staged.pending_id, ordinary.pending_id]
    listed = gating.pending(include_reviewer_only=False).pending
    assert [e.pending_id for e in listed] == [ordinary.pending_id]
