"""Repeating a decision: ``already_released`` / ``already_tombstoned`` with the original decision, nothing
written, no event, receipts as the records stand now; and whichever reviewer commits first decides."""

from __future__ import annotations

from types import SimpleNamespace

from meta_memory.memory.records import Status
from meta_memory.review import review_quarantined

IDENTITY = "lead"


def test_releasing_again_answers_already_released_with_the_original_decision_and_writes_nothing(desk) -> None:
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    first = desk.decide(origin.id, "release", principal=SimpleNamespace(subject="alice"), rationale="checked")
    audit_before, events_before = desk.audit_count(), desk.events()
    desk.clock.advance(3_600_000)

    again = desk.decide(origin.id, "release", principal=SimpleNamespace(subject="bob"), rationale="again")

    assert again["outcome"] == "already_released"
    assert again["decision"] == first["decision"]  # same audit token, time, reviewer (alice) and rationale
    assert (again["origin"], again["successor"]) == (first["origin"], first["successor"])
    assert desk.audit_count() == audit_before
    assert desk.events() == events_before
    with desk.db() as conn:
        assert (
            conn.execute("SELECT count(*) FROM records WHERE id LIKE ?", (f"{origin.id}%",)).fetchone()[0]
            == 2
        )


def test_tombstoning_again_answers_already_tombstoned_with_the_original_decision(desk) -> None:
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    first = desk.decide(origin.id, "tombstone")
    before = desk.audit_count()
    desk.clock.advance(1_000)

    again = desk.decide(origin.id, "tombstone")

    assert (again["outcome"], again["successor"]) == ("already_tombstoned", None)
    assert again["decision"] == first["decision"]
    assert again["origin"] == first["origin"]
    assert desk.audit_count() == before
    assert len(desk.events()) == 1


def test_a_replay_shows_the_records_as_they_stand_now_so_a_forgotten_successor_stays_forgotten(desk) -> None:
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    first = desk.decide(origin.id, "release")
    successor_id = first["successor"]["memory_id"]
    assert desk.meta.forget_agent_memory(IDENTITY, successor_id).deleted
    before = desk.audit_count()

    again = desk.decide(origin.id, "release")

    assert again["outcome"] == "already_released"
    assert again["successor"]["status"] == {"status": "tombstoned"}
    assert again["successor"]["ever_quarantined"] is True
    assert again["decision"] == first["decision"]
    assert desk.record(successor_id).status is Status.TOMBSTONED  # not revived by the replay
    assert desk.audit_count() == before
    assert desk.meta.recall_agent_memory(IDENTITY, selection="always") == []


def test_a_replay_of_a_superseding_release_shows_the_successor_replaced_since(desk) -> None:
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    successor_id = desk.decide(origin.id, "release")["successor"]["memory_id"]
    later = desk.meta.update_agent_memory(IDENTITY, successor_id, title="Deploy window", body="Wednesdays.")

    again = desk.decide(origin.id, "release")

    assert again["successor"]["status"] == {"status": "superseded", "by": later.memory_id}
    assert again["successor"]["superseded_by"] == later.memory_id


def test_a_steward_decision_committed_first_is_replayed_or_refused_for_the_operator(desk) -> None:
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    steward = review_quarantined(
        desk.store,
        identity=IDENTITY,
        memory_id=origin.id,
        verdict="release",
        expected_content_hash=origin.content_hash,
        rationale="consistent with the session",
        reviewer={"kind": "steward", "run_id": "run-7"},
        operator=False,
    )
    assert steward.applied and steward.outcome == "released"
    assert {r["author"]["author"] for r in desk.store.audit_rows(origin.id)} == {"agent", "steward"}

    again = desk.decide(origin.id, "release", principal=SimpleNamespace(subject="alice"))

    assert again["outcome"] == "already_released"
    assert again["decision"]["review"]["reviewer"] == {"kind": "steward", "run_id": "run-7"}
    assert again["decision"] == steward.decision
    assert desk.refusal(origin.id, "tombstone").data["reason"] == "not_quarantined"
