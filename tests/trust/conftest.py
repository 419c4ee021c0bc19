"""Factories for the trust tests: a real realm store on either backend (taint lives in its session
rows), an in-memory event sink on a manual clock, :class:`Facts` driving the taint transitions
through the public ``SessionTaint`` API, and write gates in either posture."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from meta_memory.clock import ManualClock
from meta_memory.config import load_config_dict
from meta_memory.events import MemoryEventSink
from meta_memory.memory.rows import SessionRow
from meta_memory.memory.store import RealmStore
from meta_memory.runtime import MetaRuntime
from meta_memory.trust import SessionTaint, WriteGate

from ..conftest import BACKENDS, Backend, make_backend


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    """Taint is state of the realm store: it is tested on both backends."""
    yield from make_backend(request.param, request)


@pytest.fixture
def events() -> MemoryEventSink:
    return MemoryEventSink(capacity=100_000, clock=ManualClock())


@pytest.fixture
def store(tmp_path: Path, backend: Backend, events: MemoryEventSink) -> Iterator[RealmStore]:
    config = load_config_dict(backend.config({"agent_memory": {"enabled": True}}))
    runtime = MetaRuntime.open(tmp_path / "state", config, clock=ManualClock(), events=events)
    try:
        assert runtime.agent_memory is not None
        yield runtime.agent_memory.store("default")
    finally:
        runtime.close()


class Facts:
    """The taint of one realm's sessions, driven as a host's calls drive it: every change in a
    session transaction of the real store, every read from the store."""

    def __init__(self, store: RealmStore, taint: SessionTaint) -> None:
        self.store = store
        self.taint = taint

    def begin(self, identity: str, key: str) -> SessionRow:
        row = SessionRow(key, identity, None, None, "nonce", 0, 0)
        with self.taint.changing(self.store) as change:
            return change.begin(row)

    def mark(self, identity: str, key: str | None, source: str) -> bool:
        with self.taint.changing(self.store) as change:
            return change.mark_untrusted(identity, key, source)

    def reset(self, old: str, new: str) -> None:
        row = self.store.session(old)
        assert row is not None, old
        fresh = SessionRow(new, row.identity, None, None, "nonce", 0, 0)
        with self.taint.changing(self.store) as change:
            change.reset(row, fresh)

    def end(self, key: str, reason: str = "closed") -> SessionRow | None:
        with self.taint.changing(self.store) as change:
            return change.end(key, reason)

    def peer(self, key: str, sender: str) -> bool:
        with self.taint.changing(self.store) as change:
            return change.mark_peer(key, sender, self.store.session(sender))

    def taint_of(self, key: str) -> str | None:
        row = self.store.session(key)
        return None if row is None else row.taint

    def boundary(self, key: str) -> bool:
        row = self.store.session(key)
        return row is not None and row.boundary

    def pending(self, identity: str) -> str | None:
        return self.store.pending_taint(identity)

    def write_taint(self, key: str) -> str | None:
        row = self.store.session(key)
        assert row is not None, key
        return SessionTaint.taint_for_write(row)


@pytest.fixture
def facts(store: RealmStore, events: MemoryEventSink) -> Facts:
    return Facts(store, SessionTaint(events))


@pytest.fixture
def make_gate(events: MemoryEventSink) -> Callable[[str], WriteGate]:
    def make(llm_writes: str) -> WriteGate:
        return WriteGate(events, llm_writes=llm_writes)

    return make


@pytest.fixture
def transitions(events: MemoryEventSink) -> Callable[[], list[dict[str, Any]]]:
    """The data of every ``memory.taint.transition`` event so far, oldest first."""

    def read() -> list[dict[str, Any]]:
        return [e["data"] for e in events.events("memory.taint.transition")]

    return read
