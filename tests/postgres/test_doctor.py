"""The storage doctor on a PostgreSQL backend: what it says about the server is true (reachable or
not, at which schema version, how many records of each status per realm and per identity), it
names the server by host, port and database only, and it says when realm files in the state dir
are not what the gateway serves. Read-only: it migrates nothing."""

from __future__ import annotations

from pathlib import Path

import psycopg

from meta_memory.clock import ManualClock
from meta_memory.config import load_config_dict
from meta_memory.memory.postgres.doctor import PostgresDoctor
from meta_memory.memory.postgres.factory import PostgresBackend
from meta_memory.memory.postgres.migrations import SCHEMA_VERSION
from meta_memory.runtime import MetaRuntime
from meta_memory.sdk import MetaHandle
from meta_memory.storage.doctor import Finding, diagnose

from ..conftest import Backend
from ..security.conftest import free_port
from ..storage.test_doctor_findings import make_realm

# The PostgreSQL doctor's codes, each crafted below (test_doctor_findings.py counts them).
CRAFTED_ON_POSTGRES = {
    "database-ok",
    "database-unreachable",
    "files-not-served",
    "schema-newer-than-supported",
    "schema-upgrade-pending",
}


def _found(state: Path, doctor: PostgresDoctor, code: str, identity: str | None = None) -> list[Finding]:
    return [f for f in diagnose(state, identity, backend=doctor).findings if f.code == code]


def _write(state: Path, pg: Backend) -> None:
    """Records in two realms, by two identities, of three statuses, written by a real runtime."""
    config = pg.config({"agent_memory": {"enabled": True}})
    with MetaRuntime.open(state, load_config_dict(config), clock=ManualClock()) as runtime:
        meta = MetaHandle(runtime)
        for n in range(3):
            meta.remember_agent_memory("alice", title=f"A{n}", body=f"Alice fact {n}.")
        kept = meta.remember_agent_memory("bob", title="B", body="Bob fact.")
        meta.update_agent_memory("bob", kept.memory_id, title="B2", body="Bob fact, revised.")
        gone = meta.remember_agent_memory("alice", title="Gone", body="Forgotten soon.", realm="other")
        meta.forget_agent_memory("alice", gone.memory_id, realm="other")


def test_a_reachable_database_is_inventoried_per_realm_and_identity_with_true_counts(
    pg: Backend, tmp_path: Path
) -> None:
    assert pg.dsn is not None
    state = tmp_path / "state"
    _write(state, pg)

    report = diagnose(state, "alice", backend=PostgresDoctor(pg.dsn))

    [ok] = [f for f in report.findings if f.code == "database-ok"]
    assert ok.severity == "info" and f"schema version {SCHEMA_VERSION}, 2 realm(s), 6 record(s)" in ok.message
    by_realm = {entry.realm: entry for entry in report.inventory}
    assert sorted(by_realm) == ["default", "other"]
    # Independently: what the tables hold, counted here.
    stored = dict(
        ((realm, status), n)
        for realm, status, n in pg.stored(
            state, "SELECT realm, status, count(*) FROM records GROUP BY realm, status"
        )
    )
    for realm, entry in by_realm.items():
        assert entry.records is not None
        assert {s: n for s, n in entry.records.items() if n} == {
            status: n for (r, status), n in stored.items() if r == realm
        }
        assert entry.schema_version == SCHEMA_VERSION and entry.pending_index == 0
        assert str(entry.path).startswith("postgresql://") and "@" not in str(entry.path)
    assert by_realm["default"].identity_records == {
        "active": 3,
        "superseded": 0,
        "tombstoned": 0,
        "quarantined": 0,
    }
    assert by_realm["other"].identity_records == {
        "active": 0,
        "superseded": 0,
        "tombstoned": 1,
        "quarantined": 0,
    }
    assert not report.has_errors


def test_an_unreachable_server_is_an_error_naming_it_without_the_password(tmp_path: Path) -> None:
    port = free_port()
    doctor = PostgresDoctor(f"postgresql://meta:hunter2@127.0.0.1:{port}/fleet")

    [finding] = _found(tmp_path, doctor, "database-unreachable")

    assert finding.severity == "error"
    assert f"127.0.0.1:{port}/fleet" in finding.message and "hunter2" not in finding.message


def test_a_dsn_the_config_cannot_name_is_the_same_error_saying_why(tmp_path: Path) -> None:
    doctor = PostgresDoctor(None, problem="agent_memory.postgres.dsn_env names PG_FLEET, which is not set")

    [finding] = _found(tmp_path, doctor, "database-unreachable")

    assert finding.severity == "error" and "PG_FLEET" in finding.message


def test_an_empty_schema_is_an_upgrade_pending_and_the_doctor_migrates_nothing(
    pg: Backend, admin: psycopg.Connection, tmp_path: Path
) -> None:
    assert pg.dsn is not None

    [finding] = _found(tmp_path, PostgresDoctor(pg.dsn), "schema-upgrade-pending")

    assert finding.severity == "info" and f"migrates it to {SCHEMA_VERSION}" in finding.message
    assert admin.execute("SELECT to_regclass('meta_schema_migrations')").fetchone() == (None,)


def test_a_newer_schema_is_an_error_and_the_boot_would_refuse_it(
    pg: Backend, admin: psycopg.Connection, tmp_path: Path
) -> None:
    assert pg.dsn is not None
    PostgresBackend(pg.dsn, clock=ManualClock()).close()
    admin.execute(
        "INSERT INTO meta_schema_migrations VALUES (%s, 'from the future', 0)", (SCHEMA_VERSION + 1,)
    )

    [finding] = _found(tmp_path, PostgresDoctor(pg.dsn), "schema-newer-than-supported")

    assert finding.severity == "error" and f"version {SCHEMA_VERSION + 1}" in finding.message


def test_realm_files_in_the_state_dir_are_reported_as_not_served_with_the_copy_command(
    pg: Backend, tmp_path: Path
) -> None:
    assert pg.dsn is not None
    state = tmp_path / "state"
    make_realm(state)  # a SQLite realm file, as the embedded default wrote it
    PostgresBackend(pg.dsn, clock=ManualClock()).close()

    [finding] = _found(state, PostgresDoctor(pg.dsn), "files-not-served")

    assert finding.severity == "info" and "1 SQLite realm file(s)" in finding.message
    assert "meta_gateway storage-copy" in finding.message


def test_the_doctor_command_with_the_gateway_config_diagnoses_the_server(pg: Backend, tmp_path: Path) -> None:
    import json
    import subprocess

    from ..gateway.conftest import DEADLINE_S, gateway_command

    assert pg.dsn is not None
    state = tmp_path / "state"
    _write(state, pg)
    config = tmp_path / "meta.toml"
    config.write_text(f'[agent_memory]\nstore = "postgres"\n[agent_memory.postgres]\ndsn = "{pg.dsn}"\n')

    done = subprocess.run(
        [*gateway_command(), "doctor", "--state-dir", str(state), "--config", str(config), "--json"],
        capture_output=True,
        text=True,
        timeout=DEADLINE_S,
    )

    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)["diagnosis"]
    assert "database-ok" in [f["code"] for f in report["findings"]]
    assert sorted(entry["realm"] for entry in report["inventory"]) == ["default", "other"]
