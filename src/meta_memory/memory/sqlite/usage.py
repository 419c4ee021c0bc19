"""Recall usage counters not yet written to the realm file.

Usage counters (``explicit_recall_count``, ``last_recalled_at_ms``) are statistics, not
acknowledged writes. A recall adds to them here instead of committing an UPDATE of every record
it returned (a dozen scattered pages per recall, and an fsync per recall with
``durability = "power"``). The store overlays them on every record it reads and writes them back
inside its next write transaction, in a quiet spell, before a panel read, on close, or once
:data:`FLUSH_THRESHOLD` records are pending. A ``kill -9`` can lose the increments of the last
moments; it never loses a record.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

__all__ = ["FLUSH_THRESHOLD", "PendingUsage"]

FLUSH_THRESHOLD = 16_384  # records with pending counters: a bound on memory, rarely reached


class PendingUsage:
    """memory id -> (recalls not yet written back, the last one's time). Guarded by the store's lock."""

    def __init__(self) -> None:
        self._pending: dict[str, tuple[int, int]] = {}

    def __len__(self) -> int:
        return len(self._pending)

    def add(self, memory_ids: Iterable[str], at_ms: int) -> None:
        pending = self._pending
        for memory_id in memory_ids:
            count, _ = pending.get(memory_id, (0, 0))
            pending[memory_id] = (count + 1, at_ms)

    def overlay(self, memory_id: str, count: int, last_at_ms: int | None) -> tuple[int, int | None]:
        """A record's counters as stored, plus what is pending for it."""
        pending = self._pending.get(memory_id)
        if pending is None:
            return count, last_at_ms
        return count + pending[0], pending[1]

    def write_back(self, db: sqlite3.Connection) -> None:
        """Add the pending counts to the file inside the caller's write transaction; call
        :meth:`clear` once it has committed (a rollback keeps them pending)."""
        db.executemany(
            "UPDATE records SET explicit_recall_count = explicit_recall_count + ?, last_recalled_at_ms = ? "
            "WHERE id = ?",
            [(count, at_ms, memory_id) for memory_id, (count, at_ms) in self._pending.items()],
        )

    def clear(self) -> None:
        self._pending = {}
