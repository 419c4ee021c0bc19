"""The shared upkeep worker (memory/upkeep.py): one thread for every realm file's deferred
upkeep, tasks run when due and one at a time, a cancelled task never runs again, a failing task
does not stop the others."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from meta_memory.clock import ManualClock
from meta_memory.memory.records import APPLICATION, Record, Scope
from meta_memory.memory.sqlite.store import SqliteRealmStore
from meta_memory.memory.upkeep import UpkeepWorker
from meta_memory.memory.validator import CreateOp, WriteBatch


class _Task:
    def __init__(self, name: str, log: list[str], action: Callable[[], None] | None = None) -> None:
        self.name = name
        self.log = log
        self.action = action

    def run_upkeep(self) -> None:
        self.log.append(self.name)
        if self.action is not None:
            self.action()


def test_tasks_run_when_due_in_due_order(eventually: Callable[..., bool]) -> None:
    worker = UpkeepWorker()
    log: list[str] = []
    late, early = _Task("late", log), _Task("early", log)
    worker.schedule(late, 0.2)
    worker.schedule(early, 0.05)
    assert eventually(lambda: len(log) == 2)
    assert log == ["early", "late"]


def test_scheduling_again_only_ever_moves_a_task_earlier_and_runs_it_once(
    eventually: Callable[..., bool],
) -> None:
    worker = UpkeepWorker()
    log: list[str] = []
    task = _Task("t", log)
    worker.schedule(task, 0.05)
    worker.schedule(task, 10.0)  # later: ignored
    worker.schedule(task, 0.05)
    assert eventually(lambda: log == ["t"])
    time.sleep(0.1)
    assert log == ["t"]


def test_cancel_waits_for_a_running_task_and_drops_its_schedule() -> None:
    worker = UpkeepWorker()
    log: list[str] = []
    started, release = threading.Event(), threading.Event()

    def block() -> None:
        started.set()
        release.wait(5)
        log.append("finished")

    slow = _Task("slow", log, block)
    worker.schedule(slow)
    assert started.wait(5)
    worker.schedule(slow, 0.05)  # would run again after this run
    cancelled = threading.Event()
    canceller = threading.Thread(target=lambda: (worker.cancel(slow), cancelled.set()))
    canceller.start()
    time.sleep(0.05)
    assert not cancelled.is_set()  # still running: cancel waits
    release.set()
    canceller.join(5)
    assert cancelled.is_set() and log == ["slow", "finished"]
    time.sleep(0.15)
    assert log == ["slow", "finished"]  # the pending schedule was dropped


def test_a_failing_task_does_not_stop_the_worker(eventually: Callable[..., bool]) -> None:
    worker = UpkeepWorker()
    log: list[str] = []

    def boom() -> None:
        raise RuntimeError("disk on fire")

    worker.schedule(_Task("bad", log, boom))
    worker.schedule(_Task("good", log), 0.02)
    assert eventually(lambda: log == ["bad", "good"])


def test_many_realm_files_share_one_upkeep_thread(
    tmp_path: Path, clock: ManualClock, make_record: Callable[..., Record], eventually: Callable[..., bool]
) -> None:
    """Each open realm file used to own two threads; now every file's upkeep runs on one."""
    before = {t.ident for t in threading.enumerate()}
    stores = [SqliteRealmStore(tmp_path / f"realm-{n}.sqlite3", f"realm-{n}", clock=clock) for n in range(12)]
    try:
        for n, store in enumerate(stores):
            record = make_record(
                f"mem-{n}",
                scope=Scope.identity(store.realm, "alice"),
                body=f"Deploy window number {n} is Tuesday.",
            )
            store.commit(WriteBatch(store.realm, APPLICATION, (CreateOp(record),)))
        new_threads = [t for t in threading.enumerate() if t.ident not in before]
        assert [t.name for t in new_threads] in ([], ["meta-upkeep"])
        # ... and that one thread applies every file's backlog once the files are quiet.
        assert eventually(lambda: all(store.backlog() == 0 for store in stores))
    finally:
        for store in stores:
            store.close()


# Python 3.12+ warns on fork() in a process with threads; the child here touches none of them.
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_a_forked_child_gets_an_upkeep_thread_of_its_own() -> None:
    """After fork the parent's thread does not exist in the child; the child's first use starts one."""
    parent = UpkeepWorker.shared()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report whether a scheduled task runs, then leave without cleanup
        ran = threading.Event()

        class _Probe:
            def run_upkeep(self) -> None:
                ran.set()

        worker = UpkeepWorker.shared()
        worker.schedule(_Probe())
        os.write(write, b"1" if ran.wait(5) and worker is not parent else b"0")
        os._exit(0)
    os.close(write)
    try:
        assert os.read(read, 1) == b"1"
    finally:
        os.close(read)
        os.waitpid(pid, 0)
