"""Session taint against a model of REFERENCE 4.3, written here from the rules rather than from the
tracker: every random sequence of operations must leave the tracker where the model says (each
session's taint and its first source, reset boundaries, pending identity taint), announce exactly
the model's transitions, and let the write gate quarantine exactly the writes the model's taint
says must be. The invariants the rules imply (taint is sticky with its first source; only the cap
evicts) are asserted on the model's own history too, so a model that drifted would fail them."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
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


@dataclass
class Model:
    """REFERENCE 4.3 as a plain model. A session is tainted by the first untrusted content it
    ingests and stays so; a reset leaves the old session a boundary and opens the new one clean;
    untrusted content for an identity with no session named taints its open sessions, or is held
    for its next one. At most ``cap`` sessions keep facts (and ``cap`` identities pending taint),
    the first to get one forgotten first."""

    cap: int
    taint: dict[str, str] = field(default_factory=dict)
    boundary: set[str] = field(default_factory=set)
    tracked: OrderedDict[str, None] = field(default_factory=OrderedDict)
    pending: OrderedDict[str, str] = field(default_factory=OrderedDict)
    open_by: dict[str, str] = field(default_factory=dict)  # session -> identity holding it open
    announced: list[tuple[str, str, str]] = field(default_factory=list)  # (session, kind, source)

    def _track(self, key: str) -> None:
        if key in self.tracked:
            return
        self.tracked[key] = None
        while len(self.tracked) > self.cap:
            gone, _ = self.tracked.popitem(last=False)
            self.taint.pop(gone, None)
            self.boundary.discard(gone)

    def _taint(self, key: str, source: str) -> None:
        if key in self.taint:
            return
        self._track(key)
        self.taint[key] = source
        self.announced.append((key, "tainted", source))

    def open_sessions(self, identity: str) -> list[str]:
        return [key for key, who in self.open_by.items() if who == identity]

    def _open(self, identity: str, key: str) -> None:
        # A session already open for this identity keeps its place (the order in which a mark
        # with no session named taints the open ones); one held by another identity moves over.
        if self.open_by.get(key) != identity:
            self.open_by.pop(key, None)
            self.open_by[key] = identity

    def begin(self, identity: str, key: str) -> None:
        self._open(identity, key)
        if identity in self.pending:
            self._taint(key, self.pending.pop(identity))

    def mark(self, identity: str, key: str | None, source: str) -> None:
        if key is not None:
            self._taint(key, source)
        elif keys := self.open_sessions(identity):
            for k in keys:
                self._taint(k, source)
        elif identity not in self.pending:
            self.pending[identity] = source
            while len(self.pending) > self.cap:
                self.pending.popitem(last=False)

    def reset(self, identity: str, old: str, new: str) -> None:
        if identity in self.pending:
            self._taint(old, self.pending.pop(identity))
        self._track(old)
        if old not in self.boundary:
            self.boundary.add(old)
            self.announced.append((old, "reset_boundary", f"reset to session {new}"))
        self.open_by.pop(old, None)
        self._open(identity, new)
        if new not in self.taint:
            self.announced.append((new, "rotated_clean", f"reset from session {old}"))

    def end(self, key: str) -> None:
        self.open_by.pop(key, None)

    def peer(self, identity: str, key: str, sender: str) -> None:
        if sender in self.taint and sender != key:
            self._taint(key, f"peer message from session {sender} (tainted by {self.taint[sender]})")

    def write_taint(self, identity: str, key: str | None) -> str | None:
        """What an LLM write from ``key`` carries (REFERENCE 4.4 reads 4.3's facts)."""
        if key is not None and key in self.taint:
            return self.taint[key]
        if identity in self.pending:
            return self.pending[identity]
        if key is None:
            return next((self.taint[k] for k in self.open_sessions(identity) if k in self.taint), None)
        return None


def run(tracker: TaintTracker, gate: WriteGate, model: Model, op: tuple[Any, ...]) -> None:
    match op:
        case ("begin", identity, key):
            tracker.begin_session(identity, key)
            model.begin(identity, key)
        case ("mark", identity, key, source):
            reported = tracker.mark_untrusted(identity, key, source)
            model.mark(identity, key, source)
            if key is not None:
                assert reported == (key in model.taint)
        case ("reset", identity, old, new):
            tracker.reset(identity, old, new)
            model.reset(identity, old, new)
        case ("end", key):
            tracker.end_session(key)
            model.end(key)
        case ("peer", identity, key, sender):
            assert tracker.mark_peer_message(identity, key, sender) == (
                model.peer(identity, key, sender) or key in model.taint
            )
        case ("gate", identity, key, evidence):
            decision = gate.decide(
                realm="r", author=Author("agent", identity), session_key=key, evidence_sessions=evidence
            )
            expected = model.write_taint(identity, key) is not None or any(
                e in model.taint or e in model.boundary for e in evidence
            )
            assert (decision is not None) == expected, (op, decision)


def build(max_tracked: int) -> tuple[TaintTracker, WriteGate, MemoryEventSink]:
    events = MemoryEventSink(capacity=100_000, clock=ManualClock())
    tracker = TaintTracker(events, max_tracked=max_tracked)
    return tracker, WriteGate(tracker, events, llm_writes="observed"), events


def agree(tracker: TaintTracker, events: MemoryEventSink, model: Model) -> None:
    for key in SESSIONS:
        assert tracker.taint_of(key) == model.taint.get(key), key
        assert tracker.is_reset_boundary(key) == (key in model.boundary), key
    for identity in IDENTITIES:
        assert tracker.pending_taint_of(identity) == model.pending.get(identity), identity
    seen = [
        (e["data"]["session_key"], e["data"]["kind"], e["data"]["source"])
        for e in events.events("memory.taint.transition")
    ]
    assert seen == model.announced


@settings(max_examples=400, deadline=None)
@given(st.lists(operations, max_size=40))
def test_the_tracker_and_the_gate_follow_the_model_of_session_taint(ops: list[tuple[Any, ...]]) -> None:
    tracker, gate, events = build(max_tracked=4096)
    model = Model(cap=4096)
    first: dict[str, str] = {}
    for op in ops:
        run(tracker, gate, model, op)
        agree(tracker, events, model)
        # The rule itself, on the model's history: once tainted, tainted with the first source.
        for key, source in first.items():
            assert model.taint[key] == source
        first.update({k: s for k, s in model.taint.items() if k not in first})


@settings(max_examples=400, deadline=None)
@given(st.integers(min_value=1, max_value=4), st.lists(operations, max_size=40))
def test_under_a_small_cap_facts_are_lost_only_by_eviction_of_the_first_tracked(
    cap: int, ops: list[tuple[Any, ...]]
) -> None:
    tracker, gate, events = build(max_tracked=cap)
    model = Model(cap=cap)
    for op in ops:
        before = dict(model.taint)
        run(tracker, gate, model, op)
        agree(tracker, events, model)
        assert len(model.tracked) <= cap
        for key, source in before.items():  # a fact disappears only when the cap is full
            if model.taint.get(key) != source:
                assert key not in model.tracked or model.taint.get(key) is not None
                assert len(model.tracked) == cap


def test_the_model_check_fails_a_tracker_that_forgets_to_taint() -> None:
    """Not vacuous: a tracker whose marking does nothing disagrees with the model at once."""

    class Forgetful(TaintTracker):
        def mark_untrusted(self, identity: str, session_key: str | None, source: str) -> bool:
            return False

    events = MemoryEventSink(capacity=100, clock=ManualClock())
    tracker = Forgetful(events)
    gate = WriteGate(tracker, events, llm_writes="observed")
    model = Model(cap=4096)
    try:
        for op in [("begin", "ana", "s0"), ("mark", "ana", "s0", "tool web_fetch")]:
            run(tracker, gate, model, op)
        agree(tracker, events, model)
    except AssertionError:
        return
    raise AssertionError("the model check accepted a tracker that never taints")
