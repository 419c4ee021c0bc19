"""``records`` and ``record``: the cross-realm record listing and one record's detail.

The listing merges every covered realm into one order (``updated_at_ms`` desc, memory id desc,
realm name on a tie) and cuts each page from the rows the caller may read: a realm's rows are
fetched past the cursor in batches and filtered before they compete for the page, so
``next_cursor`` (the page's last row) is given exactly when another readable row follows. Rows two
realms hold under one memory id and update time stay on one page even past ``limit``, because one
cursor cannot tell them apart. A store must move past the cursor it is given, or it is refused.

A list row carries no body, only its size and a one-line ``body_preview``: ``null`` where reading
the content needs quarantine review (the store selects no text of such a body, and its text
filter never matches one), so a list shows untrusted held content to no one, a reviewer included;
the record's detail is where a body is read.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable
from typing import Any

from ..access import requires_quarantine_review
from ..errors import InternalError, UnknownRecord
from ..memory.records import Record
from ..memory.rows import BODY_HEAD_CHARS, InjectionEntry, RecordFilter, RecordKey, RecordRow
from .params import RecordParams, RecordsParams, format_cursor
from .store import PanelSource, PanelStore, stores_for
from .visibility import Viewer

__all__ = [
    "CHAIN_MAX",
    "PREVIEW_CHARS",
    "RECORD_INJECTIONS_MAX",
    "StoreCursorStalled",
    "body_preview",
    "list_records",
    "record_detail",
    "row_to_wire",
]

CHAIN_MAX = 32
RECORD_INJECTIONS_MAX = 50
_HOPS = 64  # links walked each way before the visible window is cut to CHAIN_MAX
_INJECTION_BATCH = 100
PREVIEW_CHARS = 120
# Line breaks and other controls, zero-width and direction-changing characters: none is shown in
# a one-line preview (a direction override could make the row read as something it is not).
_UNSHOWN = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")


class StoreCursorStalled(InternalError):
    """A realm store answered rows or a cursor that does not move past the cursor it was given."""

    def __init__(self, realm: str, cursor: RecordKey | None) -> None:
        shown = format_cursor(cursor) if cursor is not None else "the start"
        super().__init__(
            f"memory panel store for realm '{realm}' did not advance past {shown}; the listing refuses it",
            data={"kind": "panel_store_refused", "realm": realm},
        )
        self.realm = realm


def body_preview(row: RecordRow) -> str | None:
    """The body on one line: its first :data:`PREVIEW_CHARS` characters once every run of
    whitespace and unshown characters is one space, ending in "…" when more follows; ``None``
    when the store withheld the body's head (its content needs quarantine review)."""
    head = row.body_head
    if head is None:
        return None
    flat = " ".join(_UNSHOWN.sub(" ", head).split())
    if len(flat) > PREVIEW_CHARS or len(head.encode("utf-8")) < row.body_bytes:
        return flat[:PREVIEW_CHARS].rstrip() + "…"
    return flat


def row_to_wire(realm: str, row: RecordRow) -> dict[str, Any]:
    """A body-free list row: ``body_bytes`` and ``body_preview`` stand in for the body."""
    return {
        "realm": realm,
        "memory_id": row.memory_id,
        "scope_kind": row.scope_kind,
        "scope_key": row.scope_key,
        "kind": row.kind,
        "title": row.title,
        "description": row.description,
        "tags": list(row.tags),
        "author": row.author,
        "trust": row.trust,
        "status": row.status,
        "quarantine_reason": row.quarantine_reason,
        "supersedes": row.supersedes,
        "superseded_by": row.superseded_by,
        "derived_from": list(row.derived_from),
        "ever_quarantined": row.ever_quarantined,
        "created_at_ms": row.created_at_ms,
        "updated_at_ms": row.updated_at_ms,
        "body_bytes": row.body_bytes,
        "body_preview": body_preview(row),
    }


class _RealmStream:
    """One realm's readable rows past the cursor, fetched in batches as the merge asks."""

    def __init__(
        self,
        store: PanelStore,
        where: RecordFilter,
        after: RecordKey | None,
        visible: Callable[[RecordRow], bool],
        batch: int,
    ) -> None:
        self.realm = store.realm
        self._store = store
        self._where = where
        self._after = after
        self._visible = visible
        self._batch = batch
        self._buffer: deque[RecordRow] = deque()
        self._done = False

    def peek(self) -> RecordRow | None:
        while not self._buffer and not self._done:
            self._fill()
        return self._buffer[0] if self._buffer else None

    def pop(self) -> RecordRow:
        return self._buffer.popleft()

    def _fill(self) -> None:
        asked = self._after
        page = self._store.records_page(self._where, asked, self._batch)
        last = asked
        for row in page.rows:
            if last is not None and not row.key < last:
                raise StoreCursorStalled(self.realm, asked)
            last = row.key
        if page.next_cursor is None:
            self._done = True
        else:
            moved = asked is None or page.next_cursor < asked
            # A cursor before the page's last row would serve its rows again.
            if not moved or (last is not None and page.next_cursor > last):
                raise StoreCursorStalled(self.realm, asked)
            self._after = page.next_cursor
        self._buffer.extend(row for row in page.rows if self._visible(row))


def _leader(streams: list[_RealmStream]) -> _RealmStream | None:
    """The stream whose next readable row comes first (realms are in name order: a tie goes to the first)."""
    best: _RealmStream | None = None
    best_key: RecordKey | None = None
    for stream in streams:
        row = stream.peek()
        if row is not None and (best_key is None or row.key > best_key):
            best, best_key = stream, row.key
    return best


def list_records(source: PanelSource, viewer: Viewer, p: RecordsParams) -> dict[str, Any]:
    """``meta/memory/panel/records``.

    Raises:
        AccessDenied: an identity-keyed listing of an identity the caller may not read.
        StoreCursorStalled: a realm store did not move past the cursor.
    """
    if p.identity is not None:
        viewer.require_identity(p.identity)
    stores = stores_for(source, p.realm)
    batch = min(p.limit + 1, 201)
    streams = [_RealmStream(s, p.where, p.cursor, viewer.row, batch) for s in stores]
    page: list[tuple[str, RecordRow]] = []
    while len(page) < p.limit and (leader := _leader(streams)) is not None:
        page.append((leader.realm, leader.pop()))
    next_cursor = None
    if page:
        last = page[-1][1].key
        while (leader := _leader(streams)) is not None:
            head = leader.peek()
            if head is None or head.key != last:
                break
            page.append((leader.realm, leader.pop()))
        if _leader(streams) is not None:
            next_cursor = format_cursor(last)
    return {
        "records": [row_to_wire(realm, row) for realm, row in page],
        "next_cursor": next_cursor,
        "realms": [s.realm for s in stores],
    }


def _window(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> tuple[int, int]:
    """How many links to keep on each side of the record: nearest first, alternating, CHAIN_MAX in all."""
    take_before = take_after = 0
    while take_before + take_after < CHAIN_MAX - 1:
        if take_after < len(after) and (take_after <= take_before or take_before >= len(before)):
            take_after += 1
        elif take_before < len(before):
            take_before += 1
        else:
            break
    return take_before, take_after


def _chain(store: PanelStore, viewer: Viewer, record: Record) -> list[dict[str, Any]]:
    links = store.supersede_chain(record.id, _HOPS)

    def shown(rows: tuple[RecordRow, ...], relation: str) -> list[dict[str, Any]]:
        return [{**row_to_wire(store.realm, r), "relation": relation} for r in rows if viewer.row(r)]

    before = shown(links.ancestors, "ancestor")
    after = shown(links.successors, "successor") + shown(links.claimants, "claimant")
    take_before, take_after = _window(before, after)
    this = {**row_to_wire(store.realm, _as_row(record)), "relation": "self"}
    return [*reversed(before[:take_before]), this, *after[:take_after]]


def _as_row(record: Record) -> RecordRow:
    return RecordRow(
        memory_id=record.id,
        scope_kind=record.scope.kind.value,
        scope_key=record.scope.key,
        kind=record.kind.value,
        title=record.title,
        description=record.description,
        tags=record.tags,
        author=dict(record.provenance.author.to_wire()),
        trust=record.trust.value,
        status=record.status.value,
        quarantine_reason=record.quarantine_reason,
        supersedes=record.supersedes,
        superseded_by=record.superseded_by,
        derived_from=record.derived_from,
        ever_quarantined=record.ever_quarantined,
        created_at_ms=record.created_at_ms,
        updated_at_ms=record.updated_at_ms,
        body_bytes=len(record.body.encode("utf-8")),
        body_head=None
        if requires_quarantine_review(record.status.value, ever_quarantined=record.ever_quarantined)
        else record.body[:BODY_HEAD_CHARS],
    )


def injection_to_wire(realm: str, row: InjectionEntry) -> dict[str, Any]:
    return {
        "realm": realm,
        "record_id": row.record_id,
        "identity": row.identity,
        "session_key": row.session_key,
        "surface": row.surface,
        "at_ms": row.at_ms,
    }


def _injections(store: PanelStore, viewer: Viewer, record: Record) -> list[dict[str, Any]]:
    """The record's injection rows, newest first, where the caller may read the identity too."""
    out: list[dict[str, Any]] = []
    before: tuple[int, int] | None = None
    while len(out) < RECORD_INJECTIONS_MAX:
        batch = store.record_injections_of(record.id, before, _INJECTION_BATCH)
        out.extend(injection_to_wire(store.realm, r) for r in batch if viewer.identity(r.identity))
        if len(batch) < _INJECTION_BATCH:
            break
        before = (batch[-1].at_ms, batch[-1].seq)
    return out[:RECORD_INJECTIONS_MAX]


def record_detail(source: PanelSource, viewer: Viewer, p: RecordParams) -> dict[str, Any]:
    """``meta/memory/panel/record``. Without ``realm``, the first realm (by name) holding the id
    that the caller may read; if it may read none, the first realm's denial.

    Raises:
        UnknownRecord: -32001, no covered realm holds the id.
        AccessDenied: -32030 naming the governing action.
    """
    stores = stores_for(source, p.realm)
    found = [(s, r) for s in stores if (r := s.get(p.memory_id)) is not None]
    if not found:
        raise UnknownRecord(f"unknown memory record '{p.memory_id}'")
    readable = [(s, r) for s, r in found if viewer.record(r)]
    if not readable:
        viewer.require_record(found[0][1])
        raise AssertionError("a record no caller may read was judged readable")  # pragma: no cover
    store, record = readable[0]
    return {
        "realm": store.realm,
        "record": {**record.to_wire(), "body_bytes": len(record.body.encode("utf-8"))},
        "chain": _chain(store, viewer, record),
        "injections": _injections(store, viewer, record),
        "realms": [s.realm for s in stores],
    }
