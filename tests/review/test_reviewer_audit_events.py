"""Who decided, what the store recorded, and what the timeline says: the reviewer comes from the
authenticated principal only, each applied op writes one audit row holding the review, and the
``memory.quarantine.verdict`` event follows the commit exactly once without reviewer or rationale."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from meta_memory.errors import MetaError

IDENTITY = "lead"
ALICE = SimpleNamespace(subject="alice", groups=("ops",))


def test_the_reviewer_is_the_authenticated_console_principal(desk) -> None:
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")

    review = desk.decide(origin.id, "release", principal=ALICE)["decision"]["review"]

    assert review["reviewer"] == {"kind": "console", "principal": "alice"}


@pytest.mark.parametrize("principal", [None, ALICE])
@pytest.mark.parametrize(
    "claim", [{"reviewer": {"kind": "console", "principal": "mallory"}}, {"principal_subject": "mallory"}]
)
def test_a_caller_supplied_reviewer_is_refused_and_decides_nothing(desk, principal, claim) -> None:
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")

    with pytest.raises(MetaError) as refused:
        desk.decide(origin.id, "tombstone", principal=principal, **claim)

    assert refused.value.code == -32602
    assert f"unknown param '{next(iter(claim))}'" in refused.value.message
    assert desk.record(origin.id).status.value == "quarantined"
    assert "mallory" not in json.dumps([r["detail"] for r in desk.store.audit_rows(origin.id)])


def test_the_reviewer_is_who_authenticated(desk) -> None:
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")

    review = desk.decide(origin.id, "tombstone", principal=ALICE)["decision"]["review"]

    assert review["reviewer"] == {"kind": "console", "principal": "alice"}


def test_without_a_principal_the_review_records_that_none_was_known(desk) -> None:
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")

    review = desk.decide(origin.id, "release")["decision"]["review"]

    assert review["reviewer"] == {"kind": "console", "principal": None}


def test_each_applied_op_writes_one_audit_row_holding_the_review(desk) -> None:
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    before = desk.audit_count()
    desk.clock.advance(42)

    answer = desk.decide(origin.id, "release", principal=ALICE, rationale="confirmed with the reader")

    decision = answer["decision"]
    rows = [r for r in desk.store.audit_rows() if r["seq"] > before]
    assert [(r["op"], r["record_id"]) for r in rows] == [
        ("create", f"{origin.id}-released"),
        ("tombstone", origin.id),
    ]
    for row in rows:
        assert row["detail"]["review"] == decision["review"]
        assert row["author"] == {"author": "operator"}
        assert row["at_ms"] == decision["decided_at_ms"] == desk.clock.now_ms()
    assert decision["audit_token"] == f"audit-{rows[-1]['seq']}"
    assert decision["review"] == {
        "verdict": "release",
        "reviewer": {"kind": "console", "principal": "alice"},
        "origin": origin.id,
        "successor": f"{origin.id}-released",
        "expected_content_hash": origin.content_hash,
        "quarantine_reason": "llm_writes=quarantined policy",
        "expired_promotions": [],
        "invalidated_promotions": [],
        "rationale": "confirmed with the reader",
    }


def test_the_result_carries_outcome_receipts_and_the_decision(desk) -> None:
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")

    answer = desk.decide(origin.id, "release")

    assert set(answer) == {"outcome", "origin", "successor", "decision"}
    assert answer["origin"] == {
        "memory_id": origin.id,
        "status": {"status": "tombstoned"},
        "trust": "agent_observed",
        "ever_quarantined": True,
        "content_hash": origin.content_hash,
        "supersedes": None,
        "superseded_by": None,
        "derived_from": [],
    }
    assert answer["successor"] == {
        "memory_id": f"{origin.id}-released",
        "status": {"status": "active"},
        "trust": "agent_observed",
        "ever_quarantined": True,
        "content_hash": origin.content_hash,
        "supersedes": None,
        "superseded_by": None,
        "derived_from": [origin.id],
    }
    assert "body" not in json.dumps(answer["origin"]) and origin.body not in json.dumps(answer)


@pytest.mark.parametrize("verdict", ["release", "tombstone"])
def test_the_verdict_event_is_emitted_once_after_commit_naming_record_verdict_and_successor(
    desk, verdict
) -> None:
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    seen: list[str] = []

    def on_event(envelope: dict) -> None:
        if envelope["event_type"] == "memory.quarantine.verdict":  # read the file through another connection
            with desk.db() as conn:
                seen.append(
                    conn.execute("SELECT status FROM records WHERE id = ?", (origin.id,)).fetchone()[0]
                )

    desk.meta.runtime.events.subscribe(on_event)

    desk.decide(origin.id, verdict, principal=ALICE, rationale="secret-sauce rationale")

    assert seen == ["tombstoned"]  # the decision was committed before anyone heard of it
    [event] = desk.events()
    successor = f"{origin.id}-released" if verdict == "release" else None
    assert event["identity"] == IDENTITY
    assert event["data"] == {
        "realm": "default",
        "record_id": origin.id,
        "verdict": verdict,
        "successor": successor,
    }
    assert "alice" not in json.dumps(event) and "secret-sauce" not in json.dumps(event)


def test_a_refused_or_replayed_decision_emits_no_event(desk) -> None:
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    assert desk.refusal(origin.id, "release", expected="f" * 64).data["reason"] == "content_mismatch"
    assert desk.events() == []

    desk.decide(origin.id, "release")
    desk.decide(origin.id, "release")
    desk.refusal(origin.id, "tombstone")

    assert len(desk.events()) == 1
