from __future__ import annotations

from collections.abc import Callable

import pytest

from meta_memory.clock import ManualClock
from meta_memory.gating import EvaluateResult, Gating

Evaluate = Callable[..., EvaluateResult]


@pytest.mark.parametrize("tier", ["r0", "r1"])
def test_r0_and_r1_actions_are_allowed_with_an_evaluated_audit_row(
    gating: Gating, evaluate: Evaluate, tier: str
) -> None:
    result = evaluate(gating, risk_tier=tier, rationale="routine")
    assert (result.outcome, result.fallback_reason, result.pending_id, result.deadline_at_ms) == (
        "allowed",
        None,
        None,
        None,
    )
    [row] = gating.audit().entries
    assert (row.audit_id, row.event_type, row.outcome, row.action_id) == (
        result.audit_id,
        "evaluated",
        "allowed",
        result.action_id,
    )
    assert row.detail == {"policy": "allow_immediate", "rationale": "routine", "action": "deploy"}
    assert gating.pending().pending == ()


def test_r2_actions_are_allowed_with_audit(gating: Gating, evaluate: Evaluate) -> None:
    result = evaluate(gating, risk_tier="r2")
    assert result.outcome == "allowed_with_audit"
    [row] = gating.audit().entries
    assert (row.event_type, row.outcome, row.risk_tier) == ("evaluated", "allowed_with_audit", "r2")
    assert row.detail["policy"] == "consequence_mode_allow_with_audit_v0_1"
    assert gating.pending().pending == ()


def test_r3_actions_wait_for_approval_with_a_deadline_sixty_seconds_out(
    gating: Gating, evaluate: Evaluate, clock: ManualClock
) -> None:
    result = evaluate(gating, risk_tier="r3", requested_approver="lead", rationale="prod push")
    assert result.outcome == "pending_approval"
    assert result.deadline_at_ms == clock.now_ms() + 60_000
    [entry] = gating.pending().pending
    assert (entry.pending_id, entry.action_id, entry.deadline_at_ms) == (
        result.pending_id,
        result.action_id,
        result.deadline_at_ms,
    )
    assert (entry.requested_approver, entry.rationale, entry.created_at_ms) == (
        "lead",
        "prod push",
        clock.now_ms(),
    )
    [row] = gating.audit().entries
    assert (row.audit_id, row.event_type, row.outcome, row.pending_id) == (
        result.audit_id,
        "pending_created",
        "pending_approval",
        result.pending_id,
    )
    assert row.detail["deadline_at_ms"] == result.deadline_at_ms
    assert row.detail["origin"] == "evaluate"


def test_evaluate_result_wire_shape_always_carries_every_key(gating: Gating, evaluate: Evaluate) -> None:
    wire = evaluate(gating, action=" Deploy ", actor_id=" worker ", risk_tier="R1").to_wire()
    assert sorted(wire) == [
        "action",
        "action_id",
        "actor_id",
        "audit_id",
        "deadline_at_ms",
        "fallback_reason",
        "outcome",
        "pending_id",
        "risk_tier",
    ]
    assert (wire["action"], wire["actor_id"], wire["risk_tier"], wire["outcome"]) == (
        "Deploy",
        "worker",
        "r1",
        "allowed",
    )


def test_pending_entry_keeps_the_approval_route_and_records_that_no_notification_was_sent(
    gating: Gating, evaluate: Evaluate
) -> None:
    evaluate(gating, risk_tier="r3", approval_recipient=" ops-lead ", approval_channel="slack")
    [entry] = gating.pending().pending
    assert (entry.approval_recipient, entry.approval_channel) == ("ops-lead", "slack")
    [row] = gating.audit().entries
    assert row.detail["approval_notification_error"] == "notification_unavailable"


def test_audit_timestamps_come_from_the_injected_clock(
    gating: Gating, evaluate: Evaluate, clock: ManualClock
) -> None:
    clock.set(5_000_000)
    evaluate(gating, risk_tier="r0")
    assert gating.audit().entries[0].timestamp_ms == 5_000_000


def test_a_returned_audit_wire_object_cannot_change_the_stored_row(
    gating: Gating, evaluate: Evaluate
) -> None:
    evaluate(gating, risk_tier="r1", rationale="original")
    wire = gating.audit().to_wire()
    wire["entries"][0]["detail"]["rationale"] = "tampered"
    assert gating.audit().to_wire()["entries"][0]["detail"]["rationale"] == "original"
