from __future__ import annotations

from collections.abc import Callable

import pytest

from meta_memory.clock import ManualClock
from meta_memory.errors import InvalidParams
from meta_memory.gateway.dispatch import to_wire_error
from meta_memory.gating import DecideResult, EvaluateResult, Gating, GatingDecisionRefused, Resolution

Evaluate = Callable[..., EvaluateResult]
Decide = Callable[..., DecideResult]
Events = Callable[[Gating], list[str]]


def test_approve_allows_the_action_and_clears_the_entry(
    gating: Gating, evaluate: Evaluate, decide: Decide, clock: ManualClock, events: Events
) -> None:
    pending = evaluate(gating, risk_tier="r3")
    clock.advance(250)
    result = decide(gating, pending.pending_id, "approve", reason="looks right")
    assert result.to_wire() == {
        "pending_id": pending.pending_id,
        "action_id": pending.action_id,
        "approver_id": "operator",
        "decision": "approve",
        "outcome": "allowed",
        "decided_at_ms": clock.now_ms(),
        "reason": "looks right",
        "next_pending_id": None,
        "audit_id": result.audit_id,
    }
    assert gating.pending().pending == ()
    assert events(gating) == ["pending_created", "approval_decided"]
    row = gating.audit().entries[-1]
    assert (row.audit_id, row.outcome, row.actor_id) == (result.audit_id, "allowed", "worker")
    assert row.detail == {
        "approver_id": "operator",
        "decision": "approve",
        "reason": "looks right",
        "next_pending_id": None,
    }


def test_reject_turns_the_action_into_a_safe_draft(
    gating: Gating, evaluate: Evaluate, decide: Decide, events: Events
) -> None:
    pending = evaluate(gating, risk_tier="r3")
    result = decide(gating, pending.pending_id, "reject")
    assert (result.outcome, result.next_pending_id) == ("safe_draft", None)
    assert gating.pending().pending == ()
    assert events(gating) == ["pending_created", "rejection_decided"]


def test_self_approval_is_refused_and_leaves_the_entry_pending(
    gating: Gating, evaluate: Evaluate, decide: Decide, events: Events, notices: list[Resolution]
) -> None:
    pending = evaluate(gating, risk_tier="r3", actor_id="worker")
    with pytest.raises(GatingDecisionRefused) as refused:
        decide(gating, pending.pending_id, "approve", approver_id=" worker ")
    assert refused.value.message == "Invalid params: approver_id cannot self-approve the action actor"
    assert refused.value.data == {
        "kind": "gating_decision_refused",
        "reason": "self_approval",
        "pending_id": pending.pending_id,
    }
    assert [e.pending_id for e in gating.pending().pending] == [pending.pending_id]
    assert events(gating) == ["pending_created"]
    assert notices == []


def test_a_refusal_crosses_the_wire_as_invalid_params_with_typed_data(
    gating: Gating, evaluate: Evaluate, decide: Decide
) -> None:
    pending = evaluate(gating, risk_tier="r3")
    with pytest.raises(InvalidParams) as refused:
        decide(gating, pending.pending_id, approver_id="worker")
    wire = to_wire_error(refused.value)
    assert wire["code"] == -32602
    assert wire["data"]["reason"] == "self_approval"


@pytest.mark.parametrize("decision", ["reject", "escalate"])
def test_the_actor_may_withdraw_or_escalate_its_own_request(
    gating: Gating, evaluate: Evaluate, decide: Decide, decision: str
) -> None:
    pending = evaluate(gating, risk_tier="r3")
    assert decide(gating, pending.pending_id, decision, approver_id="worker").decision == decision


@pytest.mark.parametrize("decision", ["approve", "reject", "escalate"])
def test_only_the_requested_approver_may_decide(
    gating: Gating, evaluate: Evaluate, decide: Decide, decision: str
) -> None:
    pending = evaluate(gating, risk_tier="r3", requested_approver="lead")
    with pytest.raises(GatingDecisionRefused) as refused:
        decide(gating, pending.pending_id, decision, approver_id="intern")
    assert refused.value.reason == "approver_mismatch"
    assert refused.value.message == (
        "Invalid params: approver_id 'intern' does not match requested_approver 'lead'"
    )
    assert len(gating.pending().pending) == 1
    assert decide(gating, pending.pending_id, decision, approver_id="lead").approver_id == "lead"


def test_an_unknown_pending_id_is_refused_clearly(gating: Gating, decide: Decide) -> None:
    with pytest.raises(GatingDecisionRefused) as refused:
        decide(gating, "gate-pending-v2-nope-000001")
    assert refused.value.reason == "unknown_pending"
    assert refused.value.message == (
        "Invalid params: pending_id 'gate-pending-v2-nope-000001' does not name a pending gating request"
    )


@pytest.mark.parametrize(("first", "cause"), [("approve", "approved"), ("reject", "rejected")])
def test_deciding_twice_is_refused_as_already_decided(
    gating: Gating, evaluate: Evaluate, decide: Decide, events: Events, first: str, cause: str
) -> None:
    pending = evaluate(gating, risk_tier="r3")
    decide(gating, pending.pending_id, first)
    with pytest.raises(GatingDecisionRefused) as refused:
        decide(gating, pending.pending_id, "approve")
    assert refused.value.reason == "resolved_pending"
    assert refused.value.message.endswith(f"was already decided ({cause})")
    assert len(events(gating)) == 2


def test_escalate_hands_the_request_to_a_successor_with_the_same_deadline(
    gating: Gating, evaluate: Evaluate, decide: Decide, clock: ManualClock, events: Events
) -> None:
    pending = evaluate(gating, risk_tier="r3", requested_approver="lead", rationale="why")
    clock.advance(1_000)
    result = decide(gating, pending.pending_id, "escalate", approver_id="lead", reason="above my pay grade")
    assert (result.outcome, result.decision) == ("pending_approval", "escalate")
    [successor] = gating.pending().pending
    assert successor.pending_id == result.next_pending_id != pending.pending_id
    assert (successor.action_id, successor.deadline_at_ms, successor.created_at_ms) == (
        pending.action_id,
        pending.deadline_at_ms,
        clock.now_ms(),
    )
    assert (successor.requested_approver, successor.escalated_from, successor.rationale) == (
        None,
        pending.pending_id,
        "why",
    )
    assert events(gating) == ["pending_created", "pending_created", "escalation_decided"]
    assert gating.audit().entries[1].detail["escalated_from_pending_id"] == pending.pending_id
    assert gating.audit().entries[2].detail["next_pending_id"] == successor.pending_id


def test_an_escalated_id_points_the_late_decider_at_its_successor(
    gating: Gating, evaluate: Evaluate, decide: Decide
) -> None:
    pending = evaluate(gating, risk_tier="r3")
    successor_id = decide(gating, pending.pending_id, "escalate").next_pending_id
    with pytest.raises(GatingDecisionRefused) as refused:
        decide(gating, pending.pending_id)
    assert refused.value.data is not None
    assert (refused.value.reason, refused.value.data["next_pending_id"]) == ("resolved_pending", successor_id)
    assert f"decide '{successor_id}' instead" in refused.value.message


def test_an_escalation_chain_ends_in_one_decision_under_the_last_id(
    gating: Gating, evaluate: Evaluate, decide: Decide, notices: list[Resolution]
) -> None:
    pending = evaluate(gating, risk_tier="r3")
    second = decide(gating, pending.pending_id, "escalate", approver_id="lead").next_pending_id
    third = decide(gating, second, "escalate", approver_id="director").next_pending_id
    final = decide(gating, third, "approve", approver_id="vp")
    assert final.action_id == pending.action_id
    assert gating.pending().pending == ()
    assert [(n.pending_id, n.cause, n.approved, n.next_pending_id) for n in notices] == [
        (pending.pending_id, "escalated", False, second),
        (second, "escalated", False, third),
        (third, "approved", True, None),
    ]


def test_an_escalated_successor_still_times_out_at_the_original_deadline(
    gating: Gating, evaluate: Evaluate, decide: Decide, clock: ManualClock, notices: list[Resolution]
) -> None:
    pending = evaluate(gating, risk_tier="r3", approval_timeout_ms=5_000)
    clock.advance(4_000)
    successor = decide(gating, pending.pending_id, "escalate").next_pending_id
    clock.advance(1_000)
    assert gating.pending().pending == ()
    assert (notices[-1].pending_id, notices[-1].cause) == (successor, "timeout")
