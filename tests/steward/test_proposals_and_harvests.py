"""Proposal verdicts (accept commits into the proposal's scope as a steward-authored record, reject, hold,
promote through a gate; a tainted accept becomes a gate) and exit-interview harvests."""

from __future__ import annotations

from meta_memory.clock import ManualClock
from meta_memory.memory.records import Scope, ScopeKind, Status, Trust
from meta_memory.steward import DreamVerdicts, HarvestVerdict, ProposalVerdict

from .conftest import MOB, REALM, Bench, open_bench


def verdict(proposal_id: str, kind: str) -> DreamVerdicts:
    return DreamVerdicts(proposals=(ProposalVerdict(proposal_id, kind, "because"),))  # type: ignore[arg-type]


def test_an_accepted_proposal_becomes_a_steward_authored_mob_record(bench: Bench) -> None:
    proposal = bench.propose("Runbook", "Restart the worker with make restart.")

    report = bench.dream(lambda d: verdict(proposal, "accept"))

    [outcome] = report.outcomes
    assert outcome.outcome == "accepted"
    assert bench.proposal_status(proposal) == "accepted"
    record = bench.record(outcome.record_id or "")
    assert (record.scope, record.status, record.trust) == (
        Scope(ScopeKind.MOB, REALM, MOB),
        Status.ACTIVE,
        Trust.AGENT_OBSERVED,
    )
    assert record.provenance.author.to_wire() == {"author": "steward", "run_id": report.run_id}
    [row] = bench.store.audit_rows(record.id)
    assert row["detail"]["rationale"] == f"proposal {proposal}: because"
    [event] = bench.events("memory.record.promoted")
    assert event["data"]["gated"] is False and event["data"]["proposal_id"] == proposal


def test_accepting_a_proposal_whose_content_is_already_active_in_the_mob_writes_no_copy(bench: Bench) -> None:
    first = bench.propose("Runbook", "Restart the worker with make restart.")
    bench.dream(lambda d: verdict(first, "accept"))
    second = bench.propose("Runbook", "Restart the worker with make restart.")

    report = bench.dream(lambda d: verdict(second, "accept"))

    assert report.outcomes[0].outcome == "accepted" and report.ops_committed == 0
    assert len(bench.scope_records("mob", MOB)) == 1


def test_rejected_and_held_proposals_change_status_only(bench: Bench) -> None:
    rejected = bench.propose("Trivia", "Lead likes blue.")
    held = bench.propose("Maybe", "The cache might be stale.")
    untouched = bench.propose("Later", "Left without a verdict.")

    report = bench.dream(
        lambda d: DreamVerdicts(
            proposals=(ProposalVerdict(rejected, "reject"), ProposalVerdict(held, "hold"))
        )
    )

    assert [bench.proposal_status(p) for p in (rejected, held, untouched)] == ["rejected", "held", "pending"]
    assert report.ops_committed == 0 and bench.scope_records("mob", MOB) == []
    seen_next = bench.dream()
    assert seen_next.status == "completed"
    assert [p.proposal_id for p in bench.reviewer.seen[-1].proposals] == [held, untouched]


def test_a_tainted_proposals_accept_is_downgraded_to_an_operator_gate(bench: Bench) -> None:
    proposal = bench.propose("Shared", "Tests run in CI only.", tainted=True)

    report = bench.dream(lambda d: verdict(proposal, "accept"))

    [outcome] = report.outcomes
    assert (outcome.verdict, outcome.outcome, outcome.reason) == (
        "accept",
        "gated",
        "tainted_accept_downgraded",
    )
    assert bench.proposal_status(proposal) == "pending"
    assert bench.scope_records("mob", MOB) == []
    [entry] = bench.runtime.gating.pending().pending
    assert (entry.action, entry.entity, entry.topic) == ("memory.proposal_promote", MOB, proposal)
    [(pending_id, source, status)] = bench.promotions()
    assert (pending_id, source, status) == (outcome.pending_id, proposal, "pending")


def test_an_approved_proposal_gate_commits_the_record_and_accepts_the_proposal(bench: Bench) -> None:
    proposal = bench.propose("Shared", "Tests run in CI only.", tainted=True)
    pending_id = bench.dream(lambda d: verdict(proposal, "accept")).outcomes[0].pending_id
    assert pending_id is not None

    bench.decide_gate(pending_id, "approve")

    assert bench.proposal_status(proposal) == "accepted"
    [record] = bench.scope_records("mob", MOB)
    assert record.ever_quarantined  # tainted content stays capped
    [event] = bench.events("memory.record.promoted")
    assert event["data"] == {
        "realm": REALM,
        "record_id": record.id,
        "source_record_id": None,
        "scope_kind": "mob",
        "scope_key": MOB,
        "proposal_id": proposal,
        "gated": True,
    }


def test_a_rejected_proposal_gate_rejects_the_proposal(bench: Bench) -> None:
    proposal = bench.propose("Shared", "Tests run in CI only.")
    pending_id = bench.dream(lambda d: verdict(proposal, "promote_pending_gate")).outcomes[0].pending_id
    assert pending_id is not None

    bench.decide_gate(pending_id, "reject")

    assert bench.promotion(pending_id)[0] == "denied"
    assert bench.proposal_status(proposal) == "rejected"
    assert bench.scope_records("mob", MOB) == []


def test_an_operator_scope_proposal_is_held_while_operator_scope_is_off(bench: Bench) -> None:
    proposal = bench.propose("Operator likes", "The operator prefers short replies.")
    with bench.db() as conn:
        conn.execute("UPDATE proposals SET scope_kind = 'operator', scope_key = 'op-1'")

    report = bench.dream(lambda d: verdict(proposal, "accept"))

    assert [(o.outcome, o.reason) for o in report.outcomes] == [("held", "operator_scope_inactive")]
    assert bench.proposal_status(proposal) == "held"


def test_a_harvest_promotes_tombstones_and_keeps_records_and_completes(bench: Bench) -> None:
    promote = bench.remember("CI cache", "The CI runner needs a warm cache.", identity="scout")
    drop = bench.remember("Ticket", "Scout was on ticket 12.", identity="scout")
    keep = bench.remember("Scratch", "Scout's scratch path is /tmp/s.", identity="scout")
    bench.steward.record_harvest(REALM, "scout", "sess-1", "retired")

    report = bench.dream(
        lambda d: DreamVerdicts(
            harvests=(
                HarvestVerdict(promote.id, "promote", "mob needs it"),
                HarvestVerdict(drop.id, "tombstone"),
                HarvestVerdict(keep.id, "keep"),
            )
        )
    )

    assert [o.outcome for o in report.outcomes_for("harvest")] == ["promoted", "tombstoned", "kept"]
    [copy] = bench.scope_records("mob", MOB)
    assert (copy.body, copy.derived_from) == (promote.body, (promote.id,))
    assert [bench.record(r.id).status for r in (promote, drop, keep)] == [
        Status.TOMBSTONED,
        Status.TOMBSTONED,
        Status.ACTIVE,
    ]
    [event] = bench.events("memory.harvest.completed")
    assert (event["identity"], event["data"]) == (
        "scout",
        {
            "realm": REALM,
            "identity": "scout",
            "session_key": "sess-1",
            "promoted": 1,
            "tombstoned": 1,
            "kept": 1,
        },
    )
    with bench.db() as conn:
        assert conn.execute("SELECT status FROM harvests").fetchall() == [("completed",)]


def test_a_harvest_without_verdicts_stays_pending(tmp_path, clock: ManualClock) -> None:
    bench = open_bench(tmp_path / "state", clock)
    try:
        bench.remember("Scratch", "Scout's scratch path is /tmp/s.", identity="scout")
        bench.steward.record_harvest(REALM, "scout", "sess-1", "retired")

        report = bench.dream()

        assert [(o.subject, o.outcome, o.reason) for o in report.outcomes] == [
            ("harvest", "pending", "no_verdict")
        ]
        with bench.db() as conn:
            assert conn.execute("SELECT status FROM harvests").fetchall() == [("pending",)]
        assert bench.events("memory.harvest.completed") == []
    finally:
        bench.runtime.close()


def test_a_harvest_whose_verdicts_were_all_refused_stays_pending(bench: Bench) -> None:
    record = bench.remember("Solo gotcha", "Solo's gotcha has no mob to go to.", identity="solo")
    bench.steward.record_harvest(REALM, "solo", "sess-1", "retired")

    report = bench.dream(lambda d: DreamVerdicts(harvests=(HarvestVerdict(record.id, "promote"),)))

    assert [(o.target, o.outcome, o.reason) for o in report.outcomes] == [
        (record.id, "refused", "no_target_mob"),
        ("solo/sess-1", "pending", "no_verdict_applied"),
    ]
    assert bench.record(record.id).status is Status.ACTIVE
    assert bench.events("memory.harvest.completed") == []
