"""Gated promotions and review: ``gate_pending`` until the gate decides or the seven days pass, the review
expiring an overdue promotion itself, and an operator tombstone invalidating pending promotions in the
same transaction. Mapping rows and staged batches are written with sqlite3 (the storage contract)."""

from __future__ import annotations

import pytest

from meta_memory.memory.records import Author, Status
from meta_memory.memory.validator import TombstoneOp, WriteBatch
from meta_memory.review import PROMOTION_EXPIRY_MS, review_quarantined

SEVEN_DAYS_MS = 7 * 24 * 3600 * 1000


def test_gated_promotions_expire_after_seven_days() -> None:
    assert PROMOTION_EXPIRY_MS == SEVEN_DAYS_MS


def test_a_record_a_pending_promotion_waits_on_cannot_be_released_and_the_refusal_says_until_when(
    desk,
) -> None:
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    created = desk.clock.now_ms()
    token = desk.add_promotion(origin.id, pending_id="pend-1", created_at_ms=created)
    desk.clock.advance(SEVEN_DAYS_MS - 1)
    before = desk.audit_count()

    error = desk.refusal(origin.id, "release")

    assert (error.code, error.data["kind"], error.data["reason"]) == (
        -32043,
        "memory_quarantine_review_refused",
        "gate_pending",
    )
    assert error.data["expires_at_ms"] == created + SEVEN_DAYS_MS
    assert token not in error.message and token not in str(error.data)  # stage tokens are never exposed
    assert desk.promotion("pend-1") == ("pending", None)
    assert desk.staged(token)
    assert desk.record(origin.id).status is Status.QUARANTINED
    assert desk.audit_count() == before
    assert desk.events() == []


def test_a_review_after_seven_days_expires_the_promotion_itself_and_the_release_proceeds(desk) -> None:
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    token = desk.add_promotion(origin.id, pending_id="pend-1", created_at_ms=desk.clock.now_ms())
    other = desk.add_promotion("mem-elsewhere", pending_id="pend-2", created_at_ms=desk.clock.now_ms())
    desk.clock.advance(SEVEN_DAYS_MS)

    answer = desk.decide(origin.id, "release")

    assert answer["outcome"] == "released"
    review = answer["decision"]["review"]
    assert (review["expired_promotions"], review["invalidated_promotions"]) == (["pend-1"], [])
    assert desk.promotion("pend-1") == ("expired", desk.clock.now_ms())
    assert not desk.staged(token)
    assert desk.promotion("pend-2") == ("pending", None)  # another record's promotion is not touched
    assert desk.staged(other)
    assert desk.record(f"{origin.id}-released").status is Status.ACTIVE


def test_an_operator_tombstone_invalidates_pending_promotions_in_the_same_transaction(desk) -> None:
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    fresh = desk.add_promotion(origin.id, pending_id="pend-fresh", created_at_ms=desk.clock.now_ms())
    desk.clock.advance(60_000)

    answer = desk.decide(origin.id, "tombstone")

    review = answer["decision"]["review"]
    assert (review["invalidated_promotions"], review["expired_promotions"]) == (["pend-fresh"], [])
    assert desk.promotion("pend-fresh") == ("expired", desk.clock.now_ms())
    assert not desk.staged(fresh)
    assert desk.record(origin.id).status is Status.TOMBSTONED
    [row] = [r for r in desk.store.audit_rows(origin.id) if "review" in r["detail"]]
    assert row["detail"]["review"]["invalidated_promotions"] == ["pend-fresh"]


def test_an_operator_tombstone_lists_an_overdue_promotion_as_expired_not_invalidated(desk) -> None:
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    overdue = desk.add_promotion(origin.id, pending_id="pend-old", created_at_ms=desk.clock.now_ms())
    desk.clock.advance(SEVEN_DAYS_MS + 1)

    review = desk.decide(origin.id, "tombstone")["decision"]["review"]

    assert (review["expired_promotions"], review["invalidated_promotions"]) == (["pend-old"], [])
    assert desk.promotion("pend-old")[0] == "expired"
    assert not desk.staged(overdue)


@pytest.mark.parametrize("status", ["committed", "denied", "expired"])
def test_a_promotion_that_is_no_longer_pending_does_not_block_a_release_and_is_left_as_it_is(
    desk, status
) -> None:
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    token = desk.add_promotion(
        origin.id, pending_id="pend-1", created_at_ms=desk.clock.now_ms(), status=status
    )

    review = desk.decide(origin.id, "release")["decision"]["review"]

    assert (review["expired_promotions"], review["invalidated_promotions"]) == ([], [])
    assert desk.promotion("pend-1") == (status, None)
    assert desk.staged(token)


def test_a_refused_release_leaves_an_overdue_promotion_pending_and_its_batch_staged(desk) -> None:
    origin = desk.quarantine("Deploy key", "Deploys use a key.")
    digest = desk.rewrite(origin.id, body="Deploys use key AKIAABCDEFGHIJKLMNOP.")
    token = desk.add_promotion(origin.id, pending_id="pend-1", created_at_ms=desk.clock.now_ms())
    desk.clock.advance(SEVEN_DAYS_MS + 1)

    assert desk.refusal(origin.id, "release", expected=digest).data["reason"] == "secret_detected"

    assert desk.promotion("pend-1") == ("pending", None)  # one transaction: nothing of it stays
    assert desk.staged(token)


def test_an_approved_promotion_stands_and_the_operator_tombstone_is_refused(desk) -> None:
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    token = desk.add_promotion(origin.id, pending_id="pend-1", created_at_ms=desk.clock.now_ms())
    # The gate approved it: its staged batch committed (the source is tombstoned) and the mapping says so.
    steward = Author("steward", run_id="run-1")
    desk.store.commit(WriteBatch("default", steward, (TombstoneOp(origin.id, origin.scope),)))
    with desk.db() as conn:
        conn.execute(
            "UPDATE promotions SET status = 'committed', resolved_at_ms = ? WHERE pending_id = 'pend-1'",
            (desk.clock.now_ms(),),
        )

    error = desk.refusal(origin.id, "tombstone")

    assert error.data["reason"] == "not_quarantined"
    assert desk.promotion("pend-1") == ("committed", desk.clock.now_ms())
    assert desk.staged(token)


def test_only_an_operator_tombstone_passes_a_pending_gate_a_steward_tombstone_waits(desk) -> None:
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    token = desk.add_promotion(origin.id, pending_id="pend-1", created_at_ms=desk.clock.now_ms())

    with pytest.raises(Exception) as refused:
        review_quarantined(
            desk.store,
            identity="lead",
            memory_id=origin.id,
            verdict="tombstone",
            expected_content_hash=origin.content_hash,
            rationale=None,
            reviewer={"kind": "steward", "run_id": "run-1"},
            operator=False,
        )

    assert getattr(refused.value, "reason", None) == "gate_pending"
    assert desk.promotion("pend-1") == ("pending", None)
    assert desk.staged(token)
    assert desk.record(origin.id).status is Status.QUARANTINED
