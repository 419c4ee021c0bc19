"""Gated promotions (REFERENCE 5.3): staged batch + r3 gating entry + mapping row, and the
``pending → committed | denied | expired`` lifecycle driven by gating decisions, deadlines and the
7-day backstop, with a controllable clock."""

from __future__ import annotations

import json

import pytest

from meta_memory.clock import ManualClock
from meta_memory.memory.records import Record, Status, Trust
from meta_memory.review import DecideParams
from meta_memory.steward import DreamReport, DreamVerdicts, QuarantineVerdict
from meta_memory.steward.promotions import StagedPromotion, StageRefused
from meta_memory.steward.staging import batch_from_json

from .conftest import DAY_MS, MOB, REALM, SEVEN_DAYS_MS, Bench, open_bench


def stage(bench: Bench, record: Record, target_mob: str | None = None) -> str:
    report = bench.dream(
        lambda d: DreamVerdicts(
            quarantine=(QuarantineVerdict(record.id, "promote_pending_gate", "mob-wide", target_mob),)
        )
    )
    [outcome] = report.outcomes_for("quarantine")
    assert outcome.outcome == "gated", outcome
    assert outcome.pending_id is not None
    return outcome.pending_id


def test_staging_opens_an_r3_gate_naming_the_target_scope_and_the_source_and_writes_the_mapping(
    bench: Bench,
) -> None:
    record = bench.quarantine("Staging resets", "The staging database resets every night.")

    pending_id = stage(bench, record)

    [entry] = bench.runtime.gating.pending().pending
    assert (entry.pending_id, entry.risk_tier, entry.entity, entry.topic) == (
        pending_id,
        "r3",
        MOB,
        record.id,
    )
    assert entry.action == "memory.quarantine_promote"
    assert entry.description is not None and entry.description.startswith("memory.quarantine_promote: ")
    assert entry.deadline_at_ms == bench.clock.now_ms() + SEVEN_DAYS_MS
    with bench.db() as conn:
        row = conn.execute(
            "SELECT record_id, scope_kind, scope_key, rationale, status, proposal_id, created_at_ms, resolved_at_ms "
            "FROM promotions"
        ).fetchall()
    assert row == [(record.id, "mob", MOB, "mob-wide", "pending", None, bench.clock.now_ms(), None)]
    assert bench.stage_count() == 1
    assert "stage-" not in str(entry.to_wire())


def test_an_approval_commits_the_staged_batch_and_announces_a_gated_promotion(bench: Bench) -> None:
    record = bench.quarantine("Staging resets", "The staging database resets every night.")
    pending_id = stage(bench, record)
    bench.clock.advance(60_000)

    bench.decide_gate(pending_id, "approve")

    assert bench.promotion(pending_id) == ("committed", bench.clock.now_ms())
    assert bench.stage_count() == 0
    [promoted] = bench.scope_records("mob", MOB)
    assert (promoted.title, promoted.body, promoted.status, promoted.trust) == (
        record.title,
        record.body,
        Status.ACTIVE,
        Trust.AGENT_OBSERVED,
    )
    assert (promoted.derived_from, promoted.ever_quarantined) == ((record.id,), True)
    assert promoted.created_at_ms == bench.clock.now_ms()
    assert bench.record(record.id).status is Status.TOMBSTONED
    [event] = bench.events("memory.record.promoted")
    assert (event["identity"], event["data"]) == (
        "lead",
        {
            "realm": REALM,
            "record_id": promoted.id,
            "source_record_id": record.id,
            "scope_kind": "mob",
            "scope_key": MOB,
            "proposal_id": None,
            "gated": True,
        },
    )


def test_a_rejection_denies_the_promotion_and_leaves_the_source_in_quarantine(bench: Bench) -> None:
    record = bench.quarantine("Staging resets", "The staging database resets every night.")
    pending_id = stage(bench, record)

    bench.decide_gate(pending_id, "reject")

    assert bench.promotion(pending_id) == ("denied", bench.clock.now_ms())
    assert bench.stage_count() == 0
    assert bench.scope_records("mob", MOB) == []
    assert bench.record(record.id).status is Status.QUARANTINED
    assert bench.events("memory.record.promoted") == []


def test_an_escalation_keeps_the_promotion_pending_under_the_successor_id_which_can_then_commit(
    bench: Bench,
) -> None:
    record = bench.quarantine("Staging resets", "The staging database resets every night.")
    pending_id = stage(bench, record)

    successor = bench.decide_gate(pending_id, "escalate").next_pending_id
    assert successor is not None and successor != pending_id
    assert [(p, r, s) for p, r, s in bench.promotions()] == [(successor, record.id, "pending")]
    bench.decide_gate(successor, "approve")

    assert bench.promotion(successor) == ("committed", bench.clock.now_ms())
    assert len(bench.scope_records("mob", MOB)) == 1


def test_a_gate_that_times_out_expires_the_promotion_and_discards_its_batch(bench: Bench) -> None:
    record = bench.quarantine("Staging resets", "The staging database resets every night.")
    pending_id = stage(bench, record)
    bench.clock.advance(SEVEN_DAYS_MS)

    assert bench.runtime.gating.pending().pending == ()  # the deadline falls back: a timeout notice

    assert bench.promotion(pending_id) == ("expired", bench.clock.now_ms())
    assert bench.stage_count() == 0
    assert bench.record(record.id).status is Status.QUARANTINED
    assert bench.scope_records("mob", MOB) == []


def test_the_seven_day_backstop_expires_a_promotion_its_gate_forgot_on_the_next_dream(
    tmp_path, clock: ManualClock
) -> None:
    first = open_bench(tmp_path / "state", clock)
    record = first.quarantine("Staging resets", "The staging database resets every night.")
    pending_id = stage(first, record)
    first.runtime.close()  # a restart: gating's pending entries are gone, the mapping row is not
    bench = open_bench(tmp_path / "state", clock)
    try:
        clock.advance(SEVEN_DAYS_MS - 1)
        bench.dream()
        assert bench.promotion(pending_id) == ("pending", None)  # not yet: the source stays gated

        clock.advance(1)
        report: DreamReport = bench.dream()

        assert report.expired_promotions == [pending_id]
        assert bench.promotion(pending_id) == ("expired", clock.now_ms())
        assert bench.stage_count() == 0
        assert [q.record.id for q in bench.reviewer.seen[-1].quarantined] == [record.id]  # reviewable again
    finally:
        bench.runtime.close()


def test_an_approval_after_an_operator_tombstone_invalidated_the_promotion_commits_nothing(
    bench: Bench,
) -> None:
    record = bench.quarantine("Staging resets", "The staging database resets every night.")
    pending_id = stage(bench, record)
    assert bench.runtime.review is not None
    params = DecideParams(REALM, "lead", record.id, "tombstone", record.content_hash, "no")
    bench.runtime.review.decide(params, reviewer={"kind": "console", "principal": "op"})
    assert bench.promotion(pending_id)[0] == "expired"

    bench.decide_gate(pending_id, "approve")

    assert bench.promotion(pending_id)[0] == "expired"
    assert bench.scope_records("mob", MOB) == []
    assert bench.events("memory.record.promoted") == []


def test_an_approval_whose_batch_no_longer_commits_expires_the_promotion(bench: Bench) -> None:
    record = bench.quarantine("Staging resets", "The staging database resets every night.")
    pending_id = stage(bench, record)
    with bench.db() as conn:
        conn.execute('UPDATE stage_batches SET batch = \'{"batch": {"ops": 7}}\'')

    bench.decide_gate(pending_id, "approve")

    assert bench.promotion(pending_id) == ("expired", bench.clock.now_ms())
    assert bench.scope_records("mob", MOB) == []
    assert bench.record(record.id).status is Status.QUARANTINED


def test_an_approval_after_the_source_left_quarantine_expires_the_promotion(bench: Bench) -> None:
    record = bench.quarantine("Staging resets", "The staging database resets every night.")
    pending_id = stage(bench, record)
    bench.memory.agent_forget("lead", REALM, record.id)  # the agent forgot its own quarantined write

    bench.decide_gate(pending_id, "approve")

    assert bench.promotion(pending_id)[0] == "expired"
    assert bench.scope_records("mob", MOB) == []


def test_a_source_has_at_most_one_pending_gate(bench: Bench) -> None:
    record = bench.quarantine("Staging resets", "The staging database resets every night.")
    stage(bench, record)
    bench.quarantine("Other", "Something else to dream about.")

    report = bench.dream(
        lambda d: DreamVerdicts(quarantine=(QuarantineVerdict(record.id, "promote_pending_gate"),))
    )

    assert (record.id, "ignored", "gated_source") in [
        (o.target, o.outcome, o.reason) for o in report.outcomes
    ]
    assert len(bench.promotions()) == 1
    assert [e.topic for e in bench.runtime.gating.pending().pending] == [record.id]


def test_staging_a_second_gate_for_a_source_is_refused_by_the_promotions_themselves(bench: Bench) -> None:
    record = bench.quarantine("Staging resets", "The staging database resets every night.")
    stage(bench, record)
    [(_, _, batch_json)] = bench_stage_rows(bench)
    staged = StagedPromotion(
        REALM,
        record.id,
        "lead",
        batch_from_json(batch_json["batch"]),
        bench.record(record.id),
        None,
        None,
        "dream-x",
    )

    with pytest.raises(StageRefused) as refused:
        bench.steward.promotions.stage(staged)

    assert refused.value.reason == "gate_pending"
    assert len(bench.promotions()) == 1 and len(bench.runtime.gating.pending().pending) == 1


def bench_stage_rows(bench: Bench) -> list[tuple[str, int, dict]]:
    with bench.db() as conn:
        return [
            (t, c, json.loads(b))
            for t, b, c in conn.execute("SELECT stage_token, batch, created_at_ms FROM stage_batches")
        ]


def test_a_pending_gate_refuses_a_steward_release_until_it_is_decided(bench: Bench) -> None:
    record = bench.quarantine("Staging resets", "The staging database resets every night.")
    pending_id = stage(bench, record)
    bench.decide_gate(pending_id, "reject")

    report = bench.dream(lambda d: DreamVerdicts(quarantine=(QuarantineVerdict(record.id, "release"),)))

    assert [o.outcome for o in report.outcomes] == ["released"]


@pytest.mark.parametrize(("target", "expected"), [(None, MOB), ("ops", "ops")])
def test_the_target_mob_is_the_verdicts_or_else_the_identitys_roster_mob(
    bench: Bench, target, expected
) -> None:
    record = bench.quarantine("Staging resets", "The staging database resets every night.")

    stage(bench, record, target)

    [(_, _, _)] = bench.promotions()
    [entry] = bench.runtime.gating.pending().pending
    assert entry.entity == expected


def test_a_promotion_with_no_known_target_mob_is_refused(bench: Bench) -> None:
    record = bench.quarantine("Solo fact", "Solo has no mob.", identity="solo")

    report = bench.dream(
        lambda d: DreamVerdicts(quarantine=(QuarantineVerdict(record.id, "promote_pending_gate"),))
    )

    assert [(o.outcome, o.reason) for o in report.outcomes] == [("refused", "no_target_mob")]
    assert bench.promotions() == []


def test_stale_stage_batches_are_collected_after_a_day_but_not_those_a_pending_promotion_holds(
    bench: Bench,
) -> None:
    record = bench.quarantine("Staging resets", "The staging database resets every night.")
    stage(bench, record)
    with bench.db() as conn:
        conn.execute(
            "INSERT INTO stage_batches (stage_token, batch, created_at_ms) VALUES ('stage-orphan', '{}', ?)",
            (bench.clock.now_ms(),),
        )
    bench.quarantine("Other", "Another record to dream about.")
    bench.clock.advance(DAY_MS)

    bench.dream()

    assert bench.stage_count() == 1
