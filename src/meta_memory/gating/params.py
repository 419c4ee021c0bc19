"""The one validator of the four ``meta/gating/*`` methods, shared by the JSON-RPC method table and
the in-process Python API. Every refusal is :class:`~meta_memory.errors.InvalidParams` (-32602) whose
message carries the ``Invalid params: `` prefix (REFERENCE 1.2) and names the field, in upstream's
words. A key that is present is validated even when its value is ``null``; unknown keys are ignored.
"""

from __future__ import annotations

from typing import Any

from ..errors import InvalidParams
from ..ledger.model import ascii_lower, trim
from .model import (
    AUDIT_LIMIT_DEFAULT,
    AUDIT_LIMIT_MAX,
    DECISIONS,
    INVALID_PARAMS_PREFIX,
    RISK_TIERS,
    AuditRequest,
    DecideRequest,
    Decision,
    EvaluateRequest,
    PendingRequest,
    RiskTier,
)

__all__ = [
    "parse_audit_params",
    "parse_decide_params",
    "parse_evaluate_params",
    "parse_pending_params",
]

_U64_MAX = 2**64 - 1
_RISK_TIER_BY_NAME: dict[str, RiskTier] = {tier: tier for tier in RISK_TIERS}
_DECISION_BY_NAME: dict[str, Decision] = {decision: decision for decision in DECISIONS}


def _invalid(message: str) -> InvalidParams:
    return InvalidParams(INVALID_PARAMS_PREFIX + message)


def _object(params: object) -> dict[str, Any]:
    if not isinstance(params, dict):
        raise _invalid("params must be a JSON object")
    return params


def _required_text(obj: dict[str, Any], key: str) -> str:
    value = obj.get(key)
    text = trim(value) if isinstance(value, str) else ""
    if not text:
        raise _invalid(f"{key} must be a non-empty string")
    return text


def _optional_raw(obj: dict[str, Any], key: str, message: str) -> str | None:
    if key not in obj:
        return None
    value = obj[key]
    if not isinstance(value, str):
        raise _invalid(message)
    return value


def _optional_text(obj: dict[str, Any], key: str, message: str) -> str | None:
    """A present string, trimmed; blank counts as not given (upstream filters empties)."""
    value = _optional_raw(obj, key, message)
    return (trim(value) or None) if value is not None else None


def _choice(obj: dict[str, Any], key: str, table: dict[str, Any], required: str) -> Any:
    raw = obj.get(key)
    if not isinstance(raw, str):
        raise _invalid(required)
    name = ascii_lower(trim(raw))
    if not name:
        raise _invalid(required)
    if name not in table:
        allowed = ", ".join(table)
        raise _invalid(f"{key} '{raw}' is unsupported (allowed: {allowed})")
    return table[name]


def parse_evaluate_params(params: object) -> EvaluateRequest:
    """Validate ``meta/gating/evaluate`` params.

    ``action``, ``actor_id`` and ``risk_tier`` (``r0``..``r3``, case-insensitive) are required;
    ``rationale``, ``requested_approver``, ``approval_recipient``, ``approval_channel``,
    ``entity`` and ``topic`` must be strings when present; ``approval_timeout_ms`` a non-negative
    integer (clamped later, not refused, when out of bounds).

    Raises:
        InvalidParams: ``Invalid params: <field> ...`` naming the first bad field.
    """
    obj = _object(params)
    action = _required_text(obj, "action")
    actor_id = _required_text(obj, "actor_id")
    risk_tier: RiskTier = _choice(
        obj, "risk_tier", _RISK_TIER_BY_NAME, "risk_tier must be one of: r0, r1, r2, r3"
    )
    rationale = _optional_raw(obj, "rationale", "rationale must be a string")
    requested_approver = _optional_text(obj, "requested_approver", "requested_approver must be a string")
    approval_recipient = _optional_text(obj, "approval_recipient", "approval_recipient must be a string")
    approval_channel = _optional_text(obj, "approval_channel", "approval_channel must be a string")
    approval_timeout_ms: int | None = None
    if "approval_timeout_ms" in obj:
        raw_timeout = obj["approval_timeout_ms"]
        # bool is an int in Python but not a JSON integer; 1000.0 is a JSON number, not an integer.
        if (
            not isinstance(raw_timeout, int)
            or isinstance(raw_timeout, bool)
            or not 0 <= raw_timeout <= _U64_MAX
        ):
            raise _invalid("approval_timeout_ms must be a non-negative integer")
        approval_timeout_ms = raw_timeout
    entity = _optional_text(obj, "entity", "entity must be a string when provided")
    topic = _optional_text(obj, "topic", "topic must be a string when provided")
    return EvaluateRequest(
        action=action,
        actor_id=actor_id,
        risk_tier=risk_tier,
        rationale=rationale,
        requested_approver=requested_approver,
        approval_recipient=approval_recipient,
        approval_channel=approval_channel,
        approval_timeout_ms=approval_timeout_ms,
        entity=entity,
        topic=topic,
    )


def parse_decide_params(params: object) -> DecideRequest:
    """Validate ``meta/gating/decide`` params: ``pending_id``, ``approver_id``, ``decision``
    (``approve|reject|escalate``, case-insensitive) and an optional string ``reason``.

    Raises:
        InvalidParams: ``Invalid params: <field> ...`` naming the first bad field.
    """
    obj = _object(params)
    pending_id = _required_text(obj, "pending_id")
    approver_id = _required_text(obj, "approver_id")
    decision: Decision = _choice(
        obj, "decision", _DECISION_BY_NAME, "decision must be one of: approve, reject, escalate"
    )
    reason = _optional_raw(obj, "reason", "reason must be a string")
    return DecideRequest(pending_id=pending_id, approver_id=approver_id, decision=decision, reason=reason)


def parse_pending_params(params: object) -> PendingRequest:
    """``meta/gating/pending`` takes ``null`` or any object.

    Raises:
        InvalidParams: ``Invalid params: params must be a JSON object``.
    """
    if params is not None:
        _object(params)
    return PendingRequest()


def parse_audit_params(params: object) -> AuditRequest:
    """``meta/gating/audit`` takes ``null`` or an object with an optional ``limit`` (1..500,
    default 50).

    Raises:
        InvalidParams: ``Invalid params: params must be a JSON object`` or
            ``Invalid params: limit must be an integer between 1 and 500``.
    """
    if params is None:
        return AuditRequest()
    obj = _object(params)
    if "limit" not in obj:
        return AuditRequest(AUDIT_LIMIT_DEFAULT)
    limit = obj["limit"]
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= AUDIT_LIMIT_MAX:
        raise _invalid(f"limit must be an integer between 1 and {AUDIT_LIMIT_MAX}")
    return AuditRequest(limit)
