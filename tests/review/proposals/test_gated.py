"""A tainted proposal's accept commits nothing: it stages a gated promotion (REFERENCE 5.2, 5.3)
that a console reviewer other than the one who accepted approves through ``meta/gating/decide``;
and a gated promotion waiting on a proposal bars an accept and is invalidated by a reject."""

from __future__ import annotations

from typing import Any

from meta_memory.memory.records import Status, Trust, content_hash
from meta_memory.review import PROMOTION_EXPIRY_MS

from .conftest import Floor


def _approve(floor: Floor, pending_id: str, subject: str) -> Any:
    params = {"pending_id": pending_id, "approver_id": subject, "decision": "approve"}
    return floor.console("meta/gating/decide", params, subject=subject)


def test_a_tainted_accept_waits_on_a_gate_that_another_reviewer_approves(floor: Floor) -> None:
    proposal_id = floor.propose("Release freeze", "No releases in the last week of a quarter.", tainted=True)
    assert floor.listed()[proposal_id]["tainted"] is True

    done = floor.decide(proposal_id, "accept", subject="alice")

    assert (done["outcome"], done["record"]) == ("gated", None)
    assert floor.mob_records() == [] and floor.status(proposal_id) == "pending"
    [gate] = floor.console("meta/gating/pending", subject="bob")["pending"]
    assert (gate["pending_id"], gate["action"], gate["entity"]) == (
        done["pending_id"],
        "memory.proposal_promote",
        "crew",
    )
    [staged] = floor.events("memory.promotion.pending_gate")
    assert staged["data"]["pending_id"] == done["pending_id"]

    _approve(floor, done["pending_id"], "bob")

    [row] = floor.mob_records()
    record = floor.record(row["memory_id"])
    assert record.body == "No releases in the last week of a quarter." and record.status is Status.ACTIVE
    assert (record.trust, record.ever_quarantined, record.derived_from) == (
        Trust.AGENT_OBSERVED,
        True,
        (proposal_id,),
    )
    assert floor.status(proposal_id) == "accepted"
    [promoted] = floor.events("memory.record.promoted")
    assert (promoted["data"]["proposal_id"], promoted["data"]["gated"]) == (proposal_id, True)


def test_the_reviewer_who_accepted_a_tainted_proposal_cannot_approve_its_gate(floor: Floor) -> None:
    proposal_id = floor.propose("Release freeze", "No releases in the last week.", tainted=True)
    pending_id = floor.decide(proposal_id, "accept", subject="alice")["pending_id"]

    refused = floor.refused(lambda: _approve(floor, pending_id, "alice"))

    assert refused.code == -32602 and refused.data is not None and refused.data["reason"] == "self_approval"
    assert floor.mob_records() == []


def test_replaying_a_tainted_accept_names_the_gate_still_waiting(floor: Floor) -> None:
    proposal_id = floor.propose("Release freeze", "No releases in the last week.", tainted=True)
    first = floor.decide(proposal_id, "accept")

    again = floor.decide(proposal_id, "accept", subject="bob")

    assert (again["outcome"], again["pending_id"]) == ("already_gated", first["pending_id"])
    assert again["decision"] == first["decision"]
    assert len(floor.console("meta/gating/pending")["pending"]) == 1  # no second gate


def test_once_a_tainted_accept_s_gate_lapses_the_proposal_can_be_decided_again(floor: Floor) -> None:
    proposal_id = floor.propose("Release freeze", "No releases in the last week.", tainted=True)
    floor.decide(proposal_id, "accept")
    floor.clock.advance(PROMOTION_EXPIRY_MS)  # nobody approved it for seven days

    assert floor.console("meta/gating/pending")["pending"] == []  # the gate fell back
    done = floor.decide(proposal_id, "reject", subject="bob")

    assert done["outcome"] == "rejected" and floor.status(proposal_id) == "rejected"


def _stage(floor: Floor, proposal_id: str, *, pending_id: str, created_at_ms: int) -> None:
    """A gated promotion of the proposal, as a dream's ``promote_pending_gate`` leaves it."""
    with floor.db() as conn:
        conn.execute(
            "INSERT INTO promotions (pending_id, stage_token, record_id, scope_kind, scope_key, rationale, "
            "status, proposal_id, created_at_ms, resolved_at_ms) VALUES (?, ?, ?, 'mob', 'crew', NULL, "
            "'pending', ?, ?, NULL)",
            (pending_id, f"stage-{pending_id}", proposal_id, proposal_id, created_at_ms),
        )
        conn.execute(
            "INSERT INTO stage_batches (stage_token, batch, created_at_ms) VALUES (?, '{}', ?)",
            (f"stage-{pending_id}", created_at_ms),
        )


def _promotion_status(floor: Floor, pending_id: str) -> str:
    with floor.db() as conn:
        (status,) = conn.execute(
            "SELECT status FROM promotions WHERE pending_id = ?", (pending_id,)
        ).fetchone()
    return str(status)


def test_an_accept_is_refused_while_a_gated_promotion_of_the_proposal_waits(floor: Floor) -> None:
    proposal_id = floor.propose("Freeze", "No deploys in December.")
    _stage(floor, proposal_id, pending_id="gate-1", created_at_ms=floor.clock.now_ms())

    refused = floor.refused(lambda: floor.decide(proposal_id, "accept"))

    assert refused.code == -32043 and refused.data is not None
    assert (refused.data["reason"], refused.data["pending_id"]) == ("gate_pending", "gate-1")
    assert refused.data["expires_at_ms"] == floor.clock.now_ms() + PROMOTION_EXPIRY_MS
    assert floor.mob_records() == [] and _promotion_status(floor, "gate-1") == "pending"


def test_a_reject_invalidates_a_gated_promotion_waiting_on_the_proposal(floor: Floor) -> None:
    proposal_id = floor.propose("Freeze", "No deploys in December.")
    _stage(floor, proposal_id, pending_id="gate-1", created_at_ms=floor.clock.now_ms())

    done = floor.decide(proposal_id, "reject")

    assert done["decision"]["review"]["invalidated_promotions"] == ["gate-1"]
    assert _promotion_status(floor, "gate-1") == "expired" and floor.status(proposal_id) == "rejected"


def test_a_gated_promotion_older_than_seven_days_is_expired_by_the_decision(floor: Floor) -> None:
    proposal_id = floor.propose("Freeze", "No deploys in December.")
    _stage(floor, proposal_id, pending_id="gate-old", created_at_ms=floor.clock.now_ms())
    floor.clock.advance(PROMOTION_EXPIRY_MS)

    done = floor.decide(proposal_id, "accept", expected=content_hash("Freeze", "No deploys in December."))

    assert done["outcome"] == "accepted"
    assert done["decision"]["review"]["expired_promotions"] == ["gate-old"]
    assert _promotion_status(floor, "gate-old") == "expired"
