"""The quarantine review rules (REFERENCE 5.1), on any realm store's unit of work.

One decision is one transaction: :func:`review_quarantined` opens it, :func:`review_in_txn` runs
the decision inside a caller's open transaction (the steward's dream, which decides many). Release
creates the successor ``<id>-released`` (``agent_observed``, ``derived_from`` the original,
durably ``ever_quarantined``; a quarantined update is released as a supersede of the record it
updates) and tombstones the original; tombstone discards. Both go through the store's one
validator, and every applied op writes one audit row whose ``detail.review`` holds the review; a
replay is recognized only from those rows. Pending gated promotions older than seven days are
expired by the review itself; an operator tombstone invalidates the record's pending promotions
in the same transaction. Concurrent decisions serialize on the store's write transaction: the
first commits, the second sees the replay or a refusal.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..errors import QuarantineReviewRefused, UnknownRecord
from ..memory.records import Author, Record, Scope, ScopeKind, Status, Trust, released_id
from ..memory.secrets import find_secret_in_record
from ..memory.store import RealmStore, RealmTxn
from ..memory.validator import CreateOp, TombstoneOp, WriteBatch

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


def review_quarantined(
    store: RealmStore,
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
    with store.transaction() as txn:
        return review_in_txn(
            txn,
            identity=identity,
            memory_id=memory_id,
            verdict=verdict,
            expected_content_hash=expected_content_hash,
            rationale=rationale,
            reviewer=reviewer,
            operator=operator,
        )


def review_in_txn(
    txn: RealmTxn,
    *,
    identity: str,
    memory_id: str,
    verdict: str,
    expected_content_hash: str,
    rationale: str | None,
    reviewer: dict[str, Any],
    operator: bool,
) -> ReviewOutcome:
    """:func:`review_quarantined` inside the caller's open transaction ``txn``.

    A refusal may be raised after rows were written (an expired pending promotion), so a caller
    that keeps its transaction going after a refusal must run this under a savepoint.
    """
    now = txn.now_ms()
    scope = Scope(ScopeKind.IDENTITY, txn.realm, identity)
    origin = txn.get(memory_id)
    if origin is None or (origin.scope.kind is ScopeKind.IDENTITY and origin.scope != scope):
        raise UnknownRecord(f"unknown memory record '{memory_id}'")
    if origin.scope.kind is not ScopeKind.IDENTITY:
        raise _refuse(
            "not_quarantined",
            f"record '{memory_id}' is {origin.scope.kind.value}-scoped: its quarantine is reviewed by the "
            "steward and the gating flow",
        )
    prior = txn.prior_review(memory_id)
    if prior is not None:
        done = prior["review"]["verdict"]
        if done != verdict:
            raise _refuse("not_quarantined", f"record '{memory_id}' was already reviewed ({done})")
        successor_id = prior["review"].get("successor")
        successor = txn.get(successor_id) if successor_id else None
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
        # The correct hash is not told: a reviewer reads it with the record, from the panel its
        # access rules let it read, so a refusal cannot stand in for reading what is released.
        raise _refuse(
            "content_mismatch",
            f"record '{memory_id}' content does not match expected_content_hash: read the record again "
            "and decide on what it holds now",
        )
    expired: list[str] = []
    invalidated: list[str] = []
    for promotion in txn.pending_promotions_of(memory_id):
        expires_at = promotion.created_at_ms + PROMOTION_EXPIRY_MS
        if expires_at <= now:
            txn.resolve_promotion(promotion, "expired", now)
            expired.append(promotion.pending_id)
        elif verdict == "tombstone" and operator:
            txn.resolve_promotion(promotion, "expired", now)
            invalidated.append(promotion.pending_id)
        else:  # a release, or a steward's tombstone: only an operator's tombstone passes the gate
            raise _refuse(
                "gate_pending",
                f"record '{memory_id}' waits on gated promotion {promotion.pending_id}",
                expires_at_ms=expires_at,
                pending_id=promotion.pending_id,
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
        successor, seq = _release(txn, origin, review, author)
    else:
        successor = None
        batch = WriteBatch(txn.realm, author, (TombstoneOp(memory_id, scope),), rationale)
        seq = txn.apply(batch, review=review).audit_seq
    origin_now = txn.get(memory_id)
    assert origin_now is not None
    # The decision is read back from its audit row, as a replay reads it: the row's own time
    # (the store stamps it from the clock after ``now``) and the review as stored, so the first
    # answer and every replay are the same bytes.
    decision = txn.prior_review(memory_id)
    assert decision is not None and decision["audit_token"] == f"audit-{seq}", (decision, seq)
    return ReviewOutcome(
        "released" if verdict == "release" else "tombstoned", origin_now, successor, decision, applied=True
    )


def _release(
    txn: RealmTxn, origin: Record, review: dict[str, Any], author: Author
) -> tuple[Record, int | None]:
    now = txn.now_ms()
    hit = find_secret_in_record(origin)  # every text it carries, its provenance's too
    if hit is not None:
        raise _refuse(
            "secret_detected",
            f"record '{origin.id}' matches secret class '{hit[1]}' in its {hit[0]}; it can only be tombstoned",
            **{"class": hit[1]},
        )
    successor_id = released_id(origin.id)
    if txn.get(successor_id) is not None:
        raise _refuse(
            "successor_conflict",
            f"a record '{successor_id}' already exists without this review's audit evidence",
        )
    supersedes = origin.supersedes
    if supersedes is not None:
        updated = txn.get(supersedes)
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
        txn.realm,
        author,
        (CreateOp(successor), TombstoneOp(origin.id, origin.scope)),
        review.get("rationale"),
    )
    seq = txn.apply(batch, review=review).audit_seq
    created = txn.get(successor_id)
    assert created is not None
    return created, seq
