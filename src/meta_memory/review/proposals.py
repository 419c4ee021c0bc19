"""Proposals an operator decides (``meta/memory/proposals/decide``) and proposals the application
queues (``meta/agent_memory/propose``).

A decision is bound to the proposal's content hash (of its title and body, as a record's is),
recorded with the authenticated reviewer, and made in one transaction of the realm's store: an
``accept`` commits a record into the proposal's scope through the store's one validator, authored
by ``operator`` (the party that committed it; no dream ran) at ``agent_observed`` trust (the words
are an agent's), ``derived_from`` the proposal; a ``reject`` only rejects. A tainted proposal's
accept commits nothing: it stages a gated promotion (the steward's own, steward/promotions.py)
whose gating entry a console reviewer decides, and whose actor is the reviewer who accepted, so
that reviewer cannot approve it. Every decision writes one ``proposal_decision`` audit row keyed
by the proposal id; the answer is read back from it, so a replay (the same verdict again) is the
original decision byte for byte. A proposal the steward decided, or one decided with the other
verdict, is refused; a ``held`` one is decided like a pending one. Events are emitted after the
commit and never carry the reviewer or the rationale.

The application queues a proposal for mob or operator scope, authored ``application`` and never
tainted (the channel is trusted, as its ``remember`` is); an operator-scope proposal needs
``operator_scope = "provisional"``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..errors import InvalidParams, ProposalReviewRefused, UnknownRecord, WriteRefused
from ..events import SYSTEM_IDENTITY, EventSink
from ..memory.params import IDENTITY_MAX_BYTES, normalize_tags, parse_realm
from ..memory.records import (
    APPLICATION,
    OPERATOR,
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
from ..memory.rows import ProposalItem
from ..memory.secrets import find_secret
from ..memory.service import AgentMemory
from ..memory.store import RealmTxn
from ..memory.validator import (
    BODY_MAX_BYTES,
    DESCRIPTION_MAX_BYTES,
    TITLE_MAX_BYTES,
    CreateOp,
    WriteBatch,
    secret_refused,
    validate_fields,
)
from .decide import parse_content_hash, parse_rationale
from .rules import PROMOTION_EXPIRY_MS, receipt

if TYPE_CHECKING:
    from ..steward.promotions import Promotions, StagedPromotion

__all__ = [
    "DECIDABLE_SCOPES",
    "ProposalDecideParams",
    "ProposalOutcome",
    "ProposalReview",
    "ProposeParams",
    "parse_proposal_decide_params",
    "parse_propose_params",
    "proposal_receipt",
]

DECIDABLE_SCOPES = (ScopeKind.MOB.value, ScopeKind.OPERATOR.value)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_WS = re.compile(r"\s+")

Authorize = Callable[[ProposalItem], None]
"""The calling surface's access check on the proposal it read (its scope), before anything is
written; it raises to refuse."""


# -- parameters ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProposalDecideParams:
    realm: str
    proposal_id: str
    verdict: str  # accept | reject
    expected_content_hash: str
    rationale: str | None


def _obj(params: Any) -> dict[str, Any]:
    if not isinstance(params, dict):
        raise InvalidParams("params must be a JSON object")
    return params


def parse_proposal_decide_params(params: Any, *, default_realm: str) -> ProposalDecideParams:
    """``{realm?, proposal_id, verdict, expected_content_hash, rationale?}``."""
    p = _obj(params)
    realm = parse_realm(p) or default_realm
    proposal_id = p.get("proposal_id")
    if not isinstance(proposal_id, str) or not proposal_id.strip():
        raise InvalidParams("proposal_id must be a non-empty string")
    verdict = p.get("verdict")
    if verdict not in ("accept", "reject"):
        raise InvalidParams(f"verdict must be 'accept' or 'reject' (got {verdict!r})")
    expected = parse_content_hash(p, "the proposal you read")
    rationale = parse_rationale(p)
    return ProposalDecideParams(realm, proposal_id.strip(), verdict, expected, rationale)


@dataclass(frozen=True)
class ProposeParams:
    realm: str
    scope: Scope
    kind: RecordKind
    title: str
    description: str
    body: str
    tags: tuple[str, ...]


def _text(p: dict[str, Any], name: str, max_bytes: int, *, collapse: bool = False) -> str:
    value = p.get(name)
    if not isinstance(value, str) or not value.strip():
        raise InvalidParams(f"{name} must be a non-empty string")
    text = _WS.sub(" ", value).strip() if collapse else value.strip()
    if len(text.encode("utf-8")) > max_bytes:
        raise InvalidParams(f"{name} must be at most {max_bytes} bytes")
    return text


def _scope(p: dict[str, Any], realm: str) -> Scope:
    value = p.get("scope")
    if not isinstance(value, dict):
        raise InvalidParams("scope must be an object {kind, key}")
    unknown = sorted(k for k in value if k not in ("kind", "key"))
    if unknown:
        raise InvalidParams(f"scope takes only kind and key (got {unknown[0]!r})")
    kind = value.get("kind")
    if kind not in DECIDABLE_SCOPES:
        raise InvalidParams(f"scope.kind must be 'mob' or 'operator' (got {kind!r})")
    key = value.get("key")
    if (
        not isinstance(key, str)
        or not key.strip()
        or key != key.strip()
        or _CONTROL.search(key)
        or len(key.encode("utf-8")) > IDENTITY_MAX_BYTES
    ):
        raise InvalidParams(
            f"scope.key must be a non-empty string of at most {IDENTITY_MAX_BYTES} bytes, "
            "without surrounding whitespace or control characters"
        )
    return Scope(ScopeKind(kind), realm, key)


def parse_propose_params(params: Any, *, default_realm: str) -> ProposeParams:
    """``{realm?, scope: {kind, key}, title, body, description?, tags?, kind?}``."""
    p = _obj(params)
    realm = parse_realm(p) or default_realm
    scope = _scope(p, realm)
    title = _text(p, "title", TITLE_MAX_BYTES, collapse=True)
    body = _text(p, "body", BODY_MAX_BYTES)
    description = p.get("description", "")
    if description is None:
        description = ""
    if not isinstance(description, str):
        raise InvalidParams("description must be a string when provided")
    description = description.strip()
    if len(description.encode("utf-8")) > DESCRIPTION_MAX_BYTES:
        raise InvalidParams(f"description must be at most {DESCRIPTION_MAX_BYTES} bytes")
    tags = normalize_tags(p["tags"]) if p.get("tags") is not None else ()
    kind = p.get("kind", RecordKind.FACT.value)
    if kind is None:
        kind = RecordKind.FACT.value
    kinds = tuple(k.value for k in RecordKind)
    if kind not in kinds:
        raise InvalidParams(f"kind must be one of {', '.join(kinds)} (got {kind!r})")
    return ProposeParams(realm, scope, RecordKind(kind), title, description, body, tags)


# -- the decision -------------------------------------------------------------------------------


def proposal_receipt(item: ProposalItem) -> dict[str, Any]:
    """A proposal as it stands now, as decisions report it (no body)."""
    return {
        "proposal_id": item.proposal_id,
        "scope_kind": item.scope_kind,
        "scope_key": item.scope_key,
        "kind": item.kind,
        "title": item.title,
        "author": dict(item.author),
        "status": item.status,
        "tainted": item.tainted,
        "created_at_ms": item.created_at_ms,
        "content_hash": content_hash(item.title, item.body),
    }


@dataclass(frozen=True)
class ProposalOutcome:
    """What a decision did. ``outcome``: ``accepted``, ``rejected`` or ``gated``, or
    ``already_<that>`` for a replay (nothing written). ``proposal``, ``record`` and ``pending_id``
    stand as they are now; ``decision`` is the audit row's, the same bytes on every replay."""

    realm: str
    outcome: str
    proposal: ProposalItem
    record: Record | None
    pending_id: str | None
    decision: dict[str, Any]
    applied: bool

    def to_wire(self) -> dict[str, Any]:
        return {
            "realm": self.realm,
            "outcome": self.outcome,
            "proposal": proposal_receipt(self.proposal),
            "record": receipt(self.record) if self.record is not None else None,
            "pending_id": self.pending_id,
            "decision": self.decision,
        }


def _refuse(reason: str, message: str, **extra: Any) -> ProposalReviewRefused:
    return ProposalReviewRefused(reason, message, **extra)


def _unknown(proposal_id: str) -> UnknownRecord:
    return UnknownRecord(f"unknown proposal '{proposal_id}'")


def _note(proposal_id: str, rationale: str | None) -> str:
    """The write's rationale, as the steward's accepts word it."""
    return f"proposal {proposal_id}" + (f": {rationale}" if rationale else "")


class ProposalReview:
    """Operator decisions on proposals, and proposals the application queues.

    Args:
        memory: the agent-memory subsystem whose realm stores hold the proposals.
        events: the timeline sink.
        promotions: the steward's gated promotions (a tainted proposal's accept is staged there).
        operator_scope_active: ``operator_scope = "provisional"``: operator-scope proposals exist
            and may be accepted.
    """

    def __init__(
        self, memory: AgentMemory, events: EventSink, promotions: Promotions, *, operator_scope_active: bool
    ) -> None:
        self.memory = memory
        self.events = events
        self.promotions = promotions
        self.operator_scope_active = operator_scope_active

    # -- the application's proposals -----------------------------------------------------------

    def propose(self, p: ProposeParams) -> dict[str, Any]:
        """Queue a proposal authored by the application (never tainted).

        Raises:
            InvalidParams: an operator-scope proposal while ``operator_scope`` is off.
            WriteRefused: a field breaks the write rules (a secret, above all).
        """
        if p.scope.kind is ScopeKind.OPERATOR and not self.operator_scope_active:
            raise InvalidParams(
                "scope.kind 'operator' needs [agent_memory] operator_scope = \"provisional\" "
                '(operator_scope is "off": operator-scope memory has no proposals)'
            )
        validate_fields(p.title, p.description, p.body, p.tags)
        digest = content_hash(p.title, p.body)
        proposal_id = "prop-" + new_memory_id(digest, self.memory.clock.now_ms()).removeprefix("mem-")
        self.memory.store(p.realm).create_proposal(
            proposal_id=proposal_id,
            scope=p.scope,
            kind=p.kind.value,
            title=p.title,
            description=p.description,
            body=p.body,
            tags=p.tags,
            author=APPLICATION,
            tainted=False,
        )
        return {
            "proposal_id": proposal_id,
            "realm": p.realm,
            "scope_kind": p.scope.kind.value,
            "scope_key": p.scope.key,
            "status": "pending",
            "tainted": False,
            "content_hash": digest,
        }

    # -- the operator's decision ------------------------------------------------------------------

    def decide(
        self, p: ProposalDecideParams, *, reviewer: dict[str, Any], authorize: Authorize | None = None
    ) -> ProposalOutcome:
        """Accept or reject one proposal, in a transaction of its own.

        Args:
            reviewer: who decides, from the authenticated principal (never from the params).
            authorize: the surface's access check on the proposal's scope.

        Raises:
            UnknownRecord: -32001, no such proposal in the realm.
            AccessDenied: ``authorize`` refused.
            ProposalReviewRefused: -32043; ``data.reason`` says why.
            WriteRefused: the validator refused the record an accept writes, or the rationale.
        """
        store = self.memory.existing_store(p.realm)
        if store is None:  # a decision never creates a realm
            raise _unknown(p.proposal_id)
        with store.transaction() as txn:
            outcome, staged = self._decide_in_txn(txn, p, reviewer, authorize)
        if staged is not None:
            # Gating is opened only after the commit, as the steward's dream opens its gates.
            promotion, provisional = staged
            pending_id, _ = self.promotions.open_gate(promotion, provisional)
            outcome = replace(outcome, pending_id=pending_id)
        if outcome.applied:
            self._emit(outcome)
        return outcome

    def _decide_in_txn(
        self,
        txn: RealmTxn,
        p: ProposalDecideParams,
        reviewer: dict[str, Any],
        authorize: Authorize | None,
    ) -> tuple[ProposalOutcome, tuple[StagedPromotion, str] | None]:
        item = txn.proposal_item(p.proposal_id)
        if item is None:
            raise _unknown(p.proposal_id)
        if authorize is not None:
            authorize(item)
        waiting = txn.pending_promotions_of(p.proposal_id)
        prior = txn.prior_review(p.proposal_id)
        if prior is not None and (
            prior["review"].get("outcome") != "gated" or waiting or item.status not in ("pending", "held")
        ):
            return self._replay(txn, item, p, prior, waiting), None
        if item.status not in ("pending", "held"):
            raise _refuse(
                "already_decided",
                f"proposal '{p.proposal_id}' was already decided by the memory steward ({item.status})",
                status=item.status,
            )
        if item.scope_kind not in DECIDABLE_SCOPES:
            raise _refuse(
                "unsupported_scope",
                f"proposal '{p.proposal_id}' names {item.scope_kind!r} scope: only mob and operator "
                "proposals are decided",
            )
        if p.expected_content_hash != content_hash(item.title, item.body):
            # The correct hash is not told: a reviewer reads it with the proposal, from the panel
            # its access rules let it read, so a refusal cannot stand in for reading it.
            raise _refuse(
                "content_mismatch",
                f"proposal '{p.proposal_id}' content does not match expected_content_hash: read the "
                "proposal again and decide on what it holds",
            )
        if (
            p.verdict == "accept"
            and item.scope_kind == ScopeKind.OPERATOR.value
            and not self.operator_scope_active
        ):
            raise _refuse(
                "operator_scope_off",
                f"proposal '{p.proposal_id}' is for operator scope, and [agent_memory] operator_scope is "
                '"off": it can be rejected, or accepted once operator_scope = "provisional"',
            )
        if p.rationale is not None:
            # A reject writes no record for the validator to scan: its rationale is scanned here.
            hit = find_secret((("rationale", p.rationale),))
            if hit is not None:
                raise secret_refused(hit)
        now = txn.now_ms()
        expired: list[str] = []
        invalidated: list[str] = []
        for promotion in waiting:
            expires_at = promotion.created_at_ms + PROMOTION_EXPIRY_MS
            if expires_at <= now:
                txn.resolve_promotion(promotion, "expired", now)
                expired.append(promotion.pending_id)
            elif p.verdict == "reject":  # the operator's reject supersedes a gate still waiting
                txn.resolve_promotion(promotion, "expired", now)
                invalidated.append(promotion.pending_id)
            else:
                raise _refuse(
                    "gate_pending",
                    f"proposal '{p.proposal_id}' waits on gated promotion {promotion.pending_id}",
                    pending_id=promotion.pending_id,
                    expires_at_ms=expires_at,
                )
        outcome = "rejected" if p.verdict == "reject" else "gated" if item.tainted else "accepted"
        scope = Scope(ScopeKind(item.scope_kind), txn.realm, item.scope_key)
        created = self._record(scope, item, now) if p.verdict == "accept" else None
        review: dict[str, Any] = {
            "verdict": p.verdict,
            "outcome": outcome,
            "reviewer": reviewer,
            "origin": p.proposal_id,
            "scope": {"kind": scope.kind.value, "key": scope.key},
            "record": None,
            "expected_content_hash": p.expected_content_hash,
            "tainted": item.tainted,
            "expired_promotions": expired,
            "invalidated_promotions": invalidated,
            "rationale": p.rationale,
        }
        staged: tuple[StagedPromotion, str] | None = None
        record_id: str | None = None
        if created is None:
            txn.set_proposal_status(p.proposal_id, "rejected", now)
        elif item.tainted:
            staged = self._stage(txn, item, created, p, reviewer)
        else:
            existing = txn.active_duplicate(created)
            record_id = existing.id if existing is not None else created.id
            review["record"] = record_id
            if existing is None:
                batch = WriteBatch(
                    txn.realm, OPERATOR, (CreateOp(created),), _note(p.proposal_id, p.rationale)
                )
                txn.apply(batch, review=review)
            txn.set_proposal_status(p.proposal_id, "accepted", now)
        seq = txn.note_proposal_decision(p.proposal_id, OPERATOR, review)
        # The decision is read back from its audit row, as a replay reads it: the first answer
        # and every replay are the same bytes.
        decision = txn.prior_review(p.proposal_id)
        assert decision is not None and decision["audit_token"] == f"audit-{seq}", (decision, seq)
        current = txn.proposal_item(p.proposal_id)
        assert current is not None
        record = txn.get(record_id) if record_id is not None else None
        pending_id = staged[1] if staged is not None else None
        return ProposalOutcome(
            txn.realm, outcome, current, record, pending_id, decision, applied=True
        ), staged

    def _replay(
        self,
        txn: RealmTxn,
        item: ProposalItem,
        p: ProposalDecideParams,
        prior: dict[str, Any],
        waiting: list[Any],
    ) -> ProposalOutcome:
        done = prior["review"].get("verdict")
        if done != p.verdict:
            raise _refuse(
                "already_decided",
                f"proposal '{p.proposal_id}' was already decided by an operator ({done})",
                status=item.status,
                verdict=done,
            )
        record_id = prior["review"].get("record")
        record = txn.get(record_id) if isinstance(record_id, str) else None
        pending_id = waiting[0].pending_id if waiting else None
        original = prior["review"].get("outcome")
        return ProposalOutcome(
            txn.realm, f"already_{original}", item, record, pending_id, prior, applied=False
        )

    def _record(self, scope: Scope, item: ProposalItem, now: int) -> Record:
        digest = content_hash(item.title, item.body)
        return Record(
            id=new_memory_id(digest, now),
            scope=scope,
            kind=RecordKind(item.kind),
            title=item.title,
            description=item.description,
            body=item.body,
            tags=tuple(item.tags),
            provenance=Provenance(author=OPERATOR),
            # The operator vouches for committing it, not for the agent's words: the tier an
            # LLM author's record would have, and never raised by this path.
            trust=Trust.AGENT_OBSERVED,
            status=Status.ACTIVE,
            created_at_ms=now,
            updated_at_ms=now,
            content_hash=digest,
            derived_from=(item.proposal_id,),
            ever_quarantined=item.tainted,
        )

    def _stage(
        self,
        txn: RealmTxn,
        item: ProposalItem,
        created: Record,
        p: ProposalDecideParams,
        reviewer: dict[str, Any],
    ) -> tuple[StagedPromotion, str]:
        # Imported here: the steward imports this package (its dream decides through review/).
        from ..steward.promotions import StagedPromotion, StageRefused

        principal = reviewer.get("principal")
        staged = StagedPromotion(
            txn.realm,
            item.proposal_id,
            None,
            WriteBatch(txn.realm, OPERATOR, (CreateOp(created),), _note(item.proposal_id, p.rationale)),
            created,
            p.rationale,
            item.proposal_id,
            "console",
            requested_by=principal if isinstance(principal, str) and principal else "console",
        )
        try:
            provisional = self.promotions.stage_in_txn(txn, staged)
        except StageRefused as exc:  # the validator refused the batch (no gate waits: checked above)
            rule = exc.reason.removeprefix("write_refused:")
            raise WriteRefused(rule, str(exc)) from None
        return staged, provisional

    def _emit(self, outcome: ProposalOutcome) -> None:
        """After the commit: the record's promotion (an accept that committed) and the verdict;
        never the reviewer or the rationale."""
        item = outcome.proposal
        review = outcome.decision["review"]
        record_id = review.get("record")
        if outcome.outcome == "accepted":
            self.events.emit(
                "memory.record.promoted",
                {
                    "realm": outcome.realm,
                    "record_id": record_id,
                    "source_record_id": None,
                    "scope_kind": item.scope_kind,
                    "scope_key": item.scope_key,
                    "proposal_id": item.proposal_id,
                    "gated": False,
                },
                identity=SYSTEM_IDENTITY,
            )
        self.events.emit(
            "memory.proposal.verdict",
            {
                "realm": outcome.realm,
                "proposal_id": item.proposal_id,
                "verdict": review.get("verdict"),
                "outcome": outcome.outcome,
                "record_id": record_id,
            },
            identity=SYSTEM_IDENTITY,
        )
