"""The PostgreSQL schema, as ordered, named migrations recorded in ``meta_schema_migrations``.

Text that listings order by or cursors compare (ids, realm and scope names) is ``COLLATE "C"``:
byte order, as a realm file orders it, whatever the database's locale. Every realm shares one set
of tables (a ``realm`` column, or a scope that belongs to one realm),
so gateways serving many realms migrate once. Gateways that boot together take a session-level
advisory lock around the whole check, so exactly one applies what is missing and the others see
it applied. A database written by a newer release (a version this one does not know) is refused.
Never edit a released migration; append.
"""

from __future__ import annotations

from collections.abc import Callable

import psycopg

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "NewerSchema", "applied_versions", "migrate"]

# pg_advisory_lock(MIGRATION_LOCK): held while a gateway checks and applies migrations.
MIGRATION_LOCK = 0x6D657461_00000001  # "meta", 1


class NewerSchema(Exception):
    """The database records a migration this release does not know: a newer release wrote it."""


_M001 = """
CREATE TABLE realms (
    realm TEXT COLLATE "C" PRIMARY KEY,
    created_at_ms BIGINT NOT NULL
);
CREATE TABLE scopes (
    scope_id BIGSERIAL PRIMARY KEY,
    realm TEXT COLLATE "C" NOT NULL REFERENCES realms (realm),
    kind TEXT COLLATE "C" NOT NULL,
    key TEXT COLLATE "C" NOT NULL,
    UNIQUE (realm, kind, key)
);
CREATE TABLE records (
    doc BIGSERIAL PRIMARY KEY,              -- creation order: within a realm writes serialize
    realm TEXT COLLATE "C" NOT NULL,
    id TEXT COLLATE "C" NOT NULL,
    scope_id BIGINT NOT NULL REFERENCES scopes (scope_id),
    kind TEXT NOT NULL,
    title TEXT NOT NULL,
    description TEXT NOT NULL,
    body TEXT NOT NULL,
    tags TEXT NOT NULL,                     -- JSON array, as the realm file keeps it
    provenance TEXT NOT NULL,               -- JSON object
    trust TEXT NOT NULL,
    status TEXT NOT NULL,
    superseded_by TEXT,
    quarantine_reason TEXT,
    supersedes TEXT,
    derived_from TEXT NOT NULL,             -- JSON array
    ever_quarantined BOOLEAN NOT NULL,
    working_set_rank INTEGER,
    content_hash TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL,
    updated_at_ms BIGINT NOT NULL,
    injected_count INTEGER NOT NULL DEFAULT 0,
    last_injected_at_ms BIGINT,
    explicit_recall_count INTEGER NOT NULL DEFAULT 0,
    last_recalled_at_ms BIGINT,
    judged_useful_count INTEGER NOT NULL DEFAULT 0,
    last_useful_at_ms BIGINT,
    UNIQUE (realm, id)
);
CREATE INDEX records_by_scope_status ON records (scope_id, status, updated_at_ms DESC, created_at_ms DESC, id DESC);
CREATE INDEX records_by_hash ON records (scope_id, content_hash, status);
CREATE INDEX records_by_update ON records (realm, updated_at_ms DESC, id DESC);
CREATE INDEX records_by_supersedes ON records (realm, supersedes) WHERE supersedes IS NOT NULL;
CREATE INDEX records_active_by_scope ON records (scope_id, doc) WHERE status = 'active';
CREATE INDEX records_quarantined ON records (realm, created_at_ms) WHERE status = 'quarantined';

-- The recall index, kept in the write's own transaction: one row per scope, term and active record.
CREATE TABLE postings (
    scope_id BIGINT NOT NULL,
    term TEXT COLLATE "C" NOT NULL,
    doc BIGINT NOT NULL,
    tf_title INTEGER NOT NULL,
    tf_body INTEGER NOT NULL,
    tf_tags INTEGER NOT NULL,
    length INTEGER NOT NULL,
    -- A recall reads postings from the key alone (index-only scans): the payload rides in it.
    PRIMARY KEY (scope_id, term, doc) INCLUDE (tf_title, tf_body, tf_tags, length)
);
CREATE INDEX postings_by_doc ON postings (doc);
-- Index-only scans skip the heap only for pages the visibility map marks all-visible, which a
-- vacuum does: vacuum the append-mostly recall tables after 2% growth, not the default 20%.
ALTER TABLE postings SET (autovacuum_vacuum_insert_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);
ALTER TABLE records SET (autovacuum_vacuum_insert_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);
CREATE TABLE scope_stats (
    scope_id BIGINT PRIMARY KEY,
    doc_count BIGINT NOT NULL,
    total_len BIGINT NOT NULL
);

CREATE TABLE audit (
    seq BIGSERIAL PRIMARY KEY,
    realm TEXT COLLATE "C" NOT NULL,
    at_ms BIGINT NOT NULL,
    op TEXT NOT NULL,
    record_id TEXT COLLATE "C",
    author JSONB NOT NULL,
    detail JSONB NOT NULL
);
CREATE INDEX audit_by_record ON audit (realm, record_id, seq);
CREATE INDEX audit_by_run ON audit (realm, (author->>'run_id')) WHERE author->>'author' = 'steward';

CREATE TABLE injections (
    seq BIGSERIAL PRIMARY KEY,
    realm TEXT COLLATE "C" NOT NULL,
    record_id TEXT COLLATE "C" NOT NULL,
    identity TEXT COLLATE "C" NOT NULL,
    session_key TEXT COLLATE "C",
    surface TEXT NOT NULL,
    at_ms BIGINT NOT NULL
);
CREATE INDEX injections_by_record ON injections (realm, record_id, at_ms DESC, seq DESC);
CREATE INDEX injections_by_time ON injections (realm, at_ms DESC, seq DESC);

CREATE TABLE proposals (
    realm TEXT COLLATE "C" NOT NULL,
    proposal_id TEXT COLLATE "C" NOT NULL,
    scope_kind TEXT NOT NULL,
    scope_key TEXT COLLATE "C" NOT NULL,
    kind TEXT NOT NULL,
    title TEXT NOT NULL,
    description TEXT NOT NULL,
    body TEXT NOT NULL,
    tags TEXT NOT NULL,
    author JSONB NOT NULL,
    status TEXT NOT NULL,
    tainted BOOLEAN NOT NULL,
    created_at_ms BIGINT NOT NULL,
    updated_at_ms BIGINT NOT NULL,
    PRIMARY KEY (realm, proposal_id)
);
CREATE TABLE stage_batches (
    realm TEXT COLLATE "C" NOT NULL,
    stage_token TEXT COLLATE "C" NOT NULL,
    batch TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL,
    PRIMARY KEY (realm, stage_token)
);
CREATE TABLE promotions (
    realm TEXT COLLATE "C" NOT NULL,
    pending_id TEXT COLLATE "C" NOT NULL,
    stage_token TEXT COLLATE "C" NOT NULL,
    record_id TEXT COLLATE "C" NOT NULL,
    scope_kind TEXT NOT NULL,
    scope_key TEXT COLLATE "C" NOT NULL,
    rationale TEXT,
    status TEXT NOT NULL,
    proposal_id TEXT,
    created_at_ms BIGINT NOT NULL,
    resolved_at_ms BIGINT,
    PRIMARY KEY (realm, pending_id)
);
CREATE INDEX promotions_by_record ON promotions (realm, record_id, status);
CREATE TABLE dream_runs (
    realm TEXT COLLATE "C" NOT NULL,
    run_id TEXT COLLATE "C" NOT NULL,
    partition TEXT COLLATE "C" NOT NULL,
    started_at_ms BIGINT NOT NULL,
    completed_at_ms BIGINT,
    ops_committed INTEGER NOT NULL DEFAULT 0,
    detail TEXT NOT NULL,
    PRIMARY KEY (realm, run_id)
);
CREATE TABLE harvests (
    realm TEXT COLLATE "C" NOT NULL,
    identity TEXT COLLATE "C" NOT NULL,
    session_key TEXT COLLATE "C" NOT NULL,
    cause TEXT NOT NULL,
    retired_at_ms BIGINT NOT NULL,
    status TEXT NOT NULL,
    PRIMARY KEY (realm, identity, session_key)
);
CREATE TABLE audit_verdicts (
    seq BIGSERIAL PRIMARY KEY,
    realm TEXT COLLATE "C" NOT NULL,
    run_id TEXT COLLATE "C" NOT NULL,
    record_id TEXT COLLATE "C" NOT NULL,
    verdict TEXT NOT NULL,
    rationale TEXT,
    status TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL
);
CREATE TABLE legacy_imports (
    realm TEXT COLLATE "C" NOT NULL,
    file_name TEXT COLLATE "C" NOT NULL,
    imported INTEGER NOT NULL,
    skipped INTEGER NOT NULL,
    completed_at_ms BIGINT,
    PRIMARY KEY (realm, file_name)
);

-- What `meta_gateway storage-copy` copied here, from which state dir: a second run skips it.
CREATE TABLE storage_copies (
    source TEXT NOT NULL,                   -- the state dir, resolved
    part TEXT NOT NULL,                     -- realm:<name> | events
    rows BIGINT NOT NULL,
    digest TEXT NOT NULL,                   -- memory/dump.py's combined digest of what was copied
    completed_at_ms BIGINT NOT NULL,
    PRIMARY KEY (source, part)
);

-- One create, whole, under the realm's write lock: the common write (a remember, an agent's own
-- observation) in one statement, so that it costs one round trip with its BEGIN and COMMIT
-- (store.py, PostgresRealmStore.commit). Each statement of a VOLATILE function takes its own
-- snapshot, so the checks after the lock see every write committed before it. Outcomes:
-- 'created', 'duplicate' (p_dedup: an active record in the scope has this content; nothing is
-- written), 'taken' (the id exists), 'recreate_tombstoned' (p_recreate_since: this content was
-- tombstoned in the scope since then).
CREATE FUNCTION meta_create_record(
    p_lock BIGINT, p_realm TEXT, p_scope_kind TEXT, p_scope_key TEXT, p_dedup BOOLEAN, p_recreate_since BIGINT,
    p_id TEXT, p_kind TEXT, p_title TEXT, p_description TEXT, p_body TEXT, p_tags TEXT, p_provenance TEXT,
    p_trust TEXT, p_status TEXT, p_quarantine_reason TEXT, p_derived_from TEXT, p_ever_quarantined BOOLEAN,
    p_working_set_rank INTEGER, p_content_hash TEXT, p_created_at_ms BIGINT, p_updated_at_ms BIGINT,
    p_postings JSON, p_length INTEGER,
    p_audit_at_ms BIGINT, p_audit_op TEXT, p_audit_author TEXT, p_audit_detail TEXT
) RETURNS TABLE (outcome TEXT, scope_id BIGINT, doc BIGINT, audit_seq BIGINT)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
    v_scope BIGINT;
    v_doc BIGINT;
    v_seq BIGINT;
BEGIN
    PERFORM pg_advisory_xact_lock(p_lock);
    SELECT s.scope_id INTO v_scope FROM scopes s WHERE s.realm = p_realm AND s.kind = p_scope_kind AND s.key = p_scope_key;
    IF v_scope IS NULL THEN
        INSERT INTO scopes (realm, kind, key) VALUES (p_realm, p_scope_kind, p_scope_key)
            RETURNING scopes.scope_id INTO v_scope;
    END IF;
    IF p_dedup THEN
        SELECT r.doc INTO v_doc FROM records r
            WHERE r.scope_id = v_scope AND r.content_hash = p_content_hash AND r.status = 'active' LIMIT 1;
        IF v_doc IS NOT NULL THEN
            RETURN QUERY SELECT 'duplicate'::TEXT, v_scope, v_doc, NULL::BIGINT;
            RETURN;
        END IF;
    END IF;
    IF EXISTS (SELECT 1 FROM records r WHERE r.realm = p_realm AND r.id = p_id) THEN
        RETURN QUERY SELECT 'taken'::TEXT, v_scope, NULL::BIGINT, NULL::BIGINT;
        RETURN;
    END IF;
    IF p_recreate_since IS NOT NULL AND EXISTS (
        SELECT 1 FROM records r WHERE r.scope_id = v_scope AND r.content_hash = p_content_hash
            AND r.status = 'tombstoned' AND r.updated_at_ms >= p_recreate_since
    ) THEN
        RETURN QUERY SELECT 'recreate_tombstoned'::TEXT, v_scope, NULL::BIGINT, NULL::BIGINT;
        RETURN;
    END IF;
    INSERT INTO records (realm, id, scope_id, kind, title, description, body, tags, provenance, trust, status,
            quarantine_reason, supersedes, derived_from, ever_quarantined, working_set_rank, content_hash,
            created_at_ms, updated_at_ms)
        VALUES (p_realm, p_id, v_scope, p_kind, p_title, p_description, p_body, p_tags, p_provenance, p_trust,
            p_status, p_quarantine_reason, NULL, p_derived_from, p_ever_quarantined, p_working_set_rank,
            p_content_hash, p_created_at_ms, p_updated_at_ms)
        RETURNING records.doc INTO v_doc;
    IF p_postings IS NOT NULL THEN
        INSERT INTO postings (scope_id, term, doc, tf_title, tf_body, tf_tags, length)
            SELECT v_scope, t.term, v_doc, t.a, t.b, t.c, p_length
            FROM json_to_recordset(p_postings) AS t(term TEXT, a INTEGER, b INTEGER, c INTEGER);
        INSERT INTO scope_stats AS st (scope_id, doc_count, total_len) VALUES (v_scope, 1, p_length)
            ON CONFLICT (scope_id) DO UPDATE SET doc_count = st.doc_count + 1, total_len = st.total_len + p_length;
    END IF;
    INSERT INTO audit (realm, at_ms, op, record_id, author, detail)
        VALUES (p_realm, p_audit_at_ms, p_audit_op, p_id, p_audit_author::jsonb, p_audit_detail::jsonb)
        RETURNING audit.seq INTO v_seq;
    RETURN QUERY SELECT 'created'::TEXT, v_scope, v_doc, v_seq;
END
$$;

-- The timeline of every gateway on this database, in commit order (appends serialize).
CREATE TABLE events (
    seq BIGSERIAL PRIMARY KEY,
    identity TEXT COLLATE "C" NOT NULL,
    event_type TEXT NOT NULL,
    timestamp_ms BIGINT NOT NULL,
    data TEXT NOT NULL,
    origin TEXT NOT NULL                    -- the appending gateway (its listener skips its own)
);
"""


def _m001_schema(conn: psycopg.Connection) -> None:
    conn.execute(_M001)


# recall = "hybrid": embedding vectors, derived data beside the records (vectors.py).
_M002 = """
CREATE INDEX records_by_realm_doc ON records (realm, doc);
CREATE TABLE vector_marks (
    realm TEXT COLLATE "C" NOT NULL,
    model_id TEXT COLLATE "C" NOT NULL,
    dim INTEGER NOT NULL,
    embedded_upto BIGINT NOT NULL,          -- the last doc of the realm looked at
    generation BIGINT NOT NULL,             -- moved when vectors are removed
    updated_at_ms BIGINT NOT NULL,
    PRIMARY KEY (realm, model_id)
);
CREATE TABLE record_vectors (
    model_id TEXT COLLATE "C" NOT NULL,
    doc BIGINT NOT NULL,
    realm TEXT COLLATE "C" NOT NULL,
    scope_id BIGINT NOT NULL,
    v BYTEA NOT NULL,                       -- float32, little-endian, L2-normalized
    PRIMARY KEY (model_id, doc)
);
CREATE INDEX record_vectors_by_scope ON record_vectors (realm, model_id, scope_id, doc);
"""


def _m002_vectors(conn: psycopg.Connection) -> None:
    conn.execute(_M002)


# Host sessions and identities' pending taint, shared by every gateway (memory/sql/sessions.py).
_M003 = """
CREATE TABLE host_sessions (
    realm TEXT COLLATE "C" NOT NULL,
    session_key TEXT COLLATE "C" NOT NULL,
    identity TEXT COLLATE "C" NOT NULL,
    mob TEXT,
    owner TEXT,                             -- the HTTP subject that opened it
    nonce TEXT NOT NULL,
    opened_at_ms BIGINT NOT NULL,
    seen_at_ms BIGINT NOT NULL,
    taint TEXT,                             -- the first untrusted source it ingested
    boundary INTEGER NOT NULL DEFAULT 0,    -- left by a reset
    ended TEXT,                             -- closed | reset | expired (NULL: open)
    ended_at_ms BIGINT,
    used_bytes BIGINT NOT NULL DEFAULT 0,   -- the injection budget
    injected TEXT NOT NULL DEFAULT '[]',    -- JSON array of record ids
    epoch INTEGER NOT NULL DEFAULT 0,       -- compactions
    PRIMARY KEY (realm, session_key)
);
CREATE INDEX host_sessions_open ON host_sessions (realm, identity) WHERE ended IS NULL;
CREATE INDEX host_sessions_idle ON host_sessions (realm, seen_at_ms) WHERE ended IS NULL;
CREATE INDEX host_sessions_ended ON host_sessions (realm, ended_at_ms) WHERE ended IS NOT NULL;
CREATE TABLE pending_taint (
    realm TEXT COLLATE "C" NOT NULL,
    identity TEXT COLLATE "C" NOT NULL,
    source TEXT NOT NULL,
    at_ms BIGINT NOT NULL,
    PRIMARY KEY (realm, identity)
);
"""


def _m003_host_sessions(conn: psycopg.Connection) -> None:
    conn.execute(_M003)


# A record may expire (memory/expiry.py): its column, the index the upkeep's sweep reads, and the
# one-statement create of migration 1, taking it (after p_updated_at_ms).
_M004 = """
ALTER TABLE records ADD COLUMN expires_at_ms BIGINT;
CREATE INDEX records_expiring ON records (realm, expires_at_ms) WHERE expires_at_ms IS NOT NULL;
DROP FUNCTION meta_create_record(BIGINT, TEXT, TEXT, TEXT, BOOLEAN, BIGINT, TEXT, TEXT, TEXT, TEXT, TEXT, TEXT, TEXT, TEXT, TEXT, TEXT, TEXT, BOOLEAN, INTEGER, TEXT, BIGINT, BIGINT, JSON, INTEGER, BIGINT, TEXT, TEXT, TEXT);
CREATE FUNCTION meta_create_record(
    p_lock BIGINT, p_realm TEXT, p_scope_kind TEXT, p_scope_key TEXT, p_dedup BOOLEAN, p_recreate_since BIGINT,
    p_id TEXT, p_kind TEXT, p_title TEXT, p_description TEXT, p_body TEXT, p_tags TEXT, p_provenance TEXT,
    p_trust TEXT, p_status TEXT, p_quarantine_reason TEXT, p_derived_from TEXT, p_ever_quarantined BOOLEAN,
    p_working_set_rank INTEGER, p_content_hash TEXT, p_created_at_ms BIGINT, p_updated_at_ms BIGINT,
    p_expires_at_ms BIGINT,
    p_postings JSON, p_length INTEGER,
    p_audit_at_ms BIGINT, p_audit_op TEXT, p_audit_author TEXT, p_audit_detail TEXT
) RETURNS TABLE (outcome TEXT, scope_id BIGINT, doc BIGINT, audit_seq BIGINT)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
    v_scope BIGINT;
    v_doc BIGINT;
    v_seq BIGINT;
BEGIN
    PERFORM pg_advisory_xact_lock(p_lock);
    SELECT s.scope_id INTO v_scope FROM scopes s WHERE s.realm = p_realm AND s.kind = p_scope_kind AND s.key = p_scope_key;
    IF v_scope IS NULL THEN
        INSERT INTO scopes (realm, kind, key) VALUES (p_realm, p_scope_kind, p_scope_key)
            RETURNING scopes.scope_id INTO v_scope;
    END IF;
    IF p_dedup THEN
        SELECT r.doc INTO v_doc FROM records r
            WHERE r.scope_id = v_scope AND r.content_hash = p_content_hash AND r.status = 'active'
                AND r.expires_at_ms IS NULL LIMIT 1;
        IF v_doc IS NOT NULL THEN
            RETURN QUERY SELECT 'duplicate'::TEXT, v_scope, v_doc, NULL::BIGINT;
            RETURN;
        END IF;
    END IF;
    IF EXISTS (SELECT 1 FROM records r WHERE r.realm = p_realm AND r.id = p_id) THEN
        RETURN QUERY SELECT 'taken'::TEXT, v_scope, NULL::BIGINT, NULL::BIGINT;
        RETURN;
    END IF;
    IF p_recreate_since IS NOT NULL AND EXISTS (
        SELECT 1 FROM records r WHERE r.scope_id = v_scope AND r.content_hash = p_content_hash
            AND r.status = 'tombstoned' AND r.updated_at_ms >= p_recreate_since
    ) THEN
        RETURN QUERY SELECT 'recreate_tombstoned'::TEXT, v_scope, NULL::BIGINT, NULL::BIGINT;
        RETURN;
    END IF;
    INSERT INTO records (realm, id, scope_id, kind, title, description, body, tags, provenance, trust, status,
            quarantine_reason, supersedes, derived_from, ever_quarantined, working_set_rank, content_hash,
            created_at_ms, updated_at_ms, expires_at_ms)
        VALUES (p_realm, p_id, v_scope, p_kind, p_title, p_description, p_body, p_tags, p_provenance, p_trust,
            p_status, p_quarantine_reason, NULL, p_derived_from, p_ever_quarantined, p_working_set_rank,
            p_content_hash, p_created_at_ms, p_updated_at_ms, p_expires_at_ms)
        RETURNING records.doc INTO v_doc;
    IF p_postings IS NOT NULL THEN
        INSERT INTO postings (scope_id, term, doc, tf_title, tf_body, tf_tags, length)
            SELECT v_scope, t.term, v_doc, t.a, t.b, t.c, p_length
            FROM json_to_recordset(p_postings) AS t(term TEXT, a INTEGER, b INTEGER, c INTEGER);
        INSERT INTO scope_stats AS st (scope_id, doc_count, total_len) VALUES (v_scope, 1, p_length)
            ON CONFLICT (scope_id) DO UPDATE SET doc_count = st.doc_count + 1, total_len = st.total_len + p_length;
    END IF;
    INSERT INTO audit (realm, at_ms, op, record_id, author, detail)
        VALUES (p_realm, p_audit_at_ms, p_audit_op, p_id, p_audit_author::jsonb, p_audit_detail::jsonb)
        RETURNING audit.seq INTO v_seq;
    RETURN QUERY SELECT 'created'::TEXT, v_scope, v_doc, v_seq;
END
$$;
"""


def _m004_expiry(conn: psycopg.Connection) -> None:
    conn.execute(_M004)


MIGRATIONS: tuple[tuple[int, str, Callable[[psycopg.Connection], None]], ...] = (
    (1, "schema", _m001_schema),
    (2, "vectors", _m002_vectors),
    (3, "host_sessions", _m003_host_sessions),
    (4, "record_expiry", _m004_expiry),
)
SCHEMA_VERSION = MIGRATIONS[-1][0]


def applied_versions(conn: psycopg.Connection) -> list[int]:
    row = conn.execute("SELECT to_regclass('meta_schema_migrations') IS NOT NULL").fetchone()
    if row is None or not row[0]:
        return []
    return [int(v) for (v,) in conn.execute("SELECT version FROM meta_schema_migrations ORDER BY version")]


def migrate(conn: psycopg.Connection, now_ms: int) -> list[int]:
    """Apply pending migrations, each in its own transaction, under the migration lock.
    ``conn`` is in autocommit mode. Returns the versions this call applied.

    Raises:
        NewerSchema: the database is at a version this release does not know.
    """
    conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))
    try:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS meta_schema_migrations "
            "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at_ms BIGINT NOT NULL)"
        )
        done = set(applied_versions(conn))
        newer = [v for v in done if v > SCHEMA_VERSION]
        if newer:
            raise NewerSchema(
                f"the database schema is at version {max(newer)}, newer than this release supports "
                f"({SCHEMA_VERSION}): run a newer release of meta-memory"
            )
        applied: list[int] = []
        for version, name, step in MIGRATIONS:
            if version in done:
                continue
            with conn.transaction():
                step(conn)
                conn.execute(
                    "INSERT INTO meta_schema_migrations (version, name, applied_at_ms) VALUES (%s, %s, %s)",
                    (version, name, now_ms),
                )
            applied.append(version)
        return applied
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))
