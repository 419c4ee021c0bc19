"""The typed results of the Python API (:mod:`meta_memory.api`): frozen dataclasses read from the
wire results, the same whether the call ran in process or over a client's transport. A method
whose result is a plain JSON object (the gating verdicts, the status, the steward's report)
returns that object as a ``dict``; its keys are in docs/api.md."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "AgentMemoryEntry",
    "AgentMemoryForgetResult",
    "AgentMemoryHistory",
    "AgentMemoryLookup",
    "AgentMemoryPage",
    "AgentMemoryPurgeReceipt",
    "AgentMemoryPurged",
    "AgentMemoryRecord",
    "AgentMemoryUpdateResult",
    "AgentMemoryVersion",
    "MemoryIndexResult",
    "MemoryQueryResult",
    "MemoryStoreInfo",
    "MemoryToolResult",
]


@dataclass(frozen=True)
class AgentMemoryRecord:
    """An agent-memory record as ``remember`` returns it and ``recall`` finds it.

    Attributes:
        memory_id: the record's id (``mem-...``), for ``update``, ``forget`` and ``get``.
        title: one line, whitespace runs collapsed.
        body: the memory itself.
        tags: trimmed, lowercased, deduplicated and sorted.
        created_at_ms: when it was written (Unix ms).
        updated_at_ms: when it last changed (Unix ms).
        scope_kind: the scope it lives in: ``identity`` (the identity's own), or a scope the
            identity shares (``mob``, ``operator``, ``realm``).
        scope_key: the identity, mob or operator of that scope (``""`` for the realm scope).
        score: a contextual ``recall``'s score for it, 0 to 1, never rising down the list
            (``None`` for ``always`` recall and outside recall). Not compared: a recalled record
            equals the record ``remember`` returned.
        expires_at_ms: when it expires (Unix ms); ``None`` when it never does.
    """

    memory_id: str
    title: str
    body: str
    tags: tuple[str, ...]
    created_at_ms: int
    updated_at_ms: int
    scope_kind: str
    scope_key: str
    score: float | None = field(default=None, kw_only=True, compare=False)
    expires_at_ms: int | None = field(default=None, kw_only=True)

    @classmethod
    def from_wire(cls, w: dict[str, Any]) -> AgentMemoryRecord:
        """The record a wire result object describes.

        Args:
            w: the record object of a ``remember`` or ``recall`` result.

        Returns:
            The record.
        """
        return cls(
            w["memory_id"],
            w["title"],
            w["body"],
            tuple(w["tags"]),
            w["created_at_ms"],
            w["updated_at_ms"],
            w.get("scope_kind", "identity"),
            w.get("scope_key") or "",
            score=w.get("score"),
            expires_at_ms=w.get("expires_at_ms"),
        )


@dataclass(frozen=True)
class AgentMemoryEntry(AgentMemoryRecord):
    """A record as ``list`` and ``get`` show it: the record plus its place, lifecycle and lineage.

    Attributes:
        realm: the realm it lives in.
        kind: ``preference``, ``fact``, ``gotcha``, ``procedure``, ``relationship``,
            ``open_loop`` or ``reference``.
        description: a short description, when the writer gave one.
        status: ``active``, ``expired`` (active, its expiry has come: the upkeep deletes it),
            ``quarantined``, ``superseded`` or ``tombstoned``.
        quarantine_reason: why it is quarantined (``None`` unless it is).
        trust: its trust tier: ``untrusted``, ``agent_observed``, ``agent_verified``,
            ``application`` or ``operator``.
        author: who wrote it, as the wire object.
        supersedes: the id of the record it replaced.
        superseded_by: the id of the record that replaced it.
        derived_from: the ids of the records it was distilled from.
        ever_quarantined: it has been quarantined at some point, even if released since.
        content_hash: the hash a quarantine decision is bound to (64 lowercase hex).
    """

    realm: str
    kind: str
    description: str | None
    status: str
    quarantine_reason: str | None
    trust: str
    author: dict[str, Any]
    supersedes: str | None
    superseded_by: str | None
    derived_from: tuple[str, ...]
    ever_quarantined: bool
    content_hash: str

    @classmethod
    def from_wire(cls, w: dict[str, Any]) -> AgentMemoryEntry:
        """The entry a wire record object of ``list`` or ``get`` describes.

        Args:
            w: the record object.

        Returns:
            The entry.
        """
        return cls(
            w["memory_id"],
            w["title"],
            w["body"],
            tuple(w["tags"]),
            w["created_at_ms"],
            w["updated_at_ms"],
            w["scope_kind"],
            w.get("scope_key") or "",
            w["realm"],
            w["kind"],
            w.get("description"),
            w["status"],
            w.get("quarantine_reason"),
            w["trust"],
            dict(w["author"]),
            w.get("supersedes"),
            w.get("superseded_by"),
            tuple(w.get("derived_from") or ()),
            bool(w.get("ever_quarantined")),
            w["content_hash"],
            expires_at_ms=w.get("expires_at_ms"),
        )


@dataclass(frozen=True)
class AgentMemoryPage:
    """One page of ``list``: pass ``next_cursor`` back as ``cursor`` for the next.

    Attributes:
        realm: the realm listed.
        records: the page's records, newest updated first.
        next_cursor: the cursor of the next page (``None`` on the last).
    """

    realm: str
    records: tuple[AgentMemoryEntry, ...]
    next_cursor: str | None

    @classmethod
    def from_wire(cls, w: dict[str, Any]) -> AgentMemoryPage:
        """The page a ``list`` wire result describes.

        Args:
            w: the ``list`` result object.

        Returns:
            The page.
        """
        return cls(w["realm"], tuple(AgentMemoryEntry.from_wire(r) for r in w["records"]), w["next_cursor"])


@dataclass(frozen=True)
class AgentMemoryLookup:
    """What ``get`` found: the record, and the id of its current successor.

    Attributes:
        realm: the realm the record lives in.
        record: the record, whatever its status.
        successor: the record that replaced it now, following supersedes and quarantine releases
            to the end (``None`` when nothing replaced it).
    """

    realm: str
    record: AgentMemoryEntry
    successor: str | None

    @classmethod
    def from_wire(cls, w: dict[str, Any]) -> AgentMemoryLookup:
        """The lookup a ``get`` wire result describes.

        Args:
            w: the ``get`` result object.

        Returns:
            The lookup.
        """
        return cls(w["realm"], AgentMemoryEntry.from_wire(w["record"]), w.get("successor"))


@dataclass(frozen=True)
class AgentMemoryVersion:
    """One version of a record's lineage (``history``).

    Attributes:
        record: the version; when ``content_withheld``, its title, body and tags are empty and its
            description ``None`` (the wire sends them as null).
        ended: why it ended: ``superseded`` (updated), ``released`` (from quarantine),
            ``discarded`` (by a reviewer) or ``forgotten``; ``None`` while it is current.
        content_withheld: quarantined content the caller may not read (the console without
            ``memory.quarantine.review``).
    """

    record: AgentMemoryEntry
    ended: str | None
    content_withheld: bool

    @classmethod
    def from_wire(cls, w: dict[str, Any]) -> AgentMemoryVersion:
        """The version a ``history`` wire version object describes.

        Args:
            w: the version object.

        Returns:
            The version.
        """
        shown = {
            **w,
            "title": w.get("title") or "",
            "body": w.get("body") or "",
            "tags": w.get("tags") or [],
        }
        return cls(AgentMemoryEntry.from_wire(shown), w.get("ended"), bool(w.get("content_withheld")))


@dataclass(frozen=True)
class AgentMemoryHistory:
    """What ``history`` found: a record's lineage, oldest first, the current version last.

    Attributes:
        realm: the realm the record lives in.
        memory_id: the id asked for.
        versions: every version, oldest first.
    """

    realm: str
    memory_id: str
    versions: tuple[AgentMemoryVersion, ...]

    @classmethod
    def from_wire(cls, w: dict[str, Any]) -> AgentMemoryHistory:
        """The history a ``history`` wire result describes.

        Args:
            w: the ``history`` result object.

        Returns:
            The history.
        """
        return cls(w["realm"], w["memory_id"], tuple(AgentMemoryVersion.from_wire(v) for v in w["versions"]))


@dataclass(frozen=True)
class AgentMemoryPurged:
    """One record a purge erased: what the receipt keeps of it (never its content).

    Attributes:
        memory_id: its id.
        content_hash: the sha256 of its content, as the record held it.
        status: its status when it was purged.
        scope_kind: the scope it lived in (``identity``, ``mob``, ...).
        scope_key: that scope's key.
    """

    memory_id: str
    content_hash: str
    status: str
    scope_kind: str
    scope_key: str


@dataclass(frozen=True)
class AgentMemoryPurgeReceipt:
    """What ``purge`` erased: the receipt (also kept as the realm's ``purge`` audit row).

    Attributes:
        receipt_id: the receipt's id (``purge-<n>``); ``None`` when the realm does not exist.
        realm: the realm.
        identity: whose memory was purged.
        memory_ids: the records asked for; ``None`` for a purge of the whole identity.
        purged_at_ms: when (Unix ms).
        by: who purged: ``kind`` (application, console, or expiry for the upkeep) and the
            authenticated ``principal``.
        records: every record erased.
        removed: how many rows of each other kind went with them (audit rows, injections,
            proposals, promotions, harvests, sessions, verdicts, vectors, events).
    """

    receipt_id: str | None
    realm: str
    identity: str
    memory_ids: tuple[str, ...] | None
    purged_at_ms: int
    by: dict[str, Any]
    records: tuple[AgentMemoryPurged, ...]
    removed: dict[str, int]

    @classmethod
    def from_wire(cls, w: dict[str, Any]) -> AgentMemoryPurgeReceipt:
        """The receipt a ``purge`` wire result describes.

        Args:
            w: the ``purge`` result object.

        Returns:
            The receipt.
        """
        records = tuple(
            AgentMemoryPurged(
                r["memory_id"], r["content_hash"], r["status"], r["scope"]["kind"], r["scope"]["key"]
            )
            for r in w["records"]
        )
        return cls(
            w["receipt_id"],
            w["realm"],
            w["identity"],
            tuple(w["memory_ids"]) if w["memory_ids"] is not None else None,
            w["purged_at_ms"],
            dict(w["by"]),
            records,
            dict(w["removed"]),
        )


@dataclass(frozen=True)
class AgentMemoryForgetResult:
    """What ``forget`` did.

    Attributes:
        memory_id: the id asked for.
        deleted: the record was active and is tombstoned now (``False``: it was absent, already
            forgotten, or another identity's).
    """

    memory_id: str
    deleted: bool


@dataclass(frozen=True)
class AgentMemoryUpdateResult:
    """What ``update`` did.

    Attributes:
        memory_id: the id of the new record.
        supersedes: the id of the record it replaced (now ``superseded``).
    """

    memory_id: str
    supersedes: str


@dataclass(frozen=True)
class MemoryIndexResult:
    """What ``memory_index`` recorded in the assertion ledger.

    Attributes:
        entity: the key's entity, normalized (trimmed, lowercased, whitespace runs as ``_``).
        topic: the key's topic, normalized the same way.
        store: the ledger store it went to.
        assertion_id: the new assertion's id (``None`` when the call gave no ``fact``).
        conflict_active: the key has an active conflict signal after the call.
    """

    entity: str
    topic: str
    store: str
    assertion_id: str | None
    conflict_active: bool


@dataclass(frozen=True)
class MemoryQueryResult:
    """What ``memory_query`` found in the assertion ledger.

    Attributes:
        assertions: the matching assertions (``assertion_id``, ``entity``, ``topic``, ``store``,
            ``fact``, ``metadata``, ``indexed_at_ms``).
        conflicts: the matching conflict signals (``entity``, ``topic``, ``store``, ``reason``,
            ``updated_at_ms``).
    """

    assertions: list[dict[str, Any]]
    conflicts: list[dict[str, Any]]


@dataclass(frozen=True)
class MemoryStoreInfo:
    """One store of the assertion ledger.

    Attributes:
        store: the store's name.
        record_count: how many assertions it holds.
    """

    store: str
    record_count: int


@dataclass(frozen=True)
class MemoryToolResult:
    """What the LLM's ``memory`` tool call did: hand ``content`` back to the LLM as the tool result.

    Attributes:
        content: the text for the LLM (the refusal, when ``is_error``).
        is_error: the call was refused (bad arguments, or a rule the write broke, such as a
            secret in it); nothing was written.
        outcome: ``stored``, ``quarantined`` (stored, held for review until released) or
            ``none`` (nothing written: a read, or a refusal).
    """

    content: str
    is_error: bool
    outcome: str
