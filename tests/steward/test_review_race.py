"""The steward decides quarantine through the same review operation as an operator: the first committer
wins and the other gets the replay or a refusal, which the dream reports instead of raising. A release
the secret scan blocks emits ``memory.quarantine.release_blocked``."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from meta_memory.errors import MetaError
from meta_memory.memory.records import Status
from meta_memory.review import DecideParams
from meta_memory.steward import DreamInput, DreamVerdicts, QuarantineVerdict

from .conftest import REALM, Bench


def operator_decides(bench: Bench, memory_id: str, verdict: str) -> Any:
    assert bench.runtime.review is not None
    params = DecideParams(REALM, "lead", memory_id, verdict, bench.record(memory_id).content_hash, "operator")
    return bench.runtime.review.decide(params, reviewer={"kind": "console", "principal": "op"})


def test_an_operator_release_committed_while_the_steward_thinks_makes_the_steward_release_a_replay(
    bench: Bench,
) -> None:
    record = bench.quarantine("Deploy window", "Deploys happen on Tuesdays.")

    def script(dream: DreamInput) -> DreamVerdicts:
        operator_decides(bench, record.id, "release")  # the operator commits first
        return DreamVerdicts(quarantine=(QuarantineVerdict(record.id, "release"),))

    report = bench.dream(script)

    [outcome] = report.outcomes_for("quarantine")
    assert (outcome.outcome, outcome.record_id) == ("already_released", f"{record.id}-released")
    assert report.ops_committed == 0
    reviews = [r for r in bench.store.audit_rows(record.id) if "review" in r["detail"]]
    assert {r["detail"]["review"]["reviewer"]["kind"] for r in reviews} == {"console"}
    assert len(bench.events("memory.quarantine.verdict")) == 1  # the replay emits nothing


def test_an_operator_tombstone_committed_first_makes_the_steward_release_a_refusal(bench: Bench) -> None:
    record = bench.quarantine("Deploy window", "Deploys happen on Tuesdays.")

    def script(dream: DreamInput) -> DreamVerdicts:
        operator_decides(bench, record.id, "tombstone")
        return DreamVerdicts(quarantine=(QuarantineVerdict(record.id, "release"),))

    report = bench.dream(script)

    [outcome] = report.outcomes_for("quarantine")
    assert (outcome.outcome, outcome.reason) == ("refused", "not_quarantined")
    assert bench.store.get(f"{record.id}-released") is None
    assert bench.record(record.id).status is Status.TOMBSTONED


def test_a_concurrent_steward_release_and_operator_release_apply_once_and_the_other_is_a_replay(
    bench: Bench,
) -> None:
    for n in range(6):
        record = bench.quarantine(f"Fact {n}", f"Fact number {n} holds.")
        barrier = threading.Barrier(2)

        def script(dream: DreamInput, memory_id: str = record.id, start: Any = barrier) -> DreamVerdicts:
            start.wait(timeout=10)
            return DreamVerdicts(quarantine=(QuarantineVerdict(memory_id, "release"),))

        def operator(memory_id: str = record.id, start: Any = barrier) -> Any:
            start.wait(timeout=10)
            try:
                return operator_decides(bench, memory_id, "release").outcome
            except MetaError as exc:
                return exc

        with ThreadPoolExecutor(max_workers=2) as pool:
            dream = pool.submit(bench.dream, script)
            op = pool.submit(operator)
            report, operator_outcome = dream.result(timeout=30), op.result(timeout=30)

        [steward_outcome] = report.outcomes_for("quarantine")
        assert sorted([steward_outcome.outcome, operator_outcome]) == ["already_released", "released"]
        assert bench.record(f"{record.id}-released").status is Status.ACTIVE
        reviews = [
            r for r in bench.store.audit_rows() if r["detail"].get("review", {}).get("origin") == record.id
        ]
        assert len(reviews) == 2  # the create and the tombstone of one review, never two reviews


def test_a_secret_blocked_release_is_refused_reported_and_announced_by_class(bench: Bench) -> None:
    record = bench.quarantine("Deploy key", "Deploys use a key.")
    bench.rewrite(record.id, "Deploys use key AKIAABCDEFGHIJKLMNOP.")

    report = bench.dream(lambda d: DreamVerdicts(quarantine=(QuarantineVerdict(record.id, "release"),)))

    [outcome] = report.outcomes_for("quarantine")
    assert (outcome.outcome, outcome.reason) == ("refused", "secret_detected")
    assert bench.record(record.id).status is Status.QUARANTINED
    [blocked] = bench.events("memory.quarantine.release_blocked")
    assert (blocked["identity"], blocked["data"]) == (
        "lead",
        {"realm": REALM, "record_id": record.id, "verdict": "release", "class": "aws-access-key-id"},
    )
    assert "AKIA" not in str(blocked)
    assert bench.events("memory.quarantine.verdict") == []


def test_a_secret_blocks_a_gated_promotion_too_and_nothing_is_staged(bench: Bench) -> None:
    record = bench.quarantine("Deploy key", "Deploys use a key.")
    bench.rewrite(record.id, "Deploys use key AKIAABCDEFGHIJKLMNOP.")

    report = bench.dream(
        lambda d: DreamVerdicts(quarantine=(QuarantineVerdict(record.id, "promote_pending_gate"),))
    )

    assert [(o.outcome, o.reason) for o in report.outcomes] == [("refused", "secret_detected")]
    [blocked] = bench.events("memory.quarantine.release_blocked")
    assert blocked["data"]["verdict"] == "promote_pending_gate"
    assert bench.promotions() == [] and bench.stage_count() == 0
    assert bench.runtime.gating.pending().pending == ()
