"""``dreams`` and ``dream_runs``: the steward's dream history, realm by realm.

Dream history spans a realm's scopes and can describe quarantined content, so a realm's runs go
only to a caller who may read every memory scope the realm names (the scopes of its records,
proposals and gated promotions, and its harvested identities) and, while the realm holds
quarantined content, also holds ``memory.quarantine.review`` on each of those scopes. Other
callers get no run of that realm; ``withheld_by_access`` says whether that happened to any covered
realm, whether or not it has runs.
"""

from __future__ import annotations

from typing import Any

from .listings import newest_first
from .params import ListingParams
from .store import PanelSource, PanelStore, stores_for
from .visibility import Viewer

__all__ = ["dream_runs", "dreams", "history_visible"]


def history_visible(viewer: Viewer, store: PanelStore) -> bool:
    """Whether the caller may see the realm's dream history."""
    if viewer.unrestricted:
        return True
    scopes = sorted(store.realm_scopes())
    if not all(viewer.scope(kind, key) for kind, key in scopes):
        return False
    if not store.holds_quarantine_evidence():
        return True
    return all(viewer.review(kind, key) for kind, key in scopes or [("realm", "")])


def _visible_stores(
    source: PanelSource, viewer: Viewer, realm: str | None
) -> tuple[list[PanelStore], list[PanelStore], bool]:
    stores = stores_for(source, realm)
    shown = [s for s in stores if history_visible(viewer, s)]
    return stores, shown, len(shown) < len(stores)


def dreams(source: PanelSource, viewer: Viewer, p: ListingParams) -> dict[str, Any]:
    """``meta/memory/panel/dreams``: run summaries reconstructed from the steward's audit rows."""
    stores, shown, withheld = _visible_stores(source, viewer, p.realm)
    picked = newest_first(shown, lambda s: s.dream_summaries(p.limit), lambda r: r.last_op_at_ms, p.limit)
    return {
        "runs": [
            {
                "realm": s.realm,
                "run_id": r.run_id,
                "first_op_at_ms": r.first_op_at_ms,
                "last_op_at_ms": r.last_op_at_ms,
                "ops": r.ops,
                "op_kinds": dict(r.op_kinds),
                "quarantined_ops": r.quarantined_ops,
                "memory_ids": list(r.memory_ids),
                "rationales": list(r.rationales),
            }
            for s, r in picked
        ],
        "realms": [s.realm for s in stores],
        "withheld_by_access": withheld,
    }


def dream_runs(source: PanelSource, viewer: Viewer, p: ListingParams) -> dict[str, Any]:
    """``meta/memory/panel/dream_runs``: the durable run rows, latest start first."""
    stores, shown, withheld = _visible_stores(source, viewer, p.realm)
    picked = newest_first(shown, lambda s: s.dream_runs(p.limit), lambda r: r.started_at_ms, p.limit)
    return {
        "runs": [
            {
                "realm": s.realm,
                "run_id": r.run_id,
                "partition": r.partition,
                "started_at_ms": r.started_at_ms,
                "completed_at_ms": r.completed_at_ms,
                "ops_committed": r.ops_committed,
                "detail": r.detail,
            }
            for s, r in picked
        ],
        "realms": [s.realm for s in stores],
        "withheld_by_access": withheld,
    }
