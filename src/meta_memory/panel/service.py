"""The Memory panel: eleven read methods over every realm store, filtered by the caller's grants.

:class:`MemoryPanel` is what the gateway calls. Each method takes its parsed params (parsed at the
dispatcher boundary by the parser :data:`PANEL_METHODS` names) and the authenticated principal, and
returns the wire result; every result
names the ``realms`` it covered. The console dispatcher has already applied each method's entry
gate (``access.RPC_ACCESS``); the panel filters rows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ..access import AccessEngine, Principal
from . import dreams as _dreams
from . import listings as _listings
from .params import (
    DREAMS_LIMIT,
    LISTING_LIMIT,
    Limit,
    ListingParams,
    ProposalParams,
    RecordParams,
    RecordsParams,
    parse_listing_params,
    parse_proposal_params,
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

    def records(self, p: RecordsParams, principal: Principal) -> dict[str, Any]:
        """``{records, next_cursor, realms}``: body-free rows, newest updated first, one keyset page."""
        return list_records(self.source, self._viewer(principal), p)

    def record(self, p: RecordParams, principal: Principal) -> dict[str, Any]:
        """``{realm, record, chain, injections, realms}``: one record with body and content hash."""
        return record_detail(self.source, self._viewer(principal), p)

    def quarantine(self, p: ListingParams, principal: Principal) -> dict[str, Any]:
        """``{records, pending_promotions, realms}``."""
        return _listings.quarantine(self.source, self._viewer(principal), p)

    def dreams(self, p: ListingParams, principal: Principal) -> dict[str, Any]:
        """``{runs, realms, withheld_by_access}``: summaries from the steward's audit rows."""
        return _dreams.dreams(self.source, self._viewer(principal), p)

    def dream_runs(self, p: ListingParams, principal: Principal) -> dict[str, Any]:
        """``{runs, realms, withheld_by_access}``: durable dream-run rows."""
        return _dreams.dream_runs(self.source, self._viewer(principal), p)

    def audit_verdicts(self, p: ListingParams, principal: Principal) -> dict[str, Any]:
        """``{verdicts, realms}``: open usage-audit verdicts."""
        return _listings.audit_verdicts(self.source, self._viewer(principal), p)

    def overview(self, p: ListingParams, principal: Principal) -> dict[str, Any]:
        """``{scopes, floors, realms}``: per-scope counts and floor pressure (no ``limit``)."""
        return _listings.overview(self.source, self._viewer(principal), p)

    def proposals(self, p: ListingParams, principal: Principal) -> dict[str, Any]:
        """``{proposals, realms}``: open (pending or held) proposals' metadata, bodies withheld."""
        return _listings.proposals(self.source, self._viewer(principal), p)

    def proposal(self, p: ProposalParams, principal: Principal) -> dict[str, Any]:
        """``{realm, proposal, realms}``: one proposal with its body and content hash."""
        return _listings.proposal_detail(self.source, self._viewer(principal), p)

    def injections(self, p: ListingParams, principal: Principal) -> dict[str, Any]:
        """``{injections, realms}``: the injection ledger, newest first."""
        return _listings.injections(self.source, self._viewer(principal), p)

    def harvests(self, p: ListingParams, principal: Principal) -> dict[str, Any]:
        """``{harvests, realms}``: pending exit-interview harvests."""
        return _listings.harvests(self.source, self._viewer(principal), p)


@dataclass(frozen=True)
class PanelMethod:
    """One panel method: its parameters' parser and the panel call behind it."""

    parse: Callable[[Any], Any]
    call: Callable[[MemoryPanel, Any, Principal], dict[str, Any]]


def _listing(limit: Limit | None) -> Callable[[Any], ListingParams]:
    return lambda params: parse_listing_params(params, limit)


PANEL_METHODS: Mapping[str, PanelMethod] = MappingProxyType(
    {
        "meta/memory/panel/records": PanelMethod(parse_records_params, MemoryPanel.records),
        "meta/memory/panel/record": PanelMethod(parse_record_params, MemoryPanel.record),
        "meta/memory/panel/quarantine": PanelMethod(_listing(LISTING_LIMIT), MemoryPanel.quarantine),
        "meta/memory/panel/dreams": PanelMethod(_listing(DREAMS_LIMIT), MemoryPanel.dreams),
        "meta/memory/panel/dream_runs": PanelMethod(_listing(DREAMS_LIMIT), MemoryPanel.dream_runs),
        "meta/memory/panel/audit_verdicts": PanelMethod(_listing(LISTING_LIMIT), MemoryPanel.audit_verdicts),
        "meta/memory/panel/overview": PanelMethod(_listing(None), MemoryPanel.overview),
        "meta/memory/panel/proposals": PanelMethod(_listing(LISTING_LIMIT), MemoryPanel.proposals),
        "meta/memory/panel/proposal": PanelMethod(parse_proposal_params, MemoryPanel.proposal),
        "meta/memory/panel/injections": PanelMethod(_listing(LISTING_LIMIT), MemoryPanel.injections),
        "meta/memory/panel/harvests": PanelMethod(_listing(LISTING_LIMIT), MemoryPanel.harvests),
    }
)
"""The eleven console methods: the parser and the panel call behind each."""
