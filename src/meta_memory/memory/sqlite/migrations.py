"""Schema of a realm file, as ordered, named migrations recorded in ``schema_migrations``.

A realm file upgrades in place: opening it applies, in one transaction each, every
migration whose version is not yet recorded. Never edit a released migration; append.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "NewerSchema", "applied_versions", "migrate"]


class NewerSchema(Exception):
    """The file records a migration this release does not know: a newer release wrote it."""


def _script(db: sqlite3.Connection, sql: str) -> None:
    # Not executescript(): it commits first, which would break one transaction per migration.
    for statement in sql.split(";"):
        if statement.strip():
            db.execute(statement)


def _m001_records(db: sqlite3.Connection) -> None:
    _script(
        db,
        """
        CREATE TABLE scopes (
            scope_id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL,
            key TEXT NOT NULL,
            doc_count INTEGER NOT NULL DEFAULT 0,   -- active records (the recall index)
            total_len INTEGER NOT NULL DEFAULT 0,   -- sum of their indexed lengths
            UNIQUE (kind, key)
        );
        CREATE TABLE records (
            doc INTEGER PRIMARY KEY,                -- monotonic: creation order in the realm
            id TEXT NOT NULL UNIQUE,
            scope_id INTEGER NOT NULL REFERENCES scopes (scope_id),
            kind TEXT NOT NULL,
            title TEXT NOT NULL,
            description TEXT NOT NULL,
            body TEXT NOT NULL,
            tags TEXT NOT NULL,                     -- JSON array
            provenance TEXT NOT NULL,               -- JSON object
            trust TEXT NOT NULL,
            status TEXT NOT NULL,
            superseded_by TEXT,
            quarantine_reason TEXT,
            supersedes TEXT,
            derived_from TEXT NOT NULL,             -- JSON array
            ever_quarantined INTEGER NOT NULL,
            working_set_rank INTEGER,
            content_hash TEXT NOT NULL,
            doc_len INTEGER NOT NULL,
            created_at_ms INTEGER NOT NULL,
            updated_at_ms INTEGER NOT NULL,
            injected_count INTEGER NOT NULL DEFAULT 0,
            last_injected_at_ms INTEGER,
            explicit_recall_count INTEGER NOT NULL DEFAULT 0,
            last_recalled_at_ms INTEGER,
            judged_useful_count INTEGER NOT NULL DEFAULT 0,
            last_useful_at_ms INTEGER
        );
        CREATE INDEX records_by_scope_status ON records (scope_id, status, updated_at_ms DESC, created_at_ms DESC);
        CREATE INDEX records_by_scope_doc ON records (scope_id, status);  -- rowid (doc) order: neighbours
        CREATE INDEX records_by_hash ON records (scope_id, content_hash, status);
        CREATE INDEX records_by_update ON records (updated_at_ms DESC, id DESC);
        CREATE INDEX records_by_supersedes ON records (supersedes) WHERE supersedes IS NOT NULL;

        CREATE TABLE terms (term_id INTEGER PRIMARY KEY, term TEXT NOT NULL UNIQUE);
        -- The recall index: active records only, one row per (scope, term, record).
        CREATE TABLE postings (
            scope_id INTEGER NOT NULL,
            term_id INTEGER NOT NULL,
            doc INTEGER NOT NULL,
            tf_title INTEGER NOT NULL,
            tf_body INTEGER NOT NULL,
            tf_tags INTEGER NOT NULL,
            length INTEGER NOT NULL,                -- the record's indexed length, for BM25
            PRIMARY KEY (scope_id, term_id, doc)
        ) WITHOUT ROWID;

        -- Write-behind queue of recall-index work: appended in the write's own transaction,
        -- drained in batches (before any recall reads the index, and when it grows).
        CREATE TABLE index_queue (
            seq INTEGER PRIMARY KEY,
            doc INTEGER NOT NULL,
            op TEXT NOT NULL                        -- add | remove
        );

        CREATE TABLE audit (
            seq INTEGER PRIMARY KEY,
            at_ms INTEGER NOT NULL,
            op TEXT NOT NULL,
            record_id TEXT,
            author TEXT NOT NULL,                   -- JSON object
            detail TEXT NOT NULL                    -- JSON object
        );
        CREATE INDEX audit_by_record ON audit (record_id);

        CREATE TABLE injections (
            seq INTEGER PRIMARY KEY,
            record_id TEXT NOT NULL,
            identity TEXT NOT NULL,
            session_key TEXT,
            surface TEXT NOT NULL,                  -- build | turn
            at_ms INTEGER NOT NULL
        );
        CREATE INDEX injections_by_record ON injections (record_id);
        """,
    )


def _m002_governance(db: sqlite3.Connection) -> None:
    """Tables the firewall, steward and console fill; they start empty."""
    _script(
        db,
        """
        CREATE TABLE proposals (
            proposal_id TEXT PRIMARY KEY,
            scope_kind TEXT NOT NULL,
            scope_key TEXT NOT NULL,
            kind TEXT NOT NULL,
            title TEXT NOT NULL,
            description TEXT NOT NULL,
            body TEXT NOT NULL,
            tags TEXT NOT NULL,
            author TEXT NOT NULL,
            status TEXT NOT NULL,                   -- pending | accepted | rejected | held
            tainted INTEGER NOT NULL,
            created_at_ms INTEGER NOT NULL,
            updated_at_ms INTEGER NOT NULL
        );
        CREATE TABLE stage_batches (
            stage_token TEXT PRIMARY KEY,
            batch TEXT NOT NULL,
            created_at_ms INTEGER NOT NULL
        );
        CREATE TABLE promotions (
            pending_id TEXT PRIMARY KEY,
            stage_token TEXT NOT NULL,
            record_id TEXT NOT NULL,
            scope_kind TEXT NOT NULL,
            scope_key TEXT NOT NULL,
            rationale TEXT,
            status TEXT NOT NULL,                   -- pending | committed | denied | expired
            proposal_id TEXT,
            created_at_ms INTEGER NOT NULL,
            resolved_at_ms INTEGER
        );
        CREATE INDEX promotions_by_record ON promotions (record_id, status);
        CREATE TABLE dream_runs (
            run_id TEXT PRIMARY KEY,
            partition TEXT NOT NULL,
            started_at_ms INTEGER NOT NULL,
            completed_at_ms INTEGER,
            ops_committed INTEGER NOT NULL DEFAULT 0,
            detail TEXT NOT NULL
        );
        CREATE TABLE harvests (
            identity TEXT NOT NULL,
            session_key TEXT NOT NULL,
            cause TEXT NOT NULL,
            retired_at_ms INTEGER NOT NULL,
            status TEXT NOT NULL,
            PRIMARY KEY (identity, session_key)
        );
        CREATE TABLE audit_verdicts (
            seq INTEGER PRIMARY KEY,
            run_id TEXT NOT NULL,
            record_id TEXT NOT NULL,
            verdict TEXT NOT NULL,
            rationale TEXT,
            status TEXT NOT NULL,
            created_at_ms INTEGER NOT NULL
        );
        """,
    )


def _m003_import_ledger(db: sqlite3.Connection) -> None:
    """Which legacy markdown files this realm has imported, for crash-safe re-runs."""
    db.execute(
        "CREATE TABLE legacy_imports (file_name TEXT PRIMARY KEY, imported INTEGER NOT NULL, "
        "skipped INTEGER NOT NULL, completed_at_ms INTEGER)"
    )


def _m004_store_meta(db: sqlite3.Connection) -> None:
    """Key/value facts about the file itself (e.g. which analyzer built the recall index)."""
    # IF NOT EXISTS: moving an older file's recall index to its own file (recall_index.py) may
    # have created it already, to record the realm_uid both files share.
    db.execute("CREATE TABLE IF NOT EXISTS store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")


def _m005_index_watermark(db: sqlite3.Connection) -> None:
    """New records join the recall index by a watermark over ``records.doc`` instead of a queued
    ``add`` each (see indexing.py). Everything an earlier release wrote is at or below it; its
    queued operations still describe exactly what remains to apply."""
    db.execute(
        "INSERT INTO store_meta (key, value) SELECT 'indexed_upto', CAST(coalesce(max(doc), 0) AS TEXT) FROM records "
        "WHERE true ON CONFLICT (key) DO NOTHING"
    )


def _m006_index_file(db: sqlite3.Connection) -> None:
    """The recall index moves to a file of its own (recall_index.py; the store copies a schema-5
    index there first). The realm file keeps what only it can know: which records left
    ``active`` (``index_queue``, now numbered by AUTOINCREMENT so that an index file's
    ``queue_upto`` never sees a number twice after the queue is pruned) and a ``realm_uid``
    that ties an index file to this realm file."""
    _script(
        db,
        """
        DROP TABLE postings;
        DROP TABLE terms;
        ALTER TABLE scopes DROP COLUMN doc_count;
        ALTER TABLE scopes DROP COLUMN total_len;
        DELETE FROM store_meta WHERE key IN ('indexed_upto', 'analyzer_version');
        INSERT INTO store_meta (key, value) VALUES ('realm_uid', lower(hex(randomblob(16))))
            ON CONFLICT (key) DO NOTHING;
        CREATE TABLE index_queue_v6 (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            doc INTEGER NOT NULL,
            op TEXT NOT NULL                        -- remove (add: rows of schema-4 files)
        );
        INSERT INTO index_queue_v6 (seq, doc, op) SELECT seq, doc, op FROM index_queue;
        DROP TABLE index_queue;
        ALTER TABLE index_queue_v6 RENAME TO index_queue;
        """,
    )


def _m007_ascending_indexes(db: sqlite3.Connection) -> None:
    """The two indexes ordered by ``updated_at_ms`` become ascending. SQLite reads an index
    backwards as cheaply as forwards, so the newest-first reads keep their plans, but a b-tree
    takes new keys cheaply only at its right end: each remember put its keys at the left end of
    the descending ones, splitting pages there (measured: 0.9 of the 12.2 pages a remember
    writes, and 4% of the file)."""
    _script(
        db,
        """
        DROP INDEX records_by_scope_status;
        CREATE INDEX records_by_scope_status ON records (scope_id, status, updated_at_ms, created_at_ms);
        DROP INDEX records_by_update;
        CREATE INDEX records_by_update ON records (updated_at_ms, id);
        """,
    )


def _m008_no_scope_doc_index(db: sqlite3.Connection) -> None:
    """Recall reads a record's neighbours from its recall-index file (``scope_docs``, filled for
    older index files when they are opened), so the realm file's ``(scope_id, status, doc)``
    index goes: measured in the runtime, 1.3 of the 11.8 (2 KiB) pages a remember wrote."""
    db.execute("DROP INDEX IF EXISTS records_by_scope_doc")


def _m009_host_sessions(db: sqlite3.Connection) -> None:
    """Host sessions and identities' pending taint become rows of the realm (memory/sql/sessions.py):
    a restart forgets no session, and nothing but a session's own end removes its taint. (IF NOT
    EXISTS: a file an older release wrote has neither table, and one a test rewound to an older
    schema keeps them.)"""
    _script(
        db,
        """
        CREATE TABLE IF NOT EXISTS host_sessions (
            session_key TEXT PRIMARY KEY,
            identity TEXT NOT NULL,
            mob TEXT,
            owner TEXT,                             -- the HTTP subject that opened it
            nonce TEXT NOT NULL,
            opened_at_ms INTEGER NOT NULL,
            seen_at_ms INTEGER NOT NULL,
            taint TEXT,                             -- the first untrusted source it ingested
            boundary INTEGER NOT NULL DEFAULT 0,    -- left by a reset
            ended TEXT,                             -- closed | reset | expired (NULL: open)
            ended_at_ms INTEGER,
            used_bytes INTEGER NOT NULL DEFAULT 0,  -- the injection budget
            injected TEXT NOT NULL DEFAULT '[]',    -- JSON array of record ids
            epoch INTEGER NOT NULL DEFAULT 0        -- compactions
        );
        CREATE INDEX IF NOT EXISTS host_sessions_open ON host_sessions (identity) WHERE ended IS NULL;
        CREATE INDEX IF NOT EXISTS host_sessions_idle ON host_sessions (seen_at_ms) WHERE ended IS NULL;
        CREATE INDEX IF NOT EXISTS host_sessions_ended ON host_sessions (ended_at_ms) WHERE ended IS NOT NULL;
        CREATE TABLE IF NOT EXISTS pending_taint (
            identity TEXT PRIMARY KEY,
            source TEXT NOT NULL,
            at_ms INTEGER NOT NULL
        );
        """,
    )


def _m010_expiry(db: sqlite3.Connection) -> None:
    """A record may expire (``remember`` / ``update`` with ``expires_at_ms`` or ``ttl_ms``): from
    then on it is never recalled or injected, and the upkeep deletes it (memory/expiry.py). (The
    column only if absent: a file a test rewound to an older schema keeps it.)"""
    columns = {row[1] for row in db.execute("PRAGMA table_info(records)")}
    if "expires_at_ms" not in columns:
        db.execute("ALTER TABLE records ADD COLUMN expires_at_ms INTEGER")
    db.execute(
        "CREATE INDEX IF NOT EXISTS records_expiring ON records (expires_at_ms) WHERE expires_at_ms IS NOT NULL"
    )


MIGRATIONS: tuple[tuple[int, str, Callable[[sqlite3.Connection], None]], ...] = (
    (1, "records_audit_injections_recall_index", _m001_records),
    (2, "governance_tables", _m002_governance),
    (3, "legacy_import_ledger", _m003_import_ledger),
    (4, "store_meta", _m004_store_meta),
    (5, "recall_index_watermark", _m005_index_watermark),
    (6, "recall_index_file", _m006_index_file),
    (7, "ascending_indexes", _m007_ascending_indexes),
    (8, "neighbours_from_the_index_file", _m008_no_scope_doc_index),
    (9, "host_sessions", _m009_host_sessions),
    (10, "record_expiry", _m010_expiry),
)
SCHEMA_VERSION = MIGRATIONS[-1][0]


def applied_versions(db: sqlite3.Connection) -> list[int]:
    exists = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    ).fetchone()
    if not exists:
        return []
    return [row[0] for row in db.execute("SELECT version FROM schema_migrations ORDER BY version")]


def migrate(db: sqlite3.Connection, now_ms: int) -> list[int]:
    """Apply pending migrations, each in its own transaction. Returns the versions applied."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations "
        "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at_ms INTEGER NOT NULL)"
    )
    done = set(applied_versions(db))
    newer = [v for v in done if v > SCHEMA_VERSION]
    if newer:
        raise NewerSchema(
            f"is at schema version {max(newer)}, newer than this release supports ({SCHEMA_VERSION})"
        )
    applied: list[int] = []
    for version, name, step in MIGRATIONS:
        if version in done:
            continue
        db.execute("BEGIN IMMEDIATE")
        try:
            step(db)
            db.execute(
                "INSERT INTO schema_migrations (version, name, applied_at_ms) VALUES (?, ?, ?)",
                (version, name, now_ms),
            )
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        applied.append(version)
    return applied
