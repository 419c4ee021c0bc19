"""The write gate (REFERENCE 4.4): both postures, non-LLM principals, steward review batches,
evidence sessions, and the ``memory.write.quarantined`` event."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from meta_memory.errors import ConfigError
from meta_memory.events import MemoryEventSink
from meta_memory.memory.records import APPLICATION, OPERATOR, Author
from meta_memory.trust import WriteGate, emit_quarantined

from .conftest import Facts

MakeGate = Callable[[str], WriteGate]
ANA = Author("agent", "ana")
STEWARD = Author("steward", run_id="run-1")
DISTILLER = Author("distiller", run_id="run-2")


def poisoned(facts: Facts) -> None:
    """ana's s1 ingested a web page; s0 was left by a reset; s2 is her clean current session."""
    facts.begin("ana", "s0")
    facts.reset("s0", "s1")
    facts.mark("ana", "s1", "tool web_fetch")
    facts.begin("ana", "s2")


def decide(
    gate: WriteGate,
    facts: Facts | None,
    author: Author,
    session: str | None = None,
    evidence: list[str] | tuple[str, ...] = (),
    *,
    realm: str = "r",
    steward_review: bool = False,
) -> str | None:
    """The gate's verdict on a write from ``session`` citing ``evidence``, with the facts read
    from the store as the session calls read them."""
    taint = facts.write_taint(session) if facts is not None and session is not None else None
    rows = [(key, facts.store.session(key) if facts is not None else None) for key in evidence]
    return gate.decide(realm=realm, author=author, taint=taint, evidence=rows, steward_review=steward_review)


@pytest.mark.parametrize("posture", ["observed", "quarantined"])
@pytest.mark.parametrize("author", [APPLICATION, OPERATOR], ids=["application", "operator"])
def test_non_llm_principals_are_never_quarantined(
    make_gate: MakeGate, facts: Facts, events: MemoryEventSink, posture: str, author: Author
) -> None:
    poisoned(facts)
    assert decide(make_gate(posture), facts, author, "s1", ["s1", "s0", "never-seen"]) is None
    assert events.events("memory.write.quarantined") == []


@pytest.mark.parametrize("author", [ANA, DISTILLER, STEWARD], ids=["agent", "distiller", "steward"])
def test_quarantined_posture_quarantines_every_llm_write_even_from_a_clean_session(
    make_gate: MakeGate, facts: Facts, author: Author
) -> None:
    facts.begin("ana", "s1")
    assert decide(make_gate("quarantined"), facts, author, "s1") == "llm_writes=quarantined policy"


def test_quarantined_posture_lets_a_steward_review_batch_through(make_gate: MakeGate) -> None:
    assert decide(make_gate("quarantined"), None, STEWARD, steward_review=True) is None


@pytest.mark.parametrize("author", [ANA, DISTILLER], ids=["agent", "distiller"])
def test_only_a_steward_can_claim_the_review_exemption(make_gate: MakeGate, author: Author) -> None:
    assert decide(make_gate("quarantined"), None, author, steward_review=True) == (
        "llm_writes=quarantined policy"
    )


@pytest.mark.parametrize("posture", ["observed", "quarantined"])
def test_a_steward_review_batch_citing_a_tainted_reset_or_unknown_session_still_quarantines(
    make_gate: MakeGate, facts: Facts, posture: str
) -> None:
    poisoned(facts)
    gate = make_gate(posture)
    assert decide(gate, facts, STEWARD, None, ["s1"], steward_review=True) == (
        "evidence session s1 tainted by tool web_fetch"
    )
    assert decide(gate, facts, STEWARD, None, ["s0"], steward_review=True) == (
        "evidence session s0 is a reset boundary"
    )
    assert decide(gate, facts, STEWARD, None, ["gone"], steward_review=True) == (
        "evidence session gone is unknown"
    )
    assert decide(gate, facts, STEWARD, None, ["s2"], steward_review=True) is None


def test_observed_posture_stores_agent_writes_from_a_clean_session(make_gate: MakeGate, facts: Facts) -> None:
    facts.begin("ana", "s1")
    assert decide(make_gate("observed"), facts, ANA, "s1") is None


def test_observed_posture_quarantines_agent_writes_from_a_tainted_session(
    make_gate: MakeGate, facts: Facts
) -> None:
    poisoned(facts)
    assert decide(make_gate("observed"), facts, ANA, "s1") == "session tainted by tool web_fetch"


def test_a_write_right_after_the_first_untrusted_ingestion_already_sees_the_taint(
    make_gate: MakeGate, facts: Facts
) -> None:
    gate = make_gate("observed")
    facts.begin("ana", "s1")
    assert decide(gate, facts, ANA, "s1") is None
    facts.mark("ana", "s1", "mcp server evil")
    assert decide(gate, facts, ANA, "s1") == "session tainted by mcp server evil"


def test_a_clean_session_is_not_quarantined_because_another_session_of_the_identity_is_tainted(
    make_gate: MakeGate, facts: Facts
) -> None:
    poisoned(facts)
    assert decide(make_gate("observed"), facts, ANA, "s2") is None


def test_after_reset_the_fresh_session_writes_normally_and_the_old_one_still_carries_its_taint(
    make_gate: MakeGate, facts: Facts
) -> None:
    gate = make_gate("observed")
    facts.begin("ana", "s1")
    facts.mark("ana", "s1", "tool fetch")
    facts.reset("s1", "s2")
    assert decide(gate, facts, ANA, "s2") is None
    assert decide(gate, facts, ANA, "s1") == "session tainted by tool fetch"


def test_pending_taint_quarantines_the_identitys_agent_writes_from_any_session(
    make_gate: MakeGate, facts: Facts
) -> None:
    gate = make_gate("observed")
    facts.begin("ana", "s1")
    facts.begin("bob", "b1")
    facts.mark("ana", "s1", "tool web_search")
    facts.end("s1", "expired")  # its taint is held for ana, whose other sessions carry it too
    facts.begin("ana", "s2")  # takes it
    facts.begin("ana", "s3")  # opened after: clean
    assert (
        decide(gate, facts, ANA, "s2") == "session tainted by expired session s1 (tainted by tool web_search)"
    )
    assert decide(gate, facts, ANA, "s3") is None
    assert decide(gate, facts, Author("agent", "bob"), "b1") is None


def test_pending_taint_left_by_an_expired_sibling_quarantines_the_writes_of_a_session_still_open(
    make_gate: MakeGate, facts: Facts
) -> None:
    gate = make_gate("observed")
    facts.begin("ana", "s1")
    facts.begin("ana", "s2")
    facts.mark("ana", "s1", "tool fetch")
    assert decide(gate, facts, ANA, "s2") is None
    facts.end("s1", "expired")  # the host may still hold s1's context, in any of its sessions
    assert decide(gate, facts, ANA, "s2") == "session tainted by expired session s1 (tainted by tool fetch)"


@pytest.mark.parametrize("author", [STEWARD, DISTILLER], ids=["steward", "distiller"])
def test_session_taint_applies_to_agent_writes_only(
    make_gate: MakeGate, facts: Facts, author: Author
) -> None:
    poisoned(facts)
    assert decide(make_gate("observed"), facts, author, "s1") is None


@pytest.mark.parametrize("author", [ANA, STEWARD, DISTILLER], ids=["agent", "steward", "distiller"])
def test_any_llm_write_citing_a_tainted_evidence_session_quarantines(
    make_gate: MakeGate, facts: Facts, author: Author
) -> None:
    poisoned(facts)
    assert decide(make_gate("observed"), facts, author, "s2", ["s2", "s1"]) == (
        "evidence session s1 tainted by tool web_fetch"
    )


@pytest.mark.parametrize("author", [ANA, STEWARD, DISTILLER], ids=["agent", "steward", "distiller"])
def test_any_llm_write_citing_a_reset_boundary_quarantines(
    make_gate: MakeGate, facts: Facts, author: Author
) -> None:
    poisoned(facts)
    assert (
        decide(make_gate("observed"), facts, author, "s2", ["s0"])
        == "evidence session s0 is a reset boundary"
    )


@pytest.mark.parametrize("author", [ANA, STEWARD, DISTILLER], ids=["agent", "steward", "distiller"])
def test_any_llm_write_citing_a_session_the_store_does_not_know_quarantines(
    make_gate: MakeGate, facts: Facts, author: Author
) -> None:
    """Fail closed: a session purged, expired long ago or never opened vouches for nothing."""
    poisoned(facts)
    assert decide(make_gate("observed"), facts, author, "s2", ["s2", "never-seen"]) == (
        "evidence session never-seen is unknown"
    )


def test_a_tainted_reset_boundary_is_reported_by_its_taint_and_the_first_offender_wins(
    make_gate: MakeGate, facts: Facts
) -> None:
    facts.begin("ana", "t1")
    facts.mark("ana", "t1", "tool fetch")
    facts.reset("t1", "t2")
    facts.begin("ana", "b1")
    facts.reset("b1", "b2")
    gate = make_gate("observed")
    assert decide(gate, facts, STEWARD, None, ["t1", "b1"]) == "evidence session t1 tainted by tool fetch"
    assert decide(gate, facts, STEWARD, None, ["b1", "t1"]) == "evidence session b1 is a reset boundary"


def test_session_taint_is_reported_before_evidence(make_gate: MakeGate, facts: Facts) -> None:
    poisoned(facts)
    assert decide(make_gate("observed"), facts, ANA, "s1", ["s0"]) == "session tainted by tool web_fetch"


def test_clean_evidence_sessions_pass(make_gate: MakeGate, facts: Facts) -> None:
    poisoned(facts)
    assert decide(make_gate("observed"), facts, ANA, "s2", ["s2"]) is None


def test_a_quarantine_decision_emits_one_event_with_realm_author_and_reason(
    make_gate: MakeGate, facts: Facts, events: MemoryEventSink
) -> None:
    poisoned(facts)
    reason = decide(make_gate("observed"), facts, ANA, "s1", realm="team")
    [envelope] = events.events("memory.write.quarantined")
    assert envelope["identity"] == "ana"
    assert envelope["data"] == {
        "realm": "team",
        "author": {"author": "agent", "identity": "ana"},
        "reason": reason,
    }


def test_a_steward_quarantine_event_is_filed_under_the_system_identity(
    make_gate: MakeGate, facts: Facts, events: MemoryEventSink
) -> None:
    poisoned(facts)
    decide(make_gate("observed"), facts, STEWARD, None, ["s0"], realm="team")
    [envelope] = events.events("memory.write.quarantined")
    assert envelope["identity"] == "_system"
    assert envelope["data"]["author"] == {"author": "steward", "run_id": "run-1"}


def test_a_write_stored_normally_emits_nothing(make_gate: MakeGate, events: MemoryEventSink) -> None:
    decide(make_gate("observed"), None, ANA)
    decide(make_gate("quarantined"), None, STEWARD, steward_review=True)
    assert events.events() == []


def test_quarantine_reason_decides_without_emitting(make_gate: MakeGate, events: MemoryEventSink) -> None:
    gate = make_gate("observed")
    assert gate.quarantine_reason(author=ANA, taint="tool web_fetch") == "session tainted by tool web_fetch"
    assert events.events("memory.write.quarantined") == []


def test_emit_quarantined_serves_callers_that_decide_themselves(events: MemoryEventSink) -> None:
    emit_quarantined(events, realm="r", author=ANA, reason="secret-looking body")
    [envelope] = events.events("memory.write.quarantined")
    assert (envelope["identity"], envelope["data"]["reason"]) == ("ana", "secret-looking body")


@pytest.mark.parametrize("bad", ["", "Observed", "strict", "off"])
def test_an_unknown_posture_is_refused(events: MemoryEventSink, bad: str) -> None:
    with pytest.raises(ConfigError, match="llm_writes"):
        WriteGate(events, llm_writes=bad)


def test_evidence_must_not_be_a_bare_string(make_gate: MakeGate) -> None:
    with pytest.raises(TypeError, match="evidence"):
        make_gate("observed").decide(realm="r", author=ANA, evidence="s1")  # type: ignore[arg-type]
