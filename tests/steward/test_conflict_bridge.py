"""Steward contradictions that name an entity and a topic become ledger conflict signals (as
``memory_index(conflict: true)`` does), so gating sees them and the ledger file is rewritten with no
host call."""

from __future__ import annotations

import json

from meta_memory.gating import parse_evaluate_params
from meta_memory.ledger import QueryRequest
from meta_memory.steward import Contradiction, DreamVerdicts

from .conftest import REALM, Bench


def test_a_contradiction_is_a_ledger_conflict_signal_persisted_and_announced(bench: Bench) -> None:
    record = bench.quarantine("Pricing", "Acme pays net 30.")

    report = bench.dream(
        lambda d: DreamVerdicts(
            contradictions=(Contradiction("net 30 vs net 60", " Acme ", "Pricing", (record.id, "mem-other")),)
        )
    )

    reason = f"memory steward dream {report.run_id}: net 30 vs net 60 (records: {record.id}, mem-other)"
    [signal] = bench.runtime.ledger.query(QueryRequest()).conflicts
    assert (signal.entity, signal.topic, signal.store, signal.reason) == (
        "acme",
        "pricing",
        "knowledge_graph",
        reason,
    )
    on_disk = json.loads(bench.runtime.layout.ledger_path.read_text())
    assert reason in json.dumps(on_disk)
    [event] = bench.events("memory.conflict.signal")
    assert event["data"] == {"realm": REALM, "entity": "acme", "topic": "pricing", "reason": reason}
    assert [o.outcome for o in report.outcomes_for("contradiction")] == ["bridged"]


def test_gating_turns_an_r3_action_on_the_contested_topic_into_a_safe_draft(bench: Bench) -> None:
    bench.quarantine("Pricing", "Acme pays net 30.")
    bench.dream(lambda d: DreamVerdicts(contradictions=(Contradiction("two terms", "acme", "pricing"),)))

    result = bench.runtime.gating.evaluate(
        parse_evaluate_params(
            {
                "action": "send_invoice",
                "actor_id": "lead",
                "risk_tier": "r3",
                "entity": "acme",
                "topic": "pricing",
            }
        )
    )

    assert (result.outcome, result.fallback_reason) == ("safe_draft", "memory_conflict")


def test_a_contradiction_without_an_entity_or_topic_is_reported_and_not_bridged(bench: Bench) -> None:
    bench.quarantine("Pricing", "Acme pays net 30.")

    report = bench.dream(
        lambda d: DreamVerdicts(
            contradictions=(Contradiction("vague", entity="acme"), Contradiction("vaguer", topic="pricing"))
        )
    )

    assert [(o.outcome, o.reason) for o in report.outcomes_for("contradiction")] == [
        ("ignored", "missing_entity_or_topic"),
        ("ignored", "missing_entity_or_topic"),
    ]
    assert bench.runtime.ledger.query(QueryRequest()).conflicts == ()
    assert bench.events("memory.conflict.signal") == []
