"""The column list every record read selects here, in the shared row codec's order (memory/codec.py)."""

from __future__ import annotations

from ..codec import RECORD_FIELDS

__all__ = ["RECORD_COLUMNS"]

RECORD_COLUMNS = ", ".join(f"r.{name}" for name in RECORD_FIELDS)
