"""The SQLite realm store's unit of work: :class:`SqliteTxn`, one ``BEGIN IMMEDIATE`` transaction of
a realm file, with every write the domain makes (the :class:`~meta_memory.memory.store.RealmTxn`
protocol).

It runs on the store's one connection under the store's lock, inside the store's ``_write()``:
the validator reads through the same transaction, each applied op writes its audit row, and the
steward's rows (runs, proposals, harvests, verdicts, gated promotions: steward_rows.py) commit
with the records they concern.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..records import Author, Record
from ..rows import CommitResult, PromotionRow, ProposalItem, ProposalState, VerdictRow
from ..validator import WriteBatch, validate_batch
from . import steward_rows as rows

if TYPE_CHECKING:
    from .store import SqliteRealmStore

__all__ = ["SqliteTxn"]


class SqliteTxn:
    """One open write transaction of a :class:`~meta_memory.memory.sqlite.store.SqliteRealmStore`."""

    def __init__(self, store: SqliteRealmStore, db: sqlite3.Connection) -> None:
        self._store = store
        self._db = db
        self.realm = store.realm

    def now_ms(self) -> int:
        return self._store._clock.now_ms()

    # -- records -----------------------------------------------------------------------------------

    def get(self, memory_id: str) -> Record | None:
        return self._store._get(memory_id)

    def apply(self, batch: WriteBatch, *, review: dict[str, Any] | None = None) -> CommitResult:
        return self._store._apply(self._db, batch, self.now_ms(), review=review)

    def validate(self, batch: WriteBatch) -> None:
        validate_batch(batch, self._store.view(), now_ms=self.now_ms())

    @contextmanager
    def savepoint(self) -> Iterator[None]:
        with self._store._savepoint(self._db):
            yield

    def restore(self, record: Record, *, author: Author, rationale: str | None) -> None:
        self._store._restore(self._db, record, author, rationale, self.now_ms())

    def note_import_skipped(self, record_id: str | None, author: Author, detail: dict[str, Any]) -> None:
        self._store._audit_note(self._db, self.now_ms(), record_id, author, detail)

    def active_duplicate(self, record: Record) -> Record | None:
        return self._store._active_duplicate(record)

    def prior_review(self, memory_id: str) -> dict[str, Any] | None:
        # Only the review's own audit evidence counts: a plain forget or a row that merely holds
        # the successor id is not a review. The successor's own create row carries the review
        # too, so the row must name this record as the review's origin.
        row = self._db.execute(
            "SELECT seq, at_ms, detail FROM audit WHERE record_id = ? "
            "AND json_extract(detail, '$.review.origin') = ? ORDER BY seq DESC LIMIT 1",
            (memory_id, memory_id),
        ).fetchone()
        if row is None:
            return None
        seq, at_ms, detail = row
        return {"audit_token": f"audit-{seq}", "decided_at_ms": at_ms, "review": json.loads(detail)["review"]}

    # -- proposals, harvests, runs, verdicts ---------------------------------------------------------

    def proposal(self, proposal_id: str) -> ProposalState | None:
        row = rows.proposal_row(self._db, proposal_id)
        if row is None:
            return None
        return ProposalState(row[0], row[1], row[2], row[8], bool(row[9]))

    def proposal_item(self, proposal_id: str) -> ProposalItem | None:
        return rows.proposal_item(self._db, proposal_id)

    def set_proposal_status(self, proposal_id: str, status: str, now_ms: int) -> None:
        rows.set_proposal_status(self._db, proposal_id, status, now_ms)

    def note_proposal_decision(self, proposal_id: str, author: Author, review: dict[str, Any]) -> int:
        return rows.note_proposal_decision(self._db, self.now_ms(), proposal_id, author, review)

    def complete_harvest(self, identity: str, session_key: str) -> None:
        rows.complete_harvest(self._db, identity, session_key)

    def start_run(self, run_id: str, partition: str, now_ms: int) -> None:
        rows.start_run(self._db, run_id, partition, now_ms)

    def finish_run(self, run_id: str, now_ms: int, ops_committed: int, detail: dict[str, Any]) -> None:
        rows.finish_run(self._db, run_id, now_ms, ops_committed, detail)

    def add_audit_verdicts(
        self, run_id: str, verdicts: Sequence[tuple[str, str, str | None]], now_ms: int
    ) -> None:
        rows.add_audit_verdicts(self._db, run_id, verdicts, now_ms)

    def audit_verdicts_of(self, record_id: str) -> list[tuple[VerdictRow, str]]:
        return rows.audit_verdicts_of(self._db, record_id)

    def close_audit_verdicts(self, record_id: str, run_ids: Sequence[str], status: str) -> None:
        rows.close_audit_verdicts(self._db, record_id, run_ids, status)

    def note_verdict_resolution(self, record_id: str, author: Author, detail: dict[str, Any]) -> str:
        seq = rows.note_verdict_resolution(self._db, record_id, author.to_wire(), detail, self.now_ms())
        return f"audit-{seq}"

    def verdict_resolutions(self, record_id: str) -> list[dict[str, Any]]:
        return rows.verdict_resolutions(self._db, record_id)

    # -- gated promotions ------------------------------------------------------------------------------

    def pending_promotions_of(self, record_id: str) -> list[PromotionRow]:
        return rows.pending_promotions_of(self._db, record_id)

    def insert_promotion(self, row: PromotionRow, staged: dict[str, Any]) -> None:
        rows.insert_promotion(self._db, row, staged)

    def promotion(self, pending_id: str) -> PromotionRow | None:
        return rows.promotion(self._db, pending_id)

    def staged_batch(self, stage_token: str) -> dict[str, Any] | None:
        return rows.staged_batch(self._db, stage_token)

    def resolve_promotion(self, row: PromotionRow, status: str, now_ms: int) -> None:
        rows.resolve_promotion(self._db, row, status, now_ms)

    def rekey_promotion(self, pending_id: str, next_pending_id: str) -> bool:
        return rows.rekey_promotion(self._db, pending_id, next_pending_id)

    def overdue_promotions(self, created_before_ms: int) -> list[PromotionRow]:
        return rows.overdue_promotions(self._db, created_before_ms)

    def collect_stale_stages(self, now_ms: int) -> int:
        return rows.collect_stale_stages(self._db, now_ms)
