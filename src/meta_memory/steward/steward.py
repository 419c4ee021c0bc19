"""The memory steward's dream (REFERENCE 5.2): one run over one realm (or one mob of it) that shows
the review queue to a :class:`~meta_memory.steward.reviewer.Reviewer` and applies its verdicts.

A run is a ``dream_runs`` row and ``memory.dream.started`` / ``.completed`` events (or one
``memory.dream.skipped`` when nothing waits or a run of the partition is already going). The
verdicts' store writes commit in one transaction of the realm file, each through the store's own
rules (a refused verdict is undone to its savepoint and reported; any other failure rolls the whole
dream back): quarantine ``release`` and ``tombstone`` through the same review operation an
operator's decision uses (reviewer ``{"kind": "steward", "run_id": …}``; whoever commits first
decides, the other gets the replay or a refusal, which the report records), ``promote_pending_gate``
through a staged gated promotion, proposal and harvest writes through the store validator with the
steward as author. Events are emitted, and gating entries opened, only after that commit. Contradictions naming an
entity and a topic become ledger conflict signals. Nothing a reviewer says is raised to the caller:
every refusal lands in the :class:`~meta_memory.steward.model.DreamReport`.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Sequence

from ..access import Roster
from ..clock import Clock
from ..config import StewardConfig
from ..errors import MetaError
from ..events import EventSink
from ..gating import Gating, Resolution
from ..ledger.ledger import Ledger
from ..memory.rows import QueueLimits
from ..memory.service import AgentMemory
from ..memory.store import RealmStore
from ..review import PROMOTION_EXPIRY_MS, QuarantineReview
from .audit_verdicts import AuditVerdicts
from .model import (
    HARVEST_RECORDS_MAX,
    HARVESTS_MAX,
    PROPOSALS_MAX,
    QUARANTINE_MAX,
    USAGE_SAMPLE_MAX,
    DreamInput,
    DreamReport,
    DreamVerdicts,
    QuarantineItem,
)
from .promotions import Promotions
from .reviewer import DeterministicReviewer, Reviewer
from .verdicts import VerdictApplier

__all__ = ["NO_MOB_PARTITION", "Steward"]

log = logging.getLogger("meta_memory.steward")

_LIMITS = QueueLimits(QUARANTINE_MAX, PROPOSALS_MAX, HARVESTS_MAX, HARVEST_RECORDS_MAX, USAGE_SAMPLE_MAX)

NO_MOB_PARTITION = "(no mob)"
"""The per-mob partition of everything no mob claims: the quarantine and harvests of identities
the roster puts in no mob, and proposals outside mob scope (operator scope)."""


class Steward:
    """Dreams over realm stores and owns the gated promotions they stage.

    Args:
        memory: the agent-memory subsystem whose realm stores are reviewed.
        ledger: where contradictions are bridged as conflict signals.
        events: the timeline sink.
        clock: the time source for runs, stamps and the promotion backstop.
        config: ``[agent_memory.steward]``.
        reviewer: who judges (default :class:`DeterministicReviewer`).
        roster: who is in which mob: an identity's mob is its promotions' default target and decides
            its membership of a mob partition.
        mobs: the mobs per-mob dreams partition a realm into (the config roster's).
        operator_scope_active: whether operator-scope proposals may be committed.
        gate_timeout_ms: the approval deadline of a promotion's gating entry (default: the 7-day
            backstop, the longest gating allows).
    """

    def __init__(
        self,
        memory: AgentMemory,
        *,
        ledger: Ledger,
        events: EventSink,
        clock: Clock,
        config: StewardConfig,
        reviewer: Reviewer | None = None,
        roster: Roster | None = None,
        mobs: Sequence[str] = (),
        operator_scope_active: bool = False,
        gate_timeout_ms: int = PROMOTION_EXPIRY_MS,
    ) -> None:
        self.memory = memory
        self.config = config
        self.reviewer: Reviewer = reviewer or DeterministicReviewer()
        self.promotions = Promotions(memory, events, clock, gate_timeout_ms=gate_timeout_ms)
        self.ledger = ledger
        self.events = events
        self.clock = clock
        self.review = QuarantineReview(memory, events)
        self.audit_verdicts = AuditVerdicts(memory)
        self._roster = roster
        self._mobs = sorted(set(mobs))
        self._operator_scope_active = operator_scope_active
        self._gating: Gating | None = None
        self._running: set[tuple[str, str]] = set()
        self._running_lock = threading.Lock()

    def attach(self, gating: Gating) -> None:
        """Wire the gating engine promotions open entries in (its ``on_resolution`` must call
        :meth:`on_resolution`)."""
        self._gating = gating
        self.promotions.attach(gating)

    def on_resolution(self, notice: Resolution) -> None:
        self.promotions.on_resolution(notice)

    def mobs(self) -> list[str]:
        """The mobs per-mob dreams partition into, sorted."""
        return list(self._mobs)

    def mob_of(self, identity: str) -> str | None:
        attrs = self._roster.attributes(identity) if self._roster is not None else None
        return attrs.mob if attrs is not None else None

    @staticmethod
    def partition_of(realm: str, mob: str | None, *, unaffiliated: bool = False) -> str:
        """A run's partition: the realm, ``mob:<key>`` for a per-mob run, or
        :data:`NO_MOB_PARTITION` for the run over what no mob claims."""
        if unaffiliated:
            return NO_MOB_PARTITION
        return realm if mob is None else f"mob:{mob}"

    def mob_partitions(self, realm: str) -> list[str]:
        """Every mob a per-mob schedule dreams over in ``realm``, sorted: the config roster's, the
        roster's mob of each identity the realm holds, and every mob the realm names (a proposal
        to a mob nobody is in still gets its own partition, so it is never left waiting)."""
        store = self.memory.store(realm)
        named = {key for kind, key in store.realm_scopes() if kind == "mob"}
        held = {self.mob_of(identity) for identity in store.identity_keys()}
        return sorted({*self._mobs, *named, *(mob for mob in held if mob is not None)})

    def _members(self, store: RealmStore, mob: str | None, unaffiliated: bool) -> set[str] | None:
        if unaffiliated:
            return {identity for identity in store.identity_keys() if self.mob_of(identity) is None}
        if mob is None:
            return None
        return {identity for identity in store.identity_keys() if self.mob_of(identity) == mob}

    def signals(self, realm: str, *, mob: str | None = None, unaffiliated: bool = False) -> int:
        """How many quarantined records, proposals and harvests wait for a dream of this partition."""
        store = self.memory.store(realm)
        return store.signal_count(
            identities=self._members(store, mob, unaffiliated), mob=mob, unaffiliated=unaffiliated
        )

    def record_harvest(self, realm: str, identity: str, session_key: str, cause: str) -> None:
        """Queue an exit interview of a retired identity's session for the next dream."""
        self.memory.store(realm).add_harvest(identity, session_key, cause, self.clock.now_ms())

    # -- the dream ----------------------------------------------------------------------------------

    def dream(self, realm: str, *, mob: str | None = None, unaffiliated: bool = False) -> DreamReport:
        """Run one dream over ``realm`` (only ``mob``'s members and proposals when given; with
        ``unaffiliated``, only identities in no mob and proposals outside mob scope).

        Returns the report; a dream that did not run has ``status = "skipped"`` and a reason.

        Raises:
            ValueError: both ``mob`` and ``unaffiliated`` (a caller bug).
        """
        if mob is not None and unaffiliated:
            raise ValueError("a dream is over one mob or over what no mob claims, not both")
        partition = self.partition_of(realm, mob, unaffiliated=unaffiliated)
        key = (realm, partition)
        with self._running_lock:
            if key in self._running:
                return self._skipped(realm, partition, "already_running", [])
            self._running.add(key)
        try:
            return self._dream(realm, mob, partition, unaffiliated)
        finally:
            with self._running_lock:
                self._running.discard(key)

    def _skipped(self, realm: str, partition: str, reason: str, expired: list[str]) -> DreamReport:
        self.events.emit("memory.dream.skipped", {"realm": realm, "reason": reason})
        return DreamReport(
            realm, partition, status="skipped", skipped_reason=reason, expired_promotions=expired
        )

    def _dream(self, realm: str, mob: str | None, partition: str, unaffiliated: bool) -> DreamReport:
        store = self.memory.store(realm)
        if self._gating is not None:
            self._gating.pending()  # applies gating deadlines that are due: timed-out promotions expire
        expired = self.promotions.expire_overdue(store)
        queue = store.gather(
            identities=self._members(store, mob, unaffiliated),
            mob=mob,
            limits=_LIMITS,
            unaffiliated=unaffiliated,
        )
        dream_input = DreamInput(
            realm=realm,
            run_id=f"dream-{self.clock.now_ms():x}-{secrets.token_hex(4)}",
            now_ms=self.clock.now_ms(),
            partition=partition,
            mob=mob,
            quarantined=tuple(QuarantineItem(record, dup) for record, dup in queue.quarantined),
            proposals=queue.proposals,
            harvests=queue.harvests,
            usage_sample=queue.usage_sample,
            gated_sources=queue.gated_sources,
            operator_scope_active=self._operator_scope_active,
        )
        if dream_input.is_empty():
            return self._skipped(realm, partition, "nothing_to_review", expired)
        run_id = dream_input.run_id
        report = DreamReport(
            realm,
            partition,
            run_id=run_id,
            reviewer=self.reviewer.name,
            started_at_ms=dream_input.now_ms,
            expired_promotions=expired,
        )
        with store.transaction() as txn:
            txn.start_run(run_id, partition, dream_input.now_ms)
        self.events.emit("memory.dream.started", {"realm": realm, "run_id": run_id})
        try:
            verdicts = self.reviewer.review(dream_input)
        except Exception as exc:  # any reviewer failure holds everything; the dream still completes
            if not isinstance(exc, MetaError):
                log.exception("steward reviewer %s failed", self.reviewer.name)
            report.reviewer_error = (
                exc.message if isinstance(exc, MetaError) else f"{type(exc).__name__}: {exc}"
            )
            verdicts = DreamVerdicts()
        VerdictApplier(self, store, dream_input, report).run(verdicts)
        report.completed_at_ms = self.clock.now_ms()
        with store.transaction() as txn:
            detail = {**report.summary(), "outcomes": [o.to_wire() for o in report.outcomes]}
            txn.finish_run(run_id, report.completed_at_ms, report.ops_committed, detail)
        self.events.emit(
            "memory.dream.completed",
            {
                "realm": realm,
                "run_id": run_id,
                "ops_committed": report.ops_committed,
                "detail": report.summary(),
            },
        )
        return report
