"""The timeline events a dream and its promotions emit, envelope and data shapes exactly (REFERENCE 5.4):
verdict events name the record, the verdict and the successor, never the reviewer or the rationale."""

from __future__ import annotations

from meta_memory.memory.records import RecordKind
from meta_memory.steward import (
    Contradiction,
    DreamVerdicts,
    OpenLoopEscalation,
    ProposalVerdict,
    QuarantineVerdict,
)

from .conftest import MOB, REALM, Bench


def test_a_dream_emits_started_verdict_promotion_conflict_and_completed_events_in_order(bench: Bench) -> None:
    release = bench.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    gate = bench.quarantine("Staging resets", "The staging database resets every night.")
    loop = bench.quarantine("Follow up", "Ask ops about the rotation.", kind=RecordKind.OPEN_LOOP)
    proposal = bench.propose("Runbook", "Restart the worker with make restart.")

    report = bench.dream(
        lambda d: DreamVerdicts(
            quarantine=(
                QuarantineVerdict(release.id, "release", "SECRET-RATIONALE"),
                QuarantineVerdict(gate.id, "promote_pending_gate", "SECRET-RATIONALE"),
            ),
            proposals=(ProposalVerdict(proposal, "accept", "SECRET-RATIONALE"),),
            contradictions=(Contradiction("two days", "deploys", "schedule", (release.id,)),),
            open_loop_escalations=(OpenLoopEscalation(loop.id),),
        )
    )

    events = [e for e in bench.events() if e["event_type"].startswith("memory.")]
    run = report.run_id
    [pending_id] = [o.pending_id for o in report.outcomes if o.outcome == "gated"]
    [accepted] = [o.record_id for o in report.outcomes if o.outcome == "accepted"]
    assert [(e["event_type"], e["identity"], e["data"]) for e in events] == [
        ("memory.dream.started", "_system", {"realm": REALM, "run_id": run}),
        (
            "memory.quarantine.verdict",
            "lead",
            {"realm": REALM, "record_id": loop.id, "verdict": "open_loop_escalated", "successor": None},
        ),
        (
            "memory.quarantine.verdict",
            "lead",
            {
                "realm": REALM,
                "record_id": release.id,
                "verdict": "release",
                "successor": f"{release.id}-released",
            },
        ),
        (
            "memory.promotion.pending_gate",
            "lead",
            {
                "realm": REALM,
                "pending_id": pending_id,
                "record_id": gate.id,
                "scope_kind": "mob",
                "scope_key": MOB,
            },
        ),
        (
            "memory.record.promoted",
            "_system",
            {
                "realm": REALM,
                "record_id": accepted,
                "source_record_id": None,
                "scope_kind": "mob",
                "scope_key": MOB,
                "proposal_id": proposal,
                "gated": False,
            },
        ),
        (
            "memory.conflict.signal",
            "_system",
            {
                "realm": REALM,
                "entity": "deploys",
                "topic": "schedule",
                "reason": f"memory steward dream {run}: two days (records: {release.id})",
            },
        ),
        (
            "memory.dream.completed",
            "_system",
            {"realm": REALM, "run_id": run, "ops_committed": 3, "detail": report.summary()},
        ),
    ]
    assert all(set(e) == {"event_id", "identity", "event_type", "timestamp_ms", "data"} for e in events)
    assert "SECRET-RATIONALE" not in str(events)
    assert "stage-" not in str(events) and "stage_token" not in str(report.to_wire())


def test_the_completed_detail_counts_outcomes_and_names_no_record_content(bench: Bench) -> None:
    bench.quarantine("Deploy window", "Deploys happen on Tuesdays, BODY-TEXT.")

    report = bench.dream()

    [completed] = bench.events("memory.dream.completed")
    detail = completed["data"]["detail"]
    assert detail == {
        "partition": REALM,
        "reviewer": "scripted",
        "reviewer_error": None,
        "counts": {"quarantine.held": 1},
        "expired_promotions": [],
        "audit_verdicts": 0,
    }
    assert detail == report.summary()
    assert "BODY-TEXT" not in str(completed)
