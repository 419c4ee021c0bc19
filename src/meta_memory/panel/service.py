"""The Memory panel: ten read methods over every realm store, filtered by the caller's grants.

:class:`MemoryPanel` is what the gateway calls. Each method takes the raw params (parsed here,
-32602 naming the field) and the authenticated principal, and returns the wire result; every result
names the ``realms`` it covered. The console dispatcher has already applied each method's entry
gate (``access.RPC_ACCESS``); the panel filters rows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from ..access import AccessEngine, Principal
from . import dreams as _dreams
from . import listings as _listings
from .params import (
    DREAMS_LIMIT,
    LISTING_LIMIT,
    parse_listing_params,
    parse_record_params,
    parse_records_params,
)
from .records import list_records, record_detail
from .store import PanelSource
from .visibility import Viewer

__all__ = ["PANEL_METHODS", "MemoryPanel", "PanelMethod"]


class MemoryPanel:
    """The panel over one source of realm stores and one access engine (``None``: no access control)."""

    def __init__(self, source: PanelSource, access: AccessEngine | None = None) -> None:
        self.source = source
        self.access = access

    def _viewer(self, principal: Principal) -> Viewer:
        return Viewer(self.access, principal)

    def records(self, params: Any, principal: Principal) -> dict[str, Any]:
        """``{records, next_cursor, realms}``: body-free rows, newest updated first, one keyset page."""
        return list_records(self.source, self._viewer(principal), parse_records_params(params))

    def record(self, params: Any, principal: Principal) -> dict[str, Any]:
        """``{realm, record, chain, injections, realms}``: one record with body and content hash."""
        return record_detail(self.source, self._viewer(principal), parse_record_params(params))

    def quarantine(self, params: Any, principal: Principal) -> dict[str, Any]:
        """``{records, pending_promotions, realms}``."""
        return _listings.quarantine(
            self.source, self._viewer(principal), parse_listing_params(params, LISTING_LIMIT)
        )

    def dreams(self, params: Any, principal: Principal) -> dict[str, Any]:
        """``{runs, realms, withheld_by_access}``: summaries from the steward's audit rows."""
        return _dreams.dreams(
            self.source, self._viewer(principal), parse_listing_params(params, DREAMS_LIMIT)
        )

    def dream_runs(self, params: Any, principal: Principal) -> dict[str, Any]:
        """``{runs, realms, withheld_by_access}``: durable dream-run rows."""
        return _dreams.dream_runs(
            self.source, self._viewer(principal), parse_listing_params(params, DREAMS_LIMIT)
        )

    def audit_verdicts(self, params: Any, principal: Principal) -> dict[str, Any]:
        """``{verdicts, realms}``: open usage-audit verdicts."""
        p = parse_listing_params(params, LISTING_LIMIT)
        return _listings.audit_verdicts(self.source, self._viewer(principal), p)

    def overview(self, params: Any, principal: Principal) -> dict[str, Any]:
        """``{scopes, floors, realms}``: per-scope counts and floor pressure (no ``limit``)."""
        return _listings.overview(self.source, self._viewer(principal), parse_listing_params(params, None))

    def proposals(self, params: Any, principal: Principal) -> dict[str, Any]:
        """``{proposals, realms}``: pending proposal metadata, bodies withheld."""
        return _listings.proposals(
            self.source, self._viewer(principal), parse_listing_params(params, LISTING_LIMIT)
        )

    def injections(self, params: Any, principal: Principal) -> dict[str, Any]:
        """``{injections, realms}``: the injection ledger, newest first."""
        p = parse_listing_params(params, LISTING_LIMIT)
        return _listings.injections(self.source, self._viewer(principal), p)

    def harvests(self, params: Any, principal: Principal) -> dict[str, Any]:
        """``{harvests, realms}``: pending exit-interview harvests."""
        return _listings.harvests(
            self.source, self._viewer(principal), parse_listing_params(params, LISTING_LIMIT)
        )


PanelMethod = Callable[[MemoryPanel, Any, Principal], dict[str, Any]]

PANEL_METHODS: Mapping[str, PanelMethod] = MappingProxyType(
    {
        "meta/memory/panel/records": MemoryPanel.records,
        "meta/memory/panel/record": MemoryPanel.record,
        "meta/memory/panel/quarantine": MemoryPanel.quarantine,
        "meta/memory/panel/dreams": MemoryPanel.dreams,
        "meta/memory/panel/dream_runs": MemoryPanel.dream_runs,
        "meta/memory/panel/audit_verdicts": MemoryPanel.audit_verdicts,
        "meta/memory/panel/overview": MemoryPanel.overview,
        "meta/memory/panel/proposals": MemoryPanel.proposals,
        "meta/memory/panel/injections": MemoryPanel.injections,
        "meta/memory/panel/harvests": MemoryPanel.harvests,
    }
)
"""The ten console methods and the panel call behind each."""
