"""Agent memory's management reads: records by filter in keyset pages (``meta/agent_memory/list``),
one record by id with its current successor (``meta/agent_memory/get``), and a record's lineage
(``meta/agent_memory/history``).

Every filter runs in the store's query (:meth:`RealmStore.full_records_page`), so a page is short
only at the end. A caller that may read only some records (the console) passes a
:class:`RecordGate`, and the listing reads on past the records it may not read, as the panel's
record listing does: its pages are full too, and ``next_cursor`` comes exactly when another
readable record follows. A record's successor is the end of its chain: a superseded record's
``superseded_by``, a released quarantined record's ``<id>-released``, and on from there.

A record's history is that chain whole, oldest first: back through ``supersedes`` (and from a
released record to the quarantined original it was released from), forward through the
successors, each version with the reason it ended (``superseded``, ``released``, ``discarded``,
``forgotten``; none while it is current). A caller that may read the scope but not quarantined
content (the console without ``memory.quarantine.review``) sees such a version's metadata and
hash, its title, description, body and tags withheld.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import InternalError, UnknownRecord
from .params import GetParams, ListParams, format_cursor
from .records import Record, Scope, Status, released_id
from .rows import RecordKey, record_key
from .store import RealmStore

__all__ = [
    "SUCCESSOR_HOPS",
    "RecordGate",
    "RecordHistory",
    "RecordListing",
    "RecordLookup",
    "current_successor",
    "get",
    "history",
    "list_page",
]

SUCCESSOR_HOPS = 64  # links followed before the walk stops (a chain this long is hand-made)
_BATCH_MAX = 201  # records read per store page while skipping unreadable ones


class RecordGate(Protocol):
    """What a caller may read (the console's access rules: ``panel.Viewer`` is one)."""

    def record(self, record: Record) -> bool: ...

    def require_record(self, record: Record) -> None:
        """Raises:
        AccessDenied: the caller may not read ``record``.
        """
        ...

    def require_identity(self, identity: str) -> None:
        """Raises:
        AccessDenied: the caller may not read ``identity``'s memory.
        """
        ...

    def require_scope(self, record: Record) -> None:
        """Raises:
        AccessDenied: the caller may not read the memory of ``record``'s scope (its content aside).
        """
        ...


@dataclass(frozen=True)
class RecordListing:
    realm: str
    records: tuple[Record, ...]
    next_cursor: RecordKey | None
    now_ms: int | None = None  # expiry is judged at (an expired active record reads ``expired``)

    def to_wire(self) -> dict[str, Any]:
        return {
            "realm": self.realm,
            "records": [r.to_api_full(self.now_ms) for r in self.records],
            "next_cursor": format_cursor(self.next_cursor) if self.next_cursor is not None else None,
        }


@dataclass(frozen=True)
class RecordLookup:
    realm: str
    record: Record
    successor: str | None
    now_ms: int | None = None

    def to_wire(self) -> dict[str, Any]:
        return {
            "realm": self.realm,
            "record": self.record.to_api_full(self.now_ms),
            "successor": self.successor,
        }


@dataclass(frozen=True)
class Version:
    record: Record
    ended: str | None  # superseded | released | discarded | forgotten | expired; None while current
    shown: bool  # the caller may read its content
    now_ms: int | None = None

    def to_wire(self) -> dict[str, Any]:
        wire = {
            **self.record.to_api_full(self.now_ms),
            "ended": self.ended,
            "content_withheld": not self.shown,
        }
        if not self.shown:
            wire.update(title=None, description=None, body=None, tags=None)
        return wire


@dataclass(frozen=True)
class RecordHistory:
    realm: str
    memory_id: str
    versions: tuple[Version, ...]

    def to_wire(self) -> dict[str, Any]:
        return {
            "realm": self.realm,
            "memory_id": self.memory_id,
            "versions": [v.to_wire() for v in self.versions],
        }


def list_page(
    store: RealmStore | None, p: ListParams, gate: RecordGate | None = None, now_ms: int | None = None
) -> RecordListing:
    """One page of ``meta/agent_memory/list`` (``store``: ``None`` when the realm has none).

    Raises:
        AccessDenied: ``gate`` refuses the identity the params name.
    """
    if gate is not None and p.identity is not None:
        gate.require_identity(p.identity)
    if store is None:
        return RecordListing(p.realm, (), None, now_ms)
    if gate is None:
        page = store.full_records_page(p.where, p.cursor, p.limit)
        return RecordListing(p.realm, page.records, page.next_cursor, now_ms)
    kept: list[Record] = []
    after = p.cursor
    batch = min(p.limit + 1, _BATCH_MAX)
    while True:
        page = store.full_records_page(p.where, after, batch)
        for record in page.records:
            if not gate.record(record):
                continue
            if len(kept) == p.limit:  # a readable record follows the page
                return RecordListing(p.realm, tuple(kept), record_key(kept[-1]), now_ms)
            kept.append(record)
        if page.next_cursor is None:
            return RecordListing(p.realm, tuple(kept), None, now_ms)
        if after is not None and not page.next_cursor < after:
            raise InternalError(f"the store of realm '{p.realm}' did not advance past {format_cursor(after)}")
        after = page.next_cursor


def get(
    store: RealmStore | None, p: GetParams, gate: RecordGate | None = None, now_ms: int | None = None
) -> RecordLookup:
    """``meta/agent_memory/get``: the record, and its current successor (``None`` when it has
    none, or when ``gate`` may not read it).

    Raises:
        UnknownRecord: -32001, no such record (in the identity's scope, when one is named).
        AccessDenied: ``gate`` may not read the record.
    """
    store, record = _named(store, p)
    if gate is not None:
        gate.require_record(record)
    successor = current_successor(store, record)
    if successor is not None and gate is not None and not gate.record(successor):
        successor = None
    return RecordLookup(p.realm, record, successor.id if successor is not None else None, now_ms)


def history(
    store: RealmStore | None, p: GetParams, gate: RecordGate | None = None, now_ms: int | None = None
) -> RecordHistory:
    """``meta/agent_memory/history``: the lineage of ``p.memory_id``, oldest first.

    Raises:
        UnknownRecord: -32001, no such record (in the identity's scope, when one is named).
        AccessDenied: ``gate`` may not read the record's scope.
    """
    store, record = _named(store, p)
    if gate is not None:
        gate.require_scope(record)
    # The tip first (the end of the successors), then back from it: a released update's successor
    # leads back through the quarantined record it was released from, which the updated record's
    # ``superseded_by`` skips.
    tip = current_successor(store, record) or record
    chain = [tip]
    seen = {tip.id}
    for _ in range(2 * SUCCESSOR_HOPS):
        before = _previous(store, chain[-1])
        if before is None or before.id in seen or before.scope != record.scope:
            break
        seen.add(before.id)
        chain.append(before)
    chain.reverse()
    if record.id not in seen:  # a hand-edited chain that does not lead back to it
        chain = [record]
    versions = tuple(
        Version(
            version,
            _ended(version, chain[i + 1] if i + 1 < len(chain) else None, now_ms),
            gate is None or gate.record(version),
            now_ms,
        )
        for i, version in enumerate(chain)
    )
    return RecordHistory(p.realm, p.memory_id, versions)


def _named(store: RealmStore | None, p: GetParams) -> tuple[RealmStore, Record]:
    """The record ``p`` names, in the identity's scope when ``p`` names one.

    Raises:
        UnknownRecord: -32001, there is none.
    """
    record = store.get(p.memory_id) if store is not None else None
    if record is None or (p.identity is not None and record.scope != Scope.identity(p.realm, p.identity)):
        raise UnknownRecord(f"unknown memory record '{p.memory_id}'")
    assert store is not None
    return store, record


def _ended(record: Record, following: Record | None, now_ms: int | None) -> str | None:
    if now_ms is not None and record.live_expired(now_ms):
        return "expired"
    if record.status is Status.SUPERSEDED:
        return "superseded"
    if record.status is Status.TOMBSTONED:
        if following is not None and following.id == released_id(record.id):
            return "released"
        return "discarded" if record.ever_quarantined else "forgotten"
    return None


def _previous(store: RealmStore, record: Record) -> Record | None:
    if len(record.derived_from) == 1 and record.id == released_id(record.derived_from[0]):
        # A released record's predecessor is the quarantined original it was released from.
        original = store.get(record.derived_from[0])
        if original is not None and original.status is Status.TOMBSTONED and original.ever_quarantined:
            return original
    if record.supersedes is not None:
        return store.get(record.supersedes)
    return None


def current_successor(store: RealmStore, record: Record) -> Record | None:
    """The end of ``record``'s chain of successors within its scope, or ``None`` when it has
    none: an active record, an unreviewed quarantined one, a tombstone nothing replaced."""
    seen = {record.id}
    current = record
    for _ in range(SUCCESSOR_HOPS):
        following = _next(store, current)
        if following is None or following.id in seen or following.scope != record.scope:
            break
        seen.add(following.id)
        current = following
    return None if current is record else current


def _next(store: RealmStore, record: Record) -> Record | None:
    if record.status is Status.SUPERSEDED and record.superseded_by is not None:
        return store.get(record.superseded_by)
    if record.status is Status.TOMBSTONED and record.ever_quarantined:
        # A release tombstones the original and creates its successor under the derived id.
        released = store.get(released_id(record.id))
        if released is not None and released.derived_from == (record.id,):
            return released
    return None
