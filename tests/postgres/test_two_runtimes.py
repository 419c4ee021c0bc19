"""The steward dreaming on one gateway while an operator reviews on another, both on one database:
the steward's reviewer is asked with no lock held (an operator's decision never waits for an LLM),
each quarantined record is decided exactly once, and the dream refuses, alone, every verdict on a
record that another gateway decided after the dream gathered it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from meta_memory.clock import ManualClock
from meta_memory.errors import MetaError
from meta_memory.gateway.dispatch import CONSOLE, CallContext
from meta_memory.gateway.methods import build_dispatcher
from meta_memory.memory.records import Record, Status
from meta_memory.steward import DreamInput, DreamVerdicts, QuarantineVerdict

from ..conftest import Backend
from ..steward.conftest import Bench, open_bench

DEADLINE_S = 60.0


@pytest.fixture
def pair(pg: Backend, tmp_path: Path) -> Iterator[tuple[Bench, Bench]]:
    clock = ManualClock()
    a, b = open_bench(tmp_path / "a", clock, pg), open_bench(tmp_path / "b", clock, pg)
    yield a, b
    a.runtime.close()
    b.runtime.close()


def _decide(bench: Bench, record: Record, verdict: str) -> Any:
    params = {
        "identity": "lead",
        "memory_id": record.id,
        "verdict": verdict,
        "expected_content_hash": record.content_hash,
    }
    try:
        return build_dispatcher(bench.runtime).call(
            "meta/memory/quarantine/decide", params, CallContext(CONSOLE)
        )
    except MetaError as exc:
        return exc


def _release_all(records: list[Record]) -> DreamVerdicts:
    return DreamVerdicts(quarantine=tuple(QuarantineVerdict(r.id, "release") for r in records))


def test_an_operator_deciding_on_another_gateway_while_the_reviewer_thinks_is_never_blocked(
    pair: tuple[Bench, Bench],
) -> None:
    a, b = pair
    records = [a.quarantine(f"Fact {n}", f"Fact number {n} holds for the crew.") for n in range(6)]
    decided_meanwhile: list[Any] = []

    def reviewer(dream: DreamInput) -> DreamVerdicts:
        # The operator on gateway B tombstones half the queue while A's reviewer is thinking.
        with ThreadPoolExecutor(max_workers=1) as pool:
            for record in records[:3]:
                decided_meanwhile.append(
                    pool.submit(_decide, b, record, "tombstone").result(timeout=DEADLINE_S)
                )
        return _release_all(records)

    report = a.dream(reviewer)

    assert [d["outcome"] for d in decided_meanwhile] == ["tombstoned"] * 3
    outcomes = {o.target: (o.outcome, o.reason) for o in report.outcomes_for("quarantine")}
    assert {outcomes[r.id][0] for r in records[:3]} == {"refused"}  # decided elsewhere since the gather
    assert {outcomes[r.id] for r in records[3:]} == {("released", None)}
    released = [r.id for r in records if b.store.get(f"{r.id}-released") is not None]
    assert released == [r.id for r in records[3:]]
    for record in records:
        assert b.record(record.id).status is Status.TOMBSTONED


def test_a_dream_racing_an_operator_on_another_gateway_decides_each_record_once(
    pair: tuple[Bench, Bench],
) -> None:
    a, b = pair
    records = [a.quarantine(f"Rule {n}", f"Rule number {n} holds for the crew.") for n in range(8)]
    start = threading.Barrier(2)

    def reviewer(dream: DreamInput) -> DreamVerdicts:
        start.wait(timeout=DEADLINE_S)  # the operator starts as the dream begins to apply
        return _release_all(records)

    def operator() -> list[Any]:
        start.wait(timeout=DEADLINE_S)
        return [_decide(b, record, "tombstone") for record in reversed(records)]

    with ThreadPoolExecutor(max_workers=2) as pool:
        dreaming = pool.submit(a.dream, reviewer)
        deciding = pool.submit(operator)
        report = dreaming.result(timeout=DEADLINE_S)
        decisions = deciding.result(timeout=DEADLINE_S)

    by_steward = [o for o in report.outcomes_for("quarantine") if o.outcome == "released"]
    by_operator = [d for d in decisions if isinstance(d, dict) and d["outcome"] == "tombstoned"]
    assert len(by_steward) + len(by_operator) == len(records)  # each record decided once
    for record in records:
        successor = b.store.get(f"{record.id}-released")
        assert b.record(record.id).status is Status.TOMBSTONED
        with b.db() as conn:
            (reviews,) = conn.execute(
                "SELECT count(*) FROM audit WHERE detail->'review'->>'origin' = ?", (record.id,)
            ).fetchone()
        assert reviews == (2 if successor is not None else 1)
