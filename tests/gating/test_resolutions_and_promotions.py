from __future__ import annotations

import logging
from collections.abc import Callable

import pytest

from meta_memory.clock import ManualClock
from meta_memory.errors import InvalidParams
from meta_memory.gating import (
    DecideResult,
    EvaluateResult,
    Gating,
    Resolution,
    parse_decide_params,
)
from meta_memory.ledger import Ledger

Evaluate = Callable[..., EvaluateResult]
Decide = Callable[..., DecideResult]
Conflict = Callable[..., None]


@pytest.mark.parametrize(
    ("decision", "approved", "cause"),
    [("approve", True, "approved"), ("reject", False, "rejected"), ("escalate", False, "escalated")],
)
def test_each_decision_sends_one_resolution_notice(
    gating: Gating,
    evaluate: Evaluate,
    decide: Decide,
    clock: ManualClock,
    notices: list[Resolution],
    decision: str,
    approved: bool,
    cause: str,
) -> None:
    pending = evaluate(gating, risk_tier="r3")
    result = decide(gating, pending.pending_id, decision)
    assert [n.to_wire() for n in notices] == [
        {
            "pending_id": pending.pending_id,
            "action_id": pending.action_id,
            "approved": approved,
            "cause": cause,
            "resolved_at_ms": clock.now_ms(),
            "next_pending_id": result.next_pending_id,
        }
    ]


def test_evaluations_that_create_no_pending_entry_send_no_notice(
    gating: Gating, ledger: Ledger, evaluate: Evaluate, conflict: Conflict, notices: list[Resolution]
) -> None:
    conflict(ledger, "acme", "pricing")
    for tier in ("r0", "r1", "r2"):
        evaluate(gating, risk_tier=tier)
    evaluate(gating, risk_tier="r3", entity="acme", topic="pricing")
    evaluate(gating, risk_tier="r3")
    assert notices == []


def test_a_refused_decision_sends_no_notice(
    gating: Gating, evaluate: Evaluate, decide: Decide, notices: list[Resolution]
) -> None:
    pending = evaluate(gating, risk_tier="r3")
    with pytest.raises(InvalidParams):
        decide(gating, pending.pending_id, approver_id="worker")
    assert notices == []


def test_the_subscriber_may_call_back_into_gating(
    ledger: Ledger, clock: ManualClock, evaluate: Evaluate
) -> None:
    seen: list[tuple[str, int]] = []

    def follow_up(notice: Resolution) -> None:
        seen.append((notice.cause, len(gating.pending().pending)))
        if notice.next_pending_id is not None:  # the escalation's successor is approved at once
            gating.decide(
                parse_decide_params(
                    {"pending_id": notice.next_pending_id, "approver_id": "director", "decision": "approve"}
                )
            )

    gating = Gating(ledger, clock, on_resolution=follow_up)
    pending = evaluate(gating, risk_tier="r3")
    gating.decide(
        parse_decide_params({"pending_id": pending.pending_id, "approver_id": "lead", "decision": "escalate"})
    )
    assert seen == [("escalated", 1), ("approved", 0)]


def test_a_failing_subscriber_is_logged_and_the_decision_stands(
    ledger: Ledger, clock: ManualClock, evaluate: Evaluate, decide: Decide, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(notice: Resolution) -> None:
        raise RuntimeError("promotion store offline")

    gating = Gating(ledger, clock, on_resolution=broken)
    pending = evaluate(gating, risk_tier="r3")
    with caplog.at_level(logging.ERROR, logger="meta_memory.gating"):
        result = decide(gating, pending.pending_id)
    assert result.outcome == "allowed"
    assert gating.pending().pending == ()
    assert any(str(pending.pending_id) in record.getMessage() for record in caplog.records)


def test_create_pending_opens_an_r3_entry_for_a_gated_promotion(gating: Gating, clock: ManualClock) -> None:
    entry = gating.create_pending(
        " memory.quarantine_promote ",
        "steward:run-7",
        "mob:ops",
        "mem-42",
        "memory.quarantine_promote: mem-42",
    )
    assert (entry.action, entry.actor_id, entry.risk_tier) == (
        "memory.quarantine_promote",
        "steward:run-7",
        "r3",
    )
    assert (entry.entity, entry.topic, entry.description) == (
        "mob:ops",
        "mem-42",
        "memory.quarantine_promote: mem-42",
    )
    assert entry.deadline_at_ms == clock.now_ms() + 60_000
    assert gating.pending().pending == (entry,)
    [row] = gating.audit().entries
    assert (row.event_type, row.pending_id, row.detail["origin"]) == (
        "pending_created",
        entry.pending_id,
        "programmatic",
    )


def test_create_pending_ignores_ledger_conflicts(gating: Gating, ledger: Ledger, conflict: Conflict) -> None:
    conflict(ledger, "mob:ops", "mem-42")
    entry = gating.create_pending("memory.quarantine_promote", "steward", "mob:ops", "mem-42", "promote")
    assert [e.pending_id for e in gating.pending().pending] == [entry.pending_id]


@pytest.mark.parametrize(("asked", "applied"), [(None, 60_000), (10, 1_000), (10**12, 7 * 24 * 3_600_000)])
def test_create_pending_clamps_its_timeout(
    gating: Gating, clock: ManualClock, asked: int | None, applied: int
) -> None:
    entry = gating.create_pending("promote", "steward", "mob:ops", "mem-1", "d", asked)
    assert entry.deadline_at_ms == clock.now_ms() + applied


def test_a_gated_promotion_resolves_through_decide_and_its_notice(
    gating: Gating, notices: list[Resolution]
) -> None:
    entry = gating.create_pending("memory.quarantine_promote", "steward", "mob:ops", "mem-42", "promote")

    def as_reviewer(approver: str) -> DecideResult:  # a promotion is decided through a reviewer check
        params = {"pending_id": entry.pending_id, "approver_id": approver, "decision": "approve"}
        return gating.decide(parse_decide_params(params), reviewer=lambda _: None)

    with pytest.raises(InvalidParams, match="self-approve"):
        as_reviewer("steward")
    as_reviewer("operator")
    assert [(n.pending_id, n.approved, n.cause) for n in notices] == [(entry.pending_id, True, "approved")]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("", "steward", "mob:ops", "mem-1", "d"), "Invalid params: action must be a non-empty string"),
        (("promote", " ", "mob:ops", "mem-1", "d"), "Invalid params: actor_id must be a non-empty string"),
        (("promote", "steward", "", "mem-1", "d"), "Invalid params: entity must be a non-empty string"),
        (("promote", "steward", "mob:ops", "\t", "d"), "Invalid params: topic must be a non-empty string"),
        (
            ("promote", "steward", "mob:ops", "mem-1", "d", -1),
            "Invalid params: approval_timeout_ms must be a non-negative integer",
        ),
    ],
)
def test_create_pending_refuses_blank_fields(gating: Gating, args: tuple[object, ...], message: str) -> None:
    with pytest.raises(InvalidParams) as refused:
        gating.create_pending(*args)  # type: ignore[arg-type]
    assert refused.value.message == message
    assert gating.pending().pending == ()
