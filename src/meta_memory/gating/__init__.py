"""Gating (REFERENCE 7, ``meta/gating/*``): risk-tiered evaluation of agent actions, the ledger
conflict rule that turns contested r2/r3 actions into safe drafts, r3 pending entries with deadlines
and a timeout fallback, approver decisions, the bounded audit trail, and the resolution notices
gated promotions (5.3) subscribe to; those promotions' entries (:data:`REVIEWER_ONLY_ACTIONS`) are
decided only by a quarantine reviewer. ``model`` holds the vocabulary and wire shapes, ``params`` the
one validator, ``engine`` the in-memory :class:`Gating` owner.
"""

from __future__ import annotations

from .engine import Gating, ReviewerCheck
from .model import (
    APPROVAL_TIMEOUT_DEFAULT_MS,
    APPROVAL_TIMEOUT_MAX_MS,
    APPROVAL_TIMEOUT_MIN_MS,
    AUDIT_LIMIT_DEFAULT,
    AUDIT_LIMIT_MAX,
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
    PendingEntry,
    PendingList,
    PendingRequest,
    Resolution,
    clamp_timeout_ms,
)
from .params import parse_audit_params, parse_decide_params, parse_evaluate_params, parse_pending_params

__all__ = [
    "APPROVAL_TIMEOUT_DEFAULT_MS",
    "APPROVAL_TIMEOUT_MAX_MS",
    "APPROVAL_TIMEOUT_MIN_MS",
    "AUDIT_LIMIT_DEFAULT",
    "AUDIT_LIMIT_MAX",
    "RETENTION_DEFAULT",
    "REVIEWER_ONLY_ACTIONS",
    "AuditEntry",
    "AuditPage",
    "AuditRequest",
    "DecideRequest",
    "DecideResult",
    "EvaluateRequest",
    "EvaluateResult",
    "Gating",
    "GatingDecisionRefused",
    "PendingEntry",
    "PendingList",
    "PendingRequest",
    "Resolution",
    "ReviewerCheck",
    "clamp_timeout_ms",
    "parse_audit_params",
    "parse_decide_params",
    "parse_evaluate_params",
    "parse_pending_params",
]
