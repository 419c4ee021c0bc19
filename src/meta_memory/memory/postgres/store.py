"""One realm in PostgreSQL: the same records, rules and recall as a realm file, on a database that
several gateways share.

Every write runs in one transaction that first takes the realm's advisory lock
(``pg_advisory_xact_lock``), so writes to one realm serialize across gateways exactly as they do
on a realm file's one writer: the validator reads inside the transaction and sees every commit
before it, two reviews of one record decide it once, and ``doc`` (a sequence) grows in commit
order within the realm. The recall index (``postings`` of the same analyzer, per-scope BM25
statistics) is kept inside the write's own transaction, so a record remembered through one
gateway is recalled through another on its next call. A ranking reads the index in one
``REPEATABLE READ`` snapshot. Recall usage counters are kept in memory and added back as
increments with the next write (memory/usage.py), so gateways' counts add up.

Connections come from the gateway's pool for one call or one transaction at a time. A connection
lost mid-call is retried once for reads; a write becomes ``StoreUnavailable`` with nothing
applied.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

import psycopg
import psycopg_pool
from psycopg.pq import TransactionStatus

from ...clock import Clock
from ...errors import CapabilityUnavailable, WriteRefused
from ..codec import dumps, record_from_row, record_values, wire_json
from ..purge import PurgeReceipt, PurgeTarget
from ..recall.analyzer import analyze_record
from ..recall.index import TermIndex
from ..recall.neighbours import ScopesSearch, ScopeVectors
from ..records import Author, Record, Scope, ScopeKind, Status
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
from ..upkeep import UpkeepWorker
from ..usage import FLUSH_THRESHOLD, PendingUsage
from ..validator import (
    RECREATE_WINDOW_MS,
    CreateOp,
    TombstoneOp,
    WriteBatch,
    duplicate_id,
    recreate_tombstoned,
    validate_batch,
    validate_restore,
)
from . import panel as panel_sql
from . import purge as pg_purge
from . import steward_rows
from .columns import RECORD_COLUMNS
from .connect import lock_key, retrying_read, unavailable
from .listing import full_records_query, tags_all_sql
from .term_index import PostgresTermIndex
from .vectors import RealmVectors, embedding_lock_key, read_mark

if TYPE_CHECKING:
    import numpy as np

    from ..embedding import Embedder
    from ..recall.hybrid import NeighbourSearch

__all__ = ["PostgresRealmStore", "realm_lock_key"]

log = logging.getLogger("meta_memory.postgres")

T = TypeVar("T")

_USAGE_QUIET_S = 1.0  # pending recall counters are written back once the realm is this quiet


def realm_lock_key(schema: str, realm: str) -> int:
    """The advisory-lock key every write transaction of ``realm`` takes (in ``schema``)."""
    return lock_key(schema, "realm", realm)


class PostgresRealmStore:
    """A :class:`~meta_memory.memory.store.RealmStore` on a shared PostgreSQL database."""

    def __init__(
        self,
        pool: psycopg_pool.ConnectionPool,
        realm: str,
        schema: str = "public",
        *,
        clock: Clock,
        vectors: RealmVectors | None = None,
    ) -> None:
        self._pool = pool
        # recall = "hybrid": the realm's vectors of the configured model (vectors.py).
        self._vectors = vectors
        self.realm = realm
        self._clock = clock
        self._schema = schema
        self._lock_key = realm_lock_key(schema, realm)
        self._session_lock_key = lock_key(schema, "sessions", realm)
        self._session_dialect = Dialect("%s", realm)
        self._scopes_lock = threading.Lock()
        self._scope_ids: dict[tuple[str, str], int] = {}
        self._scope_by_id: dict[int, Scope] = {}
        self._usage_lock = threading.Lock()
        self._usage = PendingUsage()
        self._worker = UpkeepWorker.shared()
        self._closed = False
        # Per thread: the records the last ranking on it read whole (reading_index, records_by_doc).
        self._ranked = threading.local()

    # -- connections -------------------------------------------------------------------------------

    @contextmanager
    def _read(self, *, snapshot: bool = False) -> Iterator[psycopg.Connection]:
        """A pooled connection for reads; ``snapshot``: one REPEATABLE READ, READ ONLY transaction."""
        with self._pool.connection() as conn:
            if not snapshot:
                yield conn
                return
            conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            try:
                yield conn
            finally:
                if not conn.closed:
                    conn.execute("COMMIT")

    def _query(self, sql: str, args: Sequence[Any] = (), what: str = "read") -> list[tuple[Any, ...]]:
        def run() -> list[tuple[Any, ...]]:
            with self._read() as conn:
                return conn.execute(sql, args).fetchall()

        return retrying_read(run, what)

    @contextmanager
    def transaction(self) -> Iterator[PostgresTxn]:
        """One write transaction under the realm's advisory lock (the RealmTxn unit of work).

        Round trips are what a write costs here, so the transaction runs in pipeline mode and is
        driven by hand: ``BEGIN`` and the lock go out with the first read, a record's insert (with
        its postings and scope statistics) and its audit row are one statement that goes out with
        ``COMMIT``. A remember is two round trips, as a bare insert-and-commit is: begin, lock and
        look-ups; then the writes and the commit. Statements still queued when a read needs the
        connection go out first (PostgresTxn.conn). The server runs them in order, each
        statement with its own snapshot, so a read after the lock sees every write committed
        before it.
        """
        created_scopes: list[tuple[str, str]] = []
        written_back: list[tuple[str, int, int]] = []
        try:
            with self._pool.connection() as conn:
                try:
                    with conn.pipeline():
                        conn.execute("BEGIN")
                        conn.execute("SELECT pg_advisory_xact_lock(%s)", (self._lock_key,))
                        txn = PostgresTxn(self, conn, created_scopes)
                        yield txn
                        with self._usage_lock:
                            written_back = self._usage.items()
                        if written_back:
                            _write_back_usage(txn.conn, self.realm, written_back)
                        txn.flush()
                        conn.execute("COMMIT")
                except BaseException:
                    _roll_back(conn)
                    raise
        except (psycopg.OperationalError, psycopg_pool.PoolTimeout) as exc:
            self._forget_scopes(created_scopes)
            raise unavailable(exc, "write") from exc
        except BaseException:
            self._forget_scopes(created_scopes)
            raise
        if written_back:
            with self._usage_lock:
                self._usage.subtract(written_back)
        if self._vectors is not None:
            self._vectors.nudge()  # the embedding thread looks for records past the mark

    def _forget_scopes(self, keys: list[tuple[str, str]]) -> None:
        # Scope ids handed out inside a rolled-back transaction do not exist.
        with self._scopes_lock:
            for key in keys:
                scope_id = self._scope_ids.pop(key, None)
                if scope_id is not None:
                    self._scope_by_id.pop(scope_id, None)

    # -- scopes ------------------------------------------------------------------------------------

    def _scope_id(
        self,
        conn: psycopg.Connection,
        scope: Scope,
        *,
        create: bool,
        created: list[tuple[str, str]] | None = None,
    ) -> int | None:
        key = (scope.kind.value, scope.key)
        cached = self._scope_ids.get(key)
        if cached is not None:
            return cached
        row = conn.execute(
            "SELECT scope_id FROM scopes WHERE realm = %s AND kind = %s AND key = %s", (self.realm, *key)
        ).fetchone()
        if row is None:
            if not create:
                return None
            row = conn.execute(
                "INSERT INTO scopes (realm, kind, key) VALUES (%s, %s, %s) RETURNING scope_id",
                (self.realm, *key),
            ).fetchone()
            assert row is not None
            if created is not None:
                created.append(key)
        with self._scopes_lock:
            self._scope_ids[key] = int(row[0])
            self._scope_by_id[int(row[0])] = scope
        return int(row[0])

    def _scope_of_id(self, conn: psycopg.Connection) -> Any:
        def scope_of(scope_id: int) -> Scope:
            scope = self._scope_by_id.get(scope_id)
            if scope is None:
                row = conn.execute("SELECT kind, key FROM scopes WHERE scope_id = %s", (scope_id,)).fetchone()
                assert row is not None, f"no scope {scope_id}"
                kind, key = row
                scope = Scope(ScopeKind(kind), self.realm, key)
                with self._scopes_lock:
                    self._scope_by_id[scope_id] = scope
                    self._scope_ids[(kind, key)] = scope_id
            return scope

        return scope_of

    def _records(self, conn: psycopg.Connection, rows: Iterable[Sequence[Any]]) -> list[Record]:
        scope_of = self._scope_of_id(conn)
        with self._usage_lock:
            return [record_from_row(row, scope_of, self._usage) for row in rows]

    def _get(self, conn: psycopg.Connection, memory_id: str, *, lock: bool = False) -> Record | None:
        sql = f"SELECT {RECORD_COLUMNS} FROM records r WHERE r.realm = %s AND r.id = %s"
        row = conn.execute(sql + (" FOR UPDATE" if lock else ""), (self.realm, memory_id)).fetchone()
        return self._records(conn, [row])[0] if row else None

    # -- writes ------------------------------------------------------------------------------------

    def commit(self, batch: WriteBatch, *, dedup: bool = False) -> CommitResult:
        alone = _lone_create(batch)
        if alone is not None:
            return self._create_alone(batch, alone, dedup=dedup)
        with self.transaction() as txn:
            if dedup and len(batch.ops) == 1 and isinstance(batch.ops[0], CreateOp):
                existing = txn.active_duplicate(batch.ops[0].record)
                if existing is not None:
                    return CommitResult((existing,), deduplicated=True)
            return txn.apply(batch)

    def _create_alone(self, batch: WriteBatch, r: Record, *, dedup: bool) -> CommitResult:
        """The common write, a batch of one new record that supersedes and derives from nothing, in
        one round trip: one statement, the migration's ``meta_create_record`` (lock, look-ups, the
        record with its postings, the audit row), is its own transaction. The validator runs here
        first, on every rule it can judge alone; the two it needs the store for (the id is free,
        the content was not forgotten lately) are the function's, and refused the same way."""
        now = self._clock.now_ms()
        validate_batch(batch, _LookUpsInTheStatement(), now_ms=now)
        values = record_values(r, 0)
        analyzed = analyze_record(r.title, r.body, r.tags) if r.status is Status.ACTIVE else None
        op = "create"
        args = (
            self._lock_key,
            self.realm,
            r.scope.kind.value,
            r.scope.key,
            dedup,
            now - RECREATE_WINDOW_MS if batch.author.is_llm else None,
            *values[:1],
            *values[2:11],
            values[12],
            bool(values[13]),
            *values[14:],
            _postings_json(analyzed.fields) if analyzed is not None else None,
            analyzed.length if analyzed is not None else 0,
            now,
            op,
            wire_json(batch.author),
            dumps(_audit_detail(op, batch, r.quarantine_reason, None)),
        )
        statement = f"SELECT * FROM meta_create_record({', '.join(['%s'] * len(args))})"
        with self._usage_lock:
            written_back = self._usage.items()
        try:
            with self._pool.connection() as conn:
                if not written_back:  # one statement is one transaction (autocommit): one round trip
                    row = conn.execute(statement, args).fetchone()
                else:  # the recall counters still pending go with it, in one transaction
                    try:
                        with conn.pipeline():
                            conn.execute("BEGIN")
                            created = conn.execute(statement, args)
                            _write_back_usage(conn, self.realm, written_back)
                            conn.execute("COMMIT")
                        row = created.fetchone()
                    except BaseException:
                        _roll_back(conn)
                        raise
        except (psycopg.OperationalError, psycopg_pool.PoolTimeout) as exc:
            raise unavailable(exc, "write") from exc
        if written_back:
            with self._usage_lock:
                self._usage.subtract(written_back)
        assert row is not None
        outcome, scope_id, doc, seq = row
        with self._scopes_lock:
            self._scope_ids[(r.scope.kind.value, r.scope.key)] = int(scope_id)
            self._scope_by_id[int(scope_id)] = r.scope
        if outcome == "duplicate":
            return CommitResult((self.records_by_doc([int(doc)])[int(doc)],), deduplicated=True)
        if outcome == "taken":
            raise duplicate_id(r.id)
        if outcome == "recreate_tombstoned":
            raise recreate_tombstoned()
        if r.status is Status.QUARANTINED and not r.ever_quarantined:
            r = replace(r, ever_quarantined=True)
        if self._vectors is not None and r.status is Status.ACTIVE:
            self._vectors.nudge()
        return CommitResult((r,), audit_seq=int(seq))

    def forget(self, scope: Scope, memory_id: str, author: Author) -> bool:
        with self.transaction() as txn:
            current = txn.get(memory_id)
            if current is None or current.scope != scope or current.status is Status.TOMBSTONED:
                return False
            txn.apply(WriteBatch(self.realm, author, (TombstoneOp(memory_id, scope),)))
            return True

    def expire_due(self, now_ms: int) -> PurgeReceipt | None:
        """As the SQLite store's: the realm's active records whose expiry has come, deleted with
        their lineages and derived rows, up to EXPIRY_BATCH a call; ``None`` when none was due."""
        due = self._query(
            "SELECT EXISTS (SELECT 1 FROM records WHERE realm = %s AND expires_at_ms <= %s AND status = 'active')",
            (self.realm, now_ms),
        )
        if not due[0][0]:
            return None
        return self.purge(PurgeTarget.expired(now_ms), {"kind": "expiry", "principal": None})

    def purge(self, target: PurgeTarget, by: dict[str, Any]) -> PurgeReceipt:
        with self.transaction() as txn:
            conn = txn.conn
            models = {
                m
                for (m,) in conn.execute("SELECT model_id FROM vector_marks WHERE realm = %s", (self.realm,))
            }
            if self._vectors is not None:
                models.add(self._vectors.model_id)
            receipt = pg_purge.take(
                conn,
                self.realm,
                target,
                by,
                self._clock.now_ms(),
                [embedding_lock_key(self._schema, self.realm, m) for m in models],
            )
        if self._vectors is not None:
            self._vectors.forget_cached()
        return receipt

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
        now = self._clock.now_ms()
        with self.transaction() as txn:
            conn = txn.conn
            conn.execute(
                "INSERT INTO proposals (realm, proposal_id, scope_kind, scope_key, kind, title, description, body, "
                "tags, author, status, tainted, created_at_ms, updated_at_ms) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, 'pending', %s, %s, %s)",
                (
                    self.realm,
                    proposal_id,
                    scope.kind.value,
                    scope.key,
                    kind,
                    title,
                    description,
                    body,
                    dumps(list(tags)),
                    dumps(author.to_wire()),
                    tainted,
                    now,
                    now,
                ),
            )
            detail = {
                "op": "propose",
                "author": author.to_wire(),
                "tainted": tainted,
                "scope": scope.to_wire(),
            }
            conn.execute(
                "INSERT INTO audit (realm, at_ms, op, record_id, author, detail) VALUES (%s, %s, 'propose', %s, %s, %s)",
                (self.realm, now, proposal_id, dumps(author.to_wire()), dumps(detail)),
            )

    def add_harvest(self, identity: str, session_key: str, cause: str, retired_at_ms: int) -> None:
        with self.transaction() as txn:
            txn.conn.execute(
                "INSERT INTO harvests (realm, identity, session_key, cause, retired_at_ms, status) "
                "VALUES (%s, %s, %s, %s, %s, 'pending') ON CONFLICT (realm, identity, session_key) DO NOTHING",
                (self.realm, identity, session_key, cause, retired_at_ms),
            )

    def import_records(
        self,
        file_name: str,
        author: Author,
        records: Sequence[Record],
        malformed: Sequence[tuple[str | None, str]],
    ) -> tuple[int, int]:
        now = self._clock.now_ms()
        imported = skipped = 0
        with self.transaction() as txn:
            conn = txn.conn
            for memory_id, reason in malformed:
                txn.audit_note(memory_id, author, {"file": file_name, "reason": reason})
                skipped += 1
            for record in records:
                if txn.get(record.id) is not None:
                    continue
                batch = WriteBatch(self.realm, author, (CreateOp(record),), f"import {file_name}")
                try:
                    txn.validate(batch)
                except WriteRefused as exc:
                    txn.audit_note(
                        record.id, author, {"file": file_name, "reason": exc.rule, "detail": exc.message}
                    )
                    skipped += 1
                    continue
                txn.create(record, now)
                txn.audit(now, "import", record.id, batch, None)
                imported += 1
            conn.execute(
                "INSERT INTO legacy_imports (realm, file_name, imported, skipped, completed_at_ms) "
                "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (realm, file_name) DO UPDATE SET "
                "imported = legacy_imports.imported + excluded.imported, skipped = excluded.skipped, "
                "completed_at_ms = excluded.completed_at_ms",
                (self.realm, file_name, imported, skipped, now),
            )
        return imported, skipped

    def record_injections(self, rows: Sequence[InjectionRow]) -> None:
        if not rows:
            return
        with self.transaction() as txn:
            conn = txn.conn
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO injections (realm, record_id, identity, session_key, surface, at_ms) "
                    "VALUES (%s, %s, %s, %s, %s, %s)",
                    [(self.realm, r.record_id, r.identity, r.session_key, r.surface, r.at_ms) for r in rows],
                )
                cur.executemany(
                    "UPDATE records SET injected_count = injected_count + 1, last_injected_at_ms = %s "
                    "WHERE realm = %s AND id = %s",
                    [(r.at_ms, self.realm, r.record_id) for r in rows],
                )

    # -- reads -------------------------------------------------------------------------------------

    def get(self, memory_id: str) -> Record | None:
        def run() -> Record | None:
            with self._read() as conn:
                return self._get(conn, memory_id)

        return retrying_read(run, "read")

    def scope_keys(self, kind: ScopeKind) -> list[str]:
        return [
            str(key)
            for (key,) in self._query(
                "SELECT key FROM scopes WHERE realm = %s AND kind = %s ORDER BY key", (self.realm, kind.value)
            )
        ]

    def _existing_scope_ids(self, conn: psycopg.Connection, scopes: Sequence[Scope]) -> list[int]:
        """The ids of those of ``scopes`` that hold a record: the cached ones free, the others in
        one statement."""
        wanted = list(dict.fromkeys(scopes))
        found = {
            s: self._scope_ids[(s.kind.value, s.key)]
            for s in wanted
            if (s.kind.value, s.key) in self._scope_ids
        }
        missing = [s for s in wanted if s not in found]
        if missing:
            rows = conn.execute(
                "SELECT kind, key, scope_id FROM scopes WHERE realm = %s AND kind = ANY(%s) AND key = ANY(%s)",
                (self.realm, [s.kind.value for s in missing], [s.key for s in missing]),
            ).fetchall()
            by_key = {(kind, key): int(scope_id) for kind, key, scope_id in rows}
            for scope in missing:
                scope_id = by_key.get((scope.kind.value, scope.key))
                if scope_id is not None:
                    found[scope] = scope_id
                    with self._scopes_lock:
                        self._scope_ids[(scope.kind.value, scope.key)] = scope_id
                        self._scope_by_id[scope_id] = scope
        return [found[s] for s in wanted if s in found]

    def newest_active(self, scopes: Sequence[Scope], limit: int, tags: Sequence[str] = ()) -> list[Record]:
        def run() -> list[Record]:
            with self._read() as conn:
                scope_ids = self._existing_scope_ids(conn, scopes)
                if not scope_ids:
                    return []
                tagged, tag_args = tags_all_sql("r.tags", tags) if tags else ("true", [])
                rows = conn.execute(
                    f"SELECT {RECORD_COLUMNS} FROM records r WHERE r.scope_id = ANY(%s) AND r.status = 'active' "
                    f"AND {tagged} ORDER BY r.updated_at_ms DESC, r.created_at_ms DESC, r.id DESC LIMIT %s",
                    (scope_ids, *tag_args, limit),
                ).fetchall()
                return self._records(conn, rows)

        return retrying_read(run, "read")

    def tagged_docs(self, scopes: Sequence[Scope], tags: Sequence[str]) -> set[int]:
        def run() -> set[int]:
            with self._read() as conn:
                scope_ids = self._existing_scope_ids(conn, scopes)
                if not scope_ids:
                    return set()
                tagged, tag_args = tags_all_sql("r.tags", tags)
                rows = conn.execute(
                    f"SELECT r.doc FROM records r WHERE r.scope_id = ANY(%s) AND r.status = 'active' AND {tagged}",
                    (scope_ids, *tag_args),
                ).fetchall()
                return {int(doc) for (doc,) in rows}

        return retrying_read(run, "read")

    def full_records_page(self, where: RecordFilter, after: RecordKey | None, limit: int) -> FullRecordsPage:
        sql, args = full_records_query(self.realm, where, after, limit)

        def run() -> FullRecordsPage:
            with self._read() as conn:  # one statement: one consistent read
                rows = conn.execute(sql, args).fetchall()
                records = tuple(self._records(conn, rows[:limit]))
            more = len(rows) > limit
            return FullRecordsPage(records, record_key(records[-1]) if more and records else None)

        return retrying_read(run, "read")

    @contextmanager
    def reading_index(self, scopes: Sequence[Scope]) -> Iterator[TermIndex]:
        """The postings of ``scopes``, as one collection, in one read snapshot. (A connection
        lost here is refused, not retried: the ranking may have read half of it.)"""
        try:
            with self._pool.connection() as conn:
                index = PostgresTermIndex(
                    conn,
                    self._existing_scope_ids(conn, scopes),
                    begin="BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
                    decode=lambda rows: self._records(conn, rows),
                )
                # What records_by_doc is asked for next, read already: in the block as the ranking
                # reads them (a hybrid recall reads the head's while its neighbours are to come), and
                # after it. In the block it reads the rest on the block's connection: a second
                # connection from the pool could wait for this one (a pool of one).
                self._ranked.records = index.records
                outer, self._ranked.conn = getattr(self._ranked, "conn", None), conn
                try:
                    yield index
                finally:
                    self._ranked.conn = outer
                    if not conn.closed and conn.info.transaction_status != TransactionStatus.IDLE:
                        conn.execute("COMMIT")
        except (psycopg.OperationalError, psycopg_pool.PoolTimeout) as exc:
            raise unavailable(exc, "recall") from exc
        self._ranked.records = index.records

    @contextmanager
    def exporting(
        self, *, statuses: Collection[Status], scope: Scope | None = None
    ) -> Iterator[Iterator[Record]]:
        """One REPEATABLE READ snapshot, read through a server-side cursor as the caller goes.
        (A connection lost here is refused, not retried: the export may have written half.)"""
        try:
            with self._read(snapshot=True) as conn:
                wanted = sorted(s.value for s in statuses)
                scope_id = self._scope_id(conn, scope, create=False) if scope is not None else None
                if not wanted or (scope is not None and scope_id is None):
                    yield iter(())
                    return
                sql = f"SELECT {RECORD_COLUMNS} FROM records r WHERE r.realm = %s AND r.status = ANY(%s)"
                args: list[Any] = [self.realm, wanted]
                if scope_id is not None:
                    sql += " AND r.scope_id = %s"
                    args.append(scope_id)
                with conn.cursor(name="meta_export") as cursor:
                    cursor.execute(sql + " ORDER BY r.created_at_ms, r.id", args)
                    yield self._streamed(conn, cursor)
        except (psycopg.OperationalError, psycopg_pool.PoolTimeout) as exc:
            raise unavailable(exc, "export") from exc

    def _streamed(self, conn: psycopg.Connection, cursor: psycopg.ServerCursor[Any]) -> Iterator[Record]:
        while rows := cursor.fetchmany(500):
            yield from self._records(conn, rows)

    def vector_progress(self, nudge_with: Embedder | None = None) -> tuple[int, int] | None:
        """``(newest doc, embedded up to)`` of the realm's vectors of this store's model
        (``VectorReads``), ``None`` without vectors; with ``nudge_with``, a realm found behind
        nudges this gateway's embedding thread (the fleet shares the backlog: any gateway's worker
        may take it)."""
        vectors = self._vectors
        if vectors is None:
            return None

        def run() -> tuple[int, int]:
            with self._read() as conn:
                mark = read_mark(conn, self.realm, vectors.model_id)
            return (mark.newest_doc or 0), mark.upto

        newest, upto = retrying_read(run, "recall")
        if nudge_with is not None and newest > upto:
            vectors.nudge()
        return newest, upto

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
        """A search of the vectors of ``scopes`` embedded so far (``VectorReads``), each call on
        a connection of its own, its ``progress`` what the mark was when it read them; a realm
        found behind nudges this gateway's embedding thread.

        The search raises CapabilityUnavailable when ``embedder`` is not the model of this
        store's vectors.
        """
        vectors = self._vectors

        def read() -> list[ScopeVectors]:
            if vectors is None:
                return []
            if embedder.model_id != vectors.model_id:
                raise CapabilityUnavailable(
                    f"the vectors of this realm are of model {vectors.model_id!r}, not {embedder.model_id!r}"
                )

            def run() -> tuple[list[ScopeVectors], tuple[int, int]]:
                with self._read() as conn:
                    mark = vectors.mark(conn)  # one read serves every scope, and the progress
                    scoped = [
                        vectors.scope_vectors(conn, scope_id, mark)
                        for scope_id in self._existing_scope_ids(conn, scopes)
                    ]
                    return scoped, (mark.newest_doc or 0, mark.upto)

            scoped, search.progress = retrying_read(run, "recall")
            return scoped

        search = ScopesSearch(read)
        return search

    def records_by_doc(self, docs: Sequence[int]) -> dict[int, Record]:
        ranked: dict[int, Record] = getattr(self._ranked, "records", {})
        self._ranked.records = {}
        if all(doc in ranked for doc in docs):
            return {doc: ranked[doc] for doc in docs}
        if not docs:
            return {}
        reading: psycopg.Connection[Any] | None = getattr(self._ranked, "conn", None)
        if reading is not None:  # in this thread's reading_index: its connection and snapshot
            try:
                return self._records_of_docs(reading, docs)
            except psycopg.OperationalError as exc:
                raise unavailable(exc, "recall") from exc

        def run() -> dict[int, Record]:
            with self._read() as conn:
                return self._records_of_docs(conn, docs)

        return retrying_read(run, "read")

    def _records_of_docs(self, conn: psycopg.Connection[Any], docs: Sequence[int]) -> dict[int, Record]:
        rows = conn.execute(
            f"SELECT {RECORD_COLUMNS} FROM unnest(%s::bigint[]) AS d(doc) "
            "JOIN records r ON r.doc = d.doc WHERE r.realm = %s",
            (list(docs), self.realm),
        ).fetchall()
        return {row[0]: record for row, record in zip(rows, self._records(conn, rows), strict=True)}

    def mark_recalled(self, memory_ids: Iterable[str], at_ms: int) -> None:
        with self._usage_lock:
            self._usage.add(memory_ids, at_ms)
            pending = len(self._usage)
        if not pending:
            return
        if pending >= FLUSH_THRESHOLD:
            self.flush_usage()
        else:
            self._worker.schedule(self, _USAGE_QUIET_S)

    def flush_usage(self) -> None:
        """Write pending recall counters back (one transaction; nothing else in it)."""
        with self._usage_lock:
            if not self._usage:
                return
        with self.transaction():
            pass  # transaction() writes pending usage back before it commits

    def run_upkeep(self) -> None:
        """The upkeep thread's task: write back usage counters in a quiet moment."""
        if self._closed:
            return
        try:
            self.flush_usage()
        except Exception as exc:  # statistics: kept pending, tried again with the next write
            log.warning("recall usage of realm %r was not written back: %s", self.realm, exc)

    # -- host sessions (memory/sql/sessions.py) -----------------------------------------------------

    def _session_read(self, read: Callable[[SessionTable], T], what: str) -> T:
        def run() -> T:
            with self._read() as conn:
                return read(SessionTable(conn, self._session_dialect, self._clock.now_ms))

        return retrying_read(run, what)

    def session(self, key: str) -> SessionRow | None:
        return self._session_read(lambda table: table.session_with_pending(key), "session read")

    def pending_taint(self, identity: str) -> str | None:
        return self._session_read(lambda table: table.pending_taint(identity), "pending taint read")

    @contextmanager
    def session_txn(self) -> Iterator[SessionTable]:
        """One transaction under the realm's session lock: session changes of a realm serialize
        across gateways (apart from its record writes, which take the realm's write lock)."""
        try:
            with self._pool.connection() as conn:
                try:
                    # Pipelined: BEGIN and the lock go out with the first read, the last writes with COMMIT.
                    with conn.pipeline():
                        conn.execute("BEGIN")
                        conn.execute("SELECT pg_advisory_xact_lock(%s)", (self._session_lock_key,))
                        yield SessionTable(conn, self._session_dialect, self._clock.now_ms)
                        conn.execute("COMMIT")
                except BaseException:
                    _roll_back(conn)
                    raise
        except (psycopg.OperationalError, psycopg_pool.PoolTimeout) as exc:
            raise unavailable(exc, "session write") from exc

    def touch_session(self, key: str, seen_at_ms: int) -> None:
        try:
            with self._pool.connection() as conn:
                SessionTable(conn, self._session_dialect, self._clock.now_ms).touch_session(key, seen_at_ms)
        except (psycopg.OperationalError, psycopg_pool.PoolTimeout) as exc:
            raise unavailable(exc, "session write") from exc

    def audit_rows(self, record_id: str | None = None) -> list[dict[str, Any]]:
        sql = "SELECT seq, at_ms, op, record_id, author, detail FROM audit WHERE realm = %s"
        args: list[Any] = [self.realm]
        if record_id is not None:
            sql += " AND record_id = %s"
            args.append(record_id)
        rows = self._query(sql + " ORDER BY seq", args)
        return [
            {"seq": s, "at_ms": at, "op": op, "record_id": rid, "author": a, "detail": d}
            for s, at, op, rid, a, d in rows
        ]

    # -- the panel's reads (panel.py has the SQL) ----------------------------------------------------

    def _panel(self, read: Any, *args: Any) -> Any:
        self.flush_usage()  # the counters the panel shows are the stored ones

        def run() -> Any:
            with self._read(snapshot=True) as conn:
                return read(conn, self.realm, *args)

        return retrying_read(run, "panel read")

    def records_page(self, where: RecordFilter, after: RecordKey | None, limit: int) -> RecordsPage:
        page: RecordsPage = self._panel(panel_sql.records_page, where, after, limit)
        return page

    def record_access(self, memory_ids: Iterable[str]) -> dict[str, RecordAccess]:
        found: dict[str, RecordAccess] = self._panel(panel_sql.record_access, sorted(set(memory_ids)))
        return found

    def supersede_chain(self, memory_id: str, max_hops: int) -> ChainLinks:
        links: ChainLinks = self._panel(panel_sql.supersede_chain, memory_id, max_hops)
        return links

    def record_injections_of(
        self, memory_id: str, before: tuple[int, int] | None, limit: int
    ) -> list[InjectionEntry]:
        rows: list[InjectionEntry] = self._panel(panel_sql.record_injections, memory_id, before, limit)
        return rows

    def quarantined(self, limit: int) -> list[RecordRow]:
        rows: list[RecordRow] = self._panel(panel_sql.quarantined, limit)
        return rows

    def pending_promotions(self, limit: int) -> list[PromotionEntry]:
        rows: list[PromotionEntry] = self._panel(panel_sql.pending_promotions, limit)
        return rows

    def proposal_scopes(self, proposal_ids: Iterable[str]) -> dict[str, tuple[str, str]]:
        found: dict[str, tuple[str, str]] = self._panel(panel_sql.proposal_scopes, sorted(set(proposal_ids)))
        return found

    def pending_proposals(self, limit: int) -> list[ProposalRow]:
        rows: list[ProposalRow] = self._panel(panel_sql.pending_proposals, limit)
        return rows

    def proposal_detail(self, proposal_id: str) -> ProposalItem | None:
        found: ProposalItem | None = self._panel(panel_sql.proposal_detail, proposal_id)
        return found

    def injections(self, limit: int) -> list[InjectionEntry]:
        rows: list[InjectionEntry] = self._panel(panel_sql.injections, limit)
        return rows

    def pending_harvests(self, limit: int) -> list[HarvestRow]:
        rows: list[HarvestRow] = self._panel(panel_sql.pending_harvests, limit)
        return rows

    def open_verdicts(self, limit: int) -> list[VerdictRow]:
        rows: list[VerdictRow] = self._panel(panel_sql.open_verdicts, limit)
        return rows

    def scope_counts(self) -> list[ScopeCounts]:
        rows: list[ScopeCounts] = self._panel(panel_sql.scope_counts)
        return rows

    def dream_summaries(self, limit: int) -> list[DreamSummaryRow]:
        rows: list[DreamSummaryRow] = self._panel(panel_sql.dream_summaries, limit)
        return rows

    def dream_runs(self, limit: int) -> list[DreamRunRow]:
        rows: list[DreamRunRow] = self._panel(panel_sql.dream_runs, limit)
        return rows

    def holds_quarantine_evidence(self) -> bool:
        return bool(self._panel(panel_sql.holds_quarantine_evidence))

    def realm_scopes(self) -> set[tuple[str, str]]:
        scopes: set[tuple[str, str]] = self._panel(panel_sql.realm_scopes)
        return scopes

    # -- the steward's reads (steward_rows.py has the SQL) ----------------------------------------------

    def gather(
        self,
        *,
        identities: Collection[str] | None,
        mob: str | None,
        limits: QueueLimits,
        unaffiliated: bool = False,
    ) -> QueueRows:
        def run() -> QueueRows:
            with self._read(snapshot=True) as conn:
                return steward_rows.gather(
                    self, conn, identities=identities, mob=mob, limits=limits, unaffiliated=unaffiliated
                )

        return retrying_read(run, "steward read")

    def identity_keys(self) -> list[str]:
        return [row[0] for row in self._query(steward_rows.IDENTITY_KEYS, (self.realm, self.realm))]

    def signal_count(
        self, *, identities: Collection[str] | None, mob: str | None, unaffiliated: bool = False
    ) -> int:
        def run() -> int:
            with self._read(snapshot=True) as conn:
                return steward_rows.signal_count(
                    conn, self.realm, identities=identities, mob=mob, unaffiliated=unaffiliated
                )

        return retrying_read(run, "steward read")

    def run_stats(self, partition: str, since_ms: int) -> tuple[int, int | None]:
        ((count, latest),) = self._query(
            "SELECT (SELECT count(*) FROM dream_runs WHERE realm = %s AND partition = %s AND started_at_ms >= %s), "
            "(SELECT max(started_at_ms) FROM dream_runs WHERE realm = %s AND partition = %s)",
            (self.realm, partition, since_ms, self.realm, partition),
        )
        return int(count), latest

    # -- internals for the transaction and the steward rows ------------------------------------------

    def records_from(self, conn: psycopg.Connection, rows: Iterable[Sequence[Any]]) -> list[Record]:
        return self._records(conn, rows)

    def close(self) -> None:
        if self._closed:
            return
        self._worker.cancel(self)
        try:
            self.flush_usage()
        except Exception as exc:  # pragma: no cover - the server is gone at shutdown
            log.warning("recall usage of realm %r was not written back: %s", self.realm, exc)
        self._closed = True

    def __repr__(self) -> str:
        return f"PostgresRealmStore({self.realm!r})"


def _lone_create(batch: WriteBatch) -> Record | None:
    """The record of a batch ``_create_alone`` can write: one create, no lineage to look up."""
    if len(batch.ops) != 1 or not isinstance(batch.ops[0], CreateOp):
        return None
    record = batch.ops[0].record
    return record if record.supersedes is None and not record.derived_from else None


class _LookUpsInTheStatement:
    """The validator's view for ``_create_alone``: the store's answers come from the statement
    itself (``meta_create_record``), which refuses a taken id or recently forgotten content."""

    def get(self, memory_id: str) -> Record | None:
        raise AssertionError(f"a lone create looks up no record ({memory_id})")

    def has(self, memory_id: str) -> bool:
        return False

    def tombstoned_content_since(self, scope: Scope, content_hash: str, since_ms: int) -> bool:
        return False


def _audit_detail(
    op: str, batch: WriteBatch, quarantined: str | None, review: dict[str, Any] | None
) -> dict[str, Any]:
    detail: dict[str, Any] = {
        "op": op,
        "author": batch.author.to_wire(),
        "rationale": batch.rationale,
        "quarantined": quarantined,
    }
    if review is not None:
        detail["review"] = review
    return detail


def _postings_json(fields: dict[str, tuple[int, int, int]]) -> str:
    return dumps([{"term": t, "a": a, "b": b, "c": c} for t, (a, b, c) in fields.items()])


def _roll_back(conn: psycopg.Connection) -> None:
    """End a failed transaction (on a lost connection there is nothing to end: the server did)."""
    if conn.closed or conn.info.transaction_status == TransactionStatus.IDLE:
        return
    with suppress(psycopg.Error):  # a broken connection: the pool discards it, the server rolled back
        conn.execute("ROLLBACK")


def _write_back_usage(conn: psycopg.Connection, realm: str, pending: list[tuple[str, int, int]]) -> None:
    with conn.cursor() as cur:
        cur.executemany(
            "UPDATE records SET explicit_recall_count = explicit_recall_count + %s, "
            "last_recalled_at_ms = greatest(coalesce(last_recalled_at_ms, 0), %s) WHERE realm = %s AND id = %s",
            [(count, at_ms, realm, memory_id) for memory_id, count, at_ms in pending],
        )


class PostgresTxn:
    """One open write transaction of a :class:`PostgresRealmStore` (the RealmTxn unit of work)."""

    def __init__(
        self, store: PostgresRealmStore, conn: psycopg.Connection, created: list[tuple[str, str]]
    ) -> None:
        self._store = store
        self._conn = conn
        self._created = created
        self.realm = store.realm
        self._absent: set[str] = set()  # ids this transaction has seen are free (active_duplicate)
        # A created record's statements not sent yet: they go out with its audit row (audit()),
        # or before anything else uses the connection (``conn``).
        self._ctes: list[tuple[str, str]] = []
        self._cte_args: list[Any] = []
        self._savepoints = 0
        self._audited: psycopg.Cursor[Any] | None = None  # the last audit insert, unanswered

    @property
    def conn(self) -> psycopg.Connection:
        """The transaction's connection, with every write queued so far sent first."""
        self.flush()
        return self._conn

    def flush(self) -> None:
        if self._ctes:
            self._conn.execute(self._with_ctes("SELECT 1"), self._take_cte_args())

    def _with_ctes(self, statement: str) -> str:
        ctes, self._ctes = self._ctes, []
        return "WITH " + ", ".join(f"{name} AS ({sql})" for name, sql in ctes) + " " + statement

    def _take_cte_args(self, *more: Any) -> list[Any]:
        args, self._cte_args = [*self._cte_args, *more], []
        return args

    def now_ms(self) -> int:
        return self._store._clock.now_ms()

    # -- the validator's view ----------------------------------------------------------------------

    def get(self, memory_id: str) -> Record | None:
        return self._store._get(self.conn, memory_id)

    def has(self, memory_id: str) -> bool:
        if memory_id in self._absent:
            return False
        row = self.conn.execute(
            "SELECT 1 FROM records WHERE realm = %s AND id = %s", (self.realm, memory_id)
        ).fetchone()
        return row is not None

    def tombstoned_content_since(self, scope: Scope, content_hash: str, since_ms: int) -> bool:
        scope_id = self._store._scope_id(self.conn, scope, create=False)
        if scope_id is None:
            return False
        row = self.conn.execute(
            "SELECT 1 FROM records WHERE scope_id = %s AND content_hash = %s AND status = 'tombstoned' "
            "AND updated_at_ms >= %s LIMIT 1",
            (scope_id, content_hash, since_ms),
        ).fetchone()
        return row is not None

    # -- records -------------------------------------------------------------------------------------

    def apply(self, batch: WriteBatch, *, review: dict[str, Any] | None = None) -> CommitResult:
        """As RealmTxn.apply; the audit rows' sequence is read back only for a review (its audit
        token), so that an ordinary batch's rows go out with the commit, unanswered."""
        now = self.now_ms()
        validate_batch(batch, self, now_ms=now)
        written: list[Record] = []
        for op in batch.ops:
            if isinstance(op, CreateOp):
                written.append(self.create(op.record, now))
                op_name = "supersede" if op.record.supersedes else "create"
                self.audit(now, op_name, op.record.id, batch, op.record.quarantine_reason, review)
            else:
                written.append(self._tombstone(op.memory_id, now))
                self.audit(now, "tombstone", op.memory_id, batch, None, review)
        seq = self._last_audit_seq() if review is not None else None
        return CommitResult(tuple(written), audit_seq=seq)

    def validate(self, batch: WriteBatch) -> None:
        validate_batch(batch, self, now_ms=self.now_ms())

    @contextmanager
    def savepoint(self) -> Iterator[None]:
        created = len(self._created)
        self._savepoints += 1
        name = f"sp_{self._savepoints}"
        self.conn.execute(f"SAVEPOINT {name}")
        try:
            yield
            self.conn.execute(f"RELEASE SAVEPOINT {name}")
        except BaseException:
            if not self._conn.closed:
                self._ctes, self._cte_args = [], []  # queued writes of the undone part go too
                self._conn.execute(f"ROLLBACK TO SAVEPOINT {name}")
            self._store._forget_scopes(self._created[created:])
            del self._created[created:]
            raise

    def active_duplicate(self, record: Record) -> Record | None:
        scope_id = self._store._scope_id(self.conn, record.scope, create=False)
        if scope_id is None:
            return None
        # One round trip answers the validator's next question too: is the new record's id free?
        row = self.conn.execute(
            "SELECT EXISTS (SELECT 1 FROM records WHERE realm = %s AND id = %s), d.* FROM (SELECT 1) AS one "
            f"LEFT JOIN LATERAL (SELECT {RECORD_COLUMNS} FROM records r WHERE r.scope_id = %s "
            "AND r.content_hash = %s AND r.status = 'active' AND r.expires_at_ms IS NULL LIMIT 1) AS d ON true",
            (self.realm, record.id, scope_id, record.content_hash),
        ).fetchone()
        assert row is not None
        taken, duplicate = row[0], row[1:]
        if not taken:
            self._absent.add(record.id)
        return self._store.records_from(self.conn, [duplicate])[0] if duplicate[0] is not None else None

    def create(self, r: Record, now: int, *, restored: bool = False) -> Record:
        """Queue ``r``'s insert (and, active, its postings); an active supersede leaves its prior
        version, unless ``restored`` (an import, whose lineage is kept as given)."""
        scope_id = self._store._scope_id(self.conn, r.scope, create=True, created=self._created)
        assert scope_id is not None
        values = list(record_values(r, scope_id))
        values[13] = bool(values[13])  # ever_quarantined is a boolean column here
        self._absent.discard(r.id)
        insert = (
            "INSERT INTO records (realm, id, scope_id, kind, title, description, body, tags, provenance, trust, "
            "status, quarantine_reason, supersedes, derived_from, ever_quarantined, working_set_rank, "
            "content_hash, created_at_ms, updated_at_ms, expires_at_ms) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
        )
        if r.status is not Status.ACTIVE:
            self._queue("rec", insert, (self.realm, *values))
        else:
            # The record, its postings and its scope's statistics, queued to go out with the
            # audit row in one statement (a statement may change a row once: a supersede's
            # change to the same scope's statistics is sent on its own, after it).
            analyzed = analyze_record(r.title, r.body, r.tags)
            self._queue("rec", insert + " RETURNING doc", (self.realm, *values))
            # The postings as one JSON parameter: adapting four arrays costs more than the insert.
            self._queue(
                "posted",
                "INSERT INTO postings (scope_id, term, doc, tf_title, tf_body, tf_tags, length) "
                "SELECT %s, t.term, rec.doc, t.a, t.b, t.c, %s FROM rec, "
                "json_to_recordset(%s::json) AS t(term text, a int, b int, c int)",
                (scope_id, analyzed.length, _postings_json(analyzed.fields)),
            )
            self._queue(
                "stats",
                "INSERT INTO scope_stats (scope_id, doc_count, total_len) VALUES (%s, 1, %s) ON CONFLICT (scope_id) "
                "DO UPDATE SET doc_count = scope_stats.doc_count + 1, total_len = scope_stats.total_len + excluded.total_len",
                (scope_id, analyzed.length),
            )
            if r.supersedes is not None and not restored:
                self._leave_active(r.supersedes, Status.SUPERSEDED, now, superseded_by=r.id)
        if r.status is Status.QUARANTINED and not r.ever_quarantined:
            return replace(r, ever_quarantined=True)
        return r

    def restore(self, record: Record, *, author: Author, rationale: str | None) -> None:
        now = self.now_ms()
        validate_restore(record, self.realm, self, importer=author)
        self.create(record, now, restored=True)
        if record.superseded_by is not None:
            self.conn.execute(
                "UPDATE records SET superseded_by = %s WHERE realm = %s AND id = %s",
                (record.superseded_by, self.realm, record.id),
            )
        batch = WriteBatch(self.realm, author, (CreateOp(record),), rationale)
        quarantined = record.quarantine_reason if record.status is Status.QUARANTINED else None
        self.audit(now, "import", record.id, batch, quarantined)

    def note_import_skipped(self, record_id: str | None, author: Author, detail: dict[str, Any]) -> None:
        self.audit_note(record_id, author, detail)

    def _queue(self, name: str, sql: str, args: Sequence[Any]) -> None:
        if any(n == name for n, _ in self._ctes):
            self.flush()  # a second record of the batch: the first goes out on its own
        self._ctes.append((name, sql))
        self._cte_args.extend(args)

    def _leave_active(
        self, memory_id: str, status: Status, now: int, *, superseded_by: str | None = None
    ) -> None:
        row = self.conn.execute(
            "SELECT doc, status, scope_id, title, body, tags FROM records WHERE realm = %s AND id = %s",
            (self.realm, memory_id),
        ).fetchone()
        assert row is not None
        doc, old_status, scope_id, title, body, tags = row
        if old_status == Status.ACTIVE.value:
            _unindex(self.conn, scope_id, doc, analyze_record(title, body, json.loads(tags)).length)
        self.conn.execute(
            "UPDATE records SET status = %s, superseded_by = %s, updated_at_ms = %s WHERE doc = %s",
            (status.value, superseded_by, now, doc),
        )

    def _tombstone(self, memory_id: str, now: int) -> Record:
        self._leave_active(memory_id, Status.TOMBSTONED, now)
        record = self.get(memory_id)
        assert record is not None
        return record

    def audit(
        self,
        now: int,
        op: str,
        record_id: str,
        batch: WriteBatch,
        quarantined: str | None,
        review: dict[str, Any] | None = None,
    ) -> None:
        """One audit row, queued (with the record it audits, if that is still queued)."""
        detail = _audit_detail(op, batch, quarantined, review)
        statement = (
            "INSERT INTO audit (realm, at_ms, op, record_id, author, detail) VALUES (%s, %s, %s, %s, %s, %s) "
            "RETURNING seq"
        )
        args = (self.realm, now, op, record_id, wire_json(batch.author), dumps(detail))
        if self._ctes:  # the record this row audits goes out in the same statement
            self._audited = self._conn.execute(self._with_ctes(statement), self._take_cte_args(*args))
        else:
            self._audited = self._conn.execute(statement, args)

    def _last_audit_seq(self) -> int | None:
        """The sequence of the last audit row this transaction wrote (reading it waits for it)."""
        if self._audited is None:
            return None
        row = self._audited.fetchone()
        return int(row[0]) if row is not None else None

    def audit_note(self, record_id: str | None, author: Author, detail: dict[str, Any]) -> None:
        """An audit row for a record an import skipped (nothing else was written)."""
        self.conn.execute(
            "INSERT INTO audit (realm, at_ms, op, record_id, author, detail) "
            "VALUES (%s, %s, 'import_skipped', %s, %s, %s)",
            (
                self.realm,
                self.now_ms(),
                record_id,
                dumps(author.to_wire()),
                dumps({"op": "import_skipped", **detail}),
            ),
        )

    def prior_review(self, memory_id: str) -> dict[str, Any] | None:
        row = self.conn.execute(
            "SELECT seq, at_ms, detail FROM audit WHERE realm = %s AND record_id = %s "
            "AND detail->'review'->>'origin' = %s ORDER BY seq DESC LIMIT 1",
            (self.realm, memory_id, memory_id),
        ).fetchone()
        if row is None:
            return None
        seq, at_ms, detail = row
        return {"audit_token": f"audit-{seq}", "decided_at_ms": at_ms, "review": detail["review"]}

    # -- the steward's rows (steward_rows.py has the SQL) -------------------------------------------

    def proposal(self, proposal_id: str) -> Any:
        return steward_rows.proposal(self.conn, self.realm, proposal_id)

    def proposal_item(self, proposal_id: str) -> ProposalItem | None:
        return steward_rows.proposal_item(self.conn, self.realm, proposal_id)

    def set_proposal_status(self, proposal_id: str, status: str, now_ms: int) -> None:
        steward_rows.set_proposal_status(self.conn, self.realm, proposal_id, status, now_ms)

    def note_proposal_decision(self, proposal_id: str, author: Author, review: dict[str, Any]) -> int:
        return steward_rows.note_proposal_decision(
            self.conn, self.realm, self.now_ms(), proposal_id, author.to_wire(), review
        )

    def complete_harvest(self, identity: str, session_key: str) -> None:
        steward_rows.complete_harvest(self.conn, self.realm, identity, session_key)

    def start_run(self, run_id: str, partition: str, now_ms: int) -> None:
        steward_rows.start_run(self.conn, self.realm, run_id, partition, now_ms)

    def finish_run(self, run_id: str, now_ms: int, ops_committed: int, detail: dict[str, Any]) -> None:
        steward_rows.finish_run(self.conn, self.realm, run_id, now_ms, ops_committed, detail)

    def add_audit_verdicts(
        self, run_id: str, verdicts: Sequence[tuple[str, str, str | None]], now_ms: int
    ) -> None:
        steward_rows.add_audit_verdicts(self.conn, self.realm, run_id, verdicts, now_ms)

    def audit_verdicts_of(self, record_id: str) -> Any:
        return steward_rows.audit_verdicts_of(self.conn, self.realm, record_id)

    def close_audit_verdicts(self, record_id: str, run_ids: Sequence[str], status: str) -> None:
        steward_rows.close_audit_verdicts(self.conn, self.realm, record_id, run_ids, status)

    def note_verdict_resolution(self, record_id: str, author: Author, detail: dict[str, Any]) -> str:
        seq = steward_rows.note_verdict_resolution(
            self.conn, self.realm, record_id, author.to_wire(), detail, self.now_ms()
        )
        return f"audit-{seq}"

    def verdict_resolutions(self, record_id: str) -> list[dict[str, Any]]:
        return steward_rows.verdict_resolutions(self.conn, self.realm, record_id)

    def pending_promotions_of(self, record_id: str) -> Any:
        return steward_rows.pending_promotions_of(self.conn, self.realm, record_id)

    def insert_promotion(self, row: Any, staged: dict[str, Any]) -> None:
        steward_rows.insert_promotion(self.conn, self.realm, row, staged)

    def promotion(self, pending_id: str) -> Any:
        return steward_rows.promotion(self.conn, self.realm, pending_id)

    def staged_batch(self, stage_token: str) -> dict[str, Any] | None:
        return steward_rows.staged_batch(self.conn, self.realm, stage_token)

    def resolve_promotion(self, row: Any, status: str, now_ms: int) -> None:
        steward_rows.resolve_promotion(self.conn, self.realm, row, status, now_ms)

    def rekey_promotion(self, pending_id: str, next_pending_id: str) -> bool:
        return steward_rows.rekey_promotion(self.conn, self.realm, pending_id, next_pending_id)

    def overdue_promotions(self, created_before_ms: int) -> Any:
        return steward_rows.overdue_promotions(self.conn, self.realm, created_before_ms)

    def collect_stale_stages(self, now_ms: int) -> int:
        return steward_rows.collect_stale_stages(self.conn, self.realm, now_ms)


def _unindex(conn: psycopg.Connection, scope_id: int, doc: int, length: int) -> None:
    conn.execute("DELETE FROM postings WHERE doc = %s", (doc,))
    conn.execute(
        "UPDATE scope_stats SET doc_count = doc_count - 1, total_len = total_len - %s WHERE scope_id = %s",
        (length, scope_id),
    )
