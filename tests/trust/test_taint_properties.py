"""Hypothesis invariants of session taint: once tainted, a session stays tainted with its first source
under any sequence of operations, unless the cap evicts it; eviction happens only at the cap; every
session is announced ``tainted`` once per clean -> tainted transition."""

from __future__ import annotations

from collections import Counter
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from meta_memory.clock import ManualClock
from meta_memory.events import MemoryEventSink
from meta_memory.memory.records import Author
from meta_memory.trust import TaintTracker, WriteGate

IDENTITIES = ["ana", "bob"]
SESSIONS = [f"s{n}" for n in range(6)]
identities = st.sampled_from(IDENTITIES)
sessions = st.sampled_from(SESSIONS)
sources = st.sampled_from(["tool web_fetch", "tool fetch", "mcp server evil"])

operations = st.one_of(
    st.tuples(st.just("begin"), identities, sessions),
    st.tuples(st.just("mark"), identities, st.none() | sessions, sources),
    st.tuples(st.just("reset"), identities, sessions, sessions).filter(lambda op: op[2] != op[3]),
    st.tuples(st.just("end"), sessions),
    st.tuples(st.just("peer"), identities, sessions, sessions),
    st.tuples(st.just("gate"), identities, st.none() | sessions, st.lists(sessions, max_size=3)),
)


def apply(tracker: TaintTracker, gate: WriteGate, op: tuple[Any, ...]) -> None:
    match op:
        case ("begin", identity, key):
            tracker.begin_session(identity, key)
        case ("mark", identity, key, source):
            tracker.mark_untrusted(identity, key, source)
        case ("reset", identity, old, new):
            tracker.reset(identity, old, new)
        case ("end", key):
            tracker.end_session(key)
        case ("peer", identity, key, sender):
            tracker.mark_peer_message(identity, key, sender)
        case ("gate", identity, key, evidence):
            gate.decide(
                realm="r", author=Author("agent", identity), session_key=key, evidence_sessions=evidence
            )


def build(max_tracked: int) -> tuple[TaintTracker, WriteGate, MemoryEventSink]:
    events = MemoryEventSink(capacity=100_000, clock=ManualClock())
    tracker = TaintTracker(events, max_tracked=max_tracked)
    return tracker, WriteGate(tracker, events, llm_writes="observed"), events


@settings(max_examples=300, deadline=None)
@given(st.lists(operations, max_size=40))
def test_once_tainted_a_session_stays_tainted_with_its_first_source(ops: list[tuple[Any, ...]]) -> None:
    tracker, gate, events = build(max_tracked=4096)
    first_source: dict[str, str] = {}
    boundaries: set[str] = set()
    for op in ops:
        apply(tracker, gate, op)
        for key, source in first_source.items():
            assert tracker.taint_of(key) == source
        for key in boundaries:
            assert tracker.is_reset_boundary(key)
        for key in SESSIONS:
            if key not in first_source and (seen := tracker.taint_of(key)) is not None:
                first_source[key] = seen
            if tracker.is_reset_boundary(key):
                boundaries.add(key)
    tainted_events = Counter(
        e["data"]["session_key"]
        for e in events.events("memory.taint.transition")
        if e["data"]["kind"] == "tainted"
    )
    assert tainted_events == Counter(first_source.keys())


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=1, max_value=4), st.lists(operations, max_size=40))
def test_a_tainted_session_loses_its_taint_only_by_eviction_at_the_cap(
    max_tracked: int, ops: list[tuple[Any, ...]]
) -> None:
    tracker, gate, _events = build(max_tracked=max_tracked)
    tainted: dict[str, str] = {}
    for op in ops:
        apply(tracker, gate, op)
        tracked = [
            key for key in SESSIONS if tracker.taint_of(key) is not None or tracker.is_reset_boundary(key)
        ]
        assert len(tracked) <= max_tracked
        for key, source in list(tainted.items()):
            now = tracker.taint_of(key)
            if now is None:
                # Evicted whole (no boundary fact left either), and only because the cap was reached.
                assert key not in tracked
                assert len(tracked) == max_tracked
                del tainted[key]
            elif now != source:
                # Evicted and tainted afresh within this one operation (several open sessions marked at
                # once under a tiny cap): still only possible at the cap.
                assert len(tracked) == max_tracked
                tainted[key] = now
        for key in tracked:
            if key not in tainted and (seen := tracker.taint_of(key)) is not None:
                tainted[key] = seen
