"""Gating's vocabulary: risk tiers, outcomes and decisions, the reference constants (default timeout
and its clamp, retention, id format), the validated requests, the wire shapes of every result
(:class:`EvaluateResult`, :class:`DecideResult`, :class:`PendingEntry`, :class:`AuditEntry`), the
:class:`Resolution` notice the promotion flow subscribes to, and the one typed refusal of a decision.
Nothing here holds state, a lock or a clock.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from ..errors import InvalidParams

__all__ = [
    "APPROVAL_TIMEOUT_DEFAULT_MS",
    "APPROVAL_TIMEOUT_MAX_MS",
    "APPROVAL_TIMEOUT_MIN_MS",
    "AUDIT_LIMIT_DEFAULT",
    "AUDIT_LIMIT_MAX",
    "DECISIONS",
    "GATING_ID_FORMAT",
    "INVALID_PARAMS_PREFIX",
    "RETENTION_DEFAULT",
    "REVIEWER_ONLY_ACTIONS",
    "RISK_TIERS",
    "AuditEntry",
    "AuditPage",
    "AuditRequest",
    "DecideRequest",
    "DecideResult",
    "Decision",
    "EvaluateRequest",
    "EvaluateResult",
    "GatingDecisionRefused",
    "Outcome",
    "PendingEntry",
    "PendingList",
    "PendingRequest",
    "RefusalReason",
    "Resolution",
    "ResolutionCause",
    "RiskTier",
    "clamp_timeout_ms",
    "format_gating_id",
]

JsonObject: TypeAlias = dict[str, Any]

RiskTier: TypeAlias = Literal["r0", "r1", "r2", "r3"]
Outcome: TypeAlias = Literal["allowed", "allowed_with_audit", "pending_approval", "safe_draft"]
Decision: TypeAlias = Literal["approve", "reject", "escalate"]
ResolutionCause: TypeAlias = Literal["approved", "rejected", "escalated", "timeout"]
RefusalReason: TypeAlias = Literal[
    "self_approval",
    "approver_mismatch",
    "approver_not_caller",
    "unknown_pending",
    "expired_pending",
    "resolved_pending",
]

RISK_TIERS: tuple[RiskTier, ...] = ("r0", "r1", "r2", "r3")
DECISIONS: tuple[Decision, ...] = ("approve", "reject", "escalate")

APPROVAL_TIMEOUT_DEFAULT_MS = 60_000
# REFERENCE 10.15: the upstream bounds are unknown; these are the team's defaults. The floor keeps a
# tiny timeout from expiring before anyone can decide; the ceiling keeps the fallback reachable.
APPROVAL_TIMEOUT_MIN_MS = 1_000
APPROVAL_TIMEOUT_MAX_MS = 7 * 24 * 60 * 60 * 1_000
RETENTION_DEFAULT = 512
AUDIT_LIMIT_DEFAULT = 50
AUDIT_LIMIT_MAX = 500
GATING_ID_FORMAT = "v2"
# The actions of gated memory promotions (REFERENCE 5.3; the steward opens them). Approving one turns
# quarantined or proposed content into shared memory, so these entries are decided only by a
# quarantine reviewer, never by whoever holds the application surface (the agent host the memory
# firewall constrains). tests/gating pins that the steward's action names are these.
REVIEWER_ONLY_ACTIONS: frozenset[str] = frozenset({"memory.quarantine_promote", "memory.proposal_promote"})
# REFERENCE 1.2: gating's -32602 messages carry this prefix (the ledger's do too).
INVALID_PARAMS_PREFIX = "Invalid params: "


def format_gating_id(kind: Literal["action", "pending", "audit"], epoch: str, sequence: int) -> str:
    """``gate-<kind>-v2-<epoch>-<sequence>``, the sequence zero-padded to at least six digits."""
    return f"gate-{kind}-{GATING_ID_FORMAT}-{epoch}-{sequence:06d}"


def clamp_timeout_ms(timeout_ms: int | None) -> int:
    """The approval timeout actually applied: the default when absent, else clamped to
    [:data:`APPROVAL_TIMEOUT_MIN_MS`, :data:`APPROVAL_TIMEOUT_MAX_MS`]."""
    if timeout_ms is None:
        return APPROVAL_TIMEOUT_DEFAULT_MS
    return min(max(timeout_ms, APPROVAL_TIMEOUT_MIN_MS), APPROVAL_TIMEOUT_MAX_MS)


class GatingDecisionRefused(InvalidParams):
    """A well-formed ``meta/gating/decide`` that cannot be applied.

    Code -32602 with the ``Invalid params: `` prefix, as upstream answers these refusals, plus typed
    ``data`` so a client can tell a refusal it can fix (another approver) from a stale id it should
    drop: ``{"kind": "gating_decision_refused", "reason": <RefusalReason>, "pending_id", ...}``.
    """

    def __init__(self, reason: RefusalReason, message: str, *, pending_id: str, **extra: Any) -> None:
        super().__init__(
            INVALID_PARAMS_PREFIX + message,
            data={"kind": "gating_decision_refused", "reason": reason, "pending_id": pending_id, **extra},
        )
        self.reason: RefusalReason = reason


# -- requests ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EvaluateRequest:
    """A validated ``meta/gating/evaluate`` request; build it with ``parse_evaluate_params``.

    Strings are trimmed; optional ones left blank are ``None``. ``approval_timeout_ms`` is the raw
    non-negative value asked for; the clamp is applied when a pending entry is created.
    """

    action: str
    actor_id: str
    risk_tier: RiskTier
    rationale: str | None = None
    requested_approver: str | None = None
    approval_recipient: str | None = None
    approval_channel: str | None = None
    approval_timeout_ms: int | None = None
    entity: str | None = None
    topic: str | None = None


@dataclass(frozen=True, slots=True)
class DecideRequest:
    """A validated ``meta/gating/decide`` request; build it with ``parse_decide_params``."""

    pending_id: str
    approver_id: str
    decision: Decision
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class PendingRequest:
    """``meta/gating/pending`` takes no parameters."""


@dataclass(frozen=True, slots=True)
class AuditRequest:
    """``meta/gating/audit``: the newest ``limit`` entries (1..500, default 50)."""

    limit: int = AUDIT_LIMIT_DEFAULT


# -- records and results ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PendingEntry:
    """One r3 action waiting for a decision until ``deadline_at_ms``.

    ``escalated_from`` names the entry this one succeeded; ``description`` is set by programmatic
    entries (gated promotions).
    """

    pending_id: str
    action_id: str
    action: str
    actor_id: str
    risk_tier: RiskTier
    requested_approver: str | None
    approval_recipient: str | None
    approval_channel: str | None
    rationale: str | None
    entity: str | None
    topic: str | None
    description: str | None
    created_at_ms: int
    deadline_at_ms: int
    escalated_from: str | None = None

    def to_wire(self) -> JsonObject:
        return {
            "pending_id": self.pending_id,
            "action_id": self.action_id,
            "action": self.action,
            "actor_id": self.actor_id,
            "risk_tier": self.risk_tier,
            "requested_approver": self.requested_approver,
            "approval_recipient": self.approval_recipient,
            "approval_channel": self.approval_channel,
            "rationale": self.rationale,
            "entity": self.entity,
            "topic": self.topic,
            "description": self.description,
            "created_at_ms": self.created_at_ms,
            "deadline_at_ms": self.deadline_at_ms,
            "escalated_from": self.escalated_from,
        }


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One audit row. ``event_type`` is one of ``evaluated``, ``conflict_blocked``,
    ``memory_conflict_lookup_failed``, ``pending_created``, ``approval_decided``,
    ``rejection_decided``, ``escalation_decided``, ``timeout_fallback``. Treat ``detail`` as
    read-only; :meth:`to_wire` hands out a copy."""

    audit_id: str
    timestamp_ms: int
    event_type: str
    action_id: str
    pending_id: str | None
    actor_id: str
    risk_tier: RiskTier
    outcome: Outcome
    detail: JsonObject = field(default_factory=dict)

    def to_wire(self) -> JsonObject:
        return {
            "audit_id": self.audit_id,
            "timestamp_ms": self.timestamp_ms,
            "event_type": self.event_type,
            "action_id": self.action_id,
            "pending_id": self.pending_id,
            "actor_id": self.actor_id,
            "risk_tier": self.risk_tier,
            "outcome": self.outcome,
            # A copy: the stored row must not change through a returned wire object.
            "detail": copy.deepcopy(self.detail),
        }


@dataclass(frozen=True, slots=True)
class EvaluateResult:
    """The answer to one evaluation. Wire shape (every key always present)::

        {action_id, action, actor_id, risk_tier, outcome, fallback_reason, pending_id,
         deadline_at_ms, audit_id}

    ``fallback_reason`` is set only for ``safe_draft`` (``memory_conflict``,
    ``memory_conflict_context_missing`` or ``memory_conflict_lookup_failed``); ``pending_id`` and
    ``deadline_at_ms`` only for ``pending_approval``; ``audit_id`` names the audit row the
    evaluation wrote.
    """

    action_id: str
    action: str
    actor_id: str
    risk_tier: RiskTier
    outcome: Outcome
    audit_id: str
    fallback_reason: str | None = None
    pending_id: str | None = None
    deadline_at_ms: int | None = None

    def to_wire(self) -> JsonObject:
        return {
            "action_id": self.action_id,
            "action": self.action,
            "actor_id": self.actor_id,
            "risk_tier": self.risk_tier,
            "outcome": self.outcome,
            "fallback_reason": self.fallback_reason,
            "pending_id": self.pending_id,
            "deadline_at_ms": self.deadline_at_ms,
            "audit_id": self.audit_id,
        }


@dataclass(frozen=True, slots=True)
class DecideResult:
    """The answer to one decision: ``outcome`` is ``allowed`` (approve), ``safe_draft`` (reject) or
    ``pending_approval`` (escalate, with ``next_pending_id``)."""

    pending_id: str
    action_id: str
    approver_id: str
    decision: Decision
    outcome: Outcome
    decided_at_ms: int
    reason: str | None
    next_pending_id: str | None
    audit_id: str

    def to_wire(self) -> JsonObject:
        return {
            "pending_id": self.pending_id,
            "action_id": self.action_id,
            "approver_id": self.approver_id,
            "decision": self.decision,
            "outcome": self.outcome,
            "decided_at_ms": self.decided_at_ms,
            "reason": self.reason,
            "next_pending_id": self.next_pending_id,
            "audit_id": self.audit_id,
        }


@dataclass(frozen=True, slots=True)
class PendingList:
    pending: tuple[PendingEntry, ...]

    def to_wire(self) -> JsonObject:
        return {"pending": [entry.to_wire() for entry in self.pending]}


@dataclass(frozen=True, slots=True)
class AuditPage:
    entries: tuple[AuditEntry, ...]

    def to_wire(self) -> JsonObject:
        return {"entries": [entry.to_wire() for entry in self.entries]}


@dataclass(frozen=True, slots=True)
class Resolution:
    """A pending entry left the queue. ``approved`` is true only for ``cause == "approved"``;
    ``next_pending_id`` is set only for ``escalated`` (the action stays pending under it)."""

    pending_id: str
    action_id: str
    approved: bool
    cause: ResolutionCause
    resolved_at_ms: int
    next_pending_id: str | None = None

    def to_wire(self) -> JsonObject:
        return {
            "pending_id": self.pending_id,
            "action_id": self.action_id,
            "approved": self.approved,
            "cause": self.cause,
            "resolved_at_ms": self.resolved_at_ms,
            "next_pending_id": self.next_pending_id,
        }
