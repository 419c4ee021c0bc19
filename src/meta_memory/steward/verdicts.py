"""How a dream's verdicts are applied (:class:`VerdictApplier`): every store write of the dream in one
transaction (a refused verdict undone to its savepoint), each through the store's own rules, events
and gating entries only after the commit, with an :class:`~meta_memory.steward.model.ItemOutcome` for every verdict
and for every item the reviewer left without one.

Quarantine ``release`` / ``tombstone`` go through the review operation an operator's decision uses;
``hold`` changes nothing and emits nothing; ``promote_pending_gate`` stages a gated promotion. A
proposal ``accept`` commits a steward-authored record into the proposal's scope (a tainted proposal's
accept becomes a gate; an operator-scope one is held while operator scope is off). Harvest verdicts
promote (create in mob scope + tombstone the source), tombstone or keep. Contradictions naming an
entity and a topic become ledger conflict signals; usage verdicts become ``audit_verdicts`` rows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import MetaError, QuarantineReviewRefused, WriteRefused
from ..events import SYSTEM_IDENTITY
from ..ledger.model import parse_index_params
from ..memory.records import (
    Author,
    Provenance,
    Record,
    RecordKind,
    Scope,
    ScopeKind,
    Status,
    Trust,
    content_hash,
    new_memory_id,
)
from ..memory.secrets import find_secret_in_record
from ..memory.store import RealmStore, RealmTxn
from ..memory.validator import CreateOp, TombstoneOp, WriteBatch
from ..review import DecideParams, review_in_txn
from .model import (
    DreamInput,
    DreamReport,
    DreamVerdicts,
    HarvestItem,
    ItemOutcome,
    ProposalItem,
    QuarantineItem,
    QuarantineVerdict,
)
from .promotions import StagedPromotion, StageRefused

if TYPE_CHECKING:
    from .steward import Steward

__all__ = ["VerdictApplier"]


class VerdictApplier:
    """Applies one dream's verdicts, recording an :class:`ItemOutcome` for each."""

    def __init__(self, steward: Steward, store: RealmStore, dream: DreamInput, report: DreamReport) -> None:
        self.s = steward
        self.store = store
        self.dream = dream
        self.report = report
        self.realm = dream.realm
        self.author = Author("steward", run_id=dream.run_id)
        self._txn: RealmTxn | None = None
        self._after: list[Callable[[], None]] = []

    @property
    def txn(self) -> RealmTxn:
        """The dream's write transaction (open only while :meth:`run` applies the store verdicts)."""
        assert self._txn is not None, "store verdicts apply only inside the dream's transaction"
        return self._txn

    def out(self, subject: str, target: str, verdict: str, outcome: str, **extra: Any) -> None:
        self.report.outcomes.append(ItemOutcome(subject, target, verdict, outcome, **extra))

    def emit(self, event_type: str, data: dict[str, Any], identity: str = SYSTEM_IDENTITY) -> None:
        """Queue an event: it is emitted once the dream's transaction has committed."""
        payload = {"realm": self.realm, **data}

        def emit() -> None:
            self.s.events.emit(event_type, payload, identity=identity)

        self._after.append(emit)

    def run(self, verdicts: DreamVerdicts) -> None:
        """Apply every store verdict in one write transaction; after it commits, bridge
        contradictions to the ledger, then emit the queued events and open the staged promotions'
        gates, in the order the verdicts were applied.

        A refused verdict is undone to its savepoint and recorded, and the dream goes on; any other
        failure rolls the whole transaction back and propagates, so the dream's store writes land
        all together or not at all, and nothing is emitted for them.
        """
        with self.store.transaction() as txn:
            self._txn = txn
            try:
                self.escalations(verdicts)
                self.quarantine(verdicts)
                self.proposals(verdicts)
                self.harvests(verdicts)
                self.usage(verdicts)
            except BaseException:
                self._after.clear()
                raise
            finally:
                self._txn = None
        self.contradictions(verdicts)
        after, self._after = self._after, []
        for step in after:
            step()

    def _target_mob(self, explicit: str | None, identity: str | None) -> str | None:
        return explicit or self.dream.mob or (self.s.mob_of(identity) if identity else None)

    def _new_record(self, scope: Scope, source: Record | ProposalItem, **lineage: Any) -> Record:
        now = self.s.clock.now_ms()
        digest = content_hash(source.title, source.body)
        kind = source.kind if isinstance(source, Record) else RecordKind(source.kind)
        evidence = source.provenance.evidence if isinstance(source, Record) else ()
        return Record(
            id=new_memory_id(digest, now),
            scope=scope,
            kind=kind,
            title=source.title,
            description=source.description,
            body=source.body,
            tags=tuple(source.tags),
            provenance=Provenance(author=self.author, evidence=evidence),
            trust=Trust.AGENT_OBSERVED,
            status=Status.ACTIVE,
            created_at_ms=now,
            updated_at_ms=now,
            content_hash=digest,
            **lineage,
        )

    # -- quarantine ---------------------------------------------------------------------------------

    def escalations(self, verdicts: DreamVerdicts) -> None:
        known = {q.record.id: q.record for q in self.dream.quarantined}
        known.update({r.id: r for h in self.dream.harvests for r in h.records})
        done: set[str] = set()
        for e in verdicts.open_loop_escalations:
            record = known.get(e.record_id)
            if record is None or e.record_id in done:
                reason = "duplicate_verdict" if e.record_id in done else "not_in_input"
                self.out("open_loop", e.record_id, "escalate", "ignored", reason=reason)
                continue
            done.add(e.record_id)
            # The nudge names only the record: never the dream's rationale.
            self.emit(
                "memory.quarantine.verdict",
                {"record_id": record.id, "verdict": "open_loop_escalated", "successor": None},
                record.scope.key if record.scope.kind is ScopeKind.IDENTITY else SYSTEM_IDENTITY,
            )
            self.out("open_loop", record.id, "escalate", "escalated")

    def quarantine(self, verdicts: DreamVerdicts) -> None:
        items = {q.record.id: q for q in self.dream.quarantined}
        seen: set[str] = set()
        for v in verdicts.quarantine:
            item = items.get(v.record_id)
            if item is None or v.record_id in seen:
                reason = (
                    "duplicate_verdict"
                    if v.record_id in seen
                    else "gated_source"
                    if v.record_id in self.dream.gated_sources
                    else "not_in_input"
                )
                self.out("quarantine", v.record_id, v.verdict, "ignored", reason=reason)
                continue
            seen.add(v.record_id)
            if v.verdict in ("release", "tombstone"):
                self._decide(item, v)
            elif v.verdict == "promote_pending_gate":
                self._promote_record(item, v)
            else:  # hold: nothing changes and nothing is emitted
                self.out("quarantine", v.record_id, "hold", "held")
        for item in self.dream.quarantined:
            if item.record.id not in seen:
                self.out("quarantine", item.record.id, "hold", "held", reason="no_verdict")

    def _decide(self, item: QuarantineItem, v: QuarantineVerdict) -> None:
        record = item.record
        params = DecideParams(
            self.realm, record.scope.key, record.id, v.verdict, record.content_hash, v.rationale
        )
        reviewer = {"kind": "steward", "run_id": self.dream.run_id}
        try:
            with self.txn.savepoint():
                outcome = review_in_txn(
                    self.txn,
                    identity=params.identity,
                    memory_id=params.memory_id,
                    verdict=params.verdict,
                    expected_content_hash=params.expected_content_hash,
                    rationale=params.rationale,
                    reviewer=reviewer,
                    operator=False,
                )
        except QuarantineReviewRefused as exc:
            if exc.reason == "secret_detected":
                self._release_blocked(record, v.verdict, (exc.data or {}).get("class"))
            self.out("quarantine", record.id, v.verdict, "refused", reason=exc.reason)
            return
        except MetaError as exc:  # the record vanished or the validator refused the decision
            self.out("quarantine", record.id, v.verdict, "refused", reason=_reason(exc))
            return
        if outcome.applied:
            self.report.ops_committed += 2 if outcome.successor is not None else 1
            self._after.append(lambda: self.s.review.emit_verdict(params, outcome))
        successor = outcome.successor.id if outcome.successor is not None else None
        self.out("quarantine", record.id, v.verdict, outcome.outcome, record_id=successor)

    def _release_blocked(self, record: Record, verdict: str, secret_class: Any) -> None:
        self.emit(
            "memory.quarantine.release_blocked",
            {"record_id": record.id, "verdict": verdict, "class": secret_class},
            record.scope.key,
        )

    def _promote_record(self, item: QuarantineItem, v: QuarantineVerdict) -> None:
        source = item.record
        mob = self._target_mob(v.target_mob, source.scope.key)
        if mob is None:
            self.out("quarantine", source.id, v.verdict, "refused", reason="no_target_mob")
            return
        hit = find_secret_in_record(source)  # every text it carries, its provenance's too
        if hit is not None:
            self._release_blocked(source, v.verdict, hit[1])
            self.out("quarantine", source.id, v.verdict, "refused", reason="secret_detected")
            return
        created = self._new_record(
            Scope(ScopeKind.MOB, self.realm, mob), source, derived_from=(source.id,), ever_quarantined=True
        )
        batch = WriteBatch(
            self.realm, self.author, (CreateOp(created), TombstoneOp(source.id, source.scope)), v.rationale
        )
        self._stage(
            StagedPromotion(
                self.realm, source.id, source.scope.key, batch, created, v.rationale, None, self.dream.run_id
            ),
            "quarantine",
            v.verdict,
        )

    def _stage(self, staged: StagedPromotion, subject: str, verdict: str, reason: str | None = None) -> None:
        try:
            with self.txn.savepoint():
                provisional = self.s.promotions.stage_in_txn(self.txn, staged)
        except StageRefused as exc:
            self.out(subject, staged.source_id, verdict, "refused", reason=exc.reason)
            return
        except MetaError as exc:
            self.out(subject, staged.source_id, verdict, "refused", reason=_reason(exc))
            return
        index = len(self.report.outcomes)
        self.out(subject, staged.source_id, verdict, "gated", reason=reason, pending_id=provisional)

        def open_gate() -> None:  # after the commit: gating is never called inside a store transaction
            pending_id, refused = self.s.promotions.open_gate(staged, provisional)
            if pending_id is not None:
                self.report.outcomes[index] = ItemOutcome(
                    subject, staged.source_id, verdict, "gated", reason=reason, pending_id=pending_id
                )
            else:
                self.report.outcomes[index] = ItemOutcome(
                    subject, staged.source_id, verdict, "refused", reason=refused
                )

        self._after.append(open_gate)

    # -- proposals ----------------------------------------------------------------------------------

    def proposals(self, verdicts: DreamVerdicts) -> None:
        items = {p.proposal_id: p for p in self.dream.proposals}
        seen: set[str] = set()
        for v in verdicts.proposals:
            item = items.get(v.proposal_id)
            if item is None or v.proposal_id in seen:
                why = "duplicate_verdict" if v.proposal_id in seen else "not_in_input"
                self.out("proposal", v.proposal_id, v.verdict, "ignored", reason=why)
                continue
            seen.add(v.proposal_id)
            verdict: str = v.verdict
            reason: str | None = None
            if verdict == "accept" and item.tainted:
                verdict, reason = "promote_pending_gate", "tainted_accept_downgraded"
            if (
                item.scope_kind == ScopeKind.OPERATOR.value
                and not self.dream.operator_scope_active
                and verdict in ("accept", "promote_pending_gate")
            ):
                verdict, reason = "hold", "operator_scope_inactive"
            if verdict == "accept":
                self._accept(item, v.rationale)
            elif verdict == "promote_pending_gate":
                created = self._new_record(self._scope_of(item), item, ever_quarantined=item.tainted)
                batch = WriteBatch(
                    self.realm, self.author, (CreateOp(created),), _proposal_note(item, v.rationale)
                )
                staged = StagedPromotion(
                    self.realm,
                    item.proposal_id,
                    None,
                    batch,
                    created,
                    v.rationale,
                    item.proposal_id,
                    self.dream.run_id,
                )
                self._stage(staged, "proposal", v.verdict, reason)
            else:
                status = "rejected" if verdict == "reject" else "held"
                if self._set_status(item, status):
                    self.out("proposal", item.proposal_id, v.verdict, status, reason=reason)
        for item in self.dream.proposals:
            if item.proposal_id not in seen:
                self.out("proposal", item.proposal_id, "hold", "held", reason="no_verdict")

    def _scope_of(self, item: ProposalItem) -> Scope:
        return Scope(ScopeKind(item.scope_kind), self.realm, item.scope_key)

    def _set_status(self, item: ProposalItem, status: str) -> bool:
        state = self.txn.proposal(item.proposal_id)
        if state is None or state.status not in ("pending", "held"):
            self.out("proposal", item.proposal_id, status, "refused", reason="proposal_changed")
            return False
        self.txn.set_proposal_status(item.proposal_id, status, self.s.clock.now_ms())
        return True

    def _accept(self, item: ProposalItem, rationale: str | None) -> None:
        scope = self._scope_of(item)
        created = self._new_record(scope, item)
        now = self.s.clock.now_ms()
        try:
            with self.txn.savepoint():
                txn = self.txn
                state = txn.proposal(item.proposal_id)
                if state is None or state.status not in ("pending", "held"):
                    self.out("proposal", item.proposal_id, "accept", "refused", reason="proposal_changed")
                    return
                existing = txn.active_duplicate(created)
                if existing is None:
                    batch = WriteBatch(
                        self.realm, self.author, (CreateOp(created),), _proposal_note(item, rationale)
                    )
                    txn.apply(batch)
                    self.report.ops_committed += 1
                record_id = existing.id if existing is not None else created.id
                txn.set_proposal_status(item.proposal_id, "accepted", now)
        except WriteRefused as exc:
            self.out("proposal", item.proposal_id, "accept", "refused", reason=_reason(exc))
            return
        self.out("proposal", item.proposal_id, "accept", "accepted", record_id=record_id)
        self.emit(
            "memory.record.promoted",
            {
                "record_id": record_id,
                "source_record_id": None,
                "scope_kind": scope.kind.value,
                "scope_key": scope.key,
                "proposal_id": item.proposal_id,
                "gated": False,
            },
        )

    # -- harvests -----------------------------------------------------------------------------------

    def harvests(self, verdicts: DreamVerdicts) -> None:
        owner: dict[str, tuple[HarvestItem, Record]] = {
            r.id: (h, r) for h in self.dream.harvests for r in h.records
        }
        tally: dict[tuple[str, str], dict[str, int]] = {}
        judged: set[tuple[str, str]] = set()
        seen: set[str] = set()
        for v in verdicts.harvests:
            found = owner.get(v.record_id)
            if found is None or v.record_id in seen:
                reason = "duplicate_verdict" if v.record_id in seen else "not_in_input"
                self.out("harvest", v.record_id, v.verdict, "ignored", reason=reason)
                continue
            seen.add(v.record_id)
            harvest, record = found
            key = (harvest.identity, harvest.session_key)
            judged.add(key)
            outcome = self._harvest_one(harvest, record, v.verdict, v.rationale, v.target_mob)
            if outcome != "refused":
                counts = tally.setdefault(key, {"promoted": 0, "tombstoned": 0, "kept": 0})
                counts[outcome] += 1
        for harvest in self.dream.harvests:
            key = (harvest.identity, harvest.session_key)
            if key not in tally and harvest.records:
                # Nothing applied: the harvest waits for a dream whose verdicts do.
                reason = "no_verdict_applied" if key in judged else "no_verdict"
                self.out(
                    "harvest", f"{harvest.identity}/{harvest.session_key}", "keep", "pending", reason=reason
                )
                continue
            counts = tally.get(key, {"promoted": 0, "tombstoned": 0, "kept": 0})
            self.txn.complete_harvest(harvest.identity, harvest.session_key)
            self.emit(
                "memory.harvest.completed",
                {"identity": harvest.identity, "session_key": harvest.session_key, **counts},
                harvest.identity,
            )

    def _harvest_one(
        self,
        harvest: HarvestItem,
        record: Record,
        verdict: str,
        rationale: str | None,
        target_mob: str | None,
    ) -> str:
        if verdict == "keep":
            self.out("harvest", record.id, verdict, "kept")
            return "kept"
        ops: tuple[CreateOp | TombstoneOp, ...] = (TombstoneOp(record.id, record.scope),)
        mob_scope: Scope | None = None
        if verdict == "promote":
            mob = self._target_mob(target_mob, harvest.identity)
            if mob is None:
                self.out("harvest", record.id, verdict, "refused", reason="no_target_mob")
                return "refused"
            mob_scope = Scope(ScopeKind.MOB, self.realm, mob)
            created = self._new_record(
                mob_scope, record, derived_from=(record.id,), ever_quarantined=record.ever_quarantined
            )
            ops = (CreateOp(created), *ops)
        try:
            current = self.txn.get(record.id)
            if current is None or current.status is not Status.ACTIVE:
                self.out("harvest", record.id, verdict, "refused", reason="not_active")
                return "refused"
            with self.txn.savepoint():
                self.txn.apply(WriteBatch(self.realm, self.author, ops, rationale))
        except WriteRefused as exc:
            self.out("harvest", record.id, verdict, "refused", reason=_reason(exc))
            return "refused"
        self.report.ops_committed += len(ops)
        if mob_scope is None:
            self.out("harvest", record.id, verdict, "tombstoned")
            return "tombstoned"
        new_id = ops[0].record.id if isinstance(ops[0], CreateOp) else None
        self.out("harvest", record.id, verdict, "promoted", record_id=new_id)
        self.emit(
            "memory.record.promoted",
            {
                "record_id": new_id,
                "source_record_id": record.id,
                "scope_kind": mob_scope.kind.value,
                "scope_key": mob_scope.key,
                "proposal_id": None,
                "gated": False,
            },
            harvest.identity,
        )
        return "promoted"

    # -- contradictions and usage ------------------------------------------------------------------

    def contradictions(self, verdicts: DreamVerdicts) -> None:
        for c in verdicts.contradictions:
            target = f"{c.entity or ''}/{c.topic or ''}"
            if not c.entity or not c.topic:
                self.out("contradiction", target, "signal", "ignored", reason="missing_entity_or_topic")
                continue
            records = ", ".join(c.record_ids) or "none"
            reason = f"memory steward dream {self.dream.run_id}: {c.reason} (records: {records})"
            try:
                params = {"entity": c.entity, "topic": c.topic, "conflict": True, "conflict_reason": reason}
                result = self.s.ledger.index(parse_index_params(params))
            except MetaError as exc:
                self.out("contradiction", target, "signal", "refused", reason=_reason(exc))
                continue
            self.emit(
                "memory.conflict.signal", {"entity": result.entity, "topic": result.topic, "reason": reason}
            )
            self.out("contradiction", f"{result.entity}/{result.topic}", "signal", "bridged")

    def usage(self, verdicts: DreamVerdicts) -> None:
        sample = {r.id for r in self.dream.usage_sample}
        kept: dict[str, tuple[str, str, str | None]] = {}
        for u in verdicts.usage:
            if u.record_id in sample and u.verdict != "unknown" and u.record_id not in kept:
                kept[u.record_id] = (u.record_id, u.verdict, u.rationale)
        if kept:
            self.txn.add_audit_verdicts(self.dream.run_id, list(kept.values()), self.s.clock.now_ms())
        self.report.audit_verdicts = len(kept)


def _proposal_note(item: ProposalItem, rationale: str | None) -> str:
    return f"proposal {item.proposal_id}" + (f": {rationale}" if rationale else "")


def _reason(exc: MetaError) -> str:
    """A refusal's reason for the report: the validator rule, the review reason, or the error kind."""
    if isinstance(exc, WriteRefused):
        return f"write_refused:{exc.rule}"
    reason = (exc.data or {}).get("reason")
    return str(reason) if reason else type(exc).__name__
