"""The gating engine (REFERENCE 7): risk-tier policy, the ledger conflict rule, r3 pending entries
with deadlines and a lazy timeout fallback, decisions with the self-approval and requested-approver
refusals, bounded audit and pending retention, and resolution notices for the gated-promotion flow
(5.3), whose entries only a quarantine reviewer decides (:data:`REVIEWER_ONLY_ACTIONS`: the calling
surface vouches for its reviewer through a check, without which such an entry is refused, and a
surface that cannot decide them leaves them out of its list). State lives in memory only: a restart
forgets every pending entry and audit row, which is why gated promotions keep their own mapping rows
and 7-day backstop. No timers or threads: every public call first applies the timeouts that are due
by the injected clock.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from ..access.actions import MEMORY_QUARANTINE_REVIEW
from ..clock import Clock
from ..errors import AccessDenied, InvalidParams
from ..ledger.ledger import Ledger
from ..ledger.model import QueryRequest, trim
from .model import (
    APPROVAL_TIMEOUT_DEFAULT_MS,
    APPROVAL_TIMEOUT_MAX_MS,
    APPROVAL_TIMEOUT_MIN_MS,
    INVALID_PARAMS_PREFIX,
    RETENTION_DEFAULT,
    REVIEWER_ONLY_ACTIONS,
    AuditEntry,
    AuditPage,
    AuditRequest,
    DecideRequest,
    DecideResult,
    EvaluateRequest,
    EvaluateResult,
    GatingDecisionRefused,
    Outcome,
    PendingEntry,
    PendingList,
    PendingRequest,
    Resolution,
    ResolutionCause,
    RiskTier,
    clamp_timeout_ms,
    format_gating_id,
)

__all__ = ["Gating", "ReviewerCheck"]

log = logging.getLogger("meta_memory.gating")

# How many resolved pending ids are remembered, so a late decision learns "expired" or "already
# decided" instead of "unknown".
_RESOLVED_MEMORY = 4096

_DECIDED: dict[str, tuple[str, Outcome, ResolutionCause]] = {
    "approve": ("approval_decided", "allowed", "approved"),
    "reject": ("rejection_decided", "safe_draft", "rejected"),
    "escalate": ("escalation_decided", "pending_approval", "escalated"),
}


ReviewerCheck = Callable[[PendingEntry], None]
"""How a surface vouches that its caller may decide a reviewer-only entry: called with the entry
(under gating's lock, so it must not call back into gating), it raises to refuse the decision."""


@dataclass(frozen=True, slots=True)
class _Resolved:
    cause: ResolutionCause
    at_ms: int
    next_pending_id: str | None


class Gating:
    """Evaluate actions, hold r3 actions for a decision, and keep the audit trail.

    Thread-safe: one lock guards all state. Resolution notices are handed to ``on_resolution``
    after that lock is released, one at a time and in the order they happened, so the callback may
    call back into this object; an exception it raises is logged and does not undo the decision.
    """

    def __init__(
        self,
        ledger: Ledger,
        clock: Clock,
        *,
        default_timeout_ms: int = APPROVAL_TIMEOUT_DEFAULT_MS,
        retention: int = RETENTION_DEFAULT,
        on_resolution: Callable[[Resolution], None] | None = None,
    ) -> None:
        """Args:
            ledger: where conflict signals are looked up (any store).
            clock: the time source for deadlines, audit timestamps and timeouts.
            default_timeout_ms: the approval timeout when a request names none; within the clamp.
            retention: how many audit rows and how many pending entries are kept (each).
            on_resolution: told whenever a pending entry is approved, rejected, escalated or
                falls back at its deadline.

        Raises:
            ValueError: ``retention`` below 1 or ``default_timeout_ms`` outside the clamp.
        """
        if retention < 1:
            raise ValueError(f"retention must be at least 1 (got {retention})")
        if not APPROVAL_TIMEOUT_MIN_MS <= default_timeout_ms <= APPROVAL_TIMEOUT_MAX_MS:
            raise ValueError(
                f"default_timeout_ms must be between {APPROVAL_TIMEOUT_MIN_MS} and "
                f"{APPROVAL_TIMEOUT_MAX_MS} (got {default_timeout_ms})"
            )
        self._ledger = ledger
        self._clock = clock
        self._default_timeout_ms = default_timeout_ms
        self._retention = retention
        self._on_resolution = on_resolution
        # One epoch per owner: ids minted before a restart can never name an entry minted after it.
        self._epoch = secrets.token_hex(16)
        self._sequence = 0
        self._pending: dict[str, PendingEntry] = {}  # insertion order = oldest first
        self._audit: deque[AuditEntry] = deque(maxlen=retention)
        self._resolved: OrderedDict[str, _Resolved] = OrderedDict()
        self._lock = threading.Lock()
        self._outbox: deque[Resolution] = deque()
        self._delivering = threading.RLock()

    @property
    def epoch(self) -> str:
        """The 32-hex owner epoch every id this instance mints carries."""
        return self._epoch

    # -- public API ---------------------------------------------------------------------------------

    def evaluate(self, request: EvaluateRequest) -> EvaluateResult:
        """Apply the conflict rule (r2/r3), then the tier policy: r0/r1 ``allowed``, r2
        ``allowed_with_audit``, r3 ``pending_approval`` with a deadline. Writes one audit row."""
        try:
            with self._lock:
                now = self._clock.now_ms()
                self._expire_due(now)
                return self._evaluate(request, now)
        finally:
            self._deliver()

    def decide(
        self,
        request: DecideRequest,
        *,
        caller: str | None = None,
        reviewer: ReviewerCheck | None = None,
    ) -> DecideResult:
        """Approve, reject or escalate a pending entry.

        Args:
            request: the validated decision.
            caller: the authenticated subject of the call, where it was authenticated; the
                approver recorded is then exactly it. ``None``: an unauthenticated channel, whose
                ``approver_id`` is recorded as given.
            reviewer: the calling surface's check that its caller is a quarantine reviewer,
                run on an entry of :data:`REVIEWER_ONLY_ACTIONS` before anything changes.
                Without it those entries are not decided at all (approve, reject and escalate
                alike: each is a reviewer's decision).

        Raises:
            GatingDecisionRefused: -32602 with ``data.reason`` ``approver_not_caller``
                (``approver_id`` is not the authenticated ``caller``), ``self_approval`` (the
                actor approving its own action), ``approver_mismatch`` (not the requested
                approver), ``unknown_pending``, ``expired_pending`` (it fell back at its
                deadline) or ``resolved_pending`` (already decided; an escalation names its
                successor).
            AccessDenied: -32030 naming ``memory.quarantine.review``: a reviewer-only entry
                decided without ``reviewer``, or whatever ``reviewer`` raises.

            A refused decision changes nothing.
        """
        if caller is not None and request.approver_id != caller:
            # Refused, not replaced: a caller naming someone else as approver is asking for an
            # audit row that lies, and should learn that it cannot have one.
            raise GatingDecisionRefused(
                "approver_not_caller",
                f"approver_id '{request.approver_id}' must be the authenticated caller's subject "
                f"'{caller}' (an authenticated decision records who made it)",
                pending_id=request.pending_id,
            )
        try:
            with self._lock:
                now = self._clock.now_ms()
                self._expire_due(now)
                return self._decide(request, now, reviewer)
        finally:
            self._deliver()

    def pending(
        self, request: PendingRequest | None = None, *, include_reviewer_only: bool = True
    ) -> PendingList:
        """The entries still waiting, oldest first (after applying due timeouts).

        Args:
            include_reviewer_only: list entries of :data:`REVIEWER_ONLY_ACTIONS` too; a surface
                that could not decide them passes ``False``.
        """
        try:
            with self._lock:
                self._expire_due(self._clock.now_ms())
                return PendingList(
                    tuple(
                        entry
                        for entry in self._pending.values()
                        if include_reviewer_only or entry.action not in REVIEWER_ONLY_ACTIONS
                    )
                )
        finally:
            self._deliver()

    def audit(self, request: AuditRequest | None = None) -> AuditPage:
        """The newest ``request.limit`` audit rows, oldest first (after applying due timeouts)."""
        limit = (request or AuditRequest()).limit
        try:
            with self._lock:
                self._expire_due(self._clock.now_ms())
                rows = tuple(self._audit)
                return AuditPage(rows[-limit:] if limit > 0 else ())
        finally:
            self._deliver()

    def create_pending(
        self,
        action: str,
        actor_id: str,
        entity: str,
        topic: str,
        description: str,
        timeout_ms: int | None = None,
    ) -> PendingEntry:
        """Open an r3 pending entry directly, without evaluating it (gated promotions: entity = the
        target scope key, topic = the source record id). The conflict rule does not apply: these
        keys name memory scopes and records, not ledger assertions. Writes a ``pending_created``
        audit row with ``detail.origin = "programmatic"``.

        Raises:
            InvalidParams: ``action``, ``actor_id``, ``entity`` or ``topic`` blank, or
                ``timeout_ms`` negative.
        """
        fields = {"action": action, "actor_id": actor_id, "entity": entity, "topic": topic}
        cleaned = {key: trim(value) for key, value in fields.items()}
        for key, value in cleaned.items():
            if not value:
                raise InvalidParams(f"{INVALID_PARAMS_PREFIX}{key} must be a non-empty string")
        if timeout_ms is not None and timeout_ms < 0:
            raise InvalidParams(f"{INVALID_PARAMS_PREFIX}approval_timeout_ms must be a non-negative integer")
        try:
            with self._lock:
                now = self._clock.now_ms()
                self._expire_due(now)
                action_id = self._mint("action")
                entry, _ = self._open_pending(
                    action_id=action_id,
                    action=cleaned["action"],
                    actor_id=cleaned["actor_id"],
                    rationale=None,
                    requested_approver=None,
                    approval_recipient=None,
                    approval_channel=None,
                    entity=cleaned["entity"],
                    topic=cleaned["topic"],
                    description=trim(description) or None,
                    now=now,
                    deadline_at_ms=now + self._timeout(timeout_ms),
                    origin="programmatic",
                )
                return entry
        finally:
            self._deliver()

    # -- evaluation ---------------------------------------------------------------------------------

    def _evaluate(self, request: EvaluateRequest, now: int) -> EvaluateResult:
        action_id = self._mint("action")
        tier = request.risk_tier

        def result(outcome: Outcome, audit_id: str, **extra: Any) -> EvaluateResult:
            return EvaluateResult(
                action_id, request.action, request.actor_id, tier, outcome, audit_id, **extra
            )

        if tier in ("r2", "r3"):
            blocked = self._conflict_rule(request, action_id, now)
            if blocked is not None:
                reason, audit_id = blocked
                return result("safe_draft", audit_id, fallback_reason=reason)
        if tier == "r3":
            entry, audit_id = self._open_pending(
                action_id=action_id,
                action=request.action,
                actor_id=request.actor_id,
                rationale=request.rationale,
                requested_approver=request.requested_approver,
                approval_recipient=request.approval_recipient,
                approval_channel=request.approval_channel,
                entity=request.entity,
                topic=request.topic,
                description=None,
                now=now,
                deadline_at_ms=now + self._timeout(request.approval_timeout_ms),
                origin="evaluate",
            )
            return result(
                "pending_approval", audit_id, pending_id=entry.pending_id, deadline_at_ms=entry.deadline_at_ms
            )
        outcome: Outcome = "allowed_with_audit" if tier == "r2" else "allowed"
        policy = "consequence_mode_allow_with_audit_v0_1" if tier == "r2" else "allow_immediate"
        detail = {"policy": policy, "rationale": request.rationale, "action": request.action}
        audit_id = self._record("evaluated", action_id, None, request.actor_id, tier, outcome, detail, now)
        return result(outcome, audit_id)

    def _conflict_rule(self, request: EvaluateRequest, action_id: str, now: int) -> tuple[str, str] | None:
        """``(fallback_reason, audit_id)`` when an r2/r3 action must fall back to a safe draft."""
        entity, topic = request.entity, request.topic
        reference = {"entity": entity, "topic": topic}
        actor, tier = request.actor_id, request.risk_tier
        if self._ledger.has_conflicts() and (entity is None or topic is None):
            reason = "memory_conflict_context_missing"
            detail = {
                "policy": "memory_conflict_context_required_v0_1",
                "reason": reason,
                "action": request.action,
                "reference": reference,
                "missing_context": {"entity": entity is None, "topic": topic is None},
                "conflict_count": len(self._ledger.query(QueryRequest()).conflicts),
            }
            return reason, self._record(
                "conflict_blocked", action_id, None, actor, tier, "safe_draft", detail, now
            )
        try:
            conflict = self._ledger.conflict_for(entity, topic)
        except Exception as exc:  # fail closed: an unreadable ledger must not wave an action through
            reason = "memory_conflict_lookup_failed"
            detail = {
                "policy": "memory_conflict_lookup",
                "reason": reason,
                "error": type(exc).__name__,
                "action": request.action,
                "reference": reference,
            }
            return reason, self._record(reason, action_id, None, actor, tier, "safe_draft", detail, now)
        if conflict is None:
            return None
        reason = "memory_conflict"
        detail = {
            "policy": "memory_conflict_block_v0_1",
            "reason": reason,
            "action": request.action,
            "reference": reference,
            "conflict": conflict.to_wire(),
        }
        return reason, self._record(
            "conflict_blocked", action_id, None, actor, tier, "safe_draft", detail, now
        )

    # -- pending entries ----------------------------------------------------------------------------

    def _timeout(self, requested_ms: int | None) -> int:
        return self._default_timeout_ms if requested_ms is None else clamp_timeout_ms(requested_ms)

    def _open_pending(
        self,
        *,
        action_id: str,
        action: str,
        actor_id: str,
        rationale: str | None,
        requested_approver: str | None,
        approval_recipient: str | None,
        approval_channel: str | None,
        entity: str | None,
        topic: str | None,
        description: str | None,
        now: int,
        deadline_at_ms: int,
        origin: Literal["evaluate", "programmatic", "escalation"],
        escalated_from: str | None = None,
    ) -> tuple[PendingEntry, str]:
        """Mint, store and audit one pending entry; returns it with its ``pending_created`` audit id."""
        pending_id = self._mint("pending")
        # Make room first: an entry pushed out by the cap falls back exactly as a timeout does, so
        # nothing (a gated promotion above all) waits on an entry that no longer exists.
        while len(self._pending) >= self._retention:
            oldest = next(iter(self._pending.values()))
            del self._pending[oldest.pending_id]
            self._fall_back(oldest, now, "pending_retention_exceeded")
        entry = PendingEntry(
            pending_id=pending_id,
            action_id=action_id,
            action=action,
            actor_id=actor_id,
            risk_tier="r3",
            requested_approver=requested_approver,
            approval_recipient=approval_recipient,
            approval_channel=approval_channel,
            rationale=rationale,
            entity=entity,
            topic=topic,
            description=description,
            created_at_ms=now,
            deadline_at_ms=deadline_at_ms,
            escalated_from=escalated_from,
        )
        self._pending[pending_id] = entry
        detail: dict[str, Any] = {
            "origin": origin,
            "action": action,
            "requested_approver": requested_approver,
            "approval_recipient": approval_recipient,
            "approval_channel": approval_channel,
            # This build has no delivery route, so a requested notification is recorded as unsent.
            "approval_notification_error": (
                "notification_unavailable" if approval_recipient and approval_channel else None
            ),
            "deadline_at_ms": deadline_at_ms,
            "entity": entity,
            "topic": topic,
            "description": description,
            "escalated_from_pending_id": escalated_from,
        }
        audit_id = self._record(
            "pending_created", action_id, pending_id, actor_id, "r3", "pending_approval", detail, now
        )
        return entry, audit_id

    def _expire_due(self, now: int) -> None:
        due = [entry for entry in self._pending.values() if now >= entry.deadline_at_ms]
        for entry in due:
            del self._pending[entry.pending_id]
            self._fall_back(entry, now, "approval_timeout")

    def _fall_back(self, entry: PendingEntry, now: int, reason: str) -> None:
        detail = {"fallback": "safe_draft", "reason": reason, "deadline_at_ms": entry.deadline_at_ms}
        self._record(
            "timeout_fallback",
            entry.action_id,
            entry.pending_id,
            entry.actor_id,
            entry.risk_tier,
            "safe_draft",
            detail,
            now,
        )
        self._resolve(entry, "timeout", now, None)

    # -- decisions ----------------------------------------------------------------------------------

    def _decide(self, request: DecideRequest, now: int, reviewer: ReviewerCheck | None) -> DecideResult:
        pending_id, approver_id = request.pending_id, request.approver_id
        entry = self._pending.get(pending_id)
        if entry is None:
            raise self._stale(pending_id)
        if entry.action in REVIEWER_ONLY_ACTIONS:
            if reviewer is None:
                raise AccessDenied(
                    MEMORY_QUARANTINE_REVIEW,
                    pending_id,
                    message=(
                        f"access denied: {MEMORY_QUARANTINE_REVIEW}: a gated memory promotion "
                        f"({entry.action}) is decided only by a quarantine reviewer, on the console"
                    ),
                )
            reviewer(entry)
        # Upstream's rule: only an approval by the actor is self-approval; the actor may withdraw
        # (reject) or hand on (escalate) its own request.
        if request.decision == "approve" and approver_id == entry.actor_id:
            raise GatingDecisionRefused(
                "self_approval", "approver_id cannot self-approve the action actor", pending_id=pending_id
            )
        if entry.requested_approver is not None and entry.requested_approver != approver_id:
            raise GatingDecisionRefused(
                "approver_mismatch",
                f"approver_id '{approver_id}' does not match requested_approver '{entry.requested_approver}'",
                pending_id=pending_id,
            )
        del self._pending[pending_id]
        event_type, outcome, cause = _DECIDED[request.decision]
        next_pending_id: str | None = None
        if request.decision == "escalate":
            successor, _ = self._open_pending(
                action_id=entry.action_id,
                action=entry.action,
                actor_id=entry.actor_id,
                rationale=entry.rationale,
                requested_approver=None,  # escalation hands the request on to any approver
                approval_recipient=entry.approval_recipient,
                approval_channel=entry.approval_channel,
                entity=entry.entity,
                topic=entry.topic,
                description=entry.description,
                now=now,
                deadline_at_ms=entry.deadline_at_ms,
                origin="escalation",
                escalated_from=pending_id,
            )
            next_pending_id = successor.pending_id
        detail = {
            "approver_id": approver_id,
            "decision": request.decision,
            "reason": request.reason,
            "next_pending_id": next_pending_id,
        }
        audit_id = self._record(
            event_type, entry.action_id, pending_id, entry.actor_id, entry.risk_tier, outcome, detail, now
        )
        self._resolve(entry, cause, now, next_pending_id)
        return DecideResult(
            pending_id=pending_id,
            action_id=entry.action_id,
            approver_id=approver_id,
            decision=request.decision,
            outcome=outcome,
            decided_at_ms=now,
            reason=request.reason,
            next_pending_id=next_pending_id,
            audit_id=audit_id,
        )

    def _stale(self, pending_id: str) -> GatingDecisionRefused:
        resolved = self._resolved.get(pending_id)
        if resolved is None:
            return GatingDecisionRefused(
                "unknown_pending",
                f"pending_id '{pending_id}' does not name a pending gating request",
                pending_id=pending_id,
            )
        if resolved.cause == "timeout":
            return GatingDecisionRefused(
                "expired_pending",
                f"pending_id '{pending_id}' expired and fell back to safe_draft",
                pending_id=pending_id,
                cause=resolved.cause,
                resolved_at_ms=resolved.at_ms,
            )
        if resolved.cause == "escalated":
            message = f"pending_id '{pending_id}' was escalated; decide '{resolved.next_pending_id}' instead"
        else:
            message = f"pending_id '{pending_id}' was already decided ({resolved.cause})"
        return GatingDecisionRefused(
            "resolved_pending",
            message,
            pending_id=pending_id,
            cause=resolved.cause,
            resolved_at_ms=resolved.at_ms,
            next_pending_id=resolved.next_pending_id,
        )

    # -- bookkeeping --------------------------------------------------------------------------------

    def _mint(self, kind: Literal["action", "pending", "audit"]) -> str:
        gating_id = format_gating_id(kind, self._epoch, self._sequence)
        self._sequence += 1
        return gating_id

    def _record(
        self,
        event_type: str,
        action_id: str,
        pending_id: str | None,
        actor_id: str,
        risk_tier: RiskTier,
        outcome: Outcome,
        detail: dict[str, Any],
        now: int,
    ) -> str:
        audit_id = self._mint("audit")
        self._audit.append(
            AuditEntry(audit_id, now, event_type, action_id, pending_id, actor_id, risk_tier, outcome, detail)
        )
        return audit_id

    def _resolve(
        self, entry: PendingEntry, cause: ResolutionCause, now: int, next_pending_id: str | None
    ) -> None:
        self._resolved[entry.pending_id] = _Resolved(cause, now, next_pending_id)
        while len(self._resolved) > _RESOLVED_MEMORY:
            self._resolved.popitem(last=False)
        if self._on_resolution is not None:
            self._outbox.append(
                Resolution(
                    pending_id=entry.pending_id,
                    action_id=entry.action_id,
                    approved=cause == "approved",
                    cause=cause,
                    resolved_at_ms=now,
                    next_pending_id=next_pending_id,
                )
            )

    def _deliver(self) -> None:
        """Hand queued notices to ``on_resolution``, outside the state lock and in order.

        Only one thread delivers at a time; a thread that finds another delivering leaves its
        notices to it (blocking here could deadlock against a callback waiting on the caller).
        The holder re-checks the queue after releasing, so no notice is stranded.
        """
        notify = self._on_resolution
        if notify is None:
            return
        while True:
            if not self._delivering.acquire(blocking=False):
                return
            try:
                while True:
                    with self._lock:
                        if not self._outbox:
                            break
                        notice = self._outbox.popleft()
                    try:
                        notify(notice)
                    except Exception:
                        log.exception("gating resolution subscriber failed on %s", notice.pending_id)
            finally:
                self._delivering.release()
            with self._lock:
                if not self._outbox:
                    return
