"""The bundled realm store: one SQLite file per realm, WAL, one transaction per logical write.

Every write runs ``BEGIN IMMEDIATE`` → the one validator (reading inside the same
transaction) → apply → one audit row per op → ``COMMIT``. The recall index (postings of
active records, per scope) is derived data in a file of its own (recall_index.py), kept just
behind the writes: a write leaves a queue row or nothing, and the backlog is applied in
batches by the indexing process when there is one (index_worker.py), else inline once it
grows long and in quiet spells on the shared upkeep thread (upkeep.py); it is always caught up
before the index is read, so a record is recallable as soon as ``remember`` returns. Durability "process" (the default) keeps WAL with
``synchronous=NORMAL``: a commit is in the OS before the reply, so ``kill -9`` loses nothing;
"power" adds an fsync per commit. WAL checkpoints run on the upkeep thread too (checkpoint.py).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...clock import Clock
from ...errors import InternalError, PurgeIncomplete, StoreCorrupt, WriteRefused
from ...storage.layout import StateLayout
from ..codec import dumps, record_from_row, record_values, wire_json
from ..purge import PurgeReceipt, PurgeTarget
from ..recall.neighbours import ScopesSearch
from ..records import (
    Author,
    Record,
    Scope,
    ScopeKind,
    Status,
)
from ..rows import (
    ChainLinks,
    CommitResult,
    DreamRunRow,
    DreamSummaryRow,
    FullRecordsPage,
    HarvestRow,
    InjectionEntry,
    InjectionRow,
    PromotionEntry,
    ProposalItem,
    ProposalRow,
    QueueLimits,
    QueueRows,
    RecordAccess,
    RecordFilter,
    RecordKey,
    RecordRow,
    RecordsPage,
    ScopeCounts,
    SessionRow,
    VerdictRow,
    record_key,
)
from ..sql.sessions import Dialect, SessionTable
from ..usage import FLUSH_THRESHOLD as USAGE_FLUSH_THRESHOLD
from ..usage import PendingUsage
from ..validator import CreateOp, TombstoneOp, WriteBatch, validate_batch, validate_restore
from . import panel as panel_sql
from . import purge as sqlite_purge
from . import steward_rows
from .budget import OpenRealmBudget
from .checkpoint import Checkpointer, configure_writer, truncate_wal
from .files import REALM_PAGE_SIZE, RealmFileDamaged, check_realm_file, create_realm_file, holds_schema
from .indexing import IndexKeeper, IndexWorkerLink
from .listing import full_records_query, register_functions, tags_all_sql
from .migrations import NewerSchema, applied_versions, migrate
from .recall_index import adopt_in_file_index, open_index_file
from .rows import INSERT_RECORD, RECORD_COLUMNS
from .term_index import SqliteTermIndex
from .txn import SqliteTxn
from .usage import write_back
from .vectors import INLINE_EMBED_MAX, VectorFile, VectorSpec

if TYPE_CHECKING:
    import numpy as np

    from ..embedding import Embedder
    from ..recall.hybrid import NeighbourSearch

__all__ = ["REALM_PAGE_SIZE", "SqliteRealmStore"]

# A read that finds the vectors behind nudges the indexing process at most this often.
VECTOR_NUDGE_GAP_S = 1.0
ABSENT_SCOPES_KEPT = 4096  # scopes remembered as not there (past it, forgotten and asked again)

_log = logging.getLogger(__name__)
# store_meta key: a purge deleted rows whose files are not rewritten yet (see _finish_rewrite).
REWRITE_PENDING = "rewrite_pending"

_SESSION_DIALECT = Dialect("?")


class SqliteRealmStore:
    """One realm's SQLite file. Thread-safe: one connection behind a lock."""

    def __init__(
        self,
        path: Path,
        realm: str,
        *,
        clock: Clock,
        durability: str = "process",
        index_worker: IndexWorkerLink | None = None,
        shown_as: str | None = None,
        budget: OpenRealmBudget | None = None,
        vectors: VectorSpec | None = None,
    ) -> None:
        """Open (or create) ``realm``'s file at ``path``. ``shown_as`` names the file in errors
        (a path relative to the state dir: a server path never reaches a caller); ``budget``
        bounds how many stores keep their files open (budget.py): this one's files may then be
        closed while it is idle and are reopened by its next call.

        Raises:
            StoreCorrupt: the file exists but is not a realm store this release can serve.
        """
        self.path = path
        self.realm = realm
        self._shown = shown_as or path.name
        self._clock = clock
        self._durability = durability
        self._index_worker = index_worker
        self._budget = budget
        self._vector_spec = vectors
        self._vectors: VectorFile | None = None
        self._vectors_nudged_at = -VECTOR_NUDGE_GAP_S
        self._lock = _FilesLock(self)
        self._closed = False
        self._scope_ids: dict[tuple[str, str], int] = {}
        self._scope_by_id: dict[int, Scope] = {}
        # Scopes looked up and not there (a recall asks the realm's shared scope, mostly empty, two
        # or three times): only this store adds scopes to its file (one runtime per state dir),
        # and it drops a key from here as it adds it.
        self._absent_scopes: set[tuple[str, str]] = set()
        self._txn_new_scopes: list[tuple[str, str]] = []
        self._usage = PendingUsage()  # recall counters not yet written back (usage.py)
        self._files_open = False
        with self._lock:  # opens the files (and refuses a damaged one) now, not at the first call
            pass
        if vectors is not None and index_worker is not None:
            index_worker.listen(path, self._read_ahead)

    # -- the files (open while in use; closed by the budget when idle) -----------------------------

    def _open_files(self) -> None:
        """Called under the store's lock by its outermost acquisition (_FilesLock)."""
        if self._files_open:
            if self._budget is not None:
                self._budget.touch(self)
            return
        if self._closed:
            raise InternalError(f"the store of realm {self.realm!r} is closed")
        if self._budget is not None:
            self._budget.admit(self)
        try:
            self._open_connection()
        except BaseException:
            if self._budget is not None:
                self._budget.discard(self)
            raise
        self._files_open = True

    def _open_connection(self) -> None:
        path, durability = self.path, self._durability
        try:
            existed = path.exists()
            if existed:
                check_realm_file(path)
            else:
                create_realm_file(path, self._clock.now_ms(), durability=durability)
            self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        except RealmFileDamaged as exc:
            raise self._refused(exc.reason, None) from exc
        except (OSError, sqlite3.Error) as exc:
            raise self._refused("cannot be opened", exc) from exc
        try:
            self._db.execute("PRAGMA busy_timeout = 5000")
            register_functions(self._db)  # the record listings' text filter folds case with it
            # Before anything below can write to it: a canonical file is born with its schema
            # (files.py), so one without is damage, never a realm to start afresh.
            if existed and not holds_schema(self._db):
                raise _Damaged("holds no realm schema: it was replaced or emptied")
            # The recall index is many small random-key b-tree writes and reads: keep its hot
            # pages in SQLite's cache (64 MiB) and map the file for reads.
            self._db.execute("PRAGMA cache_size = -65536")
            self._db.execute("PRAGMA mmap_size = 1073741824")
            mode = self._db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if mode != "wal":
                raise sqlite3.DatabaseError(f"journal_mode is {mode}, not wal")
            self._db.execute(f"PRAGMA synchronous = {'FULL' if durability == 'power' else 'NORMAL'}")
            index_path = StateLayout.recall_index_path(path)
            if 1 <= max(applied_versions(self._db), default=0) < 6:
                adopt_in_file_index(self._db, index_path)  # schemas 1-5 kept the index in this file
            if 6 in migrate(self._db, self._clock.now_ms()):
                self._reclaim_after_index_moved()
            if self._db.execute("SELECT 1 FROM store_meta WHERE key = 'realm_uid'").fetchone() is None:
                raise sqlite3.DatabaseError("store_meta has no realm_uid")  # the index file's anchor
            self._db.execute("SELECT count(*) FROM records WHERE doc < 0").fetchone()
            # Checkpoints run on the upkeep thread (see checkpoint.py), not inside a commit.
            configure_writer(self._db)
        except NewerSchema as exc:
            self._db.close()
            raise self._refused(str(exc), None, advice="run a newer release of meta-memory") from exc
        except _Damaged as exc:
            self._db.close()
            raise self._refused(str(exc), None) from exc
        except (sqlite3.DatabaseError, RuntimeError) as exc:
            self._db.close()
            raise self._refused("cannot be read as a realm store", exc) from exc
        try:
            self._keeper = IndexKeeper(self, open_index_file(index_path, self._db, path), self._index_worker)
        except BaseException:
            self._db.close()
            raise
        self._checkpointer = Checkpointer(path)
        if self._vector_spec is not None:
            (realm_uid,) = self._db.execute("SELECT value FROM store_meta WHERE key = 'realm_uid'").fetchone()
            spec = self._vector_spec
            self._vectors = VectorFile(
                path, realm_uid=realm_uid, model_id=spec.model_id, dim=spec.dim, ann_min=spec.ann_min
            )
        elif self._index_worker is not None:
            # Lexical recall: a vector file left by hybrid recall is kept for a switch back, and
            # the indexing process told not to fill it (a model loaded and run for nothing).
            VectorFile.pause(path)

    def close_files_if_idle(self) -> bool:
        """Close this store's files unless a thread is using it (the budget's closer, on the
        upkeep thread, where no other upkeep task can be running). Pending usage counters are
        written back first; the next call reopens the files."""
        if not self._lock.acquire_idle():
            return False
        try:
            if self._files_open:
                self.flush_usage()
                self._finish_rewrite(upkeep=True)  # an owed purge rewrite is not left for the next open
                self._stop_upkeep()
                self._close_handles()
            return True
        finally:
            self._lock.release_idle()

    def _stop_upkeep(self) -> None:
        # Waits for a running task of this store to finish, unless called on the upkeep thread.
        self._keeper.close()
        self._checkpointer.close()

    def _close_handles(self) -> None:
        self._files_open = False
        self._keeper.index.close()
        if self._vectors is not None:
            self._vectors.close()
            self._vectors = None
        try:
            self._db.close()
        except sqlite3.Error as exc:  # pragma: no cover - close failures are I/O faults
            raise InternalError(f"closing realm file {self._shown} failed") from exc

    def _refused(
        self,
        reason: str,
        cause: BaseException | None,
        *,
        advice: str = "restore it from a backup or move it away (`meta_gateway doctor` describes it)",
    ) -> StoreCorrupt:
        """The refusal a caller sees (the file named relative to the state dir); SQLite's or the
        OS's own text goes to the log only. The file is left as it is."""
        _log.error(
            "realm %r refused: its file %s %s%s",
            self.realm,
            self.path,
            reason,
            f" ({cause})" if cause else "",
        )
        return StoreCorrupt(
            f"realm {self.realm!r} is refused: its file {self._shown} {reason}; {advice}",
            data={"kind": "realm_refused", "realm": self.realm, "file": self._shown},
        )

    def _reclaim_after_index_moved(self) -> None:
        """Migration 6 left the old in-file index's pages free (about 40% of a large file): give
        them back to the file system once, while nothing else has the file open (measured: 14 s
        for a 1,000,000-record realm, 1.58 GB to 0.87 GB)."""
        (free,) = self._db.execute("PRAGMA freelist_count").fetchone()
        (pages,) = self._db.execute("PRAGMA page_count").fetchone()
        if free * 4 > pages:
            _log.info("reclaiming %d free pages of %s after moving its recall index", free, self.path)
            self._db.execute("VACUUM")

    # -- transactions ----------------------------------------------------------------

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._txn_new_scopes = []
            pending = self._keeper.pending
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
                if self._usage:
                    write_back(self._db, self._usage)
                self._db.execute("COMMIT")
                self._usage.clear()
            except BaseException:
                self._db.execute("ROLLBACK")
                # Scope ids handed out inside the rolled-back transaction do not exist (and
                # SQLite may hand the same ids to other scopes next time).
                for key in self._txn_new_scopes:
                    self._scope_by_id.pop(self._scope_ids.pop(key), None)
                self._keeper.pending = pending
                raise
            self._checkpointer.nudge(self._db)
            if self._keeper.pending > pending:
                self._keeper.after_commit(first=pending == 0)

    @contextmanager
    def transaction(self) -> Iterator[SqliteTxn]:
        """One ``BEGIN IMMEDIATE`` write transaction (the RealmTxn unit of work, txn.py)."""
        with self._write() as db:
            yield SqliteTxn(self, db)

    def view(self) -> _TxnView:
        """The validator's reads, inside the caller's open write transaction."""
        return _TxnView(self)

    @contextmanager
    def _savepoint(self, db: sqlite3.Connection, name: str = "step") -> Iterator[None]:
        """A savepoint inside the caller's open ``_write()`` transaction: an exception undoes only
        what was written since it opened (and the scope ids handed out meanwhile), then
        propagates; the enclosing transaction goes on. (The backlog count may then overstate the
        backlog, which only costs a catch-up that finds nothing to do.)"""
        scopes = len(self._txn_new_scopes)
        db.execute(f"SAVEPOINT {name}")
        try:
            yield
        except BaseException:
            db.execute(f"ROLLBACK TO {name}")
            db.execute(f"RELEASE {name}")
            for key in self._txn_new_scopes[scopes:]:
                self._scope_by_id.pop(self._scope_ids.pop(key), None)
            del self._txn_new_scopes[scopes:]
            raise
        db.execute(f"RELEASE {name}")

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """A consistent read: one deferred transaction under the store lock (usage written back first)."""
        with self._lock:
            self.flush_usage()
            self._db.execute("BEGIN")
            try:
                yield self._db
            finally:
                self._db.execute("COMMIT")

    # -- scopes and terms --------------------------------------------------------------

    def _scope_id(self, scope: Scope, *, create: bool) -> int | None:
        key = (scope.kind.value, scope.key)
        cached = self._scope_ids.get(key)
        if cached is not None:
            return cached
        if not create and key in self._absent_scopes:
            return None
        row = self._db.execute("SELECT scope_id FROM scopes WHERE kind = ? AND key = ?", key).fetchone()
        if row is None:
            if not create:
                if len(self._absent_scopes) >= ABSENT_SCOPES_KEPT:
                    self._absent_scopes.clear()
                self._absent_scopes.add(key)
                return None
            self._absent_scopes.discard(key)
            row = (self._db.execute("INSERT INTO scopes (kind, key) VALUES (?, ?)", key).lastrowid,)
            self._txn_new_scopes.append(key)
        self._scope_ids[key] = row[0]
        self._scope_by_id[row[0]] = scope
        return int(row[0])

    def _scope_of(self, scope_id: int) -> Scope:
        scope = self._scope_by_id.get(scope_id)
        if scope is None:
            kind, key = self._db.execute(
                "SELECT kind, key FROM scopes WHERE scope_id = ?", (scope_id,)
            ).fetchone()
            scope = Scope(ScopeKind(kind), self.realm, key)
            self._scope_by_id[scope_id] = scope
            self._scope_ids[(kind, key)] = scope_id
        return scope

    # -- the recall index (indexing.py keeps it) ------------------------------------------

    def backlog(self) -> int:
        """About how many records the recall index is behind by (never less; exact after each
        catch-up this store runs)."""
        return self._keeper.pending

    def quiet_for(self) -> float:
        """Seconds since the last write that left upkeep behind, or the last recall."""
        return self._keeper.quiet_for()

    def flush_index(self) -> int:
        """Bring the recall index up to date; returns how much work that took (read-your-writes:
        called before the index is read)."""
        return self.apply_backlog(None)

    def apply_backlog(self, limit: int | None) -> int:
        """Catch the recall index up (at most ``limit`` new records of the backlog)."""
        with self._lock:
            return self._keeper.catch_up(limit)

    def merge_fresh(self, limit: int) -> int:
        """Move up to ``limit`` records from the recall index's fresh tier into its postings."""
        with self._lock:
            return self._keeper.merge(limit)

    # -- writes -------------------------------------------------------------------------------

    def commit(self, batch: WriteBatch, *, dedup: bool = False) -> CommitResult:
        now = self._clock.now_ms()
        with self._write() as db:
            if dedup and len(batch.ops) == 1 and isinstance(batch.ops[0], CreateOp):
                existing = self._active_duplicate(batch.ops[0].record)
                if existing is not None:
                    return CommitResult((existing,), deduplicated=True)
            return self._apply(db, batch, now)

    def _apply(
        self, db: sqlite3.Connection, batch: WriteBatch, now: int, *, review: dict[str, Any] | None = None
    ) -> CommitResult:
        """Validate and apply inside the caller's open write transaction.

        ``review``: a quarantine review this batch carries out; each audit row holds it.
        """
        validate_batch(batch, self.view(), now_ms=now)
        written: list[Record] = []
        seq = None
        for op in batch.ops:
            if isinstance(op, CreateOp):
                written.append(self._create(db, op.record, now))
                op_name = "supersede" if op.record.supersedes else "create"
                seq = self._audit(db, now, op_name, op.record.id, batch, op.record.quarantine_reason, review)
            else:
                written.append(self._tombstone(db, op.memory_id, now))
                seq = self._audit(db, now, "tombstone", op.memory_id, batch, None, review)
        return CommitResult(tuple(written), audit_seq=seq)

    def _active_duplicate(self, record: Record) -> Record | None:
        scope_id = self._scope_id(record.scope, create=False)
        if scope_id is None:
            return None
        # The doc alone first (see _TxnView.has): nearly every remember finds none.
        found = self._db.execute(
            "SELECT doc FROM records WHERE scope_id = ? AND content_hash = ? AND status = 'active' "
            "AND expires_at_ms IS NULL LIMIT 1",
            (scope_id, record.content_hash),
        ).fetchone()
        if found is None:
            return None
        row = self._db.execute(f"SELECT {RECORD_COLUMNS} FROM records WHERE doc = ?", found).fetchone()
        return self._row_to_record(row)

    def _create(self, db: sqlite3.Connection, r: Record, now: int) -> Record:
        scope_id = self._scope_id(r.scope, create=True)
        assert scope_id is not None
        cur = db.execute(INSERT_RECORD, record_values(r, scope_id))
        doc = cur.lastrowid
        assert doc is not None
        if r.status is Status.ACTIVE:
            self._keeper.grew()  # above the index watermark: the next catch-up indexes it
            if r.supersedes is not None:
                self._leave_active(db, r.supersedes, Status.SUPERSEDED, now, superseded_by=r.id)
        if r.status is Status.QUARANTINED and not r.ever_quarantined:
            return replace(r, ever_quarantined=True)
        return r

    def _leave_active(
        self,
        db: sqlite3.Connection,
        memory_id: str,
        status: Status,
        now: int,
        *,
        superseded_by: str | None = None,
    ) -> None:
        doc, old_status = db.execute("SELECT doc, status FROM records WHERE id = ?", (memory_id,)).fetchone()
        if old_status == Status.ACTIVE.value:
            self._keeper.queue_removal(db, doc)
        db.execute(
            "UPDATE records SET status = ?, superseded_by = ?, updated_at_ms = ? WHERE doc = ?",
            (status.value, superseded_by, now, doc),
        )

    def _tombstone(self, db: sqlite3.Connection, memory_id: str, now: int) -> Record:
        self._leave_active(db, memory_id, Status.TOMBSTONED, now)
        record = self._get(memory_id)
        assert record is not None
        return record

    def _audit(
        self,
        db: sqlite3.Connection,
        now: int,
        op: str,
        record_id: str,
        batch: WriteBatch,
        quarantined: str | None,
        review: dict[str, Any] | None = None,
    ) -> int:
        detail: dict[str, Any] = {
            "op": op,
            "author": batch.author.to_wire(),
            "rationale": batch.rationale,
            "quarantined": quarantined,
        }
        if review is not None:
            detail["review"] = review
        cur = db.execute(
            "INSERT INTO audit (at_ms, op, record_id, author, detail) VALUES (?, ?, ?, ?, ?)",
            (now, op, record_id, wire_json(batch.author), dumps(detail)),
        )
        assert cur.lastrowid is not None
        return cur.lastrowid

    def create_proposal(
        self,
        *,
        proposal_id: str,
        scope: Scope,
        kind: str,
        title: str,
        description: str,
        body: str,
        tags: Sequence[str],
        author: Author,
        tainted: bool,
    ) -> None:
        """Queue a pending proposal (mob/operator scope) with one audit row."""
        now = self._clock.now_ms()
        with self._write() as db:
            db.execute(
                "INSERT INTO proposals (proposal_id, scope_kind, scope_key, kind, title, description, body, tags, "
                "author, status, tainted, created_at_ms, updated_at_ms) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)",
                (
                    proposal_id,
                    scope.kind.value,
                    scope.key,
                    kind,
                    title,
                    description,
                    body,
                    dumps(list(tags)),
                    dumps(author.to_wire()),
                    int(tainted),
                    now,
                    now,
                ),
            )
            db.execute(
                "INSERT INTO audit (at_ms, op, record_id, author, detail) VALUES (?, 'propose', ?, ?, ?)",
                (
                    now,
                    proposal_id,
                    dumps(author.to_wire()),
                    dumps(
                        {
                            "op": "propose",
                            "author": author.to_wire(),
                            "tainted": tainted,
                            "scope": scope.to_wire(),
                        }
                    ),
                ),
            )

    def import_records(
        self,
        file_name: str,
        author: Author,
        records: Sequence[Record],
        malformed: Sequence[tuple[str | None, str]],
    ) -> tuple[int, int]:
        """Import one legacy file's records in one transaction; safe to run again.

        Records whose id already exists are skipped silently (a re-run after a crash);
        records the validator refuses, and the parser's ``malformed`` entries, are skipped
        with an ``import_skipped`` audit row. Returns (imported, skipped).
        """
        now = self._clock.now_ms()
        imported = skipped = 0
        with self._write() as db:
            for memory_id, reason in malformed:
                self._audit_note(db, now, memory_id, author, {"file": file_name, "reason": reason})
                skipped += 1
            for record in records:
                if self._get(record.id) is not None:
                    continue
                batch = WriteBatch(self.realm, author, (CreateOp(record),), f"import {file_name}")
                try:
                    validate_batch(batch, _TxnView(self), now_ms=now)
                except WriteRefused as exc:
                    detail = {"file": file_name, "reason": exc.rule, "detail": exc.message}
                    self._audit_note(db, now, record.id, author, detail)
                    skipped += 1
                    continue
                self._create(db, record, now)
                self._audit(db, now, "import", record.id, batch, None)
                imported += 1
            db.execute(
                "INSERT INTO legacy_imports (file_name, imported, skipped, completed_at_ms) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (file_name) DO UPDATE SET imported = imported + excluded.imported, "
                "skipped = excluded.skipped, completed_at_ms = excluded.completed_at_ms",
                (file_name, imported, skipped, now),
            )
        return imported, skipped

    def _audit_note(
        self, db: sqlite3.Connection, now: int, record_id: str | None, author: Author, detail: dict[str, Any]
    ) -> None:
        """An audit row for a record the import skipped (nothing else was written)."""
        db.execute(
            "INSERT INTO audit (at_ms, op, record_id, author, detail) VALUES (?, 'import_skipped', ?, ?, ?)",
            (now, record_id, dumps(author.to_wire()), dumps({"op": "import_skipped", **detail})),
        )

    def _restore(
        self, db: sqlite3.Connection, r: Record, author: Author, rationale: str | None, now: int
    ) -> None:
        """Write ``r`` as an export holds it, inside the caller's open write transaction
        (RealmTxn.restore)."""
        validate_restore(r, self.realm, self.view(), importer=author)
        scope_id = self._scope_id(r.scope, create=True)
        assert scope_id is not None
        doc = db.execute(INSERT_RECORD, record_values(r, scope_id)).lastrowid
        if r.superseded_by is not None:
            db.execute("UPDATE records SET superseded_by = ? WHERE doc = ?", (r.superseded_by, doc))
        if r.status is Status.ACTIVE:
            self._keeper.grew()  # above the index watermark: the next catch-up indexes it
        batch = WriteBatch(self.realm, author, (CreateOp(r),), rationale)
        quarantined = r.quarantine_reason if r.status is Status.QUARANTINED else None
        self._audit(db, now, "import", r.id, batch, quarantined)

    def forget(self, scope: Scope, memory_id: str, author: Author) -> bool:
        with self._write() as db:
            current = self._get(memory_id)
            if current is None or current.scope != scope or current.status is Status.TOMBSTONED:
                return False
            self._apply(
                db, WriteBatch(self.realm, author, (TombstoneOp(memory_id, scope),)), self._clock.now_ms()
            )
            return True

    def purge(self, target: PurgeTarget, by: dict[str, Any]) -> PurgeReceipt:
        """Erase ``target`` and its lineage (memory/purge.py), then rewrite the realm file and its
        derived files so no page or WAL keeps their text. Writes to the realm wait meanwhile.

        Raises:
            UnknownRecord: one of ``target.memory_ids`` is not a record of the identity's scope.
            PurgeIncomplete: the rows are gone but a file could not be rewritten (a reader held its WAL
                too long); the rewrite is owed (_finish_rewrite).
        """
        return self._erase(target, by, scrub=True)

    def expire_due(self, now_ms: int) -> PurgeReceipt | None:
        """Delete up to EXPIRY_BATCH active records whose expiry has come by ``now_ms``, with their
        lineages and derived data (the files are not rewritten: a purge does that); the receipt,
        or ``None`` when none was due. A store whose files the budget closed is left until it is
        used again (its reads judge expiry meanwhile)."""
        if not self._files_open:
            return None
        with self._lock:
            self._finish_rewrite(upkeep=True)  # a purge that could not rewrite the files: retried here
            (due,) = self._db.execute(
                "SELECT EXISTS (SELECT 1 FROM records WHERE expires_at_ms <= ? AND status = 'active')",
                (now_ms,),
            ).fetchone()
            if not due:
                return None
            return self._erase(
                PurgeTarget.expired(now_ms), {"kind": "expiry", "principal": None}, scrub=False
            )

    def _erase(self, target: PurgeTarget, by: dict[str, Any], *, scrub: bool) -> PurgeReceipt:
        with self._lock:
            if scrub:
                self._finish_rewrite()  # an earlier purge's, before this one can fail on its ids
            with self._write() as db:
                taken = sqlite_purge.take(db, self.realm, target, by, self._clock.now_ms())
                if scrub:  # in the deletes' own transaction: a crash before the rewrite leaves it owed
                    db.execute(
                        "INSERT INTO store_meta (key, value) VALUES (?, ?) "
                        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                        (REWRITE_PENDING, str(taken.receipt.receipt_id)),
                    )
            docs = sqlite_purge.docs_of(taken.texts)
            self._keeper.index.purge_docs(taken.texts, taken.newest_doc)
            counts = taken.receipt.counts
            if self._vectors is not None:
                counts.vectors = self._vectors.purge_docs(docs, taken.newest_doc)
            else:  # lexical recall: a vector file hybrid recall left still holds their vectors
                counts.vectors = sqlite_purge.purge_vector_file(
                    StateLayout.vector_path(self.path), docs, taken.newest_doc
                )
            if scrub and not self._finish_rewrite():
                raise PurgeIncomplete(str(taken.receipt.receipt_id))
        return taken.receipt

    def _finish_rewrite(self, *, upkeep: bool = False) -> bool:
        """Rewrite the realm's files if a purge left that owed (``store_meta`` ``rewrite_pending``,
        written with its deletes; cleared once every file is rewritten): by the purge itself, the
        next purge, or the upkeep (the expiry sweep, the idle-file closer). Whether nothing is owed
        now. Under the lock. ``upkeep``: only if no reader holds the realm file's WAL right now
        (a cut that waits for nobody), so a reader that stays does not make every sweep rewrite
        the file and hold the realm's writes for REWRITE_WAIT_S; the next sweep looks again."""
        if self._db.execute("SELECT 1 FROM store_meta WHERE key = ?", (REWRITE_PENDING,)).fetchone() is None:
            return True
        if upkeep and not truncate_wal(self._db, 5000):  # the busy timeout the writer runs with
            return False
        if self._vectors is not None:
            done = self._vectors.scrub()
        else:
            done = sqlite_purge.rewrite_path(StateLayout.vector_path(self.path))
        done = self._keeper.index.scrub() and done
        done = sqlite_purge.rewrite(self._db, self._shown) and done
        if done:
            self._db.execute("DELETE FROM store_meta WHERE key = ?", (REWRITE_PENDING,))
            self._checkpointer.nudge(self._db)
        return done

    # -- reads ----------------------------------------------------------------------------------

    def _row_to_record(self, row: Sequence[Any]) -> Record:
        return record_from_row(row, self._scope_of, self._usage)

    def _get(self, memory_id: str) -> Record | None:
        row = self._db.execute(f"SELECT {RECORD_COLUMNS} FROM records WHERE id = ?", (memory_id,)).fetchone()
        return self._row_to_record(row) if row else None

    def get(self, memory_id: str) -> Record | None:
        with self._lock:
            return self._get(memory_id)

    def scope_keys(self, kind: ScopeKind) -> list[str]:
        with self._lock:
            rows = self._db.execute("SELECT key FROM scopes WHERE kind = ? ORDER BY key", (kind.value,))
            return [str(key) for (key,) in rows]

    def _existing_scope_ids(self, scopes: Sequence[Scope]) -> list[int]:
        """The ids of those of ``scopes`` that hold a record (called under the lock)."""
        found = (self._scope_id(scope, create=False) for scope in dict.fromkeys(scopes))
        return [scope_id for scope_id in found if scope_id is not None]

    def newest_active(self, scopes: Sequence[Scope], limit: int, tags: Sequence[str] = ()) -> list[Record]:
        with self._lock:
            tagged, tag_args = tags_all_sql("tags", tags) if tags else ("1", [])
            rows: list[Any] = []
            for scope_id in self._existing_scope_ids(scopes):  # each scope by its own index
                rows.extend(
                    self._db.execute(
                        f"SELECT {RECORD_COLUMNS} FROM records WHERE scope_id = ? AND status = 'active' "
                        f"AND {tagged} ORDER BY updated_at_ms DESC, created_at_ms DESC, id DESC LIMIT ?",
                        (scope_id, *tag_args, limit),
                    ).fetchall()
                )
            records = [self._row_to_record(r) for r in rows]
        records.sort(key=lambda r: (r.updated_at_ms, r.created_at_ms, r.id), reverse=True)
        return records[:limit]

    def tagged_docs(self, scopes: Sequence[Scope], tags: Sequence[str]) -> set[int]:
        with self._lock:
            tagged, tag_args = tags_all_sql("tags", tags)
            docs: set[int] = set()
            for scope_id in self._existing_scope_ids(scopes):
                rows = self._db.execute(
                    f"SELECT doc FROM records WHERE scope_id = ? AND status = 'active' AND {tagged}",
                    (scope_id, *tag_args),
                )
                docs.update(int(doc) for (doc,) in rows)
            return docs

    def full_records_page(self, where: RecordFilter, after: RecordKey | None, limit: int) -> FullRecordsPage:
        sql, args = full_records_query(where, after, limit)
        with self._lock:  # one statement: one consistent read
            rows = self._db.execute(sql, args).fetchall()
            records = tuple(self._row_to_record(r) for r in rows[:limit])
        more = len(rows) > limit
        return FullRecordsPage(records, record_key(records[-1]) if more and records else None)

    def term_index(self, scopes: Sequence[Scope]) -> SqliteTermIndex:
        """The recall index of ``scopes`` as one collection (term_index.py)."""
        with self._lock:
            # What the previous read found (before a catch-up drops it): a long fresh tier is
            # merged without waiting for quiet.
            self._keeper.after_read()
            if self._keeper.pending:
                self._keeper.catch_up_unless_rebuilding()
            scope_ids = self._existing_scope_ids(scopes)
        return SqliteTermIndex(self, self._keeper.index, scope_ids)

    @contextmanager
    def reading_index(self, scopes: Sequence[Scope]) -> Iterator[SqliteTermIndex]:
        """:meth:`term_index`, with every read of it in one read transaction of the index file
        until the block ends (the store's lock held throughout)."""
        with self._lock:
            index = self.term_index(scopes)
            with self._keeper.index.reading():
                yield index

    @contextmanager
    def exporting(
        self, *, statuses: Collection[Status], scope: Scope | None = None
    ) -> Iterator[Iterator[Record]]:
        """One read transaction (the store's lock held) over the records an export takes."""
        with self.reading() as db:
            wanted = sorted(s.value for s in statuses)
            scope_id = self._scope_id(scope, create=False) if scope is not None else None
            if not wanted or (scope is not None and scope_id is None):
                yield iter(())
                return
            sql = f"SELECT {RECORD_COLUMNS} FROM records WHERE status IN ({','.join('?' * len(wanted))})"
            args: list[Any] = list(wanted)
            if scope_id is not None:
                sql += " AND scope_id = ?"
                args.append(scope_id)
            rows = db.execute(sql + " ORDER BY created_at_ms, id", args)
            yield (self._row_to_record(row) for row in rows)

    def nearest(
        self,
        scopes: Sequence[Scope],
        query: np.ndarray,
        limit: int,
        embedder: Embedder,
        allowed: Collection[int] | None = None,
    ) -> list[tuple[int, float]]:
        """The docs of ``scopes`` nearest ``query`` (``VectorReads``): :meth:`searcher`'s search."""
        return self.searcher(scopes, embedder)(query, limit, allowed)

    def searcher(self, scopes: Sequence[Scope], embedder: Embedder) -> NeighbourSearch:
        """A search of the vectors of ``scopes`` as they are now (``VectorReads``): the scopes'
        matrices are taken under the store's lock, and searched without it, beside a lexical
        ranking on another thread; its ``progress`` is what they were read at. Without an
        indexing process this first embeds up to INLINE_EMBED_MAX records not embedded yet."""
        with self._lock:
            vectors = self._vectors
            if vectors is None:
                return ScopesSearch(list)
            upto = vectors.embedded_upto  # one read of the mark serves all below
            newest = self._newest_doc()
            if newest > upto:
                # Writes nudge the indexing process; a realm just switched to hybrid (or to another
                # model) has none, so its reads do, while they rank lexically.
                upto = self._ask_for_vectors(vectors, embedder, at_most_every=VECTOR_NUDGE_GAP_S)
            scoped = [vectors.scope(scope_id, upto) for scope_id in self._existing_scope_ids(scopes)]
        return ScopesSearch(lambda: scoped, (newest, upto))

    def _read_ahead(self) -> None:
        """The indexing process has embedded the realm's records up to its newest: the scopes'
        copies kept here are brought up to the new mark now (VectorFile.read_ahead, under this
        store's lock as for a read), so that the recall after a write finds them read rather than
        decoding, projecting and appending its new vectors itself. Files closed while idle stay
        closed."""
        vectors = self._vectors
        if vectors is None or not vectors.keeps_copies():  # nothing to read ahead into (no lock taken)
            return
        with self._lock.idle():
            vectors = self._vectors
            if self._closed or not self._files_open or vectors is None:
                return
            upto = vectors.embedded_upto
            since = vectors.oldest_behind(upto)
            if since is None:
                return
            written = {
                scope_id
                for (scope_id,) in self._db.execute(
                    "SELECT DISTINCT scope_id FROM records WHERE doc > ? AND doc <= ?", (since, upto)
                )
            }
            vectors.read_ahead(upto, written)

    def _newest_doc(self) -> int:
        """The realm's highest doc (its newest record), 0 without any (under the lock)."""
        row = self._db.execute("SELECT max(doc) FROM records").fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    def vector_progress(self, nudge_with: Embedder | None = None) -> tuple[int, int] | None:
        """``(newest doc, embedded up to)`` of the realm's vectors (``VectorReads``), ``None``
        without vectors; with ``nudge_with``, what is behind is asked for: the indexing process is
        nudged (without one, up to INLINE_EMBED_MAX records are embedded here, as a read does)."""
        with self._lock:
            vectors = self._vectors
            if vectors is None:
                return None
            newest, upto = self._newest_doc(), vectors.embedded_upto
            if nudge_with is not None and newest > upto:
                upto = self._ask_for_vectors(vectors, nudge_with, at_most_every=0.0)
            return newest, upto

    def _ask_for_vectors(self, vectors: VectorFile, embedder: Embedder, *, at_most_every: float) -> int:
        """Ask for the vectors of the records past the mark (under the lock): without an indexing
        process up to INLINE_EMBED_MAX of them are embedded here; otherwise the process is nudged,
        at most every ``at_most_every`` seconds. The mark afterwards."""
        if self._index_worker is None:
            vectors.catch_up(self._db, embedder, INLINE_EMBED_MAX)
        elif (now := time.monotonic()) - self._vectors_nudged_at >= at_most_every:
            self._vectors_nudged_at = now
            self._index_worker.nudge(self.path)
        return vectors.embedded_upto

    def records_by_doc(self, docs: Sequence[int]) -> dict[int, Record]:
        if not docs:
            return {}
        with self._lock:
            marks = ",".join("?" * len(docs))
            rows = self._db.execute(
                f"SELECT {RECORD_COLUMNS} FROM records WHERE doc IN ({marks})", list(docs)
            )
            return {row[0]: self._row_to_record(row) for row in rows}

    def mark_recalled(self, memory_ids: Iterable[str], at_ms: int) -> None:
        """Count an explicit recall of each record: in memory, written back later (usage.py)."""
        with self._lock:
            self._usage.add(memory_ids, at_ms)
            if not self._usage:
                return
            self._keeper.touched()
            if len(self._usage) >= USAGE_FLUSH_THRESHOLD:
                self.flush_usage()

    def pending_usage(self) -> int:
        return len(self._usage)

    def flush_usage(self) -> None:
        """Write the pending usage counters back (one transaction)."""
        with self._lock:
            if self._usage:
                with self._write():
                    pass  # _write() writes pending usage back before every commit

    def record_injections(self, rows: Sequence[InjectionRow]) -> None:
        if not rows:
            return
        with self._write() as db:
            db.executemany(
                "INSERT INTO injections (record_id, identity, session_key, surface, at_ms) VALUES (?, ?, ?, ?, ?)",
                [(r.record_id, r.identity, r.session_key, r.surface, r.at_ms) for r in rows],
            )
            db.executemany(
                "UPDATE records SET injected_count = injected_count + 1, last_injected_at_ms = ? WHERE id = ?",
                [(r.at_ms, r.record_id) for r in rows],
            )

    def add_harvest(self, identity: str, session_key: str, cause: str, retired_at_ms: int) -> None:
        steward_rows.add_harvest(self, identity, session_key, cause, retired_at_ms)

    # -- the panel's reads (PanelReads: panel.py has the SQL) --------------------------------------------

    def records_page(self, where: RecordFilter, after: RecordKey | None, limit: int) -> RecordsPage:
        return panel_sql.records_page(self, where, after, limit)

    def record_access(self, memory_ids: Iterable[str]) -> dict[str, RecordAccess]:
        return panel_sql.record_access(self, memory_ids)

    def supersede_chain(self, memory_id: str, max_hops: int) -> ChainLinks:
        return panel_sql.supersede_chain(self, memory_id, max_hops)

    def record_injections_of(
        self, memory_id: str, before: tuple[int, int] | None, limit: int
    ) -> list[InjectionEntry]:
        return panel_sql.record_injections(self, memory_id, before, limit)

    def quarantined(self, limit: int) -> list[RecordRow]:
        return panel_sql.quarantined(self, limit)

    def pending_promotions(self, limit: int) -> list[PromotionEntry]:
        return panel_sql.pending_promotions(self, limit)

    def proposal_scopes(self, proposal_ids: Iterable[str]) -> dict[str, tuple[str, str]]:
        return panel_sql.proposal_scopes(self, proposal_ids)

    def pending_proposals(self, limit: int) -> list[ProposalRow]:
        return panel_sql.pending_proposals(self, limit)

    def proposal_detail(self, proposal_id: str) -> ProposalItem | None:
        return panel_sql.proposal_detail(self, proposal_id)

    def injections(self, limit: int) -> list[InjectionEntry]:
        return panel_sql.injections(self, limit)

    def pending_harvests(self, limit: int) -> list[HarvestRow]:
        return panel_sql.pending_harvests(self, limit)

    def open_verdicts(self, limit: int) -> list[VerdictRow]:
        return panel_sql.open_verdicts(self, limit)

    def scope_counts(self) -> list[ScopeCounts]:
        return panel_sql.scope_counts(self)

    def dream_summaries(self, limit: int) -> list[DreamSummaryRow]:
        return panel_sql.dream_summaries(self, limit)

    def dream_runs(self, limit: int) -> list[DreamRunRow]:
        return panel_sql.dream_runs(self, limit)

    def holds_quarantine_evidence(self) -> bool:
        return panel_sql.holds_quarantine_evidence(self)

    def realm_scopes(self) -> set[tuple[str, str]]:
        return panel_sql.realm_scopes(self)

    # -- the steward's reads (StewardReads: steward_rows.py has the SQL) --------------------------------

    def gather(
        self,
        *,
        identities: Collection[str] | None,
        mob: str | None,
        limits: QueueLimits,
        unaffiliated: bool = False,
    ) -> QueueRows:
        return steward_rows.gather(
            self, identities=identities, mob=mob, limits=limits, unaffiliated=unaffiliated
        )

    def identity_keys(self) -> list[str]:
        return steward_rows.identity_keys(self)

    def signal_count(
        self, *, identities: Collection[str] | None, mob: str | None, unaffiliated: bool = False
    ) -> int:
        return steward_rows.signal_count(self, identities=identities, mob=mob, unaffiliated=unaffiliated)

    def run_stats(self, partition: str, since_ms: int) -> tuple[int, int | None]:
        return steward_rows.run_stats(self, partition, since_ms)

    # -- host sessions (memory/sql/sessions.py) -----------------------------------------------------

    def _sessions(self) -> SessionTable:
        return SessionTable(self._db, _SESSION_DIALECT, self._clock.now_ms)

    def session(self, key: str) -> SessionRow | None:
        with self._lock:
            return self._sessions().session_with_pending(key)

    def pending_taint(self, identity: str) -> str | None:
        with self._lock:
            return self._sessions().pending_taint(identity)

    @contextmanager
    def session_txn(self) -> Iterator[SessionTable]:
        with self._write() as db:
            yield SessionTable(db, _SESSION_DIALECT, self._clock.now_ms)

    def touch_session(self, key: str, seen_at_ms: int) -> None:
        with self._lock:
            self._sessions().touch_session(key, seen_at_ms)

    def audit_rows(self, record_id: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            sql = "SELECT seq, at_ms, op, record_id, author, detail FROM audit"
            args: tuple[Any, ...] = ()
            if record_id is not None:
                sql += " WHERE record_id = ?"
                args = (record_id,)
            return [
                {
                    "seq": s,
                    "at_ms": at,
                    "op": op,
                    "record_id": rid,
                    "author": json.loads(a),
                    "detail": json.loads(d),
                }
                for s, at, op, rid, a, d in self._db.execute(sql + " ORDER BY seq", args)
            ]

    def close(self) -> None:
        """Close the store for good (its files too, if open). Safe to call twice."""
        if self._vector_spec is not None and self._index_worker is not None:
            self._index_worker.unlisten(self.path, self._read_ahead)
        with self._lock.idle():
            if self._closed:
                return
            self._closed = True
            files_open = self._files_open
        if files_open:
            # Outside the lock: a running upkeep task of this store may be waiting for it.
            self._stop_upkeep()
            with self._lock.idle():
                if self._usage:
                    try:
                        self.flush_usage()
                    except (sqlite3.Error, StoreCorrupt) as exc:  # pragma: no cover - I/O faults at shutdown
                        _log.warning("usage counters of %s were not written back: %s", self.path, exc)
                self._close_handles()
        if self._budget is not None:
            self._budget.discard(self)


class _Damaged(Exception):
    """A realm file found to be no realm store after it was opened (files.py has the rest)."""


class _FilesLock:
    """The store's re-entrant lock. Its outermost acquisition reopens the store's files when the
    budget closed them (so every use of the files, by the store or by its friends in this
    package, finds them open), and tells the budget the store was used."""

    def __init__(self, store: SqliteRealmStore) -> None:
        self._lock = threading.RLock()
        self._store = store
        self._depth = 0

    def __enter__(self) -> _FilesLock:
        self._lock.acquire()
        self._depth += 1
        if self._depth == 1:
            try:
                self._store._open_files()
            except BaseException:
                self._depth -= 1
                self._lock.release()
                raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._depth -= 1
        self._lock.release()

    def acquire_idle(self) -> bool:
        """Take the lock without reopening anything, only if no thread holds it."""
        if not self._lock.acquire(blocking=False):
            return False
        if self._depth:  # this very thread is using the store
            self._lock.release()
            return False
        self._depth += 1
        return True

    def release_idle(self) -> None:
        self._depth -= 1
        self._lock.release()

    @contextmanager
    def idle(self) -> Iterator[None]:
        """Hold the lock (waiting for it) without reopening anything."""
        self._lock.acquire()
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            self._lock.release()


class _TxnView:
    """The validator's reads, inside the open write transaction."""

    def __init__(self, store: SqliteRealmStore) -> None:
        self._store = store

    def get(self, memory_id: str) -> Record | None:
        return self._store._get(memory_id)

    def has(self, memory_id: str) -> bool:
        # One column: the sqlite3 module builds a cursor description per execute, and for the
        # record's 28 columns that is a third of the cost of this lookup (measured: 8.5 us, not 12.7).
        return (
            self._store._db.execute("SELECT 1 FROM records WHERE id = ?", (memory_id,)).fetchone() is not None
        )

    def tombstoned_content_since(self, scope: Scope, content_hash: str, since_ms: int) -> bool:
        scope_id = self._store._scope_id(scope, create=False)
        if scope_id is None:
            return False
        row = self._store._db.execute(
            "SELECT 1 FROM records WHERE scope_id = ? AND content_hash = ? AND status = 'tombstoned' "
            "AND updated_at_ms >= ? LIMIT 1",
            (scope_id, content_hash, since_ms),
        ).fetchone()
        return row is not None
