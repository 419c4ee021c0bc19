"""Quarantine review in the SQLite store: one decision, one transaction (``review_quarantined``), or
one decision inside a caller's open write transaction (``review_in_txn``, the steward's dream).

Release creates the successor ``<id>-released`` (``agent_observed``, ``derived_from`` the
original, durably ``ever_quarantined``; a quarantined update is released as a supersede of
the record it updates) and tombstones the original; tombstone discards. Every applied op
writes one audit row whose ``detail.review`` holds the review; a replay is recognized only
from those rows. Pending gated promotions older than seven days are expired by the review
itself; an operator tombstone invalidates the record's pending promotions in the same
transaction. Concurrent decisions serialize on the write lock: the first commits, the
second sees the replay or a refusal.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ...errors import QuarantineReviewRefused, UnknownRecord
from ..records import Author, Record, Scope, ScopeKind, Status, Trust
from ..secrets import find_secret_in_fields
from ..validator import CreateOp, TombstoneOp, WriteBatch

if TYPE_CHECKING:
    from .store import SqliteRealmStore

__all__ = ["PROMOTION_EXPIRY_MS", "ReviewOutcome", "receipt", "review_in_txn", "review_quarantined"]

PROMOTION_EXPIRY_MS = 7 * 24 * 3600 * 1000


@dataclass(frozen=True)
class ReviewOutcome:
    outcome: str  # released | tombstoned | already_released | already_tombstoned
    origin: Record
    successor: Record | None
    decision: dict[str, Any]
    applied: bool  # False for a replay: nothing was written

    def to_wire(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "origin": receipt(self.origin),
            "successor": receipt(self.successor) if self.successor is not None else None,
            "decision": self.decision,
        }


def receipt(record: Record) -> dict[str, Any]:
    """A record as it stands now, as review results report it (no body)."""
    return {
        "memory_id": record.id,
        "status": record.status_to_wire(),
        "trust": record.trust.value,
        "ever_quarantined": record.ever_quarantined,
        "content_hash": record.content_hash,
        "supersedes": record.supersedes,
        "superseded_by": record.superseded_by,
        "derived_from": list(record.derived_from),
    }


def _refuse(reason: str, message: str, **extra: Any) -> QuarantineReviewRefused:
    return QuarantineReviewRefused(reason, message, **extra)


def _prior_review(db: sqlite3.Connection, memory_id: str) -> dict[str, Any] | None:
    # Only the review's own audit evidence counts: a plain forget or a row that merely
    # holds the successor id is not a review. The successor's own create row carries the
    # review too, so the row must name this record as the review's origin.
    row = db.execute(
        "SELECT seq, at_ms, detail FROM audit WHERE record_id = ? "
        "AND json_extract(detail, '$.review.origin') = ? ORDER BY seq DESC LIMIT 1",
        (memory_id, memory_id),
    ).fetchone()
    if row is None:
        return None
    seq, at_ms, detail = row
    return {"audit_token": f"audit-{seq}", "decided_at_ms": at_ms, "review": json.loads(detail)["review"]}


def _pending_promotions(db: sqlite3.Connection, memory_id: str) -> list[tuple[str, str, int]]:
    return db.execute(
        "SELECT pending_id, stage_token, created_at_ms FROM promotions WHERE record_id = ? AND status = 'pending' "
        "ORDER BY created_at_ms",
        (memory_id,),
    ).fetchall()


def _expire_promotion(db: sqlite3.Connection, pending_id: str, stage_token: str, now: int) -> None:
    db.execute(
        "UPDATE promotions SET status = 'expired', resolved_at_ms = ? WHERE pending_id = ?", (now, pending_id)
    )
    db.execute("DELETE FROM stage_batches WHERE stage_token = ?", (stage_token,))


def review_quarantined(
    store: SqliteRealmStore,
    *,
    identity: str,
    memory_id: str,
    verdict: str,
    expected_content_hash: str,
    rationale: str | None,
    reviewer: dict[str, Any],
    operator: bool,
) -> ReviewOutcome:
    """Decide one quarantined identity-scoped record in a transaction of its own.

    Args:
        reviewer: who decides, from the authenticated principal (never from caller params).
        operator: an operator decision (console) rather than the steward: only an operator's
            tombstone invalidates pending promotions.

    Raises:
        UnknownRecord: no such record for this identity.
        QuarantineReviewRefused: the decision is refused; ``data.reason`` says why.
    """
    with store._write() as db:
        return review_in_txn(
            store,
            db,
            identity=identity,
            memory_id=memory_id,
            verdict=verdict,
            expected_content_hash=expected_content_hash,
            rationale=rationale,
            reviewer=reviewer,
            operator=operator,
        )


def review_in_txn(
    store: SqliteRealmStore,
    db: sqlite3.Connection,
    *,
    identity: str,
    memory_id: str,
    verdict: str,
    expected_content_hash: str,
    rationale: str | None,
    reviewer: dict[str, Any],
    operator: bool,
) -> ReviewOutcome:
    """:func:`review_quarantined` inside the caller's open write transaction ``db``.

    A refusal may be raised after rows were written (an expired pending promotion), so a caller
    that keeps its transaction going after a refusal must run this under a savepoint.
    """
    now = store._clock.now_ms()
    scope = Scope(ScopeKind.IDENTITY, store.realm, identity)
    origin = store._get(memory_id)
    if origin is None or (origin.scope.kind is ScopeKind.IDENTITY and origin.scope != scope):
        raise UnknownRecord(f"unknown memory record '{memory_id}'")
    if origin.scope.kind is not ScopeKind.IDENTITY:
        raise _refuse(
            "not_quarantined",
            f"record '{memory_id}' is {origin.scope.kind.value}-scoped: its quarantine is reviewed by the "
            "steward and the gating flow",
        )
    prior = _prior_review(db, memory_id)
    if prior is not None:
        done = prior["review"]["verdict"]
        if done != verdict:
            raise _refuse("not_quarantined", f"record '{memory_id}' was already reviewed ({done})")
        successor_id = prior["review"].get("successor")
        successor = store._get(successor_id) if successor_id else None
        return ReviewOutcome(
            f"already_{'released' if done == 'release' else 'tombstoned'}",
            origin,
            successor,
            prior,
            applied=False,
        )
    if origin.status is not Status.QUARANTINED:
        raise _refuse("not_quarantined", f"record '{memory_id}' is {origin.status.value}, not quarantined")
    if expected_content_hash != origin.content_hash:
        raise _refuse(
            "content_mismatch",
            f"record '{memory_id}' content does not match expected_content_hash (it is {origin.content_hash})",
        )
    expired: list[str] = []
    invalidated: list[str] = []
    for pending_id, stage_token, created in _pending_promotions(db, memory_id):
        expires_at = created + PROMOTION_EXPIRY_MS
        if expires_at <= now:
            _expire_promotion(db, pending_id, stage_token, now)
            expired.append(pending_id)
        elif verdict == "tombstone" and operator:
            _expire_promotion(db, pending_id, stage_token, now)
            invalidated.append(pending_id)
        else:  # a release, or a steward's tombstone: only an operator's tombstone passes the gate
            raise _refuse(
                "gate_pending",
                f"record '{memory_id}' waits on gated promotion {pending_id}",
                expires_at_ms=expires_at,
                pending_id=pending_id,
            )
    review = {
        "verdict": verdict,
        "reviewer": reviewer,
        "origin": memory_id,
        "successor": None,
        "expected_content_hash": expected_content_hash,
        "quarantine_reason": origin.quarantine_reason,
        "expired_promotions": expired,
        "invalidated_promotions": invalidated,
        "rationale": rationale,
    }
    author = (
        Author("steward", run_id=reviewer.get("run_id"))
        if reviewer.get("kind") == "steward"
        else Author("operator")
    )
    if verdict == "release":
        successor, seq = _release(store, db, origin, review, author, now)
    else:
        successor = None
        batch = WriteBatch(store.realm, author, (TombstoneOp(memory_id, scope),), rationale)
        seq = store._apply(db, batch, now, review=review).audit_seq
    origin_now = store._get(memory_id)
    assert origin_now is not None
    decision = {"audit_token": f"audit-{seq}", "decided_at_ms": now, "review": review}
    return ReviewOutcome(
        "released" if verdict == "release" else "tombstoned", origin_now, successor, decision, applied=True
    )


def _release(
    store: SqliteRealmStore,
    db: sqlite3.Connection,
    origin: Record,
    review: dict[str, Any],
    author: Author,
    now: int,
) -> tuple[Record, int | None]:
    hit = find_secret_in_fields(origin.title, origin.description, origin.body, origin.tags)
    if hit is not None:
        raise _refuse(
            "secret_detected",
            f"record '{origin.id}' matches secret class '{hit[1]}' in its {hit[0]}; it can only be tombstoned",
            **{"class": hit[1]},
        )
    successor_id = f"{origin.id}-released"
    if store._get(successor_id) is not None:
        raise _refuse(
            "successor_conflict",
            f"a record '{successor_id}' already exists without this review's audit evidence",
        )
    supersedes = origin.supersedes
    if supersedes is not None:
        updated = store._get(supersedes)
        if updated is None or updated.status is not Status.ACTIVE:
            state = "missing" if updated is None else updated.status.value
            raise _refuse(
                "stale_update",
                f"record '{origin.id}' updates '{supersedes}', which is {state}; tombstone it instead",
            )
    successor = replace(
        origin,
        id=successor_id,
        trust=Trust.AGENT_OBSERVED,
        status=Status.ACTIVE,
        quarantine_reason=None,
        supersedes=supersedes,
        derived_from=(origin.id,),
        ever_quarantined=True,
        created_at_ms=now,
        updated_at_ms=now,
    )
    review["successor"] = successor_id
    batch = WriteBatch(
        store.realm,
        author,
        (CreateOp(successor), TombstoneOp(origin.id, origin.scope)),
        review.get("rationale"),
    )
    seq = store._apply(db, batch, now, review=review).audit_seq
    created = store._get(successor_id)
    assert created is not None
    return created, seq
