"""The realm-level listings: the quarantine queue, the overview, proposals (and one proposal in
full), the injection ledger, harvests and open usage-audit verdicts.

Each merges the covered realms newest first (a tie keeps realm-name order), applies ``limit`` to
those store rows, and only then drops the rows the caller may not read, so a restricted caller can
receive fewer than ``limit`` (REFERENCE 5.5). A row is judged by what it is about: a scope row or a
proposal by its scope, a harvest by its identity, an audit verdict by its record, an injection by
its record and the identity it went into, a gated promotion by its target scope and its source (a
record, or the proposal it was made from; an unresolvable source is shown to no restricted caller).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ..errors import AccessDenied, UnknownRecord
from ..memory.records import content_hash
from ..memory.rows import InjectionEntry, PromotionEntry, RecordAccess
from .params import ListingParams, ProposalParams
from .records import injection_to_wire, row_to_wire
from .store import PanelSource, PanelStore, stores_for
from .visibility import Viewer

__all__ = [
    "FLOOR_BYTES",
    "FLOOR_RECORDS",
    "audit_verdicts",
    "harvests",
    "injections",
    "newest_first",
    "overview",
    "proposal_detail",
    "proposals",
    "quarantine",
]

FLOOR_RECORDS = 4000
FLOOR_BYTES = 32 * 1024 * 1024

T = TypeVar("T")


def newest_first(
    stores: list[PanelStore], fetch: Callable[[PanelStore], list[T]], at: Callable[[T], int], limit: int
) -> list[tuple[PanelStore, T]]:
    """The first ``limit`` rows of every store's newest-first list, merged by ``at`` (descending).

    The sort is stable: rows with one time keep each store's own order, and stores their name order.
    """
    rows = [(store, row) for store in stores for row in fetch(store)]
    rows.sort(key=lambda pair: at(pair[1]), reverse=True)
    return rows[:limit]


def _record_access(
    picked: list[tuple[PanelStore, T]], record_id: Callable[[T], str]
) -> dict[str, dict[str, RecordAccess]]:
    """Per realm, the access facts of the records the picked rows name."""
    stores = {s.realm: s for s, _ in picked}
    return {
        realm: store.record_access(record_id(row) for s, row in picked if s is store)
        for realm, store in stores.items()
    }


def _record_readable(viewer: Viewer, access: dict[str, RecordAccess], record_id: str) -> bool:
    if viewer.unrestricted:
        return True
    found = access.get(record_id)
    return found is not None and viewer.access(found)


def _promotion_filter(
    viewer: Viewer, picked: list[tuple[PanelStore, PromotionEntry]]
) -> Callable[[PanelStore, PromotionEntry], bool]:
    """Which picked promotions the caller may see: target scope, then the source record, or the
    proposal's scope for a promotion made from a proposal."""
    records = _record_access(picked, lambda r: r.record_id)
    proposals = {
        store.realm: store.proposal_scopes(r.proposal_id or r.record_id for s, r in picked if s is store)
        for store in {s.realm: s for s, _ in picked}.values()
    }

    def visible(store: PanelStore, row: PromotionEntry) -> bool:
        if viewer.unrestricted:
            return True
        if not viewer.scope(row.scope_kind, row.scope_key):
            return False
        source = records[store.realm].get(row.record_id)
        if row.proposal_id is None and source is not None:
            return viewer.access(source)
        scope = proposals[store.realm].get(row.proposal_id or row.record_id)
        return scope is not None and viewer.scope(*scope)

    return visible


def quarantine(source: PanelSource, viewer: Viewer, p: ListingParams) -> dict[str, Any]:
    """``meta/memory/panel/quarantine``: body-free quarantined rows (created desc) and pending gated
    promotions, each filtered by what the caller may read in its scope."""
    stores = stores_for(source, p.realm)
    rows = newest_first(stores, lambda s: s.quarantined(p.limit), lambda r: r.created_at_ms, p.limit)
    promotions = newest_first(
        stores, lambda s: s.pending_promotions(p.limit), lambda r: r.created_at_ms, p.limit
    )
    promotion_visible = _promotion_filter(viewer, promotions)
    return {
        "records": [row_to_wire(s.realm, r) for s, r in rows if viewer.row(r)],
        "pending_promotions": [
            {
                "realm": s.realm,
                "pending_id": r.pending_id,
                "record_id": r.record_id,
                "scope_kind": r.scope_kind,
                "scope_key": r.scope_key,
                "rationale": r.rationale,
                "status": r.status,
                "created_at_ms": r.created_at_ms,
            }
            for s, r in promotions
            if promotion_visible(s, r)
        ],
        "realms": [s.realm for s in stores],
    }


def overview(source: PanelSource, viewer: Viewer, p: ListingParams) -> dict[str, Any]:
    """``meta/memory/panel/overview``: per-scope status counts and body bytes, the store floors, and
    ``floor_pressure`` where a scope's active records or body bytes reach a floor."""
    stores = stores_for(source, p.realm)
    scopes = [
        {
            "realm": s.realm,
            "scope_kind": c.scope_kind,
            "scope_key": c.scope_key,
            "active": c.active,
            "quarantined": c.quarantined,
            "superseded": c.superseded,
            "tombstoned": c.tombstoned,
            "body_bytes": c.body_bytes,
            "floor_pressure": c.active >= FLOOR_RECORDS or c.body_bytes >= FLOOR_BYTES,
        }
        for s in stores
        for c in s.scope_counts()
        if viewer.scope(c.scope_kind, c.scope_key)
    ]
    return {
        "scopes": scopes,
        "floors": {"records": FLOOR_RECORDS, "bytes": FLOOR_BYTES},
        "realms": [s.realm for s in stores],
    }


def proposals(source: PanelSource, viewer: Viewer, p: ListingParams) -> dict[str, Any]:
    """``meta/memory/panel/proposals``: open proposals' metadata (pending or held: a dream that
    holds one leaves it waiting, never a body), their taint, and the content hash a decision binds
    to."""
    stores = stores_for(source, p.realm)
    picked = newest_first(stores, lambda s: s.pending_proposals(p.limit), lambda r: r.created_at_ms, p.limit)
    return {
        "proposals": [
            {
                "realm": s.realm,
                "proposal_id": r.proposal_id,
                "scope_kind": r.scope_kind,
                "scope_key": r.scope_key,
                "title": r.title,
                "kind": r.kind,
                "author": r.author,
                "status": r.status,
                "created_at_ms": r.created_at_ms,
                "tainted": r.tainted,
                "content_hash": r.content_hash,
            }
            for s, r in picked
            if viewer.scope(r.scope_kind, r.scope_key)
        ],
        "realms": [s.realm for s in stores],
    }


def proposal_detail(source: PanelSource, viewer: Viewer, p: ProposalParams) -> dict[str, Any]:
    """``meta/memory/panel/proposal``: one proposal with its body and content hash, whatever its
    status, to a caller who may read its scope. Without ``realm``, the first realm (by name)
    holding the id that the caller may read; if it may read none, the first realm's denial.

    Raises:
        UnknownRecord: -32001, no covered realm holds the id.
        AccessDenied: -32030 naming the scope's read action, with the proposal id.
    """
    stores = stores_for(source, p.realm)
    found = [(s, item) for s in stores if (item := s.proposal_detail(p.proposal_id)) is not None]
    if not found:
        raise UnknownRecord(f"unknown proposal '{p.proposal_id}'")
    readable = [(s, item) for s, item in found if viewer.scope(item.scope_kind, item.scope_key)]
    if not readable:
        item = found[0][1]
        raise AccessDenied(
            viewer.denial(item.scope_kind, item.scope_key) or "agent.memory.read", p.proposal_id
        )
    store, item = readable[0]
    return {
        "realm": store.realm,
        "proposal": {
            "proposal_id": item.proposal_id,
            "scope_kind": item.scope_kind,
            "scope_key": item.scope_key,
            "kind": item.kind,
            "title": item.title,
            "description": item.description,
            "body": item.body,
            "tags": list(item.tags),
            "author": dict(item.author),
            "status": item.status,
            "tainted": item.tainted,
            "created_at_ms": item.created_at_ms,
            "content_hash": content_hash(item.title, item.body),
            "body_bytes": len(item.body.encode("utf-8")),
        },
        "realms": [s.realm for s in stores],
    }


def injections(source: PanelSource, viewer: Viewer, p: ListingParams) -> dict[str, Any]:
    """``meta/memory/panel/injections``: the injection ledger, newest first, where the caller may
    read both the record and the identity it went into."""
    stores = stores_for(source, p.realm)
    picked: list[tuple[PanelStore, InjectionEntry]] = newest_first(
        stores, lambda s: s.injections(p.limit), lambda r: r.at_ms, p.limit
    )
    access = _record_access(picked, lambda r: r.record_id)
    return {
        "injections": [
            injection_to_wire(s.realm, r)
            for s, r in picked
            if _record_readable(viewer, access[s.realm], r.record_id) and viewer.identity(r.identity)
        ],
        "realms": [s.realm for s in stores],
    }


def harvests(source: PanelSource, viewer: Viewer, p: ListingParams) -> dict[str, Any]:
    """``meta/memory/panel/harvests``: pending exit-interview harvests, by identity."""
    stores = stores_for(source, p.realm)
    picked = newest_first(stores, lambda s: s.pending_harvests(p.limit), lambda r: r.retired_at_ms, p.limit)
    return {
        "harvests": [
            {
                "realm": s.realm,
                "identity": r.identity,
                "session_key": r.session_key,
                "cause": r.cause,
                "retired_at_ms": r.retired_at_ms,
            }
            for s, r in picked
            if viewer.identity(r.identity)
        ],
        "realms": [s.realm for s in stores],
    }


def audit_verdicts(source: PanelSource, viewer: Viewer, p: ListingParams) -> dict[str, Any]:
    """``meta/memory/panel/audit_verdicts``: open usage-audit verdicts, by their record."""
    stores = stores_for(source, p.realm)
    picked = newest_first(stores, lambda s: s.open_verdicts(p.limit), lambda r: r.created_at_ms, p.limit)
    access = _record_access(picked, lambda r: r.record_id)
    return {
        "verdicts": [
            {
                "realm": s.realm,
                "run_id": r.run_id,
                "record_id": r.record_id,
                "verdict": r.verdict,
                "rationale": r.rationale,
                "created_at_ms": r.created_at_ms,
            }
            for s, r in picked
            if _record_readable(viewer, access[s.realm], r.record_id)
        ],
        "realms": [s.realm for s in stores],
    }
