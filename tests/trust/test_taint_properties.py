"""Session taint against a model of REFERENCE 4.3, written here from the rules rather than from the
code: every random sequence of operations, run on a real realm store (both backends), must leave
the store where the model says (each session's taint and its first source, reset boundaries,
ended sessions, pending identity taint), announce exactly the model's transitions, and let the
write gate quarantine exactly the writes the model says must be. The rules' invariants (taint is
sticky with its first source; nothing evicts) are asserted on the model's own history too, so a
model that drifted would fail them."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meta_memory.events import MemoryEventSink
from meta_memory.memory.records import Author
from meta_memory.memory.store import RealmStore
from meta_memory.trust import SessionTaint, WriteGate

from .conftest import Facts

IDENTITIES = ["ana", "bob"]
SESSIONS = [f"s{n}" for n in range(6)]
identities = st.sampled_from(IDENTITIES)
sessions = st.sampled_from(SESSIONS)
sources = st.sampled_from(["tool web_fetch", "tool fetch", "mcp server evil"])

operations = st.one_of(
    st.tuples(st.just("begin"), identities, sessions),
    st.tuples(st.just("mark"), identities, st.none() | sessions, sources),
    st.tuples(st.just("reset"), sessions, sessions).filter(lambda op: op[1] != op[2]),
    st.tuples(st.just("end"), sessions, st.sampled_from(["closed", "expired"])),
    st.tuples(st.just("peer"), sessions, sessions | st.just("stranger")),
    st.tuples(st.just("gate"), sessions, st.lists(sessions | st.just("stranger"), max_size=3)),
)


@dataclass
class Model:
    """REFERENCE 4.3 as a plain model, with this project's fail-closed additions. A session is
    tainted by the first untrusted content it ingests and stays so; a reset ends the old session
    as a boundary and opens the new one clean; untrusted content for an identity with no session
    named taints its open sessions, or is held for its next one; an expired tainted session's
    taint is held for the identity; a message from an unknown sender taints. Nothing is forgotten."""

    ns: str = ""  # the prefix of this example's keys in the store, as sources name them
    owner: dict[str, str] = field(default_factory=dict)  # every session ever begun -> identity
    taint: dict[str, str] = field(default_factory=dict)
    boundary: set[str] = field(default_factory=set)
    ended: dict[str, str] = field(default_factory=dict)
    pending: dict[str, str] = field(default_factory=dict)
    announced: list[tuple[str, str, str]] = field(default_factory=list)  # (session, kind, source)

    def _taint(self, key: str, source: str) -> None:
        if key not in self.taint:
            self.taint[key] = source
            self.announced.append((key, "tainted", source))

    def is_open(self, key: str) -> bool:
        return key in self.owner and key not in self.ended

    def begin(self, identity: str, key: str) -> None:
        self.owner[key] = identity
        if identity in self.pending:
            self._taint(key, self.pending.pop(identity))

    def mark(self, identity: str, key: str | None, source: str) -> None:
        if key is not None:
            self._taint(key, source)
            return
        # Oldest first, then by key: the sessions of these examples all open at the same time.
        keys = sorted(k for k, who in self.owner.items() if who == identity and self.is_open(k))
        for k in keys:
            self._taint(k, source)
        if not keys:
            self.pending.setdefault(identity, source)

    def reset(self, old: str, new: str) -> None:
        identity = self.owner[old]
        if identity in self.pending:
            self._taint(old, self.pending.pop(identity))
        if old not in self.boundary:
            self.boundary.add(old)
            self.announced.append((old, "reset_boundary", f"reset to session {self.ns}{new}"))
        self.ended[old] = "reset"
        self.owner[new] = identity
        self.announced.append((new, "rotated_clean", f"reset from session {self.ns}{old}"))

    def end(self, key: str, reason: str) -> None:
        self.ended[key] = reason
        if reason == "expired" and key in self.taint:
            source = f"expired session {self.ns}{key} (tainted by {self.taint[key]})"
            self.pending.setdefault(self.owner[key], source)

    def peer(self, key: str, sender: str) -> None:
        if sender not in self.owner:
            self._taint(key, f"peer message from unknown session {self.ns}{sender}")
        elif sender in self.taint and sender != key:
            self._taint(key, f"peer message from session {self.ns}{sender} (tainted by {self.taint[sender]})")

    def write_taint(self, key: str) -> str | None:
        return self.taint.get(key) or self.pending.get(self.owner[key])

    def evidence_bad(self, key: str) -> bool:
        return key not in self.owner or key in self.taint or key in self.boundary


def run(facts: Facts, gate: WriteGate, model: Model, op: tuple[Any, ...], ns: str) -> None:
    """One operation on the store and on the model; ``ns`` keeps examples apart in one store."""

    def k(key: str) -> str:
        return f"{ns}{key}"

    match op:
        case ("begin", identity, key):
            if key in model.owner:  # a key is never reused
                with pytest.raises(ValueError, match="taken"):
                    facts.begin(ns + identity, k(key))
                return
            facts.begin(ns + identity, k(key))
            model.begin(identity, key)
        case ("mark", identity, key, source):
            if key is not None and key not in model.owner:
                return
            if key is not None:
                identity = model.owner[key]
            assert facts.mark(ns + identity, None if key is None else k(key), source) is True
            model.mark(identity, key, source)
        case ("reset", old, new):
            if not model.is_open(old) or new in model.owner:
                return
            facts.reset(k(old), k(new))
            model.reset(old, new)
        case ("end", key, reason):
            ended = facts.end(k(key), reason)
            assert (ended is not None) == model.is_open(key)
            if ended is not None:
                model.end(key, reason)
        case ("peer", key, sender):
            if key not in model.owner:
                return
            tainted = facts.peer(k(key), k(sender))
            model.peer(key, sender)
            assert tainted == (key in model.taint)
        case ("gate", key, evidence):
            if key not in model.owner:
                return
            identity = model.owner[key]
            rows = [(k(e), facts.store.session(k(e))) for e in evidence]
            decision = gate.decide(
                realm="r",
                author=Author("agent", ns + identity),
                taint=facts.write_taint(k(key)),
                evidence=rows,
            )
            expected = model.write_taint(key) is not None or any(model.evidence_bad(e) for e in evidence)
            assert (decision is not None) == expected, (op, decision)


def agree(facts: Facts, events: MemoryEventSink, model: Model, ns: str, seen_before: int) -> None:
    for key in SESSIONS:
        row = facts.store.session(ns + key)
        assert (row is not None) == (key in model.owner), key
        if row is not None:
            assert row.taint == model.taint.get(key), key
            assert row.boundary == (key in model.boundary), key
            assert row.ended == model.ended.get(key), key
    for identity in IDENTITIES:
        assert facts.pending(ns + identity) == model.pending.get(identity), identity
    seen = [
        (e["data"]["session_key"].removeprefix(ns), e["data"]["kind"], e["data"]["source"])
        for e in events.events("memory.taint.transition")[seen_before:]
    ]
    assert seen == model.announced


_examples = itertools.count()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(operations, max_size=30))
def test_the_store_and_the_gate_follow_the_model_of_session_taint(
    facts: Facts, events: MemoryEventSink, ops: list[tuple[Any, ...]]
) -> None:
    ns = f"x{next(_examples)}-"
    before = len(events.events("memory.taint.transition"))
    gate = WriteGate(events, llm_writes="observed")
    model = Model(ns=ns)
    first: dict[str, str] = {}
    for op in ops:
        run(facts, gate, model, op, ns)
        agree(facts, events, model, ns, before)
        # The rule itself, on the model's history: once tainted, tainted with the first source.
        for key, source in first.items():
            assert model.taint[key] == source
        first.update({key: s for key, s in model.taint.items() if key not in first})


def test_the_model_check_fails_a_store_that_forgets_to_taint(
    store: RealmStore, events: MemoryEventSink
) -> None:
    """Not vacuous: marking that changes nothing disagrees with the model at once."""

    class Forgetful(Facts):
        def mark(self, identity: str, key: str | None, source: str) -> bool:
            return True

    facts = Forgetful(store, SessionTaint(events))
    gate = WriteGate(events, llm_writes="observed")
    model = Model(ns="f-")
    try:
        for op in [("begin", "ana", "s0"), ("mark", "ana", "s0", "tool web_fetch")]:
            run(facts, gate, model, op, "f-")
        agree(facts, events, model, "f-", 0)
    except AssertionError:
        return
    raise AssertionError("the model check accepted a store that never taints")
