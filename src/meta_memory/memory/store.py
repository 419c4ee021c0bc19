"""The realm-store interface: everything recall, review, sessions and the panel need from storage.

One :class:`RealmStore` holds one realm. The bundled implementation is SQLite
(:mod:`meta_memory.memory.sqlite`); a PostgreSQL implementation can sit behind the same
protocol without touching its callers. No SQL appears outside a store implementation.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from .recall.index import TermIndex
from .records import Author, Record, Scope
from .validator import WriteBatch

__all__ = ["CommitResult", "HarvestItem", "InjectionRow", "ProposalItem", "RealmStore", "RealmStoreFactory"]


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


class RealmStore(Protocol):
    realm: str

    def commit(self, batch: WriteBatch, *, dedup: bool = False) -> CommitResult:
        """Validate and apply ``batch`` in one transaction with one audit row per op.

        With ``dedup``, a single create whose content hash matches an active record of the
        same scope returns that record and writes nothing.
        """
        ...

    def forget(self, scope: Scope, memory_id: str, author: Author) -> bool:
        """Tombstone ``memory_id`` if it is live in ``scope``; ``False`` if missing,
        already tombstoned or in another scope (nothing written then)."""
        ...

    def get(self, memory_id: str) -> Record | None: ...

    def newest_active(self, scope: Scope, limit: int) -> list[Record]:
        """Active records of ``scope``, updated desc, created desc, id desc."""
        ...

    def term_index(self, scope: Scope) -> TermIndex:
        """The recall index of ``scope``'s active records, caught up with every write so far."""
        ...

    def reading_index(self, scope: Scope) -> AbstractContextManager[TermIndex]:
        """:meth:`term_index` as one consistent read view until the block ends (a ranking's
        statistics and postings then come from the same state of the index)."""
        ...

    def records_by_doc(self, docs: Sequence[int]) -> dict[int, Record]: ...

    def mark_recalled(self, memory_ids: Iterable[str], at_ms: int) -> None: ...

    def record_injections(self, rows: Sequence[InjectionRow]) -> None:
        """Append injection-ledger rows and count the usage, in one transaction."""
        ...

    def close(self) -> None: ...


class RealmStoreFactory(Protocol):
    def open_realm(self, realm: str) -> RealmStore: ...
