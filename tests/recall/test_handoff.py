"""The scan hand-off (recall/handoff.py): each job runs once, on a hand-off thread or, taken back
before one started it, on the caller's; its answer or its exception reaches the caller."""

from __future__ import annotations

import threading

import pytest

from meta_memory.memory.recall.handoff import Handoff


def test_a_job_runs_on_a_thread_of_the_handoff_and_its_answer_reaches_the_caller() -> None:
    handoff = Handoff(2, "test-scan")
    try:
        jobs = [handoff.submit(lambda n=n: (n * n, threading.current_thread().name)) for n in range(50)]
        answers = [job.result() for job in jobs]
    finally:
        handoff.close()
    assert [square for square, _ in answers] == [n * n for n in range(50)]
    assert {name for _, name in answers} <= {"test-scan-0", "test-scan-1"}


def test_a_jobs_exception_is_raised_by_result() -> None:
    handoff = Handoff(1, "test-scan")

    def fails() -> None:
        raise ValueError("the scan failed")

    try:
        job = handoff.submit(fails)
        with pytest.raises(ValueError, match="the scan failed"):
            job.result()
    finally:
        handoff.close()


def test_a_job_no_thread_started_is_taken_back_and_never_runs_there() -> None:
    handoff = Handoff(1, "test-scan")
    release = threading.Event()
    started = threading.Event()
    ran: list[str] = []
    try:
        busy = handoff.submit(lambda: (started.set(), release.wait(10)))
        assert started.wait(10)
        waiting = handoff.submit(lambda: ran.append(threading.current_thread().name))
        assert waiting.cancel()  # the one thread is busy: the caller takes the job back
        release.set()
        busy.result()
        assert handoff.submit(lambda: None).result() is None  # the thread went past the job taken back
    finally:
        handoff.close()
    assert ran == []


def test_a_job_a_thread_started_is_not_taken_back_and_its_answer_is_waited_for() -> None:
    handoff = Handoff(1, "test-scan")
    release = threading.Event()
    started = threading.Event()
    try:
        job = handoff.submit(lambda: (started.set(), release.wait(10), "done")[2])
        assert started.wait(10)
        assert not job.cancel()
        threading.Timer(0.05, release.set).start()
        assert job.result() == "done"
    finally:
        handoff.close()


def test_after_close_a_job_is_the_callers() -> None:
    handoff = Handoff(2, "test-scan")
    assert handoff.submit(lambda: 1).result() == 1
    handoff.close()
    job = handoff.submit(lambda: 2)
    assert job.cancel()  # no thread takes it up: the caller runs it
