"""The rows realm stores hand to the domain: what a write committed, the record listings (the
panel's and agent memory's), the steward's queue, gated-promotion mappings.

Every backend (the SQLite realm files, PostgreSQL) returns these same types, so the panel, the
review rules and the steward never see a backend's own row format. The panel's list rows carry
no body: a record's size is ``body_bytes`` (its UTF-8 length), and ``body_head`` its first
:data:`BODY_HEAD_CHARS` characters unless its content is held for quarantine review; agent
memory's listing (:class:`FullRecordsPage`) carries whole records. A gated promotion's
``stage_token`` stays with the steward, never on the wire. A host session is a :class:`SessionRow`: sessions are data of the
realm store, not objects of one gateway.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .records import Record

__all__ = [
    "BODY_HEAD_CHARS",
    "ChainLinks",
    "CommitResult",
    "DreamRunRow",
    "DreamSummaryRow",
    "FullRecordsPage",
    "HarvestItem",
    "HarvestRow",
    "InjectionEntry",
    "InjectionRow",
    "PromotionEntry",
    "PromotionRow",
    "ProposalItem",
    "ProposalRow",
    "ProposalState",
    "QueueLimits",
    "QueueRows",
    "RecordAccess",
    "RecordFilter",
    "RecordKey",
    "RecordRow",
    "RecordsPage",
    "ScopeCounts",
    "SessionRow",
    "VerdictRow",
    "record_key",
]

# -- writes ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProposalItem:
    """A pending (or held) proposal for mob or operator scope. Its text is untrusted data."""

    proposal_id: str
    scope_kind: str
    scope_key: str
    kind: str
    title: str
    description: str
    body: str
    tags: tuple[str, ...]
    author: Mapping[str, Any]
    status: str
    tainted: bool
    created_at_ms: int
    duplicate_of: str | None = None


@dataclass(frozen=True)
class HarvestItem:
    """An exit interview: a retired identity's session and its active identity-scoped records."""

    identity: str
    session_key: str
    cause: str
    retired_at_ms: int
    records: tuple[Record, ...] = ()


@dataclass(frozen=True)
class CommitResult:
    """What a committed batch left behind. ``deduplicated``: an identical active record
    already existed and was returned instead of a new one (nothing was written)."""

    records: tuple[Record, ...]
    deduplicated: bool = False
    audit_seq: int | None = None


@dataclass(frozen=True)
class InjectionRow:
    record_id: str
    identity: str
    session_key: str | None
    surface: str  # "build" | "turn"
    at_ms: int


# -- the panel's reads --------------------------------------------------------------------------

BODY_HEAD_CHARS = 240
"""How much of a body a list row carries (``RecordRow.body_head``), in characters: enough for a
one-line preview once whitespace runs are collapsed."""

RecordKey = tuple[int, str]
"""A record's place in the listing order: ``(updated_at_ms, memory_id)``, newest (largest) first."""


@dataclass(frozen=True)
class RecordRow:
    """One record as a list row: everything but its body (and its content hash).

    ``body_head``: the body's first :data:`BODY_HEAD_CHARS` characters, ``None`` when reading the
    record's content needs ``memory.quarantine.review`` (a quarantined record, a tombstone that was
    ever quarantined): the store never selects that text for a list.
    """

    memory_id: str
    scope_kind: str
    scope_key: str
    kind: str
    title: str
    description: str
    tags: tuple[str, ...]
    author: dict[str, Any] | None
    trust: str
    status: str
    quarantine_reason: str | None
    supersedes: str | None
    superseded_by: str | None
    derived_from: tuple[str, ...]
    ever_quarantined: bool
    created_at_ms: int
    updated_at_ms: int
    body_bytes: int
    body_head: str | None = None

    @property
    def key(self) -> RecordKey:
        return (self.updated_at_ms, self.memory_id)


@dataclass(frozen=True)
class RecordFilter:
    """The record listings' filters, all of them applied by the store's SQL; ``None`` (or no
    tags) leaves a dimension unconstrained.

    ``tags_any``: the record carries at least one of them; ``tags_all``: every one of them (tags
    compare exactly as stored). The time windows are half-open: ``*_after_ms`` is inclusive,
    ``*_before_ms`` exclusive, so consecutive windows neither overlap nor leave a gap.

    ``text``: a case-insensitive substring of the title or the body, matched literally (``%``,
    ``_`` and ``\\`` are no wildcards). A body whose content needs quarantine review (a
    quarantined record, a tombstone that was ever quarantined) is never matched: such a record
    matches by its title only, so the filter cannot probe a body its list row withholds.
    """

    scope_kind: str | None = None
    scope_key: str | None = None
    # ``active`` is an active record not yet expired and ``expired`` an active one whose expiry
    # has come, both at ``now_ms`` (None: expiry not judged, ``active`` is the stored status).
    status: str | None = None
    kind: str | None = None
    tags_any: tuple[str, ...] = ()
    tags_all: tuple[str, ...] = ()
    created_after_ms: int | None = None
    created_before_ms: int | None = None
    updated_after_ms: int | None = None
    updated_before_ms: int | None = None
    text: str | None = None
    now_ms: int | None = None


@dataclass(frozen=True)
class RecordsPage:
    """Rows strictly past the cursor asked for, and where the next page starts (``None``: no more)."""

    rows: tuple[RecordRow, ...]
    next_cursor: RecordKey | None


@dataclass(frozen=True)
class FullRecordsPage:
    """Whole records strictly past the cursor asked for, in the listing order (``updated_at_ms``
    desc, memory id desc), and where the next page starts (``None``: no more)."""

    records: tuple[Record, ...]
    next_cursor: RecordKey | None


def record_key(record: Record) -> RecordKey:
    """A record's place in the listing order."""
    return (record.updated_at_ms, record.id)


@dataclass(frozen=True)
class RecordAccess:
    """What judging a record's visibility needs (REFERENCE 6)."""

    scope_kind: str
    scope_key: str
    status: str
    ever_quarantined: bool


@dataclass(frozen=True)
class ChainLinks:
    """A record's supersede chain around it: ``ancestors`` nearest first, ``successors`` (committed)
    oldest first, then the ``claimants``: uncommitted records that name the chain's tip as the record
    they supersede (a quarantined update, a discarded one)."""

    ancestors: tuple[RecordRow, ...]
    successors: tuple[RecordRow, ...]
    claimants: tuple[RecordRow, ...]


@dataclass(frozen=True)
class InjectionEntry:
    seq: int
    record_id: str
    identity: str
    session_key: str | None
    surface: str
    at_ms: int


@dataclass(frozen=True)
class PromotionEntry:
    """A gated-promotion mapping row, without its stage token."""

    pending_id: str
    record_id: str
    scope_kind: str
    scope_key: str
    rationale: str | None
    status: str
    proposal_id: str | None
    created_at_ms: int


@dataclass(frozen=True)
class ProposalRow:
    """An open proposal as the panel lists it: no body, but the content hash a decision binds to."""

    proposal_id: str
    scope_kind: str
    scope_key: str
    title: str
    kind: str
    author: dict[str, Any] | None
    status: str
    created_at_ms: int
    tainted: bool
    content_hash: str


@dataclass(frozen=True)
class HarvestRow:
    identity: str
    session_key: str
    cause: str
    retired_at_ms: int


@dataclass(frozen=True)
class VerdictRow:
    seq: int
    run_id: str
    record_id: str
    verdict: str
    rationale: str | None
    created_at_ms: int


@dataclass(frozen=True)
class DreamSummaryRow:
    """One steward run as its audit rows tell it."""

    run_id: str
    first_op_at_ms: int
    last_op_at_ms: int
    ops: int
    op_kinds: dict[str, int]
    quarantined_ops: int
    memory_ids: tuple[str, ...]
    rationales: tuple[str, ...]


@dataclass(frozen=True)
class DreamRunRow:
    run_id: str
    partition: str
    started_at_ms: int
    completed_at_ms: int | None
    ops_committed: int
    detail: Any


@dataclass(frozen=True)
class ScopeCounts:
    scope_kind: str
    scope_key: str
    active: int
    quarantined: int
    superseded: int
    tombstoned: int
    body_bytes: int


# -- the steward's queue and its gated promotions ---------------------------------------------


@dataclass(frozen=True)
class QueueLimits:
    quarantined: int
    proposals: int
    harvests: int
    harvest_records: int
    usage_sample: int


@dataclass(frozen=True)
class QueueRows:
    """What waits for a dream. ``quarantined``: each record with the active duplicate of its content."""

    quarantined: tuple[tuple[Record, str | None], ...]
    proposals: tuple[ProposalItem, ...]
    harvests: tuple[HarvestItem, ...]
    usage_sample: tuple[Record, ...]
    gated_sources: tuple[str, ...]


@dataclass(frozen=True)
class PromotionRow:
    """A mapping row. ``stage_token`` stays inside the steward: it is never put on the wire."""

    pending_id: str
    stage_token: str
    record_id: str
    scope_kind: str
    scope_key: str
    rationale: str | None
    status: str
    proposal_id: str | None
    created_at_ms: int
    resolved_at_ms: int | None


@dataclass(frozen=True)
class ProposalState:
    """What a steward verdict on a proposal reads back inside its transaction."""

    proposal_id: str
    scope_kind: str
    scope_key: str
    status: str
    tainted: bool


# -- host sessions -----------------------------------------------------------------------------


@dataclass(frozen=True)
class SessionRow:
    """One host session as the realm store keeps it, open or ended.

    ``taint`` is the source of the first untrusted content the session ingested (``None`` while it
    is clean); ``boundary`` marks a session a ``reset`` left. ``ended`` is ``None`` while the
    session is open, else why it ended: ``closed``, ``reset`` or ``expired`` (idle past the
    configured timeout). ``used_bytes`` and ``injected`` are its injection budget (REFERENCE 3.5),
    ``epoch`` counts its compactions (a budget charge from before one is dropped). ``owner`` is the
    authenticated subject that opened it over HTTP, ``None`` on the trusted channels. ``pending`` is
    not the session's own: the pending taint its identity held when the row was read (read with it,
    never written with it).
    """

    key: str
    identity: str
    mob: str | None
    owner: str | None
    nonce: str
    opened_at_ms: int
    seen_at_ms: int
    taint: str | None = None
    boundary: bool = False
    ended: str | None = None
    ended_at_ms: int | None = None
    used_bytes: int = 0
    injected: tuple[str, ...] = ()
    epoch: int = 0
    pending: str | None = None

    @property
    def is_open(self) -> bool:
        return self.ended is None
