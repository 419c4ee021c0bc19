from __future__ import annotations

from collections.abc import Callable

import pytest

from meta_memory.clock import ManualClock
from meta_memory.gating import (
    APPROVAL_TIMEOUT_MAX_MS,
    APPROVAL_TIMEOUT_MIN_MS,
    DecideResult,
    EvaluateResult,
    Gating,
    GatingDecisionRefused,
    Resolution,
    clamp_timeout_ms,
)
from meta_memory.ledger import Ledger

Evaluate = Callable[..., EvaluateResult]
Decide = Callable[..., DecideResult]
Events = Callable[[Gating], list[str]]

SEVEN_DAYS_MS = 7 * 24 * 60 * 60 * 1000


def test_the_clamp_bounds_are_one_second_and_seven_days() -> None:
    assert (APPROVAL_TIMEOUT_MIN_MS, APPROVAL_TIMEOUT_MAX_MS) == (1_000, SEVEN_DAYS_MS)
    assert clamp_timeout_ms(None) == 60_000


@pytest.mark.parametrize(
    ("asked", "applied"),
    [
        (0, 1_000),
        (1, 1_000),
        (999, 1_000),
        (1_000, 1_000),
        (30_000, 30_000),
        (SEVEN_DAYS_MS, SEVEN_DAYS_MS),
        (SEVEN_DAYS_MS + 1, SEVEN_DAYS_MS),
        (2**64 - 1, SEVEN_DAYS_MS),
    ],
)
def test_approval_timeout_is_clamped_to_the_bounds(
    gating: Gating, evaluate: Evaluate, clock: ManualClock, asked: int, applied: int
) -> None:
    result = evaluate(gating, risk_tier="r3", approval_timeout_ms=asked)
    assert result.deadline_at_ms == clock.now_ms() + applied


def test_the_constructor_default_timeout_applies_when_the_request_names_none(
    ledger: Ledger, clock: ManualClock, evaluate: Evaluate
) -> None:
    gating = Gating(ledger, clock, default_timeout_ms=5_000)
    assert evaluate(gating, risk_tier="r3").deadline_at_ms == clock.now_ms() + 5_000


@pytest.mark.parametrize("default", [999, SEVEN_DAYS_MS + 1])
def test_a_default_timeout_outside_the_clamp_is_refused_at_construction(
    ledger: Ledger, clock: ManualClock, default: int
) -> None:
    with pytest.raises(ValueError, match="default_timeout_ms"):
        Gating(ledger, clock, default_timeout_ms=default)


def test_a_pending_entry_falls_back_to_safe_draft_at_its_deadline(
    gating: Gating, evaluate: Evaluate, clock: ManualClock, notices: list[Resolution], events: Events
) -> None:
    result = evaluate(gating, risk_tier="r3", approval_timeout_ms=10_000)
    clock.advance(9_999)
    assert [e.pending_id for e in gating.pending().pending] == [result.pending_id]
    assert notices == []
    clock.advance(1)
    assert gating.pending().pending == ()
    assert events(gating) == ["pending_created", "timeout_fallback"]
    row = gating.audit().entries[-1]
    assert (row.pending_id, row.action_id, row.outcome, row.timestamp_ms) == (
        result.pending_id,
        result.action_id,
        "safe_draft",
        result.deadline_at_ms,
    )
    assert row.detail == {
        "fallback": "safe_draft",
        "reason": "approval_timeout",
        "deadline_at_ms": result.deadline_at_ms,
    }
    assert [(n.pending_id, n.approved, n.cause, n.next_pending_id) for n in notices] == [
        (result.pending_id, False, "timeout", None)
    ]


@pytest.mark.parametrize("call", ["evaluate", "pending", "audit", "decide", "create_pending"])
def test_every_call_applies_due_timeouts_first(
    gating: Gating,
    evaluate: Evaluate,
    decide: Decide,
    clock: ManualClock,
    notices: list[Resolution],
    call: str,
) -> None:
    expiring = evaluate(gating, risk_tier="r3", approval_timeout_ms=1_000)
    clock.advance(500)
    other = evaluate(gating, risk_tier="r3", approval_timeout_ms=60_000)
    clock.advance(500)
    if call == "evaluate":
        evaluate(gating, risk_tier="r0")
    elif call == "pending":
        gating.pending()
    elif call == "audit":
        gating.audit()
    elif call == "decide":
        decide(gating, other.pending_id)
    else:
        gating.create_pending("memory.quarantine_promote", "steward", "mob:ops", "mem-1", "promote")
    assert notices[0].pending_id == expiring.pending_id
    assert notices[0].cause == "timeout"


def test_a_decision_after_the_deadline_is_refused_as_expired(
    gating: Gating, evaluate: Evaluate, decide: Decide, clock: ManualClock
) -> None:
    result = evaluate(gating, risk_tier="r3", approval_timeout_ms=1_000)
    clock.advance(1_000)
    with pytest.raises(GatingDecisionRefused) as refused:
        decide(gating, result.pending_id)
    assert refused.value.reason == "expired_pending"
    assert refused.value.message.startswith("Invalid params: ")
    assert refused.value.data is not None
    assert refused.value.data["resolved_at_ms"] == result.deadline_at_ms


def test_several_due_entries_fall_back_oldest_first(
    gating: Gating, evaluate: Evaluate, clock: ManualClock, notices: list[Resolution]
) -> None:
    first = evaluate(gating, risk_tier="r3", approval_timeout_ms=2_000)
    second = evaluate(gating, risk_tier="r3", approval_timeout_ms=1_000)
    clock.advance(5_000)
    assert gating.pending().pending == ()
    assert [n.pending_id for n in notices] == [first.pending_id, second.pending_id]


def test_pending_lists_entries_oldest_first_with_their_full_shape(
    gating: Gating, evaluate: Evaluate, clock: ManualClock
) -> None:
    first = evaluate(gating, risk_tier="r3", entity="acme", topic="pricing")
    clock.advance(10)
    second = evaluate(gating, action="rotate-keys", risk_tier="r3")
    wire = gating.pending().to_wire()
    assert [p["pending_id"] for p in wire["pending"]] == [first.pending_id, second.pending_id]
    assert wire["pending"][0] == {
        "pending_id": first.pending_id,
        "action_id": first.action_id,
        "action": "deploy",
        "actor_id": "worker",
        "risk_tier": "r3",
        "requested_approver": None,
        "approval_recipient": None,
        "approval_channel": None,
        "rationale": None,
        "entity": "acme",
        "topic": "pricing",
        "description": None,
        "created_at_ms": clock.now_ms() - 10,
        "deadline_at_ms": clock.now_ms() - 10 + 60_000,
        "escalated_from": None,
    }
