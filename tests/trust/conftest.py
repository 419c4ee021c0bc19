"""Factories for the trust tests: an in-memory event sink on a manual clock, a tracker writing into it,
and write gates in either posture over that tracker."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from meta_memory.clock import ManualClock
from meta_memory.events import MemoryEventSink
from meta_memory.trust import TaintTracker, WriteGate


@pytest.fixture
def events() -> MemoryEventSink:
    return MemoryEventSink(capacity=100_000, clock=ManualClock())


@pytest.fixture
def tracker(events: MemoryEventSink) -> TaintTracker:
    return TaintTracker(events)


@pytest.fixture
def make_gate(tracker: TaintTracker, events: MemoryEventSink) -> Callable[[str], WriteGate]:
    def make(llm_writes: str) -> WriteGate:
        return WriteGate(tracker, events, llm_writes=llm_writes)

    return make


@pytest.fixture
def transitions(events: MemoryEventSink) -> Callable[[], list[dict[str, Any]]]:
    """The data of every ``memory.taint.transition`` event so far, oldest first."""

    def read() -> list[dict[str, Any]]:
        return [e["data"] for e in events.events("memory.taint.transition")]

    return read
