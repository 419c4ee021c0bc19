"""What an import file and the target store say about quarantine: the evidence that decides
whether a record may arrive active.

Whoever holds an export file can edit every field of every line, so nothing in a file proves a
quarantine was released; only the target store can, because only its own writes (a reviewer's
release, an approved promotion) made its records ordinary memory. A file can still *show*
quarantine, and whatever it shows is kept: :class:`FileLineage` reads every record line first
(all of them, in any order, so a parent placed after its child still counts) and remembers, per
realm and id, each record's status, quarantine marks, trust and parents, and which texts it marks
as quarantined. A line ``<id>-released`` deriving from ``<id>`` marks ``<id>`` too, as the
release that made it once did. :class:`HeldContent` reads the texts a realm holds under
quarantine (quarantined, or tombstoned once quarantined: discarded, or the original of a
release), so the same text under a fresh id, with every mark stripped, is not ordinary memory
either. The rules themselves are the validator's (``unreleased_quarantine``, ``lineage_capped``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..records import Record, Status, Trust, released_id
from ..store import RealmStore, RealmTxn
from ..validator import LineageNode, quarantine_marked
from .lines import Entry

__all__ = ["FileLineage", "HeldContent", "Listed"]


@dataclass(frozen=True)
class Listed:
    """What an import file says of one record id, every line naming it merged: the most cautious
    of what they say (any mark, the lowest trust, every parent)."""

    id: str
    trust: Trust
    status: Status
    ever_quarantined: bool
    quarantine_reason: str | None
    supersedes: str | None
    derived_from: tuple[str, ...]

    @classmethod
    def of(cls, record: Record) -> Listed:
        return cls(
            record.id,
            record.trust,
            record.status,
            record.ever_quarantined,
            record.quarantine_reason,
            record.supersedes,
            record.derived_from,
        )

    def merged(self, other: Listed) -> Listed:
        parents = [p for p in (other.supersedes, *other.derived_from) if p and p != self.supersedes]
        return Listed(
            self.id,
            self.trust if self.trust.rank <= other.trust.rank else other.trust,
            Status.QUARANTINED if Status.QUARANTINED in (self.status, other.status) else self.status,
            self.ever_quarantined or other.ever_quarantined,
            self.quarantine_reason or other.quarantine_reason,
            self.supersedes,
            tuple(dict.fromkeys((*self.derived_from, *parents))),
        )


def _released_mark(origin_id: str) -> Listed:
    """What a release's successor says of its origin: it was quarantined."""
    return Listed(origin_id, Trust.AGENT_OBSERVED, Status.TOMBSTONED, True, None, None, ())


class FileLineage:
    """Every record line of an import file, as lineage facts by realm and id."""

    def __init__(self) -> None:
        self._nodes: dict[tuple[str, str], Listed] = {}
        self._marked_texts: dict[tuple[str, str], str] = {}

    @classmethod
    def read(cls, entries: Iterable[Entry]) -> FileLineage:
        lineage = cls()
        for entry in entries:
            if entry.record is not None:
                lineage._add(entry.record)
        return lineage

    def _put(self, realm: str, node: Listed) -> None:
        key = (realm, node.id)
        known = self._nodes.get(key)
        self._nodes[key] = node if known is None else known.merged(node)

    def _add(self, record: Record) -> None:
        realm = record.scope.realm
        self._put(realm, Listed.of(record))
        for origin in record.derived_from:
            if record.id == released_id(origin):
                self._put(realm, _released_mark(origin))
        if quarantine_marked(record):
            self._marked_texts.setdefault((realm, record.content_hash), record.id)

    def lookup(self, realm: str) -> _RealmLookup:
        """The file's facts of ``realm``'s ids (what ``unreleased_quarantine`` calls ``listed``)."""
        return _RealmLookup(self, realm)

    def marked_text(self, realm: str, digest: str) -> str | None:
        """The id of a record of ``realm`` the file marks as quarantined with this content hash."""
        return self._marked_texts.get((realm, digest))


@dataclass(frozen=True)
class _RealmLookup:
    lineage: FileLineage
    realm: str

    def __call__(self, memory_id: str) -> LineageNode | None:
        return self.lineage._nodes.get((self.realm, memory_id))


class HeldContent:
    """The texts (content hashes) each realm holds under quarantine, read once per realm before
    the import writes into it, and kept up to date with what the import quarantines."""

    def __init__(self) -> None:
        self._held: dict[str, dict[str, str]] = {}

    def load(self, store: RealmStore) -> None:
        """Read ``store``'s quarantined texts, unless they were read already (outside any write
        transaction: an export's read view)."""
        if store.realm in self._held:
            return
        held: dict[str, str] = {}
        with store.exporting(statuses=(Status.QUARANTINED, Status.TOMBSTONED)) as records:
            for record in records:
                if record.status is Status.QUARANTINED or record.ever_quarantined:
                    held.setdefault(record.content_hash, record.id)
        self._held[store.realm] = held

    def holder(self, txn: RealmTxn, record: Record) -> str | None:
        """The id of a record holding ``record``'s text under quarantine in its realm, unless the
        same text is ordinary (active) memory in ``record``'s own scope."""
        holder = self._held.get(record.scope.realm, {}).get(record.content_hash)
        if holder is None or txn.active_duplicate(record) is not None:
            return None
        return holder

    def add(self, record: Record) -> None:
        """``record`` was written quarantined: its text is held under quarantine from now on."""
        self._held.setdefault(record.scope.realm, {}).setdefault(record.content_hash, record.id)
