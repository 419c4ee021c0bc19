"""Recall usage counters not yet written to a realm store.

Usage counters (``explicit_recall_count``, ``last_recalled_at_ms``) are statistics, not
acknowledged writes. A recall adds to them here instead of committing an UPDATE of every record
it returned (a dozen scattered pages per recall in a realm file, and a commit per recall on a
database server). A store overlays them on every record it reads and writes them back (as
increments, so gateways sharing a database add up) inside its next write transaction, in a quiet
spell, before a panel read, on close, or once :data:`FLUSH_THRESHOLD` records are pending. A
``kill -9`` can lose the increments of the last moments; it never loses a record.
"""

from __future__ import annotations

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

    def items(self) -> list[tuple[str, int, int]]:
        """``(memory_id, recalls not yet written back, the last one's time)``: write them back as
        increments inside a write transaction, then :meth:`clear` once it has committed (a
        rollback keeps them pending)."""
        return [(memory_id, count, at_ms) for memory_id, (count, at_ms) in self._pending.items()]

    def subtract(self, written: list[tuple[str, int, int]]) -> None:
        """Drop what :meth:`items` gave and a commit wrote back, keeping recalls counted since."""
        pending = self._pending
        for memory_id, count, _at_ms in written:
            now_count, at_ms = pending.get(memory_id, (0, 0))
            if now_count <= count:
                pending.pop(memory_id, None)
            else:
                pending[memory_id] = (now_count - count, at_ms)

    def clear(self) -> None:
        self._pending = {}
