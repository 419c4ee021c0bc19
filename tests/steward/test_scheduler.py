"""The cadence scheduler: ``tick`` dreams a partition only when its interval has passed, its daily budget
is not spent and enough signals wait; the runtime starts its thread when the steward is enabled and
stops it on close. Time is the injected clock: no test waits."""

from __future__ import annotations

from pathlib import Path

import pytest

from meta_memory.clock import ManualClock
from meta_memory.errors import ConfigError
from meta_memory.runtime import MetaRuntime
from meta_memory.steward import NO_MOB_PARTITION, StewardScheduler, parse_cadence

from .conftest import DAY_MS, MOB, REALM, Bench, config, open_bench

HOUR_MS = 3_600_000


@pytest.mark.parametrize(
    ("cadence", "ms"), [("*/6h", 6 * HOUR_MS), ("*/30m", 1_800_000), ("*/1d", DAY_MS), ("2h", 2 * HOUR_MS)]
)
def test_a_cadence_is_an_interval_in_minutes_hours_or_days(cadence: str, ms: int) -> None:
    assert parse_cadence(cadence) == ms


@pytest.mark.parametrize("cadence", ["*/0h", "0 */6 * * *", "*/6w", "hourly", "*/h"])
def test_an_unreadable_cadence_is_a_config_error(cadence: str) -> None:
    with pytest.raises(ConfigError, match=r"agent_memory\.steward\.cadence"):
        parse_cadence(cadence)


def scheduled(tmp_path: Path, clock: ManualClock, **steward: object) -> tuple[Bench, StewardScheduler]:
    bench = open_bench(tmp_path / "state", clock, **steward)
    return bench, StewardScheduler(bench.steward, clock=clock)


def test_a_tick_dreams_only_once_enough_signals_wait(tmp_path: Path, clock: ManualClock) -> None:
    bench, scheduler = scheduled(tmp_path, clock, min_signals=2)
    try:
        bench.quarantine("One", "The first waiting record.")
        assert scheduler.tick() == []

        bench.propose("Two", "A waiting proposal counts too.")
        [report] = scheduler.tick()

        assert (report.status, report.realm, report.partition) == ("completed", REALM, REALM)
    finally:
        bench.runtime.close()


def test_a_tick_waits_for_the_cadence_interval_after_the_last_dream(
    tmp_path: Path, clock: ManualClock
) -> None:
    bench, scheduler = scheduled(tmp_path, clock, cadence="*/1h", min_signals=1, runs_per_day=96)
    try:
        bench.quarantine("One", "A record that stays held.")
        assert len(scheduler.tick()) == 1

        clock.advance(HOUR_MS - 1)
        assert scheduler.tick() == []
        clock.advance(1)
        assert len(scheduler.tick()) == 1
    finally:
        bench.runtime.close()


def test_a_partition_dreams_at_most_runs_per_day_times_a_utc_day_on_demand_dreams_included(
    tmp_path: Path, clock: ManualClock
) -> None:
    clock.set(20 * DAY_MS)  # midnight UTC
    bench, scheduler = scheduled(tmp_path, clock, cadence="*/1m", min_signals=1, runs_per_day=3)
    try:
        bench.quarantine("One", "A record that stays held.")
        bench.dream()  # on demand: counts against the day
        ran = 0
        for _ in range(5):
            ran += len(scheduler.tick())
            clock.advance(60_000)
        assert ran == 2

        clock.set(21 * DAY_MS)
        assert len(scheduler.tick()) == 1
    finally:
        bench.runtime.close()


def test_per_mob_ticks_dream_each_roster_mob_as_its_own_partition(tmp_path: Path, clock: ManualClock) -> None:
    bench, scheduler = scheduled(tmp_path, clock, per_mob=True, min_signals=1)
    try:
        bench.quarantine("Crew", "A crew member's record.", identity="scout")
        bench.quarantine("Solo", "Nobody's mob.", identity="solo")

        crew, no_mob = scheduler.tick()

        assert (crew.partition, no_mob.partition) == (f"mob:{MOB}", NO_MOB_PARTITION)
        seen = [[q.record.title for q in dream.quarantined] for dream in bench.reviewer.seen]
        assert seen == [["Crew"], ["Solo"]]
    finally:
        bench.runtime.close()


def test_realms_without_a_store_file_are_not_ticked(tmp_path: Path, clock: ManualClock) -> None:
    bench, scheduler = scheduled(tmp_path, clock, min_signals=1)
    try:
        assert bench.memory.root.exists() is False or list(bench.memory.root.iterdir()) == []
        assert scheduler.tick() == []
        assert list(bench.memory.root.glob("*.sqlite3")) == []
        assert list(bench.memory.realms()) == []  # no realm was created on either backend
    finally:
        bench.runtime.close()


def test_an_enabled_steward_runs_its_scheduler_thread_until_the_runtime_closes(
    tmp_path: Path, clock: ManualClock
) -> None:
    runtime = MetaRuntime.open(tmp_path / "state", config(enabled=True), clock=clock)
    scheduler = runtime.scheduler
    assert scheduler is not None and scheduler.running

    runtime.close()

    assert not scheduler.running and runtime.scheduler is None


def test_a_disabled_steward_has_no_scheduler_but_still_dreams_on_demand(bench: Bench) -> None:
    bench.quarantine("One", "A record.")

    assert bench.runtime.scheduler is None
    assert bench.dream().status == "completed"


def test_an_unreadable_cadence_refuses_boot_and_takes_no_lock(tmp_path: Path, clock: ManualClock) -> None:
    with pytest.raises(ConfigError, match="cadence"):
        MetaRuntime.open(tmp_path / "state", config(enabled=True, cadence="sometimes"), clock=clock)

    with MetaRuntime.open(tmp_path / "state", config(), clock=clock) as runtime:
        assert runtime.steward is not None
