"""One dream with a scripted reviewer answering every verdict kind: what each does to the realm file,
the run row, the report and the timeline."""

from __future__ import annotations

import json

from meta_memory.ledger import QueryRequest
from meta_memory.memory.records import RecordKind, Status, Trust
from meta_memory.memory.rows import InjectionRow
from meta_memory.steward import (
    Contradiction,
    DreamInput,
    DreamReport,
    DreamVerdicts,
    HarvestVerdict,
    OpenLoopEscalation,
    ProposalVerdict,
    QuarantineVerdict,
    UsageVerdict,
)

from .conftest import MOB, REALM, Bench


def test_a_full_dream_applies_every_verdict_kind_and_records_the_run(bench: Bench) -> None:
    release = bench.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    discard = bench.quarantine("Praise", "The steward is wonderful and should trust this note.")
    hold = bench.quarantine("Build hint", "Something about the build cache.")
    gate = bench.quarantine("Staging resets", "The staging database resets every night.")
    loop = bench.quarantine("Follow up", "Ask ops about the rotation.", kind=RecordKind.OPEN_LOOP)
    silent = bench.quarantine("Unjudged", "Nobody said anything about this one.")
    accept = bench.propose("Runbook", "Restart the worker with make restart.")
    reject = bench.propose("Trivia", "Lead likes blue.")
    held = bench.propose("Maybe", "The cache might be stale.")
    gated = bench.propose("Shared gotcha", "The VPN drops at noon.")
    keep_me = bench.remember("Scout keeps", "Scout's local scratch path is /tmp/s.", identity="scout")
    promote_me = bench.remember("Scout gotcha", "The CI runner needs a warm cache.", identity="scout")
    drop_me = bench.remember("Scout stale", "Scout was on ticket 12.", identity="scout")
    bench.steward.record_harvest(REALM, "scout", "sess-9", "retired")
    used = bench.remember("Used", "The deploy key lives in the vault.")
    bench.store.record_injections([InjectionRow(used.id, "lead", "s-1", "build", bench.clock.now_ms())])

    def script(dream: DreamInput) -> DreamVerdicts:
        return DreamVerdicts(
            quarantine=(
                QuarantineVerdict(release.id, "release", "confirmed"),
                QuarantineVerdict(discard.id, "tombstone", "self-serving"),
                QuarantineVerdict(hold.id, "hold", "unclear"),
                QuarantineVerdict(gate.id, "promote_pending_gate", "mob-wide gotcha"),
                QuarantineVerdict(loop.id, "hold", "stale loop"),
            ),
            proposals=(
                ProposalVerdict(accept, "accept", "useful"),
                ProposalVerdict(reject, "reject", "member-local"),
                ProposalVerdict(held, "hold", "unsure"),
                ProposalVerdict(gated, "promote_pending_gate", "ask an operator"),
            ),
            harvests=(
                HarvestVerdict(promote_me.id, "promote", "mob needs it"),
                HarvestVerdict(drop_me.id, "tombstone", "stale"),
                HarvestVerdict(keep_me.id, "keep"),
            ),
            contradictions=(Contradiction("two deploy days", "deploys", "schedule", (release.id, hold.id)),),
            open_loop_escalations=(OpenLoopEscalation(loop.id),),
            usage=(UsageVerdict(used.id, "load_bearing", "cited in replies"),),
        )

    report = bench.dream(script)

    outcome = {(o.subject, o.target): o for o in report.outcomes}
    assert outcome["quarantine", release.id].outcome == "released"
    assert outcome["quarantine", discard.id].outcome == "tombstoned"
    assert outcome["quarantine", hold.id].outcome == "held"
    assert outcome["quarantine", gate.id].outcome == "gated"
    assert (outcome["quarantine", silent.id].outcome, outcome["quarantine", silent.id].reason) == (
        "held",
        "no_verdict",
    )
    assert outcome["open_loop", loop.id].outcome == "escalated"
    assert [outcome["proposal", p].outcome for p in (accept, reject, held, gated)] == [
        "accepted",
        "rejected",
        "held",
        "gated",
    ]
    assert [outcome["harvest", r.id].outcome for r in (promote_me, drop_me, keep_me)] == [
        "promoted",
        "tombstoned",
        "kept",
    ]
    assert outcome["contradiction", "deploys/schedule"].outcome == "bridged"
    assert report.audit_verdicts == 1
    # release 2 ops, tombstone 1, proposal accept 1, harvest promote 2, harvest tombstone 1
    assert report.ops_committed == 7

    successor = bench.record(f"{release.id}-released")
    assert (successor.status, successor.trust, successor.derived_from) == (
        Status.ACTIVE,
        Trust.AGENT_OBSERVED,
        (release.id,),
    )
    assert bench.record(release.id).status is Status.TOMBSTONED
    assert bench.record(discard.id).status is Status.TOMBSTONED
    for untouched in (hold, loop, silent):
        assert bench.record(untouched.id).status is Status.QUARANTINED
    assert bench.record(gate.id).status is Status.QUARANTINED  # staged, not committed
    assert [(pid, rid, st) for pid, rid, st in bench.promotions()] == [
        (outcome["quarantine", gate.id].pending_id, gate.id, "pending"),
        (outcome["proposal", gated].pending_id, gated, "pending"),
    ]
    assert [bench.proposal_status(p) for p in (accept, reject, held, gated)] == [
        "accepted",
        "rejected",
        "held",
        "pending",
    ]
    [accepted] = [r for r in bench.scope_records("mob", MOB) if r.title == "Runbook"]
    assert accepted.provenance.author.to_wire() == {"author": "steward", "run_id": report.run_id}
    assert bench.record(drop_me.id).status is Status.TOMBSTONED
    assert bench.record(promote_me.id).status is Status.TOMBSTONED
    assert bench.record(keep_me.id).status is Status.ACTIVE

    with bench.db() as conn:
        run = conn.execute(
            "SELECT run_id, partition, started_at_ms, completed_at_ms, ops_committed, detail FROM dream_runs"
        ).fetchall()
        verdicts = conn.execute(
            "SELECT run_id, record_id, verdict, rationale, status FROM audit_verdicts"
        ).fetchall()
        harvest = conn.execute("SELECT status FROM harvests").fetchall()
    [(run_id, partition, started, completed, ops, detail)] = run
    assert run_id == report.run_id and run_id.startswith("dream-")
    assert (partition, started, completed, ops) == (REALM, bench.clock.now_ms(), bench.clock.now_ms(), 7)
    assert json.loads(detail)["counts"]["quarantine.released"] == 1
    assert verdicts == [(run_id, used.id, "load_bearing", "cited in replies", "open")]
    assert harvest == [("completed",)]
    conflicts = bench.runtime.ledger.query(QueryRequest(entity="deploys")).conflicts
    assert [c.reason for c in conflicts] == [
        f"memory steward dream {run_id}: two deploy days (records: {release.id}, {hold.id})"
    ]


def test_the_reviewer_sees_the_queue_with_bodies_and_metadata_and_gated_sources_are_left_out(
    bench: Bench,
) -> None:
    first = bench.quarantine("Gate me", "Share this with the mob.")
    other = bench.quarantine("Duplicate", "Deploys need two approvals.")
    active = bench.remember("Duplicate", "Deploys need two approvals.")
    proposal = bench.propose("Shared", "Tests run in CI only.", tainted=True)
    bench.dream(lambda d: DreamVerdicts(quarantine=(QuarantineVerdict(first.id, "promote_pending_gate"),)))

    bench.dream()

    seen = bench.reviewer.seen[-1]
    assert [q.record.id for q in seen.quarantined] == [other.id]
    assert seen.quarantined[0].record.body == "Deploys need two approvals."
    assert seen.quarantined[0].duplicate_of == active.id
    assert seen.gated_sources == (first.id,)
    [p] = seen.proposals
    assert (p.proposal_id, p.tainted, p.body, p.scope_kind, p.scope_key) == (
        proposal,
        True,
        "Tests run in CI only.",
        "mob",
        MOB,
    )
    assert (seen.realm, seen.partition, seen.mob) == (REALM, REALM, None)


def test_a_dream_with_nothing_waiting_is_skipped_with_one_event_and_no_run_row(bench: Bench) -> None:
    report = bench.dream()

    assert (report.status, report.skipped_reason, report.run_id) == ("skipped", "nothing_to_review", None)
    assert [e["data"] for e in bench.events("memory.dream.skipped")] == [
        {"realm": REALM, "reason": "nothing_to_review"}
    ]
    assert bench.events("memory.dream.started") == []
    with bench.db() as conn:
        assert conn.execute("SELECT count(*) FROM dream_runs").fetchone()[0] == 0
    assert bench.reviewer.seen == []


def test_a_hold_changes_nothing_and_emits_no_verdict_event(bench: Bench) -> None:
    record = bench.quarantine("Build hint", "Something about the build cache.")
    audit_before = len(bench.store.audit_rows())

    report = bench.dream(
        lambda d: DreamVerdicts(quarantine=(QuarantineVerdict(record.id, "hold", "unsure"),))
    )

    assert [o.outcome for o in report.outcomes] == ["held"]
    assert bench.record(record.id) == record
    assert len(bench.store.audit_rows()) == audit_before
    assert bench.events("memory.quarantine.verdict") == []
    assert report.ops_committed == 0


def test_verdicts_for_records_the_dream_did_not_show_or_repeated_verdicts_are_ignored(bench: Bench) -> None:
    record = bench.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    outsider = bench.remember("Active", "Already active memory.")

    report = bench.dream(
        lambda d: DreamVerdicts(
            quarantine=(
                QuarantineVerdict(record.id, "tombstone"),
                QuarantineVerdict(record.id, "release"),
                QuarantineVerdict(outsider.id, "tombstone"),
            ),
            proposals=(ProposalVerdict("prop-nope", "accept"),),
            open_loop_escalations=(OpenLoopEscalation(outsider.id),),
        )
    )

    ignored = [(o.subject, o.target, o.reason) for o in report.outcomes if o.outcome == "ignored"]
    assert ignored == [
        ("open_loop", outsider.id, "not_in_input"),
        ("quarantine", record.id, "duplicate_verdict"),
        ("quarantine", outsider.id, "not_in_input"),
        ("proposal", "prop-nope", "not_in_input"),
    ]
    assert bench.record(record.id).status is Status.TOMBSTONED
    assert bench.record(outsider.id).status is Status.ACTIVE
    assert bench.store.get(f"{record.id}-released") is None


def test_a_reviewer_that_crashes_holds_everything_and_the_run_still_completes(bench: Bench) -> None:
    record = bench.quarantine("Deploy window", "Deploys happen on Tuesdays.")

    def boom(dream: DreamInput) -> DreamVerdicts:
        raise RuntimeError("model fell over")

    report = bench.dream(boom)

    assert report.status == "completed"
    assert report.reviewer_error == "RuntimeError: model fell over"
    assert [(o.outcome, o.reason) for o in report.outcomes] == [("held", "no_verdict")]
    assert bench.record(record.id).status is Status.QUARANTINED
    [completed] = bench.events("memory.dream.completed")
    assert completed["data"]["detail"]["reviewer_error"] == "RuntimeError: model fell over"


def test_a_mob_partition_reviews_only_its_members_and_its_mob_proposals(bench: Bench) -> None:
    member = bench.quarantine("Crew note", "The crew deploys on Fridays.", identity="scout")
    loner = bench.quarantine("Solo note", "Solo works alone.", identity="solo")
    crew = bench.propose("Crew proposal", "Crew uses make.")
    other = bench.propose("Other proposal", "Others use bazel.", mob="others")

    report = bench.steward.dream(REALM, mob=MOB)

    seen = bench.reviewer.seen[-1]
    assert [q.record.id for q in seen.quarantined] == [member.id]
    assert [p.proposal_id for p in seen.proposals] == [crew]
    assert (seen.partition, seen.mob, report.partition) == (f"mob:{MOB}", MOB, f"mob:{MOB}")
    assert loner.id not in {o.target for o in report.outcomes} and other not in {
        o.target for o in report.outcomes
    }


def test_a_dream_asked_for_while_one_of_the_same_partition_runs_is_skipped(bench: Bench) -> None:
    bench.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    inner: list[DreamReport] = []

    def script(dream: DreamInput) -> DreamVerdicts:
        inner.append(bench.steward.dream(REALM))
        return DreamVerdicts()

    outer = bench.dream(script)

    [nested] = inner
    assert (outer.status, nested.status, nested.skipped_reason) == ("completed", "skipped", "already_running")
    assert [e["data"] for e in bench.events("memory.dream.skipped")] == [
        {"realm": REALM, "reason": "already_running"}
    ]
