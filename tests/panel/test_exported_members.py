"""The panel's public surface is exactly what ``meta_memory.panel.__all__`` names."""

from __future__ import annotations

import meta_memory.panel as panel


def test_the_panel_package_exports_exactly_its_public_names() -> None:
    assert sorted(panel.__all__) == [
        "AgentMemorySource",
        "CHAIN_MAX",
        "DREAMS_LIMIT",
        "FLOOR_BYTES",
        "FLOOR_RECORDS",
        "LISTING_LIMIT",
        "Limit",
        "MemoryPanel",
        "PANEL_METHODS",
        "PanelMethod",
        "PanelSource",
        "PanelStore",
        "RECORDS_LIMIT",
        "RECORD_INJECTIONS_MAX",
        "StoreCursorStalled",
        "Viewer",
        "format_cursor",
        "history_visible",
        "parse_cursor",
    ]
    assert all(hasattr(panel, name) for name in panel.__all__)
