"""Erasure (``meta/agent_memory/purge``): what a purge takes, and the receipt it leaves.

``forget`` tombstones: the text stays. A purge deletes it, with everything derived from it, in
one write transaction of the realm (so a write racing with it either lands before it, and is
purged, or after it, and is not), and the backend then scrubs what its files or tables still
hold of it (SQLite: deleted content zeroed, the files rewritten, their WALs cut to nothing;
PostgreSQL: the rows and their derived rows, see docs/lifecycle.md for dead tuples).

What a purge takes is a *lineage closure* (:func:`lineage`): starting from the records named (one
record, or everything in an identity's scope and everything an agent of that identity wrote in a
shared scope), it follows

- downstream, every record made from a taken one: its successor by ``update`` (``supersedes``),
  a release of a quarantined record or a promotion (``derived_from``), a consolidation that
  folded it in (``derived_from`` with several sources): each holds the taken text or its gist;
- upstream, what a taken record came from: the version it updated (``supersedes``) and its
  single origin (``derived_from`` of one record: the quarantined record a release came from, the
  record a promotion copied), and theirs in turn. A consolidation's several sources are other
  records, not versions of this one, and are not taken.

What remains is a receipt with no content: who purged what, when, and each purged record's id and
content hash (an audit row ``purge`` of the realm, and the method's result).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import UnknownRecord

EXPIRY_BATCH = 1000  # expired records one sweep of a realm deletes, at most

__all__ = [
    "EXPIRY_BATCH",
    "LineageRow",
    "PurgeCounts",
    "PurgeReceipt",
    "PurgeTarget",
    "PurgedRecord",
    "lineage",
    "own_records",
]


@dataclass(frozen=True)
class PurgeTarget:
    """``memory_ids`` set: those records' lineages (each must live in ``identity``'s scope);
    ``None``: everything of ``identity`` in the realm. ``expired_at_ms`` set (the upkeep's expiry,
    ``identity`` empty): the lineages of up to :data:`EXPIRY_BATCH` active records of any scope
    whose expiry has come by then."""

    identity: str
    memory_ids: tuple[str, ...] | None = None
    expired_at_ms: int | None = None

    @classmethod
    def expired(cls, now_ms: int) -> PurgeTarget:
        return cls("", None, now_ms)


@dataclass(frozen=True)
class LineageRow:
    """What the closure reads of a record: its place and its links, never its text."""

    doc: int
    id: str
    scope_kind: str
    scope_key: str
    status: str
    content_hash: str
    supersedes: str | None
    superseded_by: str | None
    derived_from: tuple[str, ...]


@dataclass(frozen=True)
class PurgedRecord:
    memory_id: str
    content_hash: str
    status: str
    scope_kind: str
    scope_key: str

    def to_wire(self) -> dict[str, Any]:
        return {
            "memory_id": self.memory_id,
            "content_hash": self.content_hash,
            "status": self.status,
            "scope": {"kind": self.scope_kind, "key": self.scope_key},
        }

    @classmethod
    def of(cls, row: LineageRow) -> PurgedRecord:
        return cls(row.id, row.content_hash, row.status, row.scope_kind, row.scope_key)


@dataclass
class PurgeCounts:
    """The rows a purge removed beside the records (none of them is listed by content)."""

    audit_rows: int = 0
    injections: int = 0
    proposals: int = 0
    promotions: int = 0
    harvests: int = 0
    sessions: int = 0
    verdicts: int = 0
    vectors: int = 0
    events: int = 0

    def to_wire(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class PurgeReceipt:
    """The receipt a purge leaves: ids and content hashes, never content."""

    receipt_id: str | None  # None: nothing was there to purge (no realm), nothing was written
    realm: str
    identity: str
    memory_ids: tuple[str, ...] | None
    purged_at_ms: int
    by: dict[str, Any]  # who purged: {kind: application | console | expiry, principal}
    records: tuple[PurgedRecord, ...]
    counts: PurgeCounts = field(default_factory=PurgeCounts)

    def to_wire(self) -> dict[str, Any]:
        return {
            "receipt_id": self.receipt_id,
            "realm": self.realm,
            "identity": self.identity,
            "memory_ids": list(self.memory_ids) if self.memory_ids is not None else None,
            "purged_at_ms": self.purged_at_ms,
            "by": self.by,
            "records": [r.to_wire() for r in self.records],
            "removed": self.counts.to_wire(),
        }

    @classmethod
    def draft(
        cls,
        realm: str,
        target: PurgeTarget,
        by: dict[str, Any],
        now_ms: int,
        taken: Iterable[LineageRow],
        counts: PurgeCounts,
    ) -> PurgeReceipt:
        """The receipt before its audit row is written (no id yet)."""
        records = tuple(PurgedRecord.of(row) for row in taken)
        return cls(None, realm, target.identity, target.memory_ids, now_ms, dict(by), records, counts)

    def numbered(self, audit_seq: int) -> PurgeReceipt:
        """The receipt once its audit row (``audit_seq``) is written."""
        return replace(self, receipt_id=f"purge-{audit_seq}")

    def audit_detail(self) -> dict[str, Any]:
        """What the realm's ``purge`` audit row keeps: the receipt less its own id."""
        wire = self.to_wire()
        del wire["receipt_id"]
        return wire


def own_records(rows: Sequence[LineageRow], target: PurgeTarget) -> list[LineageRow]:
    """``rows`` (read by ``target.memory_ids``) when they are every one of those records and each
    lives in the identity's scope.

    Raises:
        UnknownRecord: the first id that is missing or another scope's.
    """
    assert target.memory_ids is not None
    own = {row.id: row for row in rows if (row.scope_kind, row.scope_key) == ("identity", target.identity)}
    for memory_id in target.memory_ids:
        if memory_id not in own:
            raise UnknownRecord(memory_id)
    return [own[memory_id] for memory_id in dict.fromkeys(target.memory_ids)]


def _origin(row: LineageRow) -> Iterable[str]:
    if row.supersedes is not None:
        yield row.supersedes
    if len(row.derived_from) == 1:
        yield row.derived_from[0]


def lineage(
    seeds: Sequence[LineageRow],
    by_id: Callable[[Collection[str]], Iterable[LineageRow]],
    made_from: Callable[[Collection[str]], Iterable[LineageRow]],
) -> dict[str, LineageRow]:
    """The closure of ``seeds`` (see the module's doc), by id, in the order it was reached.

    ``by_id(ids)``: the rows of those ids that exist; ``made_from(ids)``: the rows that name one of
    ``ids`` in ``supersedes`` or ``derived_from``. Each is called once per step with the whole
    frontier, so a purge of thousands of records reads in a few statements per step.
    """
    taken: dict[str, LineageRow] = {}
    frontier: list[LineageRow] = []
    for row in seeds:
        if row.id not in taken:
            taken[row.id] = row
            frontier.append(row)
    while frontier:
        ids = [row.id for row in frontier]
        up = {ref for row in frontier for ref in _origin(row)} | {
            row.superseded_by for row in frontier if row.superseded_by is not None
        }
        found = [*by_id([ref for ref in up if ref not in taken]), *made_from(ids)]
        frontier = []
        for row in found:
            if row.id not in taken:
                taken[row.id] = row
                frontier.append(row)
    return taken
