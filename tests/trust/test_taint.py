"""Session-sticky taint (REFERENCE 4.3): marking, reset, compaction, pending taint, peers, the cap,
and the ``memory.taint.transition`` events, exactly once per transition."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from meta_memory.errors import ConfigError, InvalidParams
from meta_memory.events import MemoryEventSink
from meta_memory.trust import TaintTracker

Transitions = Callable[[], list[dict[str, Any]]]


def test_a_fresh_session_starts_clean(tracker: TaintTracker, transitions: Transitions) -> None:
    tracker.begin_session("ana", "s1")
    assert tracker.taint_of("s1") is None
    assert tracker.is_reset_boundary("s1") is False
    assert transitions() == []


def test_untrusted_ingestion_taints_the_session_and_emits_one_tainted_event(
    tracker: TaintTracker, events: MemoryEventSink
) -> None:
    tracker.begin_session("ana", "s1")
    assert tracker.mark_untrusted("ana", "s1", "tool web_fetch") is True
    assert tracker.taint_of("s1") == "tool web_fetch"
    [envelope] = events.events("memory.taint.transition")
    assert envelope["identity"] == "ana"
    assert envelope["data"] == {
        "identity": "ana",
        "session_key": "s1",
        "kind": "tainted",
        "source": "tool web_fetch",
    }


def test_a_tainted_session_keeps_its_first_source_and_emits_nothing_more(
    tracker: TaintTracker, transitions: Transitions
) -> None:
    tracker.begin_session("ana", "s1")
    tracker.mark_untrusted("ana", "s1", "tool web_fetch")
    assert tracker.mark_untrusted("ana", "s1", "mcp server evil") is True
    assert tracker.taint_of("s1") == "tool web_fetch"
    assert len(transitions()) == 1


def test_taint_is_per_session_not_per_identity(tracker: TaintTracker) -> None:
    tracker.begin_session("ana", "s1")
    tracker.begin_session("ana", "s2")
    tracker.begin_session("bob", "s3")
    tracker.mark_untrusted("ana", "s1", "tool fetch")
    assert tracker.taint_of("s2") is None
    assert tracker.taint_of("s3") is None


def test_compaction_clears_nothing_because_the_session_key_and_its_taint_survive_it(
    tracker: TaintTracker, transitions: Transitions
) -> None:
    tracker.begin_session("ana", "s1")
    tracker.mark_untrusted("ana", "s1", "tool web_search")
    # Compaction keeps the session key; a host that re-attaches the same key gets the same facts.
    tracker.begin_session("ana", "s1")
    assert tracker.taint_of("s1") == "tool web_search"
    assert not any("compact" in name or "clear" in name for name in dir(tracker))
    assert [t["kind"] for t in transitions()] == ["tainted"]


def test_reset_keeps_the_old_session_tainted_marks_it_a_boundary_and_opens_the_new_one_clean(
    tracker: TaintTracker, events: MemoryEventSink, transitions: Transitions
) -> None:
    tracker.begin_session("ana", "s1")
    tracker.mark_untrusted("ana", "s1", "tool web_fetch")
    tracker.reset("ana", "s1", "s2")
    assert tracker.taint_of("s1") == "tool web_fetch"
    assert tracker.is_reset_boundary("s1") is True
    assert tracker.taint_of("s2") is None
    assert tracker.is_reset_boundary("s2") is False
    assert transitions() == [
        {"identity": "ana", "session_key": "s1", "kind": "tainted", "source": "tool web_fetch"},
        {"identity": "ana", "session_key": "s1", "kind": "reset_boundary", "source": "reset to session s2"},
        {"identity": "ana", "session_key": "s2", "kind": "rotated_clean", "source": "reset from session s1"},
    ]
    assert {e["identity"] for e in events.events("memory.taint.transition")} == {"ana"}


def test_a_clean_session_reset_still_becomes_a_boundary(
    tracker: TaintTracker, transitions: Transitions
) -> None:
    tracker.begin_session("ana", "s1")
    tracker.reset("ana", "s1", "s2")
    assert tracker.taint_of("s1") is None
    assert tracker.is_reset_boundary("s1") is True
    assert [(t["session_key"], t["kind"]) for t in transitions()] == [
        ("s1", "reset_boundary"),
        ("s2", "rotated_clean"),
    ]


def test_resetting_an_old_session_twice_marks_the_boundary_once(
    tracker: TaintTracker, transitions: Transitions
) -> None:
    tracker.begin_session("ana", "s1")
    tracker.reset("ana", "s1", "s2")
    tracker.reset("ana", "s1", "s3")
    kinds = Counter((t["session_key"], t["kind"]) for t in transitions())
    assert kinds[("s1", "reset_boundary")] == 1


def test_reset_into_an_already_tainted_key_cannot_clean_it(
    tracker: TaintTracker, transitions: Transitions
) -> None:
    tracker.mark_untrusted("ana", "s2", "tool fetch")
    tracker.begin_session("ana", "s1")
    tracker.reset("ana", "s1", "s2")
    assert tracker.taint_of("s2") == "tool fetch"
    assert "rotated_clean" not in [t["kind"] for t in transitions()]


def test_reset_refuses_to_rotate_a_session_into_itself(tracker: TaintTracker) -> None:
    tracker.begin_session("ana", "s1")
    with pytest.raises(InvalidParams, match="distinct"):
        tracker.reset("ana", "s1", "s1")
    assert tracker.is_reset_boundary("s1") is False


def test_ingestion_before_any_session_is_held_pending_and_transfers_to_the_next_session(
    tracker: TaintTracker, transitions: Transitions
) -> None:
    assert tracker.mark_untrusted("ana", None, "tool web_fetch") is True
    assert tracker.pending_taint_of("ana") == "tool web_fetch"
    assert transitions() == []  # nothing to name yet: no session key
    tracker.begin_session("ana", "s1")
    assert tracker.taint_of("s1") == "tool web_fetch"
    assert tracker.pending_taint_of("ana") is None
    assert transitions() == [
        {"identity": "ana", "session_key": "s1", "kind": "tainted", "source": "tool web_fetch"}
    ]
    tracker.begin_session("ana", "s2")
    assert tracker.taint_of("s2") is None


def test_pending_taint_belongs_to_its_identity_only(tracker: TaintTracker) -> None:
    tracker.mark_untrusted("ana", None, "tool fetch")
    tracker.begin_session("bob", "s1")
    assert tracker.taint_of("s1") is None
    assert tracker.pending_taint_of("ana") == "tool fetch"


def test_pending_taint_keeps_its_first_source(tracker: TaintTracker) -> None:
    tracker.mark_untrusted("ana", None, "tool fetch")
    tracker.mark_untrusted("ana", None, "tool web_search")
    tracker.begin_session("ana", "s1")
    assert tracker.taint_of("s1") == "tool fetch"


def test_pending_taint_at_reset_goes_to_the_discarded_session_not_the_fresh_one(
    tracker: TaintTracker, transitions: Transitions
) -> None:
    tracker.mark_untrusted("ana", None, "tool fetch")
    tracker.reset("ana", "s1", "s2")
    assert tracker.taint_of("s1") == "tool fetch"
    assert tracker.taint_of("s2") is None
    assert tracker.pending_taint_of("ana") is None
    assert [(t["session_key"], t["kind"]) for t in transitions()] == [
        ("s1", "tainted"),
        ("s1", "reset_boundary"),
        ("s2", "rotated_clean"),
    ]


def test_unattributed_ingestion_taints_the_open_session_of_the_identity(
    tracker: TaintTracker, transitions: Transitions
) -> None:
    tracker.begin_session("ana", "s1")
    assert tracker.mark_untrusted("ana", None, "tool fetch") is True
    assert tracker.taint_of("s1") == "tool fetch"
    assert tracker.pending_taint_of("ana") is None
    assert [t["session_key"] for t in transitions()] == ["s1"]


def test_unattributed_ingestion_taints_every_open_session_of_the_identity(
    tracker: TaintTracker, transitions: Transitions
) -> None:
    tracker.begin_session("ana", "s1")
    tracker.begin_session("ana", "s2")
    tracker.begin_session("bob", "s3")
    tracker.mark_untrusted("ana", None, "tool fetch")
    assert tracker.taint_of("s1") == tracker.taint_of("s2") == "tool fetch"
    assert tracker.taint_of("s3") is None
    assert sorted(t["session_key"] for t in transitions()) == ["s1", "s2"]


def test_ending_a_session_forgets_no_fact_but_stops_attributing_to_it(tracker: TaintTracker) -> None:
    tracker.begin_session("ana", "s1")
    tracker.mark_untrusted("ana", "s1", "tool fetch")
    tracker.begin_session("ana", "s2")
    tracker.reset("ana", "s2", "s3")
    tracker.end_session("s1")
    tracker.end_session("s3")
    tracker.end_session("s3")  # idempotent
    assert tracker.taint_of("s1") == "tool fetch"
    assert tracker.is_reset_boundary("s2") is True
    tracker.mark_untrusted("ana", None, "tool web_fetch")
    assert tracker.taint_of("s3") is None
    assert tracker.pending_taint_of("ana") == "tool web_fetch"


def test_marking_a_session_that_was_never_begun_still_taints_it(tracker: TaintTracker) -> None:
    assert tracker.mark_untrusted("ana", "ghost", "tool fetch") is True
    assert tracker.taint_of("ghost") == "tool fetch"


def test_a_message_from_a_tainted_sender_session_taints_the_receiver(
    tracker: TaintTracker, transitions: Transitions
) -> None:
    tracker.begin_session("ana", "a1")
    tracker.begin_session("bob", "b1")
    tracker.mark_untrusted("ana", "a1", "tool web_fetch")
    assert tracker.mark_peer_message("bob", "b1", "a1") is True
    assert tracker.taint_of("b1") == "peer message from session a1 (tainted by tool web_fetch)"
    assert transitions()[-1] == {
        "identity": "bob",
        "session_key": "b1",
        "kind": "tainted",
        "source": "peer message from session a1 (tainted by tool web_fetch)",
    }
    assert tracker.mark_peer_message("bob", "b1", "a1") is True
    assert len(transitions()) == 2


def test_a_message_from_a_clean_or_merely_reset_sender_does_not_taint(tracker: TaintTracker) -> None:
    tracker.begin_session("ana", "a1")
    tracker.begin_session("bob", "b1")
    assert tracker.mark_peer_message("bob", "b1", "a1") is False
    tracker.reset("ana", "a1", "a2")
    assert tracker.mark_peer_message("bob", "b1", "a1") is False
    assert tracker.mark_peer_message("bob", "b1", "unknown") is False
    assert tracker.taint_of("b1") is None


def test_peer_taint_travels_along_a_chain_of_sessions(tracker: TaintTracker) -> None:
    tracker.mark_untrusted("ana", "a1", "tool fetch")
    tracker.mark_peer_message("bob", "b1", "a1")
    tracker.mark_peer_message("cy", "c1", "b1")
    assert tracker.taint_of("c1") == (
        "peer message from session b1 (tainted by peer message from session a1 (tainted by tool fetch))"
    )


def test_tracked_sessions_are_capped_and_the_oldest_inserted_is_evicted(events: MemoryEventSink) -> None:
    tracker = TaintTracker(events, max_tracked=3)
    for key in ("s1", "s2", "s3"):
        tracker.mark_untrusted("ana", key, f"tool {key}")
    tracker.mark_untrusted("ana", "s1", "tool again")  # no refresh: order is by insertion
    tracker.mark_untrusted("ana", "s4", "tool s4")
    assert tracker.taint_of("s1") is None
    assert [tracker.taint_of(k) for k in ("s2", "s3", "s4")] == ["tool s2", "tool s3", "tool s4"]


def test_reset_boundaries_count_toward_the_cap(events: MemoryEventSink) -> None:
    tracker = TaintTracker(events, max_tracked=2)
    tracker.begin_session("ana", "s1")
    tracker.reset("ana", "s1", "s2")
    tracker.mark_untrusted("ana", "s2", "tool fetch")
    tracker.mark_untrusted("bob", "b1", "tool fetch")
    assert tracker.is_reset_boundary("s1") is False
    assert tracker.taint_of("s2") == "tool fetch"
    assert tracker.taint_of("b1") == "tool fetch"


def test_an_evicted_session_marked_again_is_a_new_transition(
    events: MemoryEventSink, transitions: Transitions
) -> None:
    tracker = TaintTracker(events, max_tracked=1)
    tracker.mark_untrusted("ana", "s1", "tool fetch")
    tracker.mark_untrusted("ana", "s2", "tool fetch")
    tracker.mark_untrusted("ana", "s1", "tool web_fetch")
    assert tracker.taint_of("s1") == "tool web_fetch"
    assert [t["session_key"] for t in transitions()] == ["s1", "s2", "s1"]


def test_pending_identities_are_capped_too(events: MemoryEventSink) -> None:
    tracker = TaintTracker(events, max_tracked=2)
    for identity in ("a", "b", "c"):
        tracker.mark_untrusted(identity, None, "tool fetch")
    assert [tracker.pending_taint_of(i) for i in ("a", "b", "c")] == [None, "tool fetch", "tool fetch"]


@pytest.mark.parametrize("bad", [0, -1, True, 2.5, "4096"])
def test_the_cap_must_be_a_positive_integer(events: MemoryEventSink, bad: Any) -> None:
    with pytest.raises(ConfigError, match="max_tracked"):
        TaintTracker(events, max_tracked=bad)


def test_the_default_cap_is_4096_sessions(events: MemoryEventSink) -> None:
    tracker = TaintTracker(events)
    for n in range(4097):
        tracker.mark_untrusted("ana", f"s{n}", "tool fetch")
    assert tracker.taint_of("s0") is None
    assert tracker.taint_of("s1") == "tool fetch"
    assert tracker.taint_of("s4096") == "tool fetch"


def test_an_event_subscriber_may_query_the_tracker_without_deadlocking(events: MemoryEventSink) -> None:
    tracker = TaintTracker(events)
    seen: list[str | None] = []
    events.subscribe(lambda envelope: seen.append(tracker.taint_of(envelope["data"]["session_key"])))
    worker = threading.Thread(target=tracker.mark_untrusted, args=("ana", "s1", "tool fetch"))
    worker.start()
    worker.join(timeout=10)
    assert not worker.is_alive()
    assert seen == ["tool fetch"]


def test_many_threads_marking_the_same_sessions_emit_exactly_one_event_per_session(
    tracker: TaintTracker, transitions: Transitions
) -> None:
    sessions = [f"s{n}" for n in range(40)]
    for key in sessions:
        tracker.begin_session("ana", key)
    start = threading.Barrier(16)

    def hammer(worker: int) -> None:
        start.wait(timeout=10)
        for round_ in range(5):
            for key in sessions:
                tracker.mark_untrusted("ana", key, f"tool t{worker}")
                tracker.mark_peer_message("bob", f"peer-{key}", key)
                if round_ == 0 and worker == 0:
                    tracker.mark_untrusted("ana", None, "tool fetch")

    threads = [threading.Thread(target=hammer, args=(w,)) for w in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not any(thread.is_alive() for thread in threads)
    counts = Counter((t["session_key"], t["kind"]) for t in transitions())
    expected = {(key, "tainted") for key in sessions} | {(f"peer-{key}", "tainted") for key in sessions}
    assert set(counts) == expected
    assert set(counts.values()) == {1}
    assert all(tracker.taint_of(key) is not None for key in sessions)
