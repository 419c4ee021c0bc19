"""Session-sticky taint (REFERENCE 4.3) as rows of the realm store, on both backends: marking,
reset, compaction, pending taint, peers, expiry, no cap, and the ``memory.taint.transition``
events, exactly once per transition."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from meta_memory.events import MemoryEventSink
from meta_memory.memory.rows import SessionRow
from meta_memory.memory.store import RealmStore
from meta_memory.trust import SessionTaint

from .conftest import Facts

Transitions = Callable[[], list[dict[str, Any]]]


def test_a_fresh_session_starts_clean(facts: Facts, transitions: Transitions) -> None:
    facts.begin("ana", "s1")
    assert facts.taint_of("s1") is None
    assert facts.boundary("s1") is False
    assert transitions() == []


def test_untrusted_ingestion_taints_the_session_and_emits_one_tainted_event(
    facts: Facts, events: MemoryEventSink
) -> None:
    facts.begin("ana", "s1")
    assert facts.mark("ana", "s1", "tool web_fetch") is True
    assert facts.taint_of("s1") == "tool web_fetch"
    [envelope] = events.events("memory.taint.transition")
    assert envelope["identity"] == "ana"
    assert envelope["data"] == {
        "identity": "ana",
        "session_key": "s1",
        "kind": "tainted",
        "source": "tool web_fetch",
    }


def test_taint_is_in_the_store_before_the_call_returns(facts: Facts, store: RealmStore) -> None:
    """Durable, not cached: a second reader of the same store (another gateway) sees it."""
    facts.begin("ana", "s1")
    facts.mark("ana", "s1", "tool web_fetch")
    with store.session_txn() as txn:
        row = txn.session("s1")
    assert row is not None and row.taint == "tool web_fetch"


def test_a_tainted_session_keeps_its_first_source_and_emits_nothing_more(
    facts: Facts, transitions: Transitions
) -> None:
    facts.begin("ana", "s1")
    facts.mark("ana", "s1", "tool web_fetch")
    assert facts.mark("ana", "s1", "mcp server evil") is True
    assert facts.taint_of("s1") == "tool web_fetch"
    assert len(transitions()) == 1


def test_taint_is_per_session_not_per_identity(facts: Facts) -> None:
    facts.begin("ana", "s1")
    facts.begin("ana", "s2")
    facts.begin("bob", "s3")
    facts.mark("ana", "s1", "tool fetch")
    assert facts.taint_of("s2") is None
    assert facts.taint_of("s3") is None


def test_nothing_but_the_sessions_end_touches_its_taint(facts: Facts, transitions: Transitions) -> None:
    facts.begin("ana", "s1")
    facts.mark("ana", "s1", "tool web_search")
    assert not any("compact" in name or "clear" in name for name in dir(SessionTaint))
    assert facts.end("s1") is not None
    assert facts.taint_of("s1") == "tool web_search"  # an ended session keeps its facts
    assert [t["kind"] for t in transitions()] == ["tainted"]


def test_reset_keeps_the_old_session_tainted_marks_it_a_boundary_and_opens_the_new_one_clean(
    facts: Facts, events: MemoryEventSink, store: RealmStore, transitions: Transitions
) -> None:
    facts.begin("ana", "s1")
    facts.mark("ana", "s1", "tool web_fetch")
    facts.reset("s1", "s2")
    assert facts.taint_of("s1") == "tool web_fetch"
    assert facts.boundary("s1") is True
    old = store.session("s1")
    assert old is not None and old.ended == "reset"
    assert facts.taint_of("s2") is None
    assert facts.boundary("s2") is False
    assert transitions() == [
        {"identity": "ana", "session_key": "s1", "kind": "tainted", "source": "tool web_fetch"},
        {"identity": "ana", "session_key": "s1", "kind": "reset_boundary", "source": "reset to session s2"},
        {"identity": "ana", "session_key": "s2", "kind": "rotated_clean", "source": "reset from session s1"},
    ]
    assert {e["identity"] for e in events.events("memory.taint.transition")} == {"ana"}


def test_a_clean_session_reset_still_becomes_a_boundary(facts: Facts, transitions: Transitions) -> None:
    facts.begin("ana", "s1")
    facts.reset("s1", "s2")
    assert facts.taint_of("s1") is None
    assert facts.boundary("s1") is True
    assert [(t["session_key"], t["kind"]) for t in transitions()] == [
        ("s1", "reset_boundary"),
        ("s2", "rotated_clean"),
    ]


def test_reset_refuses_to_rotate_a_session_into_itself(facts: Facts, store: RealmStore) -> None:
    facts.begin("ana", "s1")
    with pytest.raises(ValueError, match="distinct"):
        facts.reset("s1", "s1")
    assert facts.boundary("s1") is False
    row = store.session("s1")
    assert row is not None and row.is_open


def test_ingestion_before_any_session_is_held_pending_and_transfers_to_the_next_session(
    facts: Facts, transitions: Transitions
) -> None:
    assert facts.mark("ana", None, "tool web_fetch") is True
    assert facts.pending("ana") == "tool web_fetch"
    assert transitions() == []  # nothing to name yet: no session key
    facts.begin("ana", "s1")
    assert facts.taint_of("s1") == "tool web_fetch"
    assert facts.pending("ana") is None
    assert transitions() == [
        {"identity": "ana", "session_key": "s1", "kind": "tainted", "source": "tool web_fetch"}
    ]
    facts.begin("ana", "s2")
    assert facts.taint_of("s2") is None


def test_pending_taint_belongs_to_its_identity_only(facts: Facts) -> None:
    facts.mark("ana", None, "tool fetch")
    facts.begin("bob", "s1")
    assert facts.taint_of("s1") is None
    assert facts.pending("ana") == "tool fetch"


def test_pending_taint_keeps_its_first_source(facts: Facts) -> None:
    facts.mark("ana", None, "tool fetch")
    facts.mark("ana", None, "tool web_search")
    facts.begin("ana", "s1")
    assert facts.taint_of("s1") == "tool fetch"


def test_pending_taint_at_reset_goes_to_the_discarded_session_not_the_fresh_one(
    facts: Facts, store: RealmStore, transitions: Transitions
) -> None:
    facts.begin("ana", "s1")
    with store.session_txn() as txn:
        # Pending taint beside an open session: what an expired sibling session leaves.
        txn.hold_pending("ana", "tool fetch")
    facts.reset("s1", "s2")
    assert facts.taint_of("s1") == "tool fetch"
    assert facts.taint_of("s2") is None
    assert facts.pending("ana") is None
    assert [(t["session_key"], t["kind"]) for t in transitions()] == [
        ("s1", "tainted"),
        ("s1", "reset_boundary"),
        ("s2", "rotated_clean"),
    ]


def test_unattributed_ingestion_taints_every_open_session_of_the_identity(
    facts: Facts, transitions: Transitions
) -> None:
    facts.begin("ana", "s1")
    facts.begin("ana", "s2")
    facts.begin("bob", "s3")
    facts.mark("ana", None, "tool fetch")
    assert facts.taint_of("s1") == facts.taint_of("s2") == "tool fetch"
    assert facts.taint_of("s3") is None
    assert facts.pending("ana") is None
    assert sorted(t["session_key"] for t in transitions()) == ["s1", "s2"]


def test_an_ended_session_is_no_longer_attributed_unattributed_ingestion(facts: Facts) -> None:
    facts.begin("ana", "s1")
    facts.end("s1")
    assert facts.end("s1") is None  # already ended: nothing changes
    facts.mark("ana", None, "tool web_fetch")
    assert facts.taint_of("s1") is None
    assert facts.pending("ana") == "tool web_fetch"


def test_an_expired_tainted_session_leaves_its_taint_to_the_identitys_next_session(
    facts: Facts, transitions: Transitions
) -> None:
    facts.begin("ana", "s1")
    facts.mark("ana", "s1", "tool web_fetch")
    ended = facts.end("s1", "expired")
    assert ended is not None and ended.ended == "expired"
    assert facts.pending("ana") == "expired session s1 (tainted by tool web_fetch)"
    facts.begin("ana", "s2")
    assert facts.taint_of("s2") == "expired session s1 (tainted by tool web_fetch)"
    assert transitions()[-1]["session_key"] == "s2"


def test_a_closed_tainted_session_leaves_nothing_pending(facts: Facts) -> None:
    """The host ended the context itself: its next session starts clean (REFERENCE 4.3)."""
    facts.begin("ana", "s1")
    facts.mark("ana", "s1", "tool web_fetch")
    facts.end("s1", "closed")
    assert facts.pending("ana") is None


def test_marking_a_session_the_store_does_not_know_is_refused_and_writes_nothing(
    facts: Facts, store: RealmStore, transitions: Transitions
) -> None:
    with pytest.raises(LookupError):
        facts.mark("ana", "ghost", "tool fetch")
    assert store.session("ghost") is None
    assert transitions() == []


def test_a_message_from_a_tainted_sender_session_taints_the_receiver(
    facts: Facts, transitions: Transitions
) -> None:
    facts.begin("ana", "a1")
    facts.begin("bob", "b1")
    facts.mark("ana", "a1", "tool web_fetch")
    assert facts.peer("b1", "a1") is True
    assert facts.taint_of("b1") == "peer message from session a1 (tainted by tool web_fetch)"
    assert transitions()[-1] == {
        "identity": "bob",
        "session_key": "b1",
        "kind": "tainted",
        "source": "peer message from session a1 (tainted by tool web_fetch)",
    }
    assert facts.peer("b1", "a1") is True
    assert len(transitions()) == 2


def test_a_message_from_a_clean_or_merely_reset_sender_does_not_taint(facts: Facts) -> None:
    facts.begin("ana", "a1")
    facts.begin("bob", "b1")
    assert facts.peer("b1", "a1") is False
    facts.reset("a1", "a2")
    assert facts.peer("b1", "a1") is False
    assert facts.taint_of("b1") is None


def test_a_message_from_a_session_the_store_does_not_know_taints_the_receiver(facts: Facts) -> None:
    facts.begin("bob", "b1")
    assert facts.peer("b1", "never-opened") is True
    assert facts.taint_of("b1") == "peer message from unknown session never-opened"


def test_peer_taint_travels_along_a_chain_of_sessions(facts: Facts) -> None:
    facts.begin("ana", "a1")
    facts.begin("bob", "b1")
    facts.begin("cy", "c1")
    facts.mark("ana", "a1", "tool fetch")
    facts.peer("b1", "a1")
    facts.peer("c1", "b1")
    assert facts.taint_of("c1") == (
        "peer message from session b1 (tainted by peer message from session a1 (tainted by tool fetch))"
    )


def test_no_number_of_other_sessions_evicts_a_sessions_taint(
    facts: Facts, store: RealmStore, events: MemoryEventSink
) -> None:
    """Upstream capped tracked sessions at 4,096 and evicted the oldest: here nothing does."""
    facts.begin("ana", "victim")
    facts.mark("ana", "victim", "tool web_fetch")
    facts.mark("ana", None, "tool fetch")  # ana's open session takes it; pending stays empty
    taint = SessionTaint(events)
    with taint.changing(store) as change:
        for n in range(4_200):
            row = change.begin(facts_row(f"flood-{n}", f"tenant-b-{n}"))
            change.mark_untrusted(row.identity, row.key, "tool web_fetch")
            change.mark_untrusted(f"idle-{n}", None, "tool fetch")  # pending taint of 4,200 identities
            change.end(row.key, "closed")
    assert facts.taint_of("victim") == "tool web_fetch"
    assert facts.pending("idle-0") == "tool fetch"
    assert facts.pending("idle-4199") == "tool fetch"


def facts_row(key: str, identity: str) -> SessionRow:
    return SessionRow(key, identity, None, None, "nonce", 0, 0)


def test_an_event_subscriber_may_read_the_store_and_sees_the_committed_taint(
    facts: Facts, events: MemoryEventSink
) -> None:
    facts.begin("ana", "s1")
    seen: list[str | None] = []
    events.subscribe(lambda envelope: seen.append(facts.taint_of(envelope["data"]["session_key"])))
    worker = threading.Thread(target=facts.mark, args=("ana", "s1", "tool fetch"))
    worker.start()
    worker.join(timeout=30)
    assert not worker.is_alive()
    assert seen == ["tool fetch"]


def test_many_threads_marking_the_same_sessions_emit_exactly_one_event_per_session(
    facts: Facts, transitions: Transitions
) -> None:
    sessions = [f"s{n}" for n in range(12)]
    for key in sessions:
        facts.begin("ana", key)
        facts.begin("bob", f"peer-{key}")
    start = threading.Barrier(6)
    failures: list[BaseException] = []

    def hammer(worker: int) -> None:
        try:
            start.wait(timeout=30)
            for round_ in range(2):
                for key in sessions:
                    facts.mark("ana", key, f"tool t{worker}")
                    facts.peer(f"peer-{key}", key)
                    if round_ == 0 and worker == 0:
                        facts.mark("ana", None, "tool fetch")
        except BaseException as exc:  # reported below: a thread's failure must fail the test
            failures.append(exc)

    threads = [threading.Thread(target=hammer, args=(w,)) for w in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not failures
    assert all(not t.is_alive() for t in threads)
    tainted = [t["session_key"] for t in transitions() if t["kind"] == "tainted"]
    assert sorted(tainted) == sorted([*sessions, *(f"peer-{k}" for k in sessions)])
