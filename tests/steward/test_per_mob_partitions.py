"""With ``per_mob = true`` nothing waits for a partition that is never scheduled: a mob a proposal
names that nobody is in gets a partition of its own (``mob:<name>``), and what no mob claims (the
quarantine and harvests of identities in no mob, proposals outside mob scope) is one more,
``(no mob)``. A pending exit-interview harvest counts as a signal like quarantine and proposals."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from meta_memory.clock import ManualClock
from meta_memory.memory.records import Author, Scope, ScopeKind
from meta_memory.steward import NO_MOB_PARTITION, StewardScheduler

from ..conftest import Backend
from .conftest import MOB, REALM, Bench, open_bench


@pytest.fixture
def per_mob(tmp_path: Path, clock: ManualClock, backend: Backend) -> Iterator[tuple[Bench, StewardScheduler]]:
    bench = open_bench(tmp_path / "state", clock, backend, per_mob=True, min_signals=1)
    yield bench, StewardScheduler(bench.steward, clock=clock)
    bench.runtime.close()


def _seen(bench: Bench) -> dict[str, tuple[list[str], list[str], list[str]]]:
    """Per partition dreamt: the quarantined titles, proposal titles and harvested identities shown."""
    return {
        d.partition: (
            [q.record.title for q in d.quarantined],
            [p.title for p in d.proposals],
            [h.identity for h in d.harvests],
        )
        for d in bench.reviewer.seen
    }


def test_a_proposal_to_a_mob_nobody_is_in_is_dreamt_in_a_partition_of_its_own(
    per_mob: tuple[Bench, StewardScheduler],
) -> None:
    bench, scheduler = per_mob
    bench.propose("Typo", "Proposed to a mob with no members.", mob="typo-mob")

    reports = scheduler.tick()

    assert [r.partition for r in reports] == ["mob:typo-mob"]
    assert _seen(bench) == {"mob:typo-mob": ([], ["Typo"], [])}


def test_the_quarantine_and_harvests_of_identities_in_no_mob_are_dreamt_as_no_mob(
    per_mob: tuple[Bench, StewardScheduler],
) -> None:
    bench, scheduler = per_mob
    bench.quarantine("Crew", "A crew member's record.", identity="scout")
    bench.quarantine("Solo", "On the roster, in no mob.", identity="solo")
    bench.quarantine("Ghost", "Not on the roster at all.", identity="ghost")
    bench.steward.record_harvest(REALM, "solo", "sess-1", "retired")

    reports = scheduler.tick()

    assert [r.partition for r in reports] == [f"mob:{MOB}", NO_MOB_PARTITION]
    assert _seen(bench) == {
        f"mob:{MOB}": (["Crew"], [], []),
        NO_MOB_PARTITION: (["Solo", "Ghost"], [], ["solo"]),
    }


def test_operator_scope_proposals_wait_in_the_no_mob_partition(
    per_mob: tuple[Bench, StewardScheduler],
) -> None:
    bench, scheduler = per_mob
    bench.store.create_proposal(
        proposal_id="prop-operator-1",
        scope=Scope(ScopeKind.OPERATOR, REALM, "ops"),
        kind="fact",
        title="Operator rule",
        description="",
        body="Change freezes start on the 20th.",
        tags=(),
        author=Author("agent", identity="lead"),
        tainted=False,
    )
    bench.propose("Crew rule", "The crew deploys on Fridays.")

    scheduler.tick()

    assert _seen(bench) == {
        f"mob:{MOB}": ([], ["Crew rule"], []),
        NO_MOB_PARTITION: ([], ["Operator rule"], []),
    }


def test_a_pending_harvest_alone_is_enough_for_a_scheduled_dream(
    tmp_path: Path, clock: ManualClock, backend: Backend
) -> None:
    bench = open_bench(tmp_path / "state", clock, backend, min_signals=1)
    try:
        scheduler = StewardScheduler(bench.steward, clock=clock)
        assert scheduler.tick() == []
        bench.remember("VPN", "Use the new VPN.", identity="scout")
        bench.steward.record_harvest(REALM, "scout", "sess-9", "retired")

        [report] = scheduler.tick()

        assert report.status == "completed" and _seen(bench) == {REALM: ([], [], ["scout"])}
    finally:
        bench.runtime.close()


def test_a_dream_over_what_no_mob_claims_is_one_partition_not_a_mob(bench: Bench) -> None:
    bench.quarantine("Solo", "On the roster, in no mob.", identity="solo")
    bench.quarantine("Crew", "A crew member's record.", identity="lead")

    report = bench.steward.dream(REALM, unaffiliated=True)

    assert (report.partition, bench.reviewer.seen[-1].mob) == (NO_MOB_PARTITION, None)
    assert _seen(bench) == {NO_MOB_PARTITION: (["Solo"], [], [])}
    with pytest.raises(ValueError, match="not both"):
        bench.steward.dream(REALM, mob=MOB, unaffiliated=True)
