"""The realm file itself: content hash, WAL, ordered migrations, in-place upgrade, and refusing
files it cannot read (never answering them with an empty result)."""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from meta_memory import MetaHandle, StoreCorrupt
from meta_memory.clock import ManualClock
from meta_memory.memory.records import APPLICATION, Record, content_hash
from meta_memory.memory.sqlite.migrations import MIGRATIONS, SCHEMA_VERSION, migrate
from meta_memory.memory.sqlite.store import REALM_PAGE_SIZE, SqliteRealmStore
from meta_memory.memory.validator import CreateOp, WriteBatch

from ..conftest import SQLITE_ONLY, Backend


def _reference_hash(title: str, body: str) -> str:
    """REFERENCE 3.2: SHA-256 over (title byte length, 8-byte little-endian) ‖ title ‖ body, lowercase hex."""
    t = title.encode("utf-8")
    return hashlib.sha256(len(t).to_bytes(8, "little") + t + body.encode("utf-8")).hexdigest()


@pytest.mark.parametrize(("title", "body"), [("Deploys", "Ask first."), ("α€", "🦀 body"), ("t", "")])
def test_content_hash_is_exactly_the_reference_construction(title: str, body: str) -> None:
    assert content_hash(title, body) == _reference_hash(title, body)


def test_content_hash_has_a_known_value_and_separates_title_from_body() -> None:
    prefix = (2).to_bytes(8, "little")
    assert prefix == b"\x02\x00\x00\x00\x00\x00\x00\x00"
    assert content_hash("ab", "c") == hashlib.sha256(prefix + b"abc").hexdigest()
    assert content_hash("ab", "c") != content_hash("a", "bc")
    assert len(content_hash("ab", "c")) == 64 and content_hash("ab", "c") == content_hash("ab", "c").lower()


def test_the_stored_content_hash_is_the_hash_of_the_normalized_title_and_body(
    handle: MetaHandle, state_dir: Path, backend: Backend
) -> None:
    record = handle.remember_agent_memory("alice", title="  Deploy   rule ", body="\n Ask first. \n")
    rows = backend.stored(state_dir, "SELECT id, content_hash FROM records")
    assert rows == [(record.memory_id, _reference_hash("Deploy rule", "Ask first."))]


def test_a_fresh_realm_file_is_wal_and_records_every_migration_in_order(
    tmp_path: Path, clock: ManualClock, sql: Any
) -> None:
    path = tmp_path / "fresh.sqlite3"
    SqliteRealmStore(path, "fresh", clock=clock).close()
    rows = sql(path, "SELECT version, name, applied_at_ms FROM schema_migrations ORDER BY version")
    assert [r[0] for r in rows] == list(range(1, SCHEMA_VERSION + 1))
    assert [(v, n) for v, n, _ in rows] == [(v, n) for v, n, _ in MIGRATIONS]
    assert {r[2] for r in rows} == {clock.now_ms()}
    assert sql(path, "PRAGMA journal_mode") == [("wal",)]


def test_new_realm_files_use_the_realm_page_size_and_old_files_keep_theirs(
    tmp_path: Path, clock: ManualClock, make_record: Callable[..., Record], sql: Any
) -> None:
    fresh = tmp_path / "fresh.sqlite3"
    SqliteRealmStore(fresh, "fresh", clock=clock).close()
    assert sql(fresh, "PRAGMA page_size") == [(REALM_PAGE_SIZE,)] != [(4096,)]
    old = tmp_path / "old.sqlite3"
    with closing(sqlite3.connect(old, isolation_level=None)) as db:
        db.execute("PRAGMA page_size = 4096")
        migrate(db, clock.now_ms())  # a file an earlier release made, at SQLite's default
    store = SqliteRealmStore(old, "r", clock=clock)
    try:
        store.commit(WriteBatch("r", APPLICATION, (CreateOp(make_record("kept")),)))
    finally:
        store.close()
    assert sql(old, "PRAGMA page_size") == [(4096,)]
    assert sql(old, "SELECT id FROM records") == [("kept",)]
    assert sql(old, "PRAGMA integrity_check") == [("ok",)]


def test_reopening_a_current_realm_file_applies_no_migration(
    tmp_path: Path, clock: ManualClock, sql: Any
) -> None:
    path = tmp_path / "r.sqlite3"
    SqliteRealmStore(path, "r", clock=clock).close()
    before = sql(path, "SELECT * FROM schema_migrations")
    clock.advance(60_000)
    SqliteRealmStore(path, "r", clock=clock).close()
    assert sql(path, "SELECT * FROM schema_migrations") == before
    with closing(sqlite3.connect(path, isolation_level=None)) as db:
        assert migrate(db, clock.now_ms()) == []


def test_an_older_realm_file_is_upgraded_in_place_keeping_its_data(
    tmp_path: Path, clock: ManualClock, sql: Any, make_record: Callable[..., Record]
) -> None:
    path = tmp_path / "r.sqlite3"
    with closing(sqlite3.connect(path, isolation_level=None)) as db:  # what release 1 of the schema wrote
        db.execute(
            "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
            "applied_at_ms INTEGER NOT NULL)"
        )
        version, name, step = MIGRATIONS[0]
        step(db)
        db.execute("INSERT INTO schema_migrations VALUES (?, ?, 0)", (version, name))
        db.execute("INSERT INTO scopes (kind, key) VALUES ('identity', 'alice')")
        row = {
            "id": "old-1", "scope_id": 1, "kind": "fact", "title": "Kept", "description": "",
            "body": "From v1.", "tags": "[]", "provenance": '{"author":{"author":"application"}}',
            "trust": "agent_observed", "status": "active", "derived_from": "[]", "ever_quarantined": 0,
            "content_hash": "h", "doc_len": 0, "created_at_ms": 5, "updated_at_ms": 5,
        }  # fmt: skip
        db.execute(
            f"INSERT INTO records ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", list(row.values())
        )
    store = SqliteRealmStore(path, "r", clock=clock)
    try:
        assert [v for (v,) in sql(path, "SELECT version FROM schema_migrations")] == list(
            range(1, SCHEMA_VERSION + 1)
        )
        kept = store.get("old-1")
        assert kept is not None and (kept.title, kept.body) == ("Kept", "From v1.")
        store.commit(WriteBatch("r", APPLICATION, (CreateOp(make_record("new-1")),)))
        assert store.get("new-1") is not None
    finally:
        store.close()


def test_the_ascending_index_upgrade_keeps_every_newest_first_order(
    tmp_path: Path, clock: ManualClock, sql: Any, make_record: Callable[..., Record]
) -> None:
    """Migration 7 rebuilds the indexes ordered by ``updated_at_ms`` ascending (new keys land
    at a b-tree's cheap end); the reads that walk them newest first, with ties, answer alike."""
    path = tmp_path / "r.sqlite3"
    store = SqliteRealmStore(path, "r", clock=clock)
    try:
        for n in range(30):  # shared timestamps, so the ties are decided by the later keys
            created = 1_000 + n // 4
            record = make_record(f"rec-{n:02d}", created_at_ms=created, updated_at_ms=created + n % 3)
            store.commit(WriteBatch("r", APPLICATION, (CreateOp(record),)))
    finally:
        store.close()
    newest = (
        "SELECT id FROM records WHERE scope_id = 1 AND status = 'active' "
        "ORDER BY updated_at_ms DESC, created_at_ms DESC, id DESC"
    )
    panel = "SELECT id FROM records WHERE updated_at_ms < 1008 ORDER BY updated_at_ms DESC, id DESC LIMIT 9"
    with closing(sqlite3.connect(path, isolation_level=None)) as db:  # back to what release 6 left
        db.execute("DROP INDEX records_by_scope_status")
        db.execute("DROP INDEX records_by_update")
        db.execute(
            "CREATE INDEX records_by_scope_status ON records "
            "(scope_id, status, updated_at_ms DESC, created_at_ms DESC)"
        )
        db.execute("CREATE INDEX records_by_update ON records (updated_at_ms DESC, id DESC)")
        db.execute("DELETE FROM schema_migrations WHERE version = 7")
    before = (sql(path, newest), sql(path, panel))
    assert len(before[0]) == 30 and len(before[1]) == 9
    SqliteRealmStore(path, "r", clock=clock).close()
    definitions = dict(sql(path, "SELECT name, sql FROM sqlite_master WHERE type = 'index'"))
    for index in ("records_by_scope_status", "records_by_update"):
        assert "DESC" not in definitions[index], definitions[index]
    assert (sql(path, newest), sql(path, panel)) == before
    assert 7 in [v for (v,) in sql(path, "SELECT version FROM schema_migrations")]


def test_a_realm_file_from_a_newer_release_is_refused_naming_the_file(
    tmp_path: Path, clock: ManualClock
) -> None:
    path = tmp_path / "r.sqlite3"
    SqliteRealmStore(path, "r", clock=clock).close()
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("INSERT INTO schema_migrations VALUES (?, 'from the future', 0)", (SCHEMA_VERSION + 1,))
    with pytest.raises(StoreCorrupt) as refused:
        SqliteRealmStore(path, "r", clock=clock)
    assert "its file r.sqlite3 " in refused.value.message
    assert str(tmp_path) not in refused.value.message  # no server path on the wire
    assert f"schema version {SCHEMA_VERSION + 1}" in refused.value.message
    assert refused.value.code == -32014


def _corrupt_default_realm(state_dir: Path) -> Path:
    path = state_dir / "agent-memory" / "default.sqlite3"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"not a database, honestly" + bytes(range(256)) * 32)
    return path


def test_a_corrupt_realm_file_raises_an_error_naming_the_file(tmp_path: Path, clock: ManualClock) -> None:
    path = tmp_path / "r.sqlite3"
    path.write_bytes(os.urandom(4096))
    with pytest.raises(StoreCorrupt) as refused:
        SqliteRealmStore(path, "r", clock=clock)
    assert refused.value.code == -32014
    assert "its file r.sqlite3 is not an SQLite database" in refused.value.message
    assert str(tmp_path) not in refused.value.message


@SQLITE_ONLY
@pytest.mark.parametrize("selection", ["always", "contextual"])
def test_recall_on_a_corrupt_realm_is_an_error_never_an_empty_result(
    open_handle: Callable[[], MetaHandle], state_dir: Path, selection: str
) -> None:
    path = _corrupt_default_realm(state_dir)
    handle = open_handle()
    for _ in range(2):  # the failure is not cached into an empty store
        with pytest.raises(StoreCorrupt) as refused:
            handle.recall_agent_memory("alice", selection=selection, query_text="anything at all")
        assert "its file agent-memory/default.sqlite3 " in refused.value.message
        assert str(state_dir) not in refused.value.message
    with pytest.raises(StoreCorrupt):
        handle.remember_agent_memory("alice", title="t", body="b")
    assert path.read_bytes().startswith(b"not a database")  # left as found, for the operator
    record = handle.remember_agent_memory("alice", title="t", body="b", realm="healthy")
    assert handle.recall_agent_memory("alice", selection="always", realm="healthy") == [record]
