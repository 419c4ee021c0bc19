"""An operator's answer to the steward's usage audit (``meta/memory/audit_verdicts/resolve``).

A dream's usage audit judges records that were injected: ``load_bearing`` or ``dead_weight``
(REFERENCE 5.2; ``unknown`` is never kept). Each judgement waits as an open ``audit_verdicts`` row
until an operator resolves it, with one of two actions:

- ``acknowledge`` closes the verdict and changes no memory (the record is kept, whatever the
  verdict said);
- ``tombstone`` acts on a ``dead_weight`` verdict: the record is tombstoned through the store
  validator, bound to the content hash the operator read (as a quarantine decision is), and every
  open verdict on that record closes with it.

One resolution is one transaction of the realm's store: the tombstone (if any), the verdicts'
status and one ``audit_verdict`` audit row whose ``detail.resolution`` holds the decision (the
action, the reviewer from the authenticated principal, the verdict, the bound hash, the rationale,
the verdicts it closed). A replay is recognized from that row only, and answers the first
decision again (``already_acknowledged`` / ``already_tombstoned``) without writing; another action
on a resolved verdict is refused. Access is judged on the record before anything is read of the
verdict: the caller's ``authorize`` hook refuses, or lets the decision go on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import AuditVerdictRefused, InvalidParams
from ..memory.params import parse_realm
from ..memory.records import OPERATOR, Record, Status
from ..memory.rows import VerdictRow
from ..memory.secrets import find_secret
from ..memory.service import AgentMemory
from ..memory.store import RealmTxn
from ..memory.validator import TombstoneOp, WriteBatch, secret_refused
from ..review import receipt
from ..review.decide import parse_content_hash, parse_rationale

__all__ = [
    "AUDIT_ACTIONS",
    "AuditVerdicts",
    "ResolveParams",
    "VerdictResolution",
    "parse_resolve_params",
]

AUDIT_ACTIONS = ("acknowledge", "tombstone")
"""What an operator does with a usage-audit verdict."""

ID_MAX_BYTES = 256
"""Longer than any run or record id the runtime hands out; a longer one names nothing."""

_DONE = {"acknowledge": "acknowledged", "tombstone": "tombstoned"}

Authorize = Callable[[str, Record | None, str], None]
"""``(record_id, record or None when it is gone, action)``: raise to refuse the caller."""


@dataclass(frozen=True)
class ResolveParams:
    realm: str
    run_id: str
    record_id: str
    action: str
    expected_content_hash: str | None
    rationale: str | None


def _id(params: dict[str, Any], name: str) -> str:
    value = params.get(name)
    if not isinstance(value, str) or not value.strip():
        raise InvalidParams(f"{name} must be a non-empty string")
    if len(value.encode("utf-8", "surrogatepass")) > ID_MAX_BYTES:
        raise InvalidParams(f"{name} must be at most {ID_MAX_BYTES} bytes")
    return value.strip()


def parse_resolve_params(params: Any, *, default_realm: str) -> ResolveParams:
    """``{realm?, run_id, record_id, action, expected_content_hash?, rationale?}``.

    Raises:
        InvalidParams: a field breaks its rule (the message names it); ``expected_content_hash``
            is required for a tombstone.
    """
    if not isinstance(params, dict):
        raise InvalidParams("params must be a JSON object")
    realm = parse_realm(params) or default_realm
    run_id = _id(params, "run_id")
    record_id = _id(params, "record_id")
    action = params.get("action")
    if not isinstance(action, str) or action not in AUDIT_ACTIONS:
        raise InvalidParams(f"action must be 'acknowledge' or 'tombstone' (got {action!r})")
    expected = params.get("expected_content_hash")
    if expected is None and action == "tombstone":
        raise InvalidParams("expected_content_hash is required to tombstone: the hash of the record you read")
    if expected is not None:
        expected = parse_content_hash(params, "the record you read")
    rationale = parse_rationale(params)
    return ResolveParams(realm, run_id, record_id, action, expected, rationale)


@dataclass(frozen=True)
class VerdictResolution:
    """What a resolution did. ``applied`` is False for a replay (nothing was written)."""

    outcome: str  # acknowledged | tombstoned | already_acknowledged | already_tombstoned
    realm: str
    verdict: VerdictRow
    status: str
    record: Record | None
    decision: dict[str, Any]
    applied: bool

    def to_wire(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "verdict": {
                "realm": self.realm,
                "run_id": self.verdict.run_id,
                "record_id": self.verdict.record_id,
                "verdict": self.verdict.verdict,
                "rationale": self.verdict.rationale,
                "created_at_ms": self.verdict.created_at_ms,
                "status": self.status,
            },
            "record": receipt(self.record) if self.record is not None else None,
            "decision": self.decision,
        }


def _refuse(reason: str, message: str, **extra: Any) -> AuditVerdictRefused:
    return AuditVerdictRefused(reason, message, **extra)


class AuditVerdicts:
    """Resolves usage-audit verdicts in the realm stores of ``memory``."""

    def __init__(self, memory: AgentMemory) -> None:
        self.memory = memory

    def resolve(
        self, p: ResolveParams, *, reviewer: dict[str, Any], authorize: Authorize | None = None
    ) -> VerdictResolution:
        """Resolve the verdict of run ``p.run_id`` on record ``p.record_id``.

        Args:
            reviewer: who decides, from the authenticated principal (never from the params).
            authorize: the access check on the record and the action (raises to refuse).

        Raises:
            AccessDenied: ``authorize`` refused.
            AuditVerdictRefused: nothing was changed; ``reason`` says why.
            WriteRefused: the rationale holds a secret, or the store validator refused the tombstone.
        """
        store = self.memory.existing_store(p.realm)
        if store is None:
            if authorize is not None:
                authorize(p.record_id, None, p.action)
            raise _unknown(p)
        with store.transaction() as txn:
            return _resolve(txn, p, reviewer, authorize)


def _unknown(p: ResolveParams) -> AuditVerdictRefused:
    return _refuse(
        "unknown_verdict",
        f"no usage-audit verdict of run '{p.run_id}' on record '{p.record_id}' in realm '{p.realm}'",
    )


def _resolve(
    txn: RealmTxn, p: ResolveParams, reviewer: dict[str, Any], authorize: Authorize | None
) -> VerdictResolution:
    record = txn.get(p.record_id)
    if authorize is not None:
        authorize(p.record_id, record, p.action)
    verdicts = txn.audit_verdicts_of(p.record_id)
    mine = sorted((v for v in verdicts if v[0].run_id == p.run_id), key=lambda v: v[1] != "open")
    if not mine:
        raise _unknown(p)
    row, status = mine[0]
    if status != "open":
        return _replay(txn, p, row, status, record)
    if p.expected_content_hash is not None and (
        record is None or record.content_hash != p.expected_content_hash
    ):
        # As a quarantine decision: the right hash is read with the record, never told here.
        raise _refuse(
            "content_mismatch",
            f"record '{p.record_id}' does not match expected_content_hash: read the record again and "
            "resolve on what it holds now",
        )
    if p.action == "tombstone":
        if row.verdict != "dead_weight":
            raise _refuse(
                "not_dead_weight",
                f"the verdict on record '{p.record_id}' is {row.verdict}: only a dead_weight verdict is acted "
                "on by a tombstone (acknowledge it instead)",
            )
        if record is None or record.status is not Status.ACTIVE:
            state = "missing" if record is None else record.status.value
            raise _refuse(
                "not_active",
                f"record '{p.record_id}' is {state}, not active memory: acknowledge the verdict instead",
            )
        batch = WriteBatch(txn.realm, OPERATOR, (TombstoneOp(record.id, record.scope),), p.rationale)
        txn.apply(batch)
        closed = [v.run_id for v, s in verdicts if s == "open"]
    else:
        if p.rationale is not None:
            hit = find_secret((("rationale", p.rationale),))
            if hit is not None:
                raise secret_refused(hit)
        closed = [p.run_id]
    done = _DONE[p.action]
    txn.close_audit_verdicts(p.record_id, closed, done)
    resolution = {
        "action": p.action,
        "reviewer": reviewer,
        "run_id": p.run_id,
        "record_id": p.record_id,
        "verdict": row.verdict,
        "expected_content_hash": p.expected_content_hash,
        "rationale": p.rationale,
        "closed_runs": sorted(set(closed)),
    }
    token = txn.note_verdict_resolution(p.record_id, OPERATOR, {"resolution": resolution})
    # Read back from its audit row, as a replay reads it: the first answer and every replay agree.
    decision = _decision_of(txn, p)
    assert decision is not None and decision["audit_token"] == token, (decision, token)
    return VerdictResolution(done, txn.realm, row, done, txn.get(p.record_id), decision, applied=True)


def _decision_of(txn: RealmTxn, p: ResolveParams) -> dict[str, Any] | None:
    """The audit evidence of the resolution that closed run ``p.run_id``'s verdict on the record."""
    for found in txn.verdict_resolutions(p.record_id):
        if p.run_id in found["resolution"].get("closed_runs", ()):
            return found
    return None


def _replay(
    txn: RealmTxn, p: ResolveParams, row: VerdictRow, status: str, record: Record | None
) -> VerdictResolution:
    decision = _decision_of(txn, p)
    done = decision["resolution"]["action"] if decision is not None else None
    if decision is None or done != p.action:
        raise _refuse(
            "already_resolved",
            f"the verdict of run '{p.run_id}' on record '{p.record_id}' was already resolved ({status})",
            status=status,
        )
    return VerdictResolution(
        f"already_{_DONE[p.action]}", txn.realm, row, status, record, decision, applied=False
    )
