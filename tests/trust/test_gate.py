"""The write gate (REFERENCE 4.4): both postures, non-LLM principals, steward review batches,
evidence sessions, and the ``memory.write.quarantined`` event."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from meta_memory.errors import ConfigError
from meta_memory.events import MemoryEventSink
from meta_memory.memory.records import APPLICATION, OPERATOR, Author
from meta_memory.trust import TaintTracker, WriteGate, emit_quarantined

MakeGate = Callable[[str], WriteGate]
ANA = Author("agent", "ana")
STEWARD = Author("steward", run_id="run-1")
DISTILLER = Author("distiller", run_id="run-2")


def poisoned(tracker: TaintTracker) -> None:
    """ana's s1 ingested a web page; s0 was left by a reset; s2 is her clean current session."""
    tracker.begin_session("ana", "s0")
    tracker.reset("ana", "s0", "s1")
    tracker.mark_untrusted("ana", "s1", "tool web_fetch")
    tracker.begin_session("ana", "s2")


@pytest.mark.parametrize("posture", ["observed", "quarantined"])
@pytest.mark.parametrize("author", [APPLICATION, OPERATOR], ids=["application", "operator"])
def test_non_llm_principals_are_never_quarantined(
    make_gate: MakeGate, tracker: TaintTracker, events: MemoryEventSink, posture: str, author: Author
) -> None:
    poisoned(tracker)
    gate = make_gate(posture)
    assert gate.decide(realm="r", author=author, session_key="s1", evidence_sessions=["s1", "s0"]) is None
    assert events.events("memory.write.quarantined") == []


@pytest.mark.parametrize("author", [ANA, DISTILLER, STEWARD], ids=["agent", "distiller", "steward"])
def test_quarantined_posture_quarantines_every_llm_write_even_from_a_clean_session(
    make_gate: MakeGate, tracker: TaintTracker, author: Author
) -> None:
    tracker.begin_session("ana", "s1")
    gate = make_gate("quarantined")
    assert gate.decide(realm="r", author=author, session_key="s1") == "llm_writes=quarantined policy"


def test_quarantined_posture_lets_a_steward_review_batch_through(make_gate: MakeGate) -> None:
    gate = make_gate("quarantined")
    assert gate.decide(realm="r", author=STEWARD, session_key=None, steward_review=True) is None


@pytest.mark.parametrize("author", [ANA, DISTILLER], ids=["agent", "distiller"])
def test_only_a_steward_can_claim_the_review_exemption(make_gate: MakeGate, author: Author) -> None:
    gate = make_gate("quarantined")
    assert gate.decide(realm="r", author=author, session_key=None, steward_review=True) == (
        "llm_writes=quarantined policy"
    )


@pytest.mark.parametrize("posture", ["observed", "quarantined"])
def test_a_steward_review_batch_citing_a_tainted_or_reset_session_still_quarantines(
    make_gate: MakeGate, tracker: TaintTracker, posture: str
) -> None:
    poisoned(tracker)
    gate = make_gate(posture)
    decide = gate.decide
    assert decide(
        realm="r", author=STEWARD, session_key=None, evidence_sessions=["s1"], steward_review=True
    ) == ("evidence session s1 tainted by tool web_fetch")
    assert decide(
        realm="r", author=STEWARD, session_key=None, evidence_sessions=["s0"], steward_review=True
    ) == ("evidence session s0 is a reset boundary")
    assert (
        decide(realm="r", author=STEWARD, session_key=None, evidence_sessions=["s2"], steward_review=True)
        is None
    )


def test_observed_posture_stores_agent_writes_from_a_clean_session(
    make_gate: MakeGate, tracker: TaintTracker
) -> None:
    tracker.begin_session("ana", "s1")
    assert make_gate("observed").decide(realm="r", author=ANA, session_key="s1") is None


def test_observed_posture_quarantines_agent_writes_from_a_tainted_session(
    make_gate: MakeGate, tracker: TaintTracker
) -> None:
    poisoned(tracker)
    assert make_gate("observed").decide(realm="r", author=ANA, session_key="s1") == (
        "session tainted by tool web_fetch"
    )


def test_a_write_right_after_the_first_untrusted_ingestion_already_sees_the_taint(
    make_gate: MakeGate, tracker: TaintTracker
) -> None:
    gate = make_gate("observed")
    tracker.begin_session("ana", "s1")
    assert gate.decide(realm="r", author=ANA, session_key="s1") is None
    tracker.mark_untrusted("ana", "s1", "mcp server evil")
    assert gate.decide(realm="r", author=ANA, session_key="s1") == "session tainted by mcp server evil"


def test_a_clean_session_is_not_quarantined_because_another_session_of_the_identity_is_tainted(
    make_gate: MakeGate, tracker: TaintTracker
) -> None:
    poisoned(tracker)
    assert make_gate("observed").decide(realm="r", author=ANA, session_key="s2") is None


def test_after_reset_the_fresh_session_writes_normally_and_the_old_one_still_quarantines(
    make_gate: MakeGate, tracker: TaintTracker
) -> None:
    gate = make_gate("observed")
    tracker.begin_session("ana", "s1")
    tracker.mark_untrusted("ana", "s1", "tool fetch")
    tracker.reset("ana", "s1", "s2")
    assert gate.decide(realm="r", author=ANA, session_key="s2") is None
    assert gate.decide(realm="r", author=ANA, session_key="s1") == "session tainted by tool fetch"


def test_an_agent_write_naming_no_session_carries_the_taint_of_any_open_session(
    make_gate: MakeGate, tracker: TaintTracker
) -> None:
    poisoned(tracker)
    assert make_gate("observed").decide(realm="r", author=ANA, session_key=None) == (
        "session tainted by tool web_fetch"
    )


def test_pending_pre_session_taint_quarantines_the_identitys_agent_writes(
    make_gate: MakeGate, tracker: TaintTracker
) -> None:
    gate = make_gate("observed")
    tracker.mark_untrusted("ana", None, "tool web_search")
    assert gate.decide(realm="r", author=ANA, session_key=None) == "session tainted by tool web_search"
    assert (
        gate.decide(realm="r", author=ANA, session_key="never-begun") == "session tainted by tool web_search"
    )
    assert gate.decide(realm="r", author=Author("agent", "bob"), session_key=None) is None
    tracker.begin_session("ana", "s1")
    assert gate.decide(realm="r", author=ANA, session_key="s1") == "session tainted by tool web_search"


@pytest.mark.parametrize("author", [STEWARD, DISTILLER], ids=["steward", "distiller"])
def test_session_taint_applies_to_agent_writes_only(
    make_gate: MakeGate, tracker: TaintTracker, author: Author
) -> None:
    poisoned(tracker)
    assert make_gate("observed").decide(realm="r", author=author, session_key="s1") is None


@pytest.mark.parametrize("author", [ANA, STEWARD, DISTILLER], ids=["agent", "steward", "distiller"])
def test_any_llm_write_citing_a_tainted_evidence_session_quarantines(
    make_gate: MakeGate, tracker: TaintTracker, author: Author
) -> None:
    poisoned(tracker)
    assert make_gate("observed").decide(
        realm="r", author=author, session_key="s2", evidence_sessions=["s2", "s1"]
    ) == ("evidence session s1 tainted by tool web_fetch")


@pytest.mark.parametrize("author", [ANA, STEWARD, DISTILLER], ids=["agent", "steward", "distiller"])
def test_any_llm_write_citing_a_reset_boundary_quarantines(
    make_gate: MakeGate, tracker: TaintTracker, author: Author
) -> None:
    poisoned(tracker)
    assert make_gate("observed").decide(
        realm="r", author=author, session_key="s2", evidence_sessions=["s0"]
    ) == ("evidence session s0 is a reset boundary")


def test_a_tainted_reset_boundary_is_reported_by_its_taint_and_the_first_offender_wins(
    make_gate: MakeGate, tracker: TaintTracker
) -> None:
    tracker.mark_untrusted("ana", "t1", "tool fetch")
    tracker.reset("ana", "t1", "t2")
    tracker.begin_session("ana", "b1")
    tracker.reset("ana", "b1", "b2")
    gate = make_gate("observed")
    assert gate.decide(realm="r", author=STEWARD, session_key=None, evidence_sessions=["t1", "b1"]) == (
        "evidence session t1 tainted by tool fetch"
    )
    assert gate.decide(realm="r", author=STEWARD, session_key=None, evidence_sessions=["b1", "t1"]) == (
        "evidence session b1 is a reset boundary"
    )


def test_session_taint_is_reported_before_evidence(make_gate: MakeGate, tracker: TaintTracker) -> None:
    poisoned(tracker)
    assert make_gate("observed").decide(
        realm="r", author=ANA, session_key="s1", evidence_sessions=["s0"]
    ) == ("session tainted by tool web_fetch")


def test_clean_or_unknown_evidence_sessions_pass(make_gate: MakeGate, tracker: TaintTracker) -> None:
    poisoned(tracker)
    gate = make_gate("observed")
    assert (
        gate.decide(realm="r", author=ANA, session_key="s2", evidence_sessions=["s2", "never-seen"]) is None
    )


def test_a_quarantine_decision_emits_one_event_with_realm_author_and_reason(
    make_gate: MakeGate, tracker: TaintTracker, events: MemoryEventSink
) -> None:
    poisoned(tracker)
    reason = make_gate("observed").decide(realm="team", author=ANA, session_key="s1")
    [envelope] = events.events("memory.write.quarantined")
    assert envelope["identity"] == "ana"
    assert envelope["data"] == {
        "realm": "team",
        "author": {"author": "agent", "identity": "ana"},
        "reason": reason,
    }


def test_a_steward_quarantine_event_is_filed_under_the_system_identity(
    make_gate: MakeGate, tracker: TaintTracker, events: MemoryEventSink
) -> None:
    poisoned(tracker)
    make_gate("observed").decide(realm="team", author=STEWARD, session_key=None, evidence_sessions=["s0"])
    [envelope] = events.events("memory.write.quarantined")
    assert envelope["identity"] == "_system"
    assert envelope["data"]["author"] == {"author": "steward", "run_id": "run-1"}


def test_a_write_stored_normally_emits_nothing(make_gate: MakeGate, events: MemoryEventSink) -> None:
    make_gate("observed").decide(realm="r", author=ANA, session_key="s1")
    make_gate("quarantined").decide(realm="r", author=STEWARD, session_key=None, steward_review=True)
    assert events.events() == []


def test_quarantine_reason_decides_without_emitting(
    make_gate: MakeGate, tracker: TaintTracker, events: MemoryEventSink
) -> None:
    poisoned(tracker)
    gate = make_gate("observed")
    assert gate.quarantine_reason(author=ANA, session_key="s1") == "session tainted by tool web_fetch"
    assert events.events("memory.write.quarantined") == []


def test_emit_quarantined_serves_callers_that_decide_themselves(events: MemoryEventSink) -> None:
    emit_quarantined(events, realm="r", author=ANA, reason="secret-looking body")
    [envelope] = events.events("memory.write.quarantined")
    assert (envelope["identity"], envelope["data"]["reason"]) == ("ana", "secret-looking body")


@pytest.mark.parametrize("bad", ["", "Observed", "strict", "off"])
def test_an_unknown_posture_is_refused(tracker: TaintTracker, events: MemoryEventSink, bad: str) -> None:
    with pytest.raises(ConfigError, match="llm_writes"):
        WriteGate(tracker, events, llm_writes=bad)


def test_evidence_sessions_must_not_be_a_bare_string(make_gate: MakeGate) -> None:
    with pytest.raises(TypeError, match="evidence_sessions"):
        make_gate("observed").decide(realm="r", author=ANA, session_key=None, evidence_sessions="s1")
