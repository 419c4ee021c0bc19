from __future__ import annotations

from collections.abc import Callable

import pytest

from meta_memory.clock import ManualClock
from meta_memory.gating import EvaluateResult, Gating
from meta_memory.ledger import ConflictSignal, Ledger, parse_index_params

Evaluate = Callable[..., EvaluateResult]
Conflict = Callable[..., None]


@pytest.mark.parametrize("tier", ["r2", "r3"])
def test_a_conflict_on_the_entity_and_topic_turns_r2_and_r3_into_a_safe_draft(
    gating: Gating, ledger: Ledger, evaluate: Evaluate, conflict: Conflict, tier: str
) -> None:
    conflict(ledger, "acme", "pricing", conflict_reason="two price lists")
    result = evaluate(gating, risk_tier=tier, entity="acme", topic="pricing")
    assert (result.outcome, result.fallback_reason, result.pending_id) == (
        "safe_draft",
        "memory_conflict",
        None,
    )
    assert gating.pending().pending == ()
    [row] = gating.audit().entries
    assert (row.audit_id, row.event_type, row.outcome) == (result.audit_id, "conflict_blocked", "safe_draft")
    assert row.detail["reason"] == "memory_conflict"
    assert row.detail["reference"] == {"entity": "acme", "topic": "pricing"}
    assert row.detail["conflict"]["reason"] == "two price lists"


def test_the_conflict_audit_detail_carries_the_ledger_signal(
    gating: Gating, ledger: Ledger, evaluate: Evaluate, conflict: Conflict, clock: ManualClock
) -> None:
    clock.set(42_000)
    conflict(ledger, "acme", "pricing", store="timeline", conflict_reason="stale")
    evaluate(gating, risk_tier="r2", entity="acme", topic="pricing")
    assert gating.audit().entries[0].detail["conflict"] == {
        "entity": "acme",
        "topic": "pricing",
        "store": "timeline",
        "reason": "stale",
        "updated_at_ms": 42_000,
    }


@pytest.mark.parametrize("store", ["knowledge_graph", "vector", "timeline", "todo", "top_of_mind"])
def test_a_conflict_in_any_store_blocks(
    gating: Gating, ledger: Ledger, evaluate: Evaluate, conflict: Conflict, store: str
) -> None:
    conflict(ledger, "acme", "pricing", store=store)
    assert (
        evaluate(gating, risk_tier="r3", entity="acme", topic="pricing").fallback_reason == "memory_conflict"
    )


def test_conflict_lookup_matches_canonical_entity_and_topic(
    gating: Gating, ledger: Ledger, evaluate: Evaluate, conflict: Conflict
) -> None:
    conflict(ledger, "Acme", "PRICING")
    result = evaluate(gating, risk_tier="r2", entity="  ACME ", topic="Pricing")
    assert result.fallback_reason == "memory_conflict"


@pytest.mark.parametrize("tier", ["r0", "r1"])
def test_r0_and_r1_ignore_conflicts_even_without_context(
    gating: Gating, ledger: Ledger, evaluate: Evaluate, conflict: Conflict, tier: str
) -> None:
    conflict(ledger, "acme", "pricing")
    assert evaluate(gating, risk_tier=tier, entity="acme", topic="pricing").outcome == "allowed"
    assert evaluate(gating, risk_tier=tier).outcome == "allowed"


@pytest.mark.parametrize("tier", ["r2", "r3"])
def test_a_conflict_on_another_topic_lets_the_tier_policy_decide(
    gating: Gating, ledger: Ledger, evaluate: Evaluate, conflict: Conflict, tier: str
) -> None:
    conflict(ledger, "acme", "pricing")
    result = evaluate(gating, risk_tier=tier, entity="acme", topic="hiring")
    assert result.outcome == ("allowed_with_audit" if tier == "r2" else "pending_approval")
    assert result.fallback_reason is None


@pytest.mark.parametrize(
    ("context", "missing"),
    [
        ({"entity": "acme"}, {"entity": False, "topic": True}),
        ({"topic": "pricing"}, {"entity": True, "topic": False}),
        ({}, {"entity": True, "topic": True}),
        ({"entity": "   ", "topic": "pricing"}, {"entity": True, "topic": False}),
    ],
)
@pytest.mark.parametrize("tier", ["r2", "r3"])
def test_any_conflict_with_missing_context_turns_r2_and_r3_into_a_safe_draft(
    gating: Gating,
    ledger: Ledger,
    evaluate: Evaluate,
    conflict: Conflict,
    tier: str,
    context: dict[str, str],
    missing: dict[str, bool],
) -> None:
    conflict(ledger, "unrelated", "matter")
    conflict(ledger, "other", "thing", store="todo")
    result = evaluate(gating, risk_tier=tier, **context)
    assert (result.outcome, result.fallback_reason) == ("safe_draft", "memory_conflict_context_missing")
    assert gating.pending().pending == ()
    [row] = gating.audit().entries
    assert (row.event_type, row.outcome) == ("conflict_blocked", "safe_draft")
    assert row.detail["missing_context"] == missing
    assert row.detail["conflict_count"] == 2
    assert row.detail["reason"] == "memory_conflict_context_missing"


@pytest.mark.parametrize("tier", ["r2", "r3"])
def test_missing_context_is_fine_while_the_ledger_holds_no_conflict(
    gating: Gating, ledger: Ledger, evaluate: Evaluate, tier: str
) -> None:
    ledger.index(parse_index_params({"entity": "acme", "topic": "pricing", "fact": "a plain fact"}))
    result = evaluate(gating, risk_tier=tier)
    assert result.fallback_reason is None
    assert result.outcome in {"allowed_with_audit", "pending_approval"}


def test_the_lookup_with_only_an_entity_matches_any_signal_of_that_entity(
    ledger: Ledger, conflict: Conflict
) -> None:
    conflict(ledger, "acme", "pricing", conflict_reason="first")
    conflict(ledger, "beta", "hiring")
    found = ledger.conflict_for("ACME", None)
    assert found is not None and (found.entity, found.topic) == ("acme", "pricing")
    assert ledger.conflict_for("gamma", None) is None


def test_the_lookup_with_only_a_topic_matches_any_signal_of_that_topic(
    ledger: Ledger, conflict: Conflict
) -> None:
    conflict(ledger, "acme", "pricing")
    conflict(ledger, "beta", "hiring")
    found = ledger.conflict_for(None, " Hiring ")
    assert found is not None and (found.entity, found.topic) == ("beta", "hiring")
    assert ledger.conflict_for(None, "payroll") is None
    assert ledger.conflict_for(None, None) is None


class _RecordingLedger(Ledger):
    def __init__(self, clock: ManualClock) -> None:
        super().__init__(clock=clock)
        self.lookups: list[tuple[str | None, str | None]] = []

    def conflict_for(self, entity: str | None, topic: str | None) -> ConflictSignal | None:
        self.lookups.append((entity, topic))
        return super().conflict_for(entity, topic)


@pytest.mark.parametrize(
    ("context", "lookup"),
    [({"entity": " acme "}, ("acme", None)), ({"topic": "pricing"}, (None, "pricing"))],
)
def test_evaluate_passes_partial_context_to_the_lookup(
    clock: ManualClock, evaluate: Evaluate, context: dict[str, str], lookup: tuple[str | None, str | None]
) -> None:
    ledger = _RecordingLedger(clock)
    result = evaluate(Gating(ledger, clock), risk_tier="r3", **context)
    assert ledger.lookups == [lookup]
    assert result.outcome == "pending_approval"


class _BrokenLedger(Ledger):
    def conflict_for(self, entity: str | None, topic: str | None) -> ConflictSignal | None:
        raise OSError("ledger unreadable")


@pytest.mark.parametrize("tier", ["r2", "r3"])
def test_a_failing_conflict_lookup_fails_closed_to_a_safe_draft(
    clock: ManualClock, evaluate: Evaluate, tier: str
) -> None:
    gating = Gating(_BrokenLedger(clock=clock), clock)
    result = evaluate(gating, risk_tier=tier, entity="acme", topic="pricing")
    assert (result.outcome, result.fallback_reason) == ("safe_draft", "memory_conflict_lookup_failed")
    [row] = gating.audit().entries
    assert (row.event_type, row.detail["error"]) == ("memory_conflict_lookup_failed", "OSError")
    assert gating.pending().pending == ()
