"""Booting a gateway on PostgreSQL, through the real ``meta_gateway`` command: an unreachable
server, an unset DSN variable, a schema from a newer release and a missing driver each refuse the
boot (exit 2, one JSON-RPC error line on stdio) naming host, port and database, never the
password; gateways booting together migrate once; the census names the server."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from meta_memory.clock import ManualClock
from meta_memory.errors import StorageRefused
from meta_memory.memory.postgres.factory import PostgresBackend
from meta_memory.memory.postgres.migrations import MIGRATIONS, SCHEMA_VERSION

from ..conftest import Backend
from ..gateway.conftest import DEADLINE_S
from ..security.conftest import free_port
from .conftest import toml_for


def _one_error_line(run: Any, wire_json: Callable[[str], Any]) -> dict[str, Any]:
    assert run.status == 2, (run.stdout, run.stderr)
    [line] = run.stdout.splitlines()
    reply = wire_json(line)
    assert reply["id"] is None and set(reply) == {"jsonrpc", "id", "error"}
    assert "Traceback" not in run.stderr
    error: dict[str, Any] = reply["error"]
    return error


def test_an_unreachable_server_refuses_the_boot_naming_host_port_and_database_never_the_password(
    run_gateway: Callable[..., Any], write_config: Callable[[str], Path], wire_json: Any, tmp_path: Path
) -> None:
    port = free_port()  # nothing listens there
    config = write_config(toml_for(f"postgresql://meta:hunter2@127.0.0.1:{port}/fleet", timeout_s=2))

    run = run_gateway("stdio", "--state-dir", str(tmp_path / "state"), "--config", str(config))

    error = _one_error_line(run, wire_json)
    assert error["code"] == -32014
    assert f"127.0.0.1:{port}/fleet" in error["message"] and "connection refused" in error["message"]
    assert "hunter2" not in run.stdout + run.stderr
    assert "psycopg" not in error["message"] and "Errno" not in error["message"]


def test_a_dsn_variable_that_is_not_set_refuses_the_boot_naming_it_and_one_that_is_set_serves(
    pg: Backend,
    run_gateway: Callable[..., Any],
    write_config: Callable[[str], Path],
    wire_json: Any,
    stdio_gateway: Callable[..., Any],
    tmp_path: Path,
) -> None:
    text = '[agent_memory]\nstore = "postgres"\n[agent_memory.postgres]\ndsn_env = "META_TEST_FLEET_DSN"\n'
    config = write_config(text)
    os.environ.pop("META_TEST_FLEET_DSN", None)

    run = run_gateway("stdio", "--state-dir", str(tmp_path / "state"), "--config", str(config))

    error = _one_error_line(run, wire_json)
    assert error["code"] == -32602 and "META_TEST_FLEET_DSN" in error["message"]

    assert pg.dsn is not None
    os.environ["META_TEST_FLEET_DSN"] = pg.dsn
    try:
        gateway = stdio_gateway(tmp_path / "state", "--config", str(config))
    finally:
        del os.environ["META_TEST_FLEET_DSN"]
    made = gateway.call("meta/agent_memory/remember", {"identity": "alice", "title": "T", "body": "B."})
    assert made["result"]["memory_id"].startswith("mem-")
    assert pg.stored(tmp_path, "SELECT count(*) FROM records") == [(1,)]


def test_a_schema_from_a_newer_release_refuses_the_boot_and_is_left_as_it_was(
    pg: Backend,
    admin: psycopg.Connection,
    run_gateway: Callable[..., Any],
    write_config: Callable[[str], Path],
    wire_json: Any,
    tmp_path: Path,
) -> None:
    assert pg.dsn is not None
    PostgresBackend(pg.dsn, clock=ManualClock()).close()  # migrated by this release
    admin.execute(
        "INSERT INTO meta_schema_migrations VALUES (%s, 'from the future', 0)", (SCHEMA_VERSION + 98,)
    )

    run = run_gateway(
        "stdio", "--state-dir", str(tmp_path / "state"), "--config", str(write_config(toml_for(pg.dsn)))
    )

    error = _one_error_line(run, wire_json)
    assert error["code"] == -32014
    assert f"version {SCHEMA_VERSION + 98}" in error["message"] and "newer" in error["message"]
    versions = [v for (v,) in admin.execute("SELECT version FROM meta_schema_migrations ORDER BY version")]
    assert versions == [*(m[0] for m in MIGRATIONS), SCHEMA_VERSION + 98]


def test_gateways_booting_together_apply_each_migration_exactly_once(
    pg: Backend, admin: psycopg.Connection
) -> None:
    assert pg.dsn is not None
    dsn = pg.dsn
    start = threading.Barrier(4)
    backends: list[PostgresBackend] = []
    failures: list[BaseException] = []

    def boot() -> None:
        start.wait(timeout=DEADLINE_S)
        try:
            backends.append(PostgresBackend(dsn, clock=ManualClock()))
        except BaseException as exc:  # collected: the assertion below shows it
            failures.append(exc)

    threads = [threading.Thread(target=boot) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=DEADLINE_S)
    for backend in backends:
        backend.close()

    assert failures == [] and len(backends) == 4
    rows = admin.execute("SELECT version, name FROM meta_schema_migrations ORDER BY version").fetchall()
    assert rows == [(v, name) for v, name, _ in MIGRATIONS]


def test_in_process_the_refusal_is_storage_refused_and_the_pool_is_not_left_open(tmp_path: Path) -> None:
    port = free_port()
    with pytest.raises(StorageRefused) as refused:
        PostgresBackend(f"postgresql://meta:hunter2@127.0.0.1:{port}/fleet", clock=ManualClock(), timeout_s=1)
    assert f"127.0.0.1:{port}/fleet" in refused.value.message and "hunter2" not in refused.value.message
    assert not any(t.name.startswith("meta-memory") for t in threading.enumerate())  # no pool workers left


def test_without_the_driver_the_boot_is_a_config_error_saying_what_to_install(
    pg: Backend, write_config: Callable[[str], Path], wire_json: Any, tmp_path: Path
) -> None:
    assert pg.dsn is not None
    config = write_config(toml_for(pg.dsn))
    # The real command's entry point, in an interpreter where psycopg cannot be imported.
    script = (
        "import sys; sys.modules['psycopg'] = None; sys.modules['psycopg_pool'] = None\n"
        "from meta_memory.cli import main\n"
        f"sys.argv = ['meta_gateway', 'stdio', '--state-dir', {str(tmp_path / 'state')!r}, '--config', {str(config)!r}]\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], stdin=subprocess.DEVNULL, capture_output=True, timeout=DEADLINE_S
    )

    [line] = done.stdout.decode().splitlines()
    error = wire_json(line)["error"]
    assert done.returncode == 2
    assert error["code"] == -32602 and "meta-memory[postgres]" in error["message"]


def test_the_storage_census_names_the_server_not_the_password(
    pg: Backend, stdio_gateway: Callable[..., Any], write_config: Callable[[str], Path], tmp_path: Path
) -> None:
    assert pg.dsn is not None
    gateway = stdio_gateway(tmp_path / "state", "--config", str(write_config(toml_for(pg.dsn))))

    census = gateway.call("meta/status")["result"]["storage"]

    slots = {slot["domain"]: slot for slot in census["slots"]}
    assert slots["agent_memory"]["backend"] == "postgres" and slots["event_log"]["backend"] == "postgres"
    assert slots["agent_memory"]["resolution"] == "persistent" and not slots["agent_memory"]["degraded"]
    host, _, rest = pg.dsn.partition("//")[2].partition("?")[0].rpartition("@")[2].partition(":")
    assert f"{host}:{rest}" in slots["agent_memory"]["detail"]  # host:port/database


def test_a_database_that_does_not_exist_refuses_the_boot_at_once_in_one_line(
    run_gateway: Callable[..., Any], write_config: Callable[[str], Path], wire_json: Any, tmp_path: Path
) -> None:
    """A refusal no retry changes fails at once, not after the pool's 15 s of attempts."""
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    from ..conftest import PG_DSN

    missing = make_conninfo(**{**conninfo_to_dict(PG_DSN), "dbname": "meta_no_such_database"})
    config = write_config(toml_for(missing, timeout_s=15))

    started = time.monotonic()
    run = run_gateway("stdio", "--state-dir", str(tmp_path / "state"), "--config", str(config))
    took = time.monotonic() - started

    error = _one_error_line(run, wire_json)
    assert error["code"] == -32014 and "the database does not exist" in error["message"]
    assert "meta_no_such_database" in error["message"]
    assert took < 10, f"the boot took {took:.1f} s to refuse"
    assert "pool" not in run.stderr.lower()  # no retry warnings from the connection pool
