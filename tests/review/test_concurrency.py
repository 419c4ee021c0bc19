"""Two reviewers deciding one record at the same moment: one transaction commits, the other gets the
replay or a refusal, and the store holds at most one successor with one set of audit rows."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from meta_memory.errors import MetaError
from meta_memory.memory.records import Status

ROUNDS = 8


def race(desk, memory_id: str, verdicts: tuple[str, str]) -> list[Any]:
    """Both decisions start together (bound to the same hash); each returns its result or its error."""
    expected = desk.record(memory_id).content_hash
    barrier = threading.Barrier(len(verdicts))

    def one(verdict: str) -> Any:
        barrier.wait(timeout=10)
        try:
            return desk.decide(memory_id, verdict, expected=expected)
        except MetaError as exc:
            return exc

    with ThreadPoolExecutor(max_workers=len(verdicts)) as pool:
        return [f.result(timeout=30) for f in [pool.submit(one, v) for v in verdicts]]


def review_rows(desk, memory_id: str) -> int:
    origin = (
        "detail->'review'->>'origin'"
        if desk.backend.is_postgres
        else "json_extract(detail, '$.review.origin')"
    )
    with desk.db() as conn:
        return int(conn.execute(f"SELECT count(*) FROM audit WHERE {origin} = ?", (memory_id,)).fetchone()[0])


def test_two_concurrent_releases_apply_once_and_the_other_gets_the_replay(desk) -> None:
    for n in range(ROUNDS):
        origin = desk.quarantine(f"Fact {n}", f"Fact number {n} holds.")

        results = race(desk, origin.id, ("release", "release"))

        outcomes = sorted(r["outcome"] for r in results)
        assert outcomes == ["already_released", "released"]
        assert results[0]["decision"] == results[1]["decision"]
        with desk.db() as conn:
            rows = conn.execute("SELECT count(*) FROM records WHERE id = ?", (f"{origin.id}-released",))
            assert rows.fetchone()[0] == 1
        assert review_rows(desk, origin.id) == 2
    assert len(desk.events()) == ROUNDS


@pytest.mark.parametrize("order", [("release", "tombstone"), ("tombstone", "release")])
def test_a_concurrent_release_and_tombstone_apply_exactly_one_and_refuse_the_other(desk, order) -> None:
    for n in range(ROUNDS):
        origin = desk.quarantine(f"Fact {n}", f"Fact number {n} holds.")

        results = race(desk, origin.id, order)

        applied = [r for r in results if isinstance(r, dict)]
        refused = [r for r in results if isinstance(r, MetaError)]
        assert len(applied) == 1 and len(refused) == 1
        assert refused[0].code == -32043 and refused[0].data["reason"] == "not_quarantined"
        released = applied[0]["outcome"] == "released"
        assert applied[0]["outcome"] in ("released", "tombstoned")
        successor = desk.store.get(f"{origin.id}-released")
        assert (successor is not None) == released
        assert desk.record(origin.id).status is Status.TOMBSTONED
        assert review_rows(desk, origin.id) == (2 if released else 1)
    assert len(desk.events()) == ROUNDS
