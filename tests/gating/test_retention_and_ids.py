from __future__ import annotations

import re
import threading
from collections.abc import Callable

import pytest

from meta_memory.clock import ManualClock
from meta_memory.gating import (
    AUDIT_LIMIT_DEFAULT,
    RETENTION_DEFAULT,
    AuditRequest,
    DecideResult,
    EvaluateResult,
    Gating,
    Resolution,
    parse_evaluate_params,
)
from meta_memory.gating.model import format_gating_id
from meta_memory.ledger import Ledger

Evaluate = Callable[..., EvaluateResult]
Decide = Callable[..., DecideResult]

GATE_ID = re.compile(r"gate-(action|pending|audit)-v2-([0-9a-f]{32})-([0-9]{6,})")


def test_retention_defaults_to_512_and_audit_reads_default_to_50() -> None:
    assert (RETENTION_DEFAULT, AUDIT_LIMIT_DEFAULT) == (512, 50)


def test_the_audit_drops_its_oldest_rows_past_the_retention(
    ledger: Ledger, clock: ManualClock, evaluate: Evaluate
) -> None:
    gating = Gating(ledger, clock, retention=5)
    results = [evaluate(gating, risk_tier="r0") for _ in range(8)]
    assert [e.audit_id for e in gating.audit().entries] == [r.audit_id for r in results[3:]]


def test_a_full_default_audit_still_answers_the_newest_500(gating: Gating, evaluate: Evaluate) -> None:
    results = [evaluate(gating, risk_tier="r0") for _ in range(600)]
    entries = gating.audit(AuditRequest(limit=500)).entries
    assert [e.audit_id for e in entries] == [r.audit_id for r in results[100:]]


def test_audit_returns_the_newest_rows_oldest_first_up_to_the_limit(
    gating: Gating, evaluate: Evaluate
) -> None:
    results = [evaluate(gating, risk_tier="r1") for _ in range(60)]
    assert [e.audit_id for e in gating.audit().entries] == [r.audit_id for r in results[-50:]]
    assert [e.audit_id for e in gating.audit(AuditRequest(limit=3)).entries] == [
        r.audit_id for r in results[-3:]
    ]


def test_past_512_pending_the_oldest_falls_back_as_a_timeout(
    gating: Gating, evaluate: Evaluate, notices: list[Resolution]
) -> None:
    results = [evaluate(gating, risk_tier="r3") for _ in range(RETENTION_DEFAULT + 1)]
    pending = gating.pending().pending
    assert len(pending) == RETENTION_DEFAULT
    assert pending[0].pending_id == results[1].pending_id
    assert pending[-1].pending_id == results[-1].pending_id
    assert [(n.pending_id, n.cause, n.approved) for n in notices] == [
        (results[0].pending_id, "timeout", False)
    ]
    fallback = next(
        e for e in gating.audit(AuditRequest(limit=5)).entries if e.event_type == "timeout_fallback"
    )
    assert (fallback.pending_id, fallback.detail["reason"]) == (
        results[0].pending_id,
        "pending_retention_exceeded",
    )


def test_a_smaller_retention_caps_both_audit_and_pending(
    ledger: Ledger, clock: ManualClock, evaluate: Evaluate
) -> None:
    gating = Gating(ledger, clock, retention=3)
    for _ in range(5):
        evaluate(gating, risk_tier="r3")
    assert len(gating.pending().pending) == 3
    assert len(gating.audit(AuditRequest(limit=500)).entries) == 3


def test_retention_below_one_is_refused(ledger: Ledger, clock: ManualClock) -> None:
    with pytest.raises(ValueError, match="retention"):
        Gating(ledger, clock, retention=0)


def test_ids_carry_kind_v2_the_owner_epoch_and_one_shared_sequence(
    gating: Gating, evaluate: Evaluate
) -> None:
    result = evaluate(gating, risk_tier="r3")
    assert re.fullmatch("[0-9a-f]{32}", gating.epoch)
    assert result.action_id == f"gate-action-v2-{gating.epoch}-000000"
    assert result.pending_id == f"gate-pending-v2-{gating.epoch}-000001"
    assert result.audit_id == f"gate-audit-v2-{gating.epoch}-000002"
    assert evaluate(gating, risk_tier="r0").action_id == f"gate-action-v2-{gating.epoch}-000003"


def test_every_minted_id_matches_the_reference_format(
    gating: Gating, evaluate: Evaluate, decide: Decide
) -> None:
    pending = evaluate(gating, risk_tier="r3")
    decision = decide(gating, pending.pending_id, "escalate")
    ids = [
        pending.action_id,
        pending.pending_id,
        pending.audit_id,
        decision.audit_id,
        decision.next_pending_id,
    ]
    assert all(GATE_ID.fullmatch(str(gate_id)) for gate_id in ids)


def test_the_sequence_is_padded_to_six_digits_and_grows_past_them() -> None:
    epoch = "0123456789abcdef0123456789abcdef"
    assert format_gating_id("audit", epoch, 7) == f"gate-audit-v2-{epoch}-000007"
    assert format_gating_id("pending", epoch, 1_234_567) == f"gate-pending-v2-{epoch}-1234567"


def test_each_gating_owner_mints_under_its_own_epoch(ledger: Ledger, clock: ManualClock) -> None:
    assert Gating(ledger, clock).epoch != Gating(ledger, clock).epoch


def test_concurrent_evaluations_never_share_an_id(gating: Gating) -> None:
    request = parse_evaluate_params({"action": "deploy", "actor_id": "worker", "risk_tier": "r3"})
    results: list[EvaluateResult] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(50):
            result = gating.evaluate(request)
            with lock:
                results.append(result)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(results) == 400
    minted = [r.action_id for r in results] + [r.pending_id for r in results] + [r.audit_id for r in results]
    assert len(set(minted)) == 1_200
    assert len(gating.pending().pending) == 400
