"""Writing recall usage counters (memory/usage.py) back into a realm file."""

from __future__ import annotations

import sqlite3

from ..usage import PendingUsage

__all__ = ["write_back"]


def write_back(db: sqlite3.Connection, usage: PendingUsage) -> None:
    """Add the pending counts to the file inside the caller's write transaction."""
    db.executemany(
        "UPDATE records SET explicit_recall_count = explicit_recall_count + ?, last_recalled_at_ms = ? "
        "WHERE id = ?",
        [(count, at_ms, memory_id) for memory_id, count, at_ms in usage.items()],
    )
