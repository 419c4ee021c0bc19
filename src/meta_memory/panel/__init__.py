"""The console Memory panel: eleven read methods over every realm, filtered by the caller's grants
(seed 000 "Console Memory panel", REFERENCE 5.5 and 6).

``params`` owns the method parameters, ``visibility`` which rows a caller may read, ``records`` the
cross-realm keyset listing and a record's detail, ``listings`` the realm-level lists, ``dreams`` the
dream history, and ``store`` the seam to the realm stores (the SQL is in
:mod:`meta_memory.memory.sqlite.panel`).
"""

from __future__ import annotations

from .dreams import history_visible
from .listings import FLOOR_BYTES, FLOOR_RECORDS
from .params import DREAMS_LIMIT, LISTING_LIMIT, RECORDS_LIMIT, Limit, format_cursor, parse_cursor
from .records import CHAIN_MAX, RECORD_INJECTIONS_MAX, StoreCursorStalled
from .service import PANEL_METHODS, MemoryPanel, PanelMethod
from .store import AgentMemorySource, PanelSource, PanelStore
from .visibility import Viewer

__all__ = [
    "CHAIN_MAX",
    "DREAMS_LIMIT",
    "FLOOR_BYTES",
    "FLOOR_RECORDS",
    "LISTING_LIMIT",
    "PANEL_METHODS",
    "RECORDS_LIMIT",
    "RECORD_INJECTIONS_MAX",
    "AgentMemorySource",
    "Limit",
    "MemoryPanel",
    "PanelMethod",
    "PanelSource",
    "PanelStore",
    "StoreCursorStalled",
    "Viewer",
    "format_cursor",
    "history_visible",
    "parse_cursor",
]
