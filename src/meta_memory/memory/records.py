"""The agent-memory record model: scopes, statuses, trust tiers, authors, provenance, lineage.

Everything here is an immutable value. The wire shape of each value is produced by its
``to_wire()``; storage rows are produced and read by the store. The content hash is the
one REFERENCE 3.2 defines, so two runtimes agree on it byte for byte.
"""

from __future__ import annotations

import hashlib
import itertools
import os
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = [
    "LLM_AUTHOR_KINDS",
    "TRUST_ORDER",
    "Author",
    "Evidence",
    "Provenance",
    "Record",
    "RecordKind",
    "Scope",
    "ScopeKind",
    "Status",
    "Trust",
    "Usage",
    "VerificationClaim",
    "content_hash",
    "new_memory_id",
    "released_id",
]


class ScopeKind(StrEnum):
    IDENTITY = "identity"
    MOB = "mob"
    OPERATOR = "operator"
    REALM = "realm"


class Status(StrEnum):
    ACTIVE = "active"
    QUARANTINED = "quarantined"
    SUPERSEDED = "superseded"
    TOMBSTONED = "tombstoned"


class Trust(StrEnum):
    UNTRUSTED = "untrusted"
    AGENT_OBSERVED = "agent_observed"
    AGENT_VERIFIED = "agent_verified"
    APPLICATION = "application"
    OPERATOR = "operator"

    @property
    def rank(self) -> int:
        return TRUST_ORDER.index(self)


TRUST_ORDER: tuple[Trust, ...] = tuple(Trust)


class RecordKind(StrEnum):
    PREFERENCE = "preference"
    FACT = "fact"
    GOTCHA = "gotcha"
    PROCEDURE = "procedure"
    RELATIONSHIP = "relationship"
    OPEN_LOOP = "open_loop"
    REFERENCE = "reference"


LLM_AUTHOR_KINDS = frozenset({"agent", "steward", "distiller"})


@dataclass(frozen=True)
class Scope:
    """Where a record lives. Every scope is realm-keyed; ``key`` is ``""`` for realm scope."""

    kind: ScopeKind
    realm: str
    key: str = ""

    @classmethod
    def identity(cls, realm: str, identity: str) -> Scope:
        return cls(ScopeKind.IDENTITY, realm, identity)

    def to_wire(self) -> dict[str, str]:
        wire = {"scope": self.kind.value, "realm": self.realm}
        if self.kind is not ScopeKind.REALM:
            wire[self.kind.value] = self.key
        return wire


@dataclass(frozen=True)
class Author:
    """Who wrote: ``operator``, ``application``, ``agent{identity}``, ``steward{run_id}``, ``distiller{run_id}``."""

    kind: str
    identity: str | None = None
    run_id: str | None = None

    @property
    def is_llm(self) -> bool:
        return self.kind in LLM_AUTHOR_KINDS

    def to_wire(self) -> dict[str, str]:
        wire = {"author": self.kind}
        if self.identity is not None:
            wire["identity"] = self.identity
        if self.run_id is not None:
            wire["run_id"] = self.run_id
        return wire

    @classmethod
    def from_wire(cls, wire: dict[str, Any]) -> Author:
        return cls(str(wire["author"]), wire.get("identity"), wire.get("run_id"))


APPLICATION = Author("application")
OPERATOR = Author("operator")


@dataclass(frozen=True)
class Evidence:
    session_id: str
    generation: int = 0
    revision: int | None = None
    range: str | None = None

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"session_id": self.session_id, "generation": self.generation}
        if self.revision is not None:
            wire["revision"] = self.revision
        if self.range is not None:
            wire["range"] = self.range
        return wire


@dataclass(frozen=True)
class VerificationClaim:
    """An agent's claim that it checked a fact; never raises the tier by itself."""

    checked: str
    evidence: tuple[str, ...] = ()

    def to_wire(self) -> dict[str, Any]:
        return {"checked": self.checked, "evidence": list(self.evidence)}


@dataclass(frozen=True)
class Provenance:
    author: Author
    evidence: tuple[Evidence, ...] = ()
    profile: str | None = None
    verification: VerificationClaim | None = None

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {
            "evidence": [e.to_wire() for e in self.evidence],
            "author": self.author.to_wire(),
        }
        if self.profile is not None:
            wire["profile"] = self.profile
        if self.verification is not None:
            wire["verification"] = self.verification.to_wire()
        return wire

    @classmethod
    def from_wire(cls, wire: dict[str, Any]) -> Provenance:
        verification = wire.get("verification")
        return cls(
            author=Author.from_wire(wire["author"]),
            evidence=tuple(
                Evidence(e["session_id"], e.get("generation", 0), e.get("revision"), e.get("range"))
                for e in wire.get("evidence", [])
            ),
            profile=wire.get("profile"),
            verification=(
                VerificationClaim(verification["checked"], tuple(verification.get("evidence", [])))
                if verification
                else None
            ),
        )


@dataclass(frozen=True)
class Usage:
    injected_count: int = 0
    last_injected_at_ms: int | None = None
    explicit_recall_count: int = 0
    last_recalled_at_ms: int | None = None
    judged_useful_count: int = 0
    last_useful_at_ms: int | None = None

    def to_wire(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Record:
    """One stored memory record, as it stands now."""

    id: str
    scope: Scope
    kind: RecordKind
    title: str
    description: str
    body: str
    tags: tuple[str, ...]
    provenance: Provenance
    trust: Trust
    status: Status
    created_at_ms: int
    updated_at_ms: int
    content_hash: str
    supersedes: str | None = None
    derived_from: tuple[str, ...] = ()
    ever_quarantined: bool = False
    superseded_by: str | None = None
    quarantine_reason: str | None = None
    working_set_rank: int | None = None
    usage: Usage = field(default_factory=Usage)
    expires_at_ms: int | None = None  # from then on it is expired: never recalled or injected

    def live_expired(self, now_ms: int) -> bool:
        """Whether it is active and its expiry has come: it reads as ``expired``, is never recalled
        or injected, and the upkeep deletes it."""
        return (
            self.status is Status.ACTIVE and self.expires_at_ms is not None and self.expires_at_ms <= now_ms
        )

    def status_to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"status": self.status.value}
        if self.status is Status.SUPERSEDED:
            wire["by"] = self.superseded_by
        elif self.status is Status.QUARANTINED:
            wire["reason"] = self.quarantine_reason
        return wire

    def to_api(self) -> dict[str, Any]:
        """The record shape of ``meta/agent_memory/*`` results: REFERENCE 1.3's fields, and the
        scope the record lives in (a recall ranks an identity's own and its shared scopes)."""
        return {
            "memory_id": self.id,
            "title": self.title,
            "body": self.body,
            "tags": list(self.tags),
            "created_at_ms": self.created_at_ms,
            "updated_at_ms": self.updated_at_ms,
            "scope_kind": self.scope.kind.value,
            "scope_key": self.scope.key,
            **({"expires_at_ms": self.expires_at_ms} if self.expires_at_ms is not None else {}),
        }

    def to_api_full(self, now_ms: int | None = None) -> dict[str, Any]:
        """:meth:`to_api` plus what managing a record needs (``meta/agent_memory/list`` and
        ``get``): its place, kind, lifecycle, lineage, trust tier and author, in the flat field
        names of the panel's rows. With ``now_ms``, an active record whose expiry has come is
        ``expired``."""
        status = "expired" if now_ms is not None and self.live_expired(now_ms) else self.status.value
        return {
            **self.to_api(),
            "realm": self.scope.realm,
            "kind": self.kind.value,
            "description": self.description,
            "status": status,
            "expires_at_ms": self.expires_at_ms,
            "quarantine_reason": self.quarantine_reason,
            "trust": self.trust.value,
            "author": self.provenance.author.to_wire(),
            "supersedes": self.supersedes,
            "superseded_by": self.superseded_by,
            "derived_from": list(self.derived_from),
            "ever_quarantined": self.ever_quarantined,
            "content_hash": self.content_hash,
        }

    def to_wire(self) -> dict[str, Any]:
        """The full record (panel detail, receipts)."""
        return {
            "id": self.id,
            "scope": self.scope.to_wire(),
            "kind": self.kind.value,
            "title": self.title,
            "description": self.description,
            "body": self.body,
            "tags": list(self.tags),
            "provenance": self.provenance.to_wire(),
            "trust": self.trust.value,
            "status": self.status_to_wire(),
            "supersedes": self.supersedes,
            "derived_from": list(self.derived_from),
            "ever_quarantined": self.ever_quarantined,
            "working_set_rank": self.working_set_rank,
            "content_hash": self.content_hash,
            "created_at_ms": self.created_at_ms,
            "updated_at_ms": self.updated_at_ms,
            "usage": self.usage.to_wire(),
        }


def content_hash(title: str, body: str) -> str:
    """SHA-256 over (title byte length, u64 little-endian) ‖ title ‖ body, lowercase hex."""
    t = title.encode("utf-8")
    return hashlib.sha256(len(t).to_bytes(8, "little") + t + body.encode("utf-8")).hexdigest()


def released_id(origin_id: str) -> str:
    """The id a quarantine release gives the successor of ``origin_id`` (REFERENCE 5.1)."""
    return f"{origin_id}-released"


_sequence = itertools.count(1)
# The id's process part, kept: os.getpid() is a system call each time (one per remember).
_pid_hex = f"{os.getpid():x}"


def _forked() -> None:
    global _pid_hex
    _pid_hex = f"{os.getpid():x}"


os.register_at_fork(after_in_child=_forked)


def new_memory_id(content_digest: str, now_ms: int) -> str:
    """``mem-<ms hex>-<pid hex>-<seq, 12 hex>-<16 hex of the content hash>``: unique per process,
    sortable by creation time (within one millisecond too, for one process: the sequence has a
    fixed width, so ``…-a-`` never sorts before ``…-9-``), and the same content is recognisable
    across ids. Listings break ties of equal timestamps by id, so this order is what they show."""
    return f"mem-{now_ms:x}-{_pid_hex}-{next(_sequence):012x}-{content_digest[:16]}"
