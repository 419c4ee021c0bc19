"""Gated promotions (REFERENCE 5.3): a staged batch, an r3 gating entry and a mapping row, and the
``pending → committed | denied | expired`` lifecycle driven by gating resolution notices.

Staging validates the batch with the store validator and writes the staged batch and the mapping row
(under a provisional pending id) inside the dream's transaction; after it commits, the gating entry
is opened and the row re-keyed to its pending id (a row whose gate could not be opened is expired; one
a crash left provisional is reached by no notice and expires with the 7-day backstop). A notice is applied in one transaction too:
an approval re-validates and commits the staged batch (``memory.record.promoted`` with
``gated: true``), a rejection denies it (a proposal-sourced one rejects the proposal), a timeout
expires it, an escalation keeps it pending under the successor id. A promotion that is no longer
pending (an operator tombstone invalidated it, the 7-day backstop expired it) commits nothing, and a
batch the validator now refuses, or a source that left quarantine, expires it. Lock order: this
object's lock, then a store's write lock; gating is never called inside a store transaction.
"""

from __future__ import annotations

import logging
import secrets
import threading
from dataclasses import dataclass, replace
from typing import Any

from ..clock import Clock
from ..errors import MetaError, WriteRefused
from ..events import SYSTEM_IDENTITY, EventSink
from ..gating import Gating, Resolution
from ..memory.records import Record, Status
from ..memory.rows import PromotionRow
from ..memory.service import AgentMemory
from ..memory.store import RealmStore, RealmTxn
from ..memory.validator import CreateOp, WriteBatch
from ..review import PROMOTION_EXPIRY_MS
from .staging import batch_from_json, batch_to_json

__all__ = [
    "PROMOTE_PROPOSAL_ACTION",
    "PROMOTE_QUARANTINE_ACTION",
    "Promotions",
    "StageRefused",
    "StagedPromotion",
]

log = logging.getLogger("meta_memory.steward")

PROMOTE_QUARANTINE_ACTION = "memory.quarantine_promote"
PROMOTE_PROPOSAL_ACTION = "memory.proposal_promote"
PROVISIONAL_PREFIX = "staged-"


class StageRefused(Exception):
    """A promotion could not be staged; ``reason`` is the report's reason (``gate_pending``,
    ``write_refused:<rule>``). Internal to the steward: a dream records it, never raises it."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(detail or reason)
        self.reason = reason


@dataclass(frozen=True)
class StagedPromotion:
    """What a dream stages: ``source_id`` is a quarantined record id or a proposal id."""

    realm: str
    source_id: str
    identity: str | None  # the source's identity, for events (None: a proposal)
    batch: WriteBatch
    record: Record  # the record the batch creates in the target scope
    rationale: str | None
    proposal_id: str | None
    run_id: str
    # Who asked for the gate: the steward's run (None), or the console reviewer whose accept of a
    # tainted proposal it stands for; the gating entry's actor, who may not approve it.
    requested_by: str | None = None


class Promotions:
    """Stage gated promotions and apply gating's resolution notices to them."""

    def __init__(
        self,
        memory: AgentMemory,
        events: EventSink,
        clock: Clock,
        *,
        gate_timeout_ms: int = PROMOTION_EXPIRY_MS,
    ) -> None:
        self._memory = memory
        self._events = events
        self._clock = clock
        self._gate_timeout_ms = gate_timeout_ms
        self._gating: Gating | None = None
        # Gating ids are unique per owner epoch, so entries opened by this process are all it can
        # be told about; promotions staged before a restart wait for the 7-day backstop.
        self._realm_of: dict[str, str] = {}
        self._lock = threading.RLock()

    def attach(self, gating: Gating) -> None:
        self._gating = gating

    @property
    def gating(self) -> Gating:
        if self._gating is None:
            raise RuntimeError("promotions need a gating engine (attach() it first)")
        return self._gating

    # -- staging ------------------------------------------------------------------------------------

    def stage(self, staged: StagedPromotion) -> str:
        """Stage one promotion on its own: :meth:`stage_in_txn` in a transaction, then
        :meth:`open_gate`. Returns its pending id.

        Raises:
            StageRefused: the source already waits on a gate, the validator refuses the batch, or
                the gate could not be opened.
        """
        store = self._memory.store(staged.realm)
        with store.transaction() as txn:
            provisional = self.stage_in_txn(txn, staged)
        pending_id, reason = self.open_gate(staged, provisional)
        if pending_id is None:
            raise StageRefused(reason or "gate_not_opened")
        return pending_id

    def stage_in_txn(self, txn: RealmTxn, staged: StagedPromotion) -> str:
        """Validate and write a promotion's staged batch and mapping row inside the caller's open
        write transaction ``txn``. The mapping row is keyed by a provisional pending id until
        :meth:`open_gate` (called after the transaction commits) opens its gating entry; it already
        marks the source as waiting on a gate. Returns the provisional id.

        Raises:
            StageRefused: the source already waits on a gate, or the validator refuses the batch
                (nothing is written then).
        """
        now = self._clock.now_ms()
        if txn.pending_promotions_of(staged.source_id):
            raise StageRefused("gate_pending", f"{staged.source_id} already waits on a gate")
        try:
            txn.validate(staged.batch)
        except WriteRefused as exc:
            raise StageRefused(f"write_refused:{exc.rule}", exc.message) from None
        target = staged.record.scope
        mapping = PromotionRow(
            pending_id=f"{PROVISIONAL_PREFIX}{secrets.token_hex(12)}",
            stage_token=f"stage-{secrets.token_hex(16)}",
            record_id=staged.source_id,
            scope_kind=target.kind.value,
            scope_key=target.key,
            rationale=staged.rationale,
            status="pending",
            proposal_id=staged.proposal_id,
            created_at_ms=now,
            resolved_at_ms=None,
        )
        payload = {
            "batch": batch_to_json(staged.batch),
            "new_record_id": staged.record.id,
            "identity": staged.identity,
        }
        txn.insert_promotion(mapping, payload)
        return mapping.pending_id

    def open_gate(self, staged: StagedPromotion, provisional: str) -> tuple[str | None, str | None]:
        """Open the gating entry of a promotion :meth:`stage_in_txn` wrote (after its transaction
        committed), re-key the mapping row to the entry's pending id and emit
        ``memory.promotion.pending_gate``. Returns ``(pending_id, None)``, or ``(None, reason)``
        when no gate could be opened (the mapping row, if still pending, is expired then).

        Gating is called outside any store transaction; a crash between the commit and the re-key
        leaves a provisional row that no notice can reach, which the 7-day backstop expires like
        any promotion staged before a restart.
        """
        store = self._memory.store(staged.realm)
        target = staged.record.scope
        with self._lock:
            action = PROMOTE_PROPOSAL_ACTION if staged.proposal_id else PROMOTE_QUARANTINE_ACTION
            origin = f"proposal {staged.proposal_id}" if staged.proposal_id else f"record {staged.source_id}"
            owner = f" of identity {staged.identity}" if staged.identity else ""
            actor = staged.requested_by or f"memory-steward:{staged.run_id}"
            asked = f"accepted by {staged.requested_by}" if staged.requested_by else f"dream {staged.run_id}"
            try:
                entry = self.gating.create_pending(
                    action,
                    actor,
                    target.key,
                    staged.source_id,
                    f"{action}: {origin}{owner} into {target.kind.value} scope '{target.key}' "
                    f"(realm {staged.realm}, {asked})",
                    timeout_ms=self._gate_timeout_ms,
                )
            except Exception as exc:
                if not isinstance(exc, MetaError):
                    log.exception("gating entry for promotion of %s failed", staged.source_id)
                self._expire_provisional(store, provisional)
                reason = (exc.data or {}).get("reason") if isinstance(exc, MetaError) else None
                return None, str(reason) if reason else f"gate_failed:{type(exc).__name__}"
            with store.transaction() as txn:
                rekeyed = txn.rekey_promotion(provisional, entry.pending_id)
            if not rekeyed:
                # Invalidated meanwhile (an operator tombstone): our gating entry resolves to nothing.
                return None, "promotion_invalidated"
            self._realm_of[entry.pending_id] = staged.realm
        self._events.emit(
            "memory.promotion.pending_gate",
            {
                "realm": staged.realm,
                "pending_id": entry.pending_id,
                "record_id": staged.source_id,
                "scope_kind": target.kind.value,
                "scope_key": target.key,
            },
            identity=staged.identity or SYSTEM_IDENTITY,
        )
        return entry.pending_id, None

    def _expire_provisional(self, store: RealmStore, provisional: str) -> None:
        with store.transaction() as txn:
            row = txn.promotion(provisional)
            if row is not None and row.status == "pending":
                txn.resolve_promotion(row, "expired", self._clock.now_ms())

    # -- lifecycle ----------------------------------------------------------------------------------

    def on_resolution(self, notice: Resolution) -> None:
        """Gating's resolution callback (wired in the runtime)."""
        promoted: dict[str, Any] | None = None
        identity = SYSTEM_IDENTITY
        with self._lock:
            realm = self._realm_of.pop(notice.pending_id, None)
            if realm is None:
                return
            store = self._memory.store(realm)
            now = self._clock.now_ms()
            if notice.cause == "escalated" and notice.next_pending_id is not None:
                with store.transaction() as txn:
                    if txn.rekey_promotion(notice.pending_id, notice.next_pending_id):
                        self._realm_of[notice.next_pending_id] = realm
                return
            if notice.approved:
                promoted, identity = self._commit(store, notice.pending_id, now)
            else:
                status = "denied" if notice.cause == "rejected" else "expired"
                with store.transaction() as txn:
                    row = txn.promotion(notice.pending_id)
                    if row is None or row.status != "pending":
                        return  # invalidated or expired already: a late notice changes nothing
                    txn.resolve_promotion(row, status, now)
                    if row.proposal_id is not None and status == "denied":
                        txn.set_proposal_status(row.proposal_id, "rejected", now)
        if promoted is not None:
            self._events.emit("memory.record.promoted", promoted, identity=identity)

    def _commit(self, store: RealmStore, pending_id: str, now: int) -> tuple[dict[str, Any] | None, str]:
        try:
            with store.transaction() as txn:
                row = txn.promotion(pending_id)
                if row is None or row.status != "pending":
                    return None, SYSTEM_IDENTITY
                staged = txn.staged_batch(row.stage_token)
                batch = _restamped(batch_from_json(staged["batch"]), now) if staged else None
                if batch is None or not self._source_still_waits(txn, row):
                    txn.resolve_promotion(row, "expired", now)
                    return None, SYSTEM_IDENTITY
                try:
                    txn.apply(batch)
                except WriteRefused as exc:  # validated before anything is written: expire instead
                    log.warning("gated promotion %s no longer validates (%s): expired", pending_id, exc.rule)
                    txn.resolve_promotion(row, "expired", now)
                    return None, SYSTEM_IDENTITY
                txn.resolve_promotion(row, "committed", now)
                if row.proposal_id is not None:
                    txn.set_proposal_status(row.proposal_id, "accepted", now)
        except Exception:
            log.exception("gated promotion %s failed to commit: expired", pending_id)
            with store.transaction() as txn:
                row = txn.promotion(pending_id)
                if row is not None and row.status == "pending":
                    txn.resolve_promotion(row, "expired", now)
            return None, SYSTEM_IDENTITY
        assert staged is not None
        event = {
            "realm": store.realm,
            "record_id": staged["new_record_id"],
            "source_record_id": None if row.proposal_id is not None else row.record_id,
            "scope_kind": row.scope_kind,
            "scope_key": row.scope_key,
            "proposal_id": row.proposal_id,
            "gated": True,
        }
        return event, staged.get("identity") or SYSTEM_IDENTITY

    @staticmethod
    def _source_still_waits(txn: RealmTxn, row: PromotionRow) -> bool:
        """A record-sourced promotion publishes only while its source is still quarantined."""
        if row.proposal_id is not None:
            return True
        source = txn.get(row.record_id)
        return source is not None and source.status is Status.QUARANTINED

    def expire_overdue(self, store: RealmStore) -> list[str]:
        """The 7-day backstop: expire pending promotions staged a week ago or earlier, and drop
        staged batches no pending promotion references after 24 h. Returns the expired pending ids."""
        with self._lock:
            now = self._clock.now_ms()
            with store.transaction() as txn:
                overdue = txn.overdue_promotions(now - PROMOTION_EXPIRY_MS)
                for row in overdue:
                    txn.resolve_promotion(row, "expired", now)
                txn.collect_stale_stages(now)
            for row in overdue:
                self._realm_of.pop(row.pending_id, None)
        return [row.pending_id for row in overdue]


def _restamped(batch: WriteBatch, now: int) -> WriteBatch:
    """The staged creates, dated when they are committed rather than when they were staged."""
    ops = tuple(
        CreateOp(replace(op.record, created_at_ms=now, updated_at_ms=now)) if isinstance(op, CreateOp) else op
        for op in batch.ops
    )
    return replace(batch, ops=ops)
