"""Writing a dump (memory/dump.py) into the database, verified before it commits: the PostgreSQL
side of ``meta_gateway storage-copy``.

A realm is copied in one transaction under the realm's write lock: its tables are streamed in
with ``COPY`` (scopes created as records need them), the recall index is built from the active
records with the same analyzer a write uses, and the copy is read back and compared, table by
table, with what was read from the source (row counts and digests) and every record's content
hash is recomputed from its title and body. Only then does a row in ``storage_copies`` record
what was copied from where, and the transaction commits: a failed or interrupted copy leaves
nothing behind, and a second run finds the ledger row and copies nothing again.

Only an empty realm is copied into: merging two stores' records is an import's job. The events
part appends the source's timeline after whatever the database's timeline holds.

A copy moves a store, it does not re-judge its history: every record arrives with the status and
trust it has in the source, where a gateway serving the source already recalls and injects it
as such, and the reviews that released quarantine come along in the audit rows. What it checks
is what every stored record keeps whatever its history
(:func:`~meta_memory.memory.validator.check_stored_record`: an agent's record in its own scope, a
trust no higher than its author may give and ``agent_observed`` at most once quarantined, session
evidence only under an LLM author): a realm holding a record that breaks one was written outside
the store's rules (by hand, or by an older release's import) and is refused whole.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import psycopg
import psycopg_pool

from ...errors import StorageRefused, WriteRefused
from ..dump import DUMP_COLUMNS, DUMP_ORDER, EVENT_COLUMNS, Digest, DumpTable, combined, digest_tables
from ..recall.analyzer import analyze_record
from ..records import Provenance, Record, RecordKind, Scope, ScopeKind, Status, Trust, content_hash
from ..validator import check_stored_record
from .connect import lock_key, unavailable
from .event_log import COPIED_ORIGIN_PREFIX
from .store import realm_lock_key

__all__ = ["CopyLedger", "dump_realm", "load_events", "load_realm", "realm_rows", "settle"]

log = logging.getLogger("meta_memory.postgres")

Progress = Callable[[int], None]  # called with the rows just written

_BATCH = 2_000  # records per scope lookup and COPY chunk

_SCOPED = {"scope_kind": "s.kind", "scope_key": "s.key"}
_FLAGS = {"records": ("ever_quarantined",), "proposals": ("tainted",)}


class CopyLedger:
    """The ``storage_copies`` rows of one source (a state dir)."""

    def __init__(self, pool: psycopg_pool.ConnectionPool, source: str) -> None:
        self._pool = pool
        self.source = source

    def get(self, part: str) -> tuple[int, str] | None:
        """``(rows, digest)`` of ``part`` if this source copied it before."""
        with self._pool.connection() as conn:
            row = conn.execute(
                "SELECT rows, digest FROM storage_copies WHERE source = %s AND part = %s", (self.source, part)
            ).fetchone()
        return (int(row[0]), str(row[1])) if row is not None else None

    def _record(self, conn: psycopg.Connection, part: str, rows: int, digest: str, now_ms: int) -> None:
        conn.execute(
            "INSERT INTO storage_copies (source, part, rows, digest, completed_at_ms) VALUES (%s, %s, %s, %s, %s)",
            (self.source, part, rows, digest, now_ms),
        )


def realm_rows(conn: psycopg.Connection, realm: str) -> int:
    """How many rows ``realm`` holds in every table a dump covers."""
    total = 0
    for table in DUMP_COLUMNS:
        row = conn.execute(f"SELECT count(*) FROM {table} WHERE realm = %s", (realm,)).fetchone()
        total += int(row[0]) if row is not None else 0
    return total


def _select(table: str) -> str:
    if table == "records":
        columns = ", ".join(_SCOPED.get(c, f"r.{c}") for c in DUMP_COLUMNS[table])
        return (
            f"SELECT {columns} FROM records r JOIN scopes s ON s.scope_id = r.scope_id "
            "WHERE r.realm = %s ORDER BY r.doc"
        )
    return (
        f"SELECT {', '.join(DUMP_COLUMNS[table])} FROM {table} WHERE realm = %s ORDER BY {DUMP_ORDER[table]}"
    )


def dump_realm(conn: psycopg.Connection, realm: str) -> Iterator[DumpTable]:
    """Every table of ``realm`` as memory/dump.py lays them out (in the caller's transaction)."""
    for table in DUMP_COLUMNS:
        yield DumpTable(table, conn.execute(_select(table), (realm,)).fetchall())


def _refuse_nul(part: str, table: str, row: tuple[Any, ...]) -> None:
    for name, value in zip(DUMP_COLUMNS.get(table, EVENT_COLUMNS), row, strict=True):
        if isinstance(value, str) and "\x00" in value:
            raise StorageRefused(
                f"{part}: {table}.{name} of row {row[0]!r} holds a NUL character, which PostgreSQL "
                "cannot store; nothing of it was copied"
            )


def _with_flags(table: str, row: tuple[Any, ...]) -> tuple[Any, ...]:
    flags = _FLAGS.get(table)
    if not flags:
        return row
    columns = DUMP_COLUMNS[table]
    return tuple(bool(v) if columns[i] in flags else v for i, v in enumerate(row))


def load_realm(
    pool: psycopg_pool.ConnectionPool,
    schema: str,
    realm: str,
    tables: Iterable[DumpTable],
    *,
    ledger: CopyLedger,
    now_ms: int,
    progress: Progress | None = None,
) -> dict[str, Digest]:
    """Copy one realm's dump in, verified, in one transaction; returns the source's digests.

    Raises:
        StorageRefused: the realm already holds data, the copy does not match its source, or a
            value cannot be stored (nothing is committed in any of these cases).
        StoreUnavailable: the server failed the copy.
    """
    part = f"realm:{realm}"
    try:
        with pool.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (realm_lock_key(schema, realm),))
            held = realm_rows(conn, realm)
            if held:
                raise StorageRefused(
                    f"realm {realm!r} already holds {held} row(s) in PostgreSQL; storage-copy copies "
                    "into empty realms only (nothing of it was copied)"
                )
            conn.execute(
                "INSERT INTO realms (realm, created_at_ms) VALUES (%s, %s) ON CONFLICT (realm) DO NOTHING",
                (realm, now_ms),
            )
            source: dict[str, Digest] = {}
            for table in tables:
                digest = source.setdefault(table.name, Digest())
                if table.name == "records":
                    _copy_records(conn, realm, part, table.rows, digest, progress)
                else:
                    _copy_rows(conn, realm, part, table.name, table.rows, digest, progress)
            _build_index(conn, realm)
            _verify(conn, realm, part, source)
            ledger._record(conn, part, sum(d.rows for d in source.values()), combined(source), now_ms)
    except psycopg.DataError as exc:
        log.warning("copying %s: PostgreSQL refused a value: %s", part, exc)
        raise StorageRefused(f"{part}: PostgreSQL refused a value of the source (see the log)") from exc
    except (psycopg.OperationalError, psycopg_pool.PoolTimeout) as exc:
        raise unavailable(exc, "copy") from exc
    return source


def _scope_ids(
    conn: psycopg.Connection, realm: str, keys: set[tuple[str, str]], known: dict[Any, int]
) -> None:
    for kind, key in sorted(keys - known.keys()):
        row = conn.execute(
            "INSERT INTO scopes (realm, kind, key) VALUES (%s, %s, %s) ON CONFLICT (realm, kind, key) "
            "DO UPDATE SET kind = excluded.kind RETURNING scope_id",
            (realm, kind, key),
        ).fetchone()
        assert row is not None
        known[(kind, key)] = int(row[0])


_RECORD_COPY_COLUMNS = (
    "realm",
    "scope_id",
    *(c for c in DUMP_COLUMNS["records"] if not c.startswith("scope_")),
)


def _copy_records(
    conn: psycopg.Connection,
    realm: str,
    part: str,
    rows: Iterable[tuple[Any, ...]],
    digest: Digest,
    progress: Progress | None,
) -> None:
    columns = DUMP_COLUMNS["records"]
    kind_at, key_at = columns.index("scope_kind"), columns.index("scope_key")
    scopes: dict[Any, int] = {}
    batch: list[tuple[Any, ...]] = []

    def flush() -> None:
        _scope_ids(conn, realm, {(r[kind_at], r[key_at]) for r in batch}, scopes)
        with (
            conn.cursor() as cur,
            cur.copy(f"COPY records ({', '.join(_RECORD_COPY_COLUMNS)}) FROM STDIN") as copy,
        ):
            for r in batch:
                values = _with_flags("records", r)
                scope_id = scopes[(r[kind_at], r[key_at])]
                copy.write_row(
                    (realm, scope_id, *(v for i, v in enumerate(values) if i not in (kind_at, key_at)))
                )
        if progress is not None:
            progress(len(batch))
        batch.clear()

    for row in rows:
        _refuse_nul(part, "records", row)
        _refuse_outside_rules(part, realm, row)
        digest.add("records", row)
        batch.append(tuple(row))
        if len(batch) >= _BATCH:
            flush()
    if batch:
        flush()


_RECORD_AT = {name: i for i, name in enumerate(DUMP_COLUMNS["records"])}


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def _stored_record(realm: str, row: tuple[Any, ...]) -> Record:
    """The record a dump row holds (what the rules read of it; usage counters left out)."""
    at = {name: row[i] for name, i in _RECORD_AT.items()}
    kind = ScopeKind(at["scope_kind"])
    return Record(
        id=at["id"],
        scope=Scope(kind, realm, "" if kind is ScopeKind.REALM else at["scope_key"]),
        kind=RecordKind(at["kind"]),
        title=at["title"],
        description=at["description"],
        body=at["body"],
        tags=tuple(_json(at["tags"])),
        provenance=Provenance.from_wire(_json(at["provenance"])),
        trust=Trust(at["trust"]),
        status=Status(at["status"]),
        created_at_ms=at["created_at_ms"],
        updated_at_ms=at["updated_at_ms"],
        content_hash=at["content_hash"],
        supersedes=at["supersedes"],
        derived_from=tuple(_json(at["derived_from"])),
        ever_quarantined=bool(at["ever_quarantined"]),
        superseded_by=at["superseded_by"],
        quarantine_reason=at["quarantine_reason"],
        working_set_rank=at["working_set_rank"],
    )


def _refuse_outside_rules(part: str, realm: str, row: tuple[Any, ...]) -> None:
    memory_id = row[_RECORD_AT["id"]]
    try:
        check_stored_record(_stored_record(realm, row))
    except WriteRefused as exc:
        raise StorageRefused(
            f"{part}: record {memory_id!r} breaks a rule every stored record keeps ({exc.rule}: "
            f"{exc.message}); the source was written outside the store's rules, and nothing of it "
            "was copied"
        ) from None
    except (KeyError, TypeError, ValueError) as exc:
        log.warning("copying %s: record %r cannot be read: %r", part, memory_id, exc)
        raise StorageRefused(
            f"{part}: record {memory_id!r} is not a record this release reads (see the log); "
            "nothing of it was copied"
        ) from None


def _copy_rows(
    conn: psycopg.Connection,
    realm: str,
    part: str,
    table: str,
    rows: Iterable[tuple[Any, ...]],
    digest: Digest,
    progress: Progress | None,
) -> None:
    written = 0
    with (
        conn.cursor() as cur,
        cur.copy(f"COPY {table} (realm, {', '.join(DUMP_COLUMNS[table])}) FROM STDIN") as copy,
    ):
        for row in rows:
            _refuse_nul(part, table, row)
            digest.add(table, row)
            copy.write_row((realm, *_with_flags(table, row)))
            written += 1
            if progress is not None and written % _BATCH == 0:
                progress(_BATCH)
    if progress is not None and written % _BATCH:
        progress(written % _BATCH)


def _build_index(conn: psycopg.Connection, realm: str) -> None:
    """The recall index of the copied realm: postings and scope statistics of its active records."""
    stats: dict[int, list[int]] = {}
    active = conn.execute(
        "SELECT doc, scope_id, title, body, tags FROM records WHERE realm = %s AND status = 'active' ORDER BY doc",
        (realm,),
    ).fetchall()
    with (
        conn.cursor() as cur,
        cur.copy(
            "COPY postings (scope_id, term, doc, tf_title, tf_body, tf_tags, length) FROM STDIN"
        ) as copy,
    ):
        for doc, scope_id, title, body, tags in active:
            analyzed = analyze_record(title, body, tuple(json.loads(tags)))
            for term, (tf_title, tf_body, tf_tags) in analyzed.fields.items():
                copy.write_row((scope_id, term, doc, tf_title, tf_body, tf_tags, analyzed.length))
            totals = stats.setdefault(int(scope_id), [0, 0])
            totals[0] += 1
            totals[1] += analyzed.length
    for scope_id, (docs, length) in stats.items():
        conn.execute(
            "INSERT INTO scope_stats (scope_id, doc_count, total_len) VALUES (%s, %s, %s)",
            (scope_id, docs, length),
        )


def _verify(conn: psycopg.Connection, realm: str, part: str, source: dict[str, Digest]) -> None:
    copied = digest_tables(dump_realm(conn, realm))
    for table in DUMP_COLUMNS:
        want, got = source.get(table, Digest()), copied.get(table, Digest())
        if (want.rows, want.hexdigest()) != (got.rows, got.hexdigest()):
            raise StorageRefused(
                f"{part}: the copy of {table} does not match its source ({got.rows} row(s) read back, "
                f"{want.rows} read from the source); nothing of it was committed"
            )
    for memory_id, title, body, stored in conn.execute(
        "SELECT id, title, body, content_hash FROM records WHERE realm = %s ORDER BY doc", (realm,)
    ):
        if content_hash(title, body) != stored:
            raise StorageRefused(
                f"{part}: record {memory_id} does not match its content hash; the source is damaged "
                "(nothing of it was copied)"
            )


def load_events(
    pool: psycopg_pool.ConnectionPool,
    schema: str,
    tables: Iterable[DumpTable],
    *,
    ledger: CopyLedger,
    now_ms: int,
    progress: Progress | None = None,
) -> Digest:
    """Append the source's timeline to the database's, verified, in one transaction."""
    origin = COPIED_ORIGIN_PREFIX + hashlib.sha256(ledger.source.encode("utf-8")).hexdigest()[:16]
    try:
        with pool.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key(schema, "events"),))
            digest = Digest()
            written = 0
            with (
                conn.cursor() as cur,
                cur.copy(f"COPY events ({', '.join(EVENT_COLUMNS)}, origin) FROM STDIN") as copy,
            ):
                for table in tables:
                    for row in table.rows:
                        _refuse_nul("events", "events", row)
                        digest.add("events", row)
                        copy.write_row((*row, origin))
                        written += 1
                        if progress is not None and written % _BATCH == 0:
                            progress(_BATCH)
            if progress is not None and written % _BATCH:
                progress(written % _BATCH)
            back = Digest()
            for row in conn.execute(
                f"SELECT {', '.join(EVENT_COLUMNS)} FROM events WHERE origin = %s ORDER BY seq", (origin,)
            ):
                back.add("events", tuple(row))
            if (back.rows, back.hexdigest()) != (digest.rows, digest.hexdigest()):
                raise StorageRefused(
                    f"events: the copy does not match its source ({back.rows} row(s) read back, "
                    f"{digest.rows} read from the source); nothing of it was committed"
                )
            ledger._record(conn, "events", digest.rows, combined({"events": digest}), now_ms)
    except psycopg.DataError as exc:
        log.warning("copying events: PostgreSQL refused a value: %s", exc)
        raise StorageRefused("events: PostgreSQL refused a value of the source (see the log)") from exc
    except (psycopg.OperationalError, psycopg_pool.PoolTimeout) as exc:
        raise unavailable(exc, "copy") from exc
    return digest


def settle(pool: psycopg_pool.ConnectionPool) -> None:
    """Vacuum and analyze what copies filled: the planner gets statistics for the new rows, and
    the visibility map lets recalls read postings from the index alone (autovacuum would, later)."""
    try:
        with pool.connection() as conn:
            conn.execute(
                f"VACUUM (ANALYZE) {', '.join(['scopes', 'scope_stats', 'postings', *DUMP_COLUMNS, 'events'])}"
            )
    except (psycopg.OperationalError, psycopg_pool.PoolTimeout) as exc:
        raise unavailable(exc, "vacuum") from exc
