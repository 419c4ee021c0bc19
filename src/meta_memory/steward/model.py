"""The steward's vocabulary: what a dream shows its reviewer (:class:`DreamInput`), what the reviewer
answers (:class:`DreamVerdicts`), the one strict parser of a verdict object that arrived as JSON
(:func:`parse_verdicts`), and what a dream reports back (:class:`DreamReport`). Nothing here holds
state, a lock or a clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, TypeVar

from ..errors import InvalidParams
from ..memory.params import parse_optional_name, parse_realm
from ..memory.records import Record
from ..memory.rows import HarvestItem, ProposalItem

__all__ = [
    "HARVESTS_MAX",
    "HARVEST_RECORDS_MAX",
    "PROPOSALS_MAX",
    "QUARANTINE_MAX",
    "USAGE_SAMPLE_MAX",
    "Contradiction",
    "DreamInput",
    "DreamParams",
    "DreamReport",
    "DreamVerdicts",
    "HarvestItem",
    "HarvestVerdict",
    "HarvestVerdictKind",
    "ItemOutcome",
    "OpenLoopEscalation",
    "ProposalItem",
    "ProposalVerdict",
    "ProposalVerdictKind",
    "QuarantineItem",
    "QuarantineVerdict",
    "QuarantineVerdictKind",
    "UsageVerdict",
    "UsageVerdictKind",
    "VerdictFormatError",
    "parse_dream_params",
    "parse_verdicts",
]

# REFERENCE 5.2: what one dream may look at.
QUARANTINE_MAX = 16
PROPOSALS_MAX = 32
HARVESTS_MAX = 4
HARVEST_RECORDS_MAX = 32
USAGE_SAMPLE_MAX = 16

QuarantineVerdictKind: TypeAlias = Literal["release", "tombstone", "hold", "promote_pending_gate"]
ProposalVerdictKind: TypeAlias = Literal["accept", "reject", "hold", "promote_pending_gate"]
HarvestVerdictKind: TypeAlias = Literal["promote", "tombstone", "keep"]
UsageVerdictKind: TypeAlias = Literal["load_bearing", "dead_weight", "unknown"]

QUARANTINE_VERDICTS: tuple[QuarantineVerdictKind, ...] = (
    "release",
    "tombstone",
    "hold",
    "promote_pending_gate",
)
PROPOSAL_VERDICTS: tuple[ProposalVerdictKind, ...] = ("accept", "reject", "hold", "promote_pending_gate")
HARVEST_VERDICTS: tuple[HarvestVerdictKind, ...] = ("promote", "tombstone", "keep")
USAGE_VERDICTS: tuple[UsageVerdictKind, ...] = ("load_bearing", "dead_weight", "unknown")

V = TypeVar("V", bound=str)


# -- what the reviewer sees ---------------------------------------------------------------------


@dataclass(frozen=True)
class QuarantineItem:
    """A quarantined identity-scoped record, whole (body included), with what the shell knows of it.

    ``duplicate_of``: an active record of the same scope with exactly this content, if any.
    """

    record: Record
    duplicate_of: str | None = None


@dataclass(frozen=True)
class DreamInput:
    """Everything one dream shows its reviewer, bounded by the REFERENCE 5.2 limits."""

    realm: str
    run_id: str
    now_ms: int
    partition: str
    mob: str | None = None
    quarantined: tuple[QuarantineItem, ...] = ()
    proposals: tuple[ProposalItem, ...] = ()
    harvests: tuple[HarvestItem, ...] = ()
    usage_sample: tuple[Record, ...] = ()
    # Sources already waiting on an operator gate: verdicts naming them are dropped.
    gated_sources: tuple[str, ...] = ()
    operator_scope_active: bool = False

    def is_empty(self) -> bool:
        return not (self.quarantined or self.proposals or self.harvests)


# -- what the reviewer answers ------------------------------------------------------------------


@dataclass(frozen=True)
class QuarantineVerdict:
    record_id: str
    verdict: QuarantineVerdictKind
    rationale: str | None = None
    target_mob: str | None = None


@dataclass(frozen=True)
class ProposalVerdict:
    proposal_id: str
    verdict: ProposalVerdictKind
    rationale: str | None = None


@dataclass(frozen=True)
class HarvestVerdict:
    """A verdict on one record of a harvest (the record names its harvest)."""

    record_id: str
    verdict: HarvestVerdictKind
    rationale: str | None = None
    target_mob: str | None = None


@dataclass(frozen=True)
class Contradiction:
    """Conflicting facts with operational consequence; bridged into the ledger when it names both an
    entity and a topic."""

    reason: str
    entity: str | None = None
    topic: str | None = None
    record_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class OpenLoopEscalation:
    record_id: str


@dataclass(frozen=True)
class UsageVerdict:
    record_id: str
    verdict: UsageVerdictKind
    rationale: str | None = None


@dataclass(frozen=True)
class DreamVerdicts:
    """A reviewer's whole answer. Anything the input did not show is ignored by the shell."""

    quarantine: tuple[QuarantineVerdict, ...] = ()
    proposals: tuple[ProposalVerdict, ...] = ()
    harvests: tuple[HarvestVerdict, ...] = ()
    contradictions: tuple[Contradiction, ...] = ()
    open_loop_escalations: tuple[OpenLoopEscalation, ...] = ()
    usage: tuple[UsageVerdict, ...] = ()


class VerdictFormatError(ValueError):
    """A verdict object that breaks the format; the message says where."""


def _str(obj: Mapping[str, Any], key: str, where: str, *, required: bool = True) -> str | None:
    value = obj.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise VerdictFormatError(f"{where}.{key} must be a non-empty string")
    return value.strip()


def _choice(obj: Mapping[str, Any], where: str, allowed: tuple[V, ...]) -> V:
    value = obj.get("verdict")
    for choice in allowed:
        if value == choice:
            return choice
    raise VerdictFormatError(f"{where}.verdict must be one of {', '.join(allowed)} (got {value!r})")


def _entries(obj: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    value = obj.get(key, [])
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(e, dict) for e in value):
        raise VerdictFormatError(f"{key} must be an array of objects")
    return value


_KEYS = (
    "quarantine_verdicts",
    "proposal_verdicts",
    "harvest_verdicts",
    "contradictions",
    "open_loop_escalations",
    "usage_verdicts",
)


def parse_verdicts(obj: Any) -> DreamVerdicts:
    """Read a verdict object (decoded JSON) strictly: unknown top-level keys, unknown verdicts and
    malformed entries are refused whole, never half-applied.

    Raises:
        VerdictFormatError: the object breaks the format.
    """
    if not isinstance(obj, dict):
        raise VerdictFormatError("the verdict must be a JSON object")
    unknown = sorted(set(obj) - set(_KEYS))
    if unknown:
        raise VerdictFormatError(f"unknown verdict keys: {', '.join(unknown)}")
    quarantine = tuple(
        QuarantineVerdict(
            record_id=str(_str(e, "record_id", f"quarantine_verdicts[{i}]")),
            verdict=_choice(e, f"quarantine_verdicts[{i}]", QUARANTINE_VERDICTS),
            rationale=_str(e, "rationale", f"quarantine_verdicts[{i}]", required=False),
            target_mob=_str(e, "target_mob", f"quarantine_verdicts[{i}]", required=False),
        )
        for i, e in enumerate(_entries(obj, "quarantine_verdicts"))
    )
    proposals = tuple(
        ProposalVerdict(
            proposal_id=str(_str(e, "proposal_id", f"proposal_verdicts[{i}]")),
            verdict=_choice(e, f"proposal_verdicts[{i}]", PROPOSAL_VERDICTS),
            rationale=_str(e, "rationale", f"proposal_verdicts[{i}]", required=False),
        )
        for i, e in enumerate(_entries(obj, "proposal_verdicts"))
    )
    harvests = tuple(
        HarvestVerdict(
            record_id=str(_str(e, "record_id", f"harvest_verdicts[{i}]")),
            verdict=_choice(e, f"harvest_verdicts[{i}]", HARVEST_VERDICTS),
            rationale=_str(e, "rationale", f"harvest_verdicts[{i}]", required=False),
            target_mob=_str(e, "target_mob", f"harvest_verdicts[{i}]", required=False),
        )
        for i, e in enumerate(_entries(obj, "harvest_verdicts"))
    )
    contradictions = []
    for i, e in enumerate(_entries(obj, "contradictions")):
        where = f"contradictions[{i}]"
        ids = e.get("record_ids", [])
        if not isinstance(ids, list) or not all(isinstance(x, str) and x.strip() for x in ids):
            raise VerdictFormatError(f"{where}.record_ids must be an array of non-empty strings")
        contradictions.append(
            Contradiction(
                reason=str(_str(e, "reason", where)),
                entity=_str(e, "entity", where, required=False),
                topic=_str(e, "topic", where, required=False),
                record_ids=tuple(x.strip() for x in ids),
            )
        )
    escalations = tuple(
        OpenLoopEscalation(str(_str(e, "record_id", f"open_loop_escalations[{i}]")))
        for i, e in enumerate(_entries(obj, "open_loop_escalations"))
    )
    usage = tuple(
        UsageVerdict(
            record_id=str(_str(e, "record_id", f"usage_verdicts[{i}]")),
            verdict=_choice(e, f"usage_verdicts[{i}]", USAGE_VERDICTS),
            rationale=_str(e, "rationale", f"usage_verdicts[{i}]", required=False),
        )
        for i, e in enumerate(_entries(obj, "usage_verdicts"))
    )
    return DreamVerdicts(quarantine, proposals, harvests, tuple(contradictions), escalations, usage)


@dataclass(frozen=True)
class DreamParams:
    realm: str
    mob: str | None


def parse_dream_params(params: Any, *, default_realm: str) -> DreamParams:
    """``meta/memory/steward/dream {realm?, mob?}``; other keys are ignored.

    Raises:
        InvalidParams: params not an object, or ``realm`` / ``mob`` present but blank or not a string.
    """
    if params is None:
        return DreamParams(default_realm, None)
    if not isinstance(params, dict):
        raise InvalidParams("params must be a JSON object")
    return DreamParams(parse_realm(params) or default_realm, parse_optional_name(params, "mob"))


# -- what a dream reports -----------------------------------------------------------------------


@dataclass(frozen=True)
class ItemOutcome:
    """What became of one verdict (or of an item the reviewer left without one).

    ``subject``: ``quarantine | proposal | harvest | contradiction | open_loop``. ``outcome`` is
    what happened (``released``, ``tombstoned``, ``already_released``, ``already_tombstoned``,
    ``held``, ``gated``, ``accepted``, ``rejected``, ``promoted``, ``kept``, ``escalated``,
    ``bridged``, ``refused``, ``ignored``); ``reason`` says why a verdict did not apply as given.
    """

    subject: str
    target: str
    verdict: str
    outcome: str
    reason: str | None = None
    record_id: str | None = None
    pending_id: str | None = None

    def to_wire(self) -> dict[str, Any]:
        return {
            "subject": self.subject,
            "target": self.target,
            "verdict": self.verdict,
            "outcome": self.outcome,
            "reason": self.reason,
            "record_id": self.record_id,
            "pending_id": self.pending_id,
        }


@dataclass
class DreamReport:
    """One dream run (``status = "completed"``) or a dream that did not run (``"skipped"``)."""

    realm: str
    partition: str
    status: Literal["completed", "skipped"] = "completed"
    run_id: str | None = None
    reviewer: str | None = None
    started_at_ms: int | None = None
    completed_at_ms: int | None = None
    ops_committed: int = 0
    skipped_reason: str | None = None
    reviewer_error: str | None = None
    outcomes: list[ItemOutcome] = field(default_factory=list)
    expired_promotions: list[str] = field(default_factory=list)
    audit_verdicts: int = 0

    def counts(self) -> dict[str, int]:
        """``"<subject>.<outcome>" -> n`` over every outcome."""
        out: dict[str, int] = {}
        for o in self.outcomes:
            key = f"{o.subject}.{o.outcome}"
            out[key] = out.get(key, 0) + 1
        return dict(sorted(out.items()))

    def outcomes_for(self, subject: str) -> list[ItemOutcome]:
        return [o for o in self.outcomes if o.subject == subject]

    def summary(self) -> dict[str, Any]:
        """The event/detail summary: counts and errors, no record content and no rationale."""
        return {
            "partition": self.partition,
            "reviewer": self.reviewer,
            "reviewer_error": self.reviewer_error,
            "counts": self.counts(),
            "expired_promotions": list(self.expired_promotions),
            "audit_verdicts": self.audit_verdicts,
        }

    def to_wire(self) -> dict[str, Any]:
        return {
            "realm": self.realm,
            "partition": self.partition,
            "status": self.status,
            "run_id": self.run_id,
            "reviewer": self.reviewer,
            "started_at_ms": self.started_at_ms,
            "completed_at_ms": self.completed_at_ms,
            "ops_committed": self.ops_committed,
            "skipped_reason": self.skipped_reason,
            "reviewer_error": self.reviewer_error,
            "outcomes": [o.to_wire() for o in self.outcomes],
            "expired_promotions": list(self.expired_promotions),
            "audit_verdicts": self.audit_verdicts,
        }
