"""``meta_gateway storage-copy`` moves a store without re-judging its history (a released record
arrives active, as the source serves it), and refuses a realm whose file holds a record no store
rule could have written (an agent's record raised to operator trust by hand, a record once
quarantined raised above ``agent_observed``): that realm is not copied, the realm beside it is (a
real process, SQLite into PostgreSQL)."""

from __future__ import annotations

import sqlite3
import subprocess
from contextlib import closing
from pathlib import Path
from typing import Any

import psycopg
import pytest

from meta_memory.storage.layout import StateLayout

from ..conftest import Backend, make_backend
from .conftest import DEADLINE_S, History, gateway_command, write_history


def _copy(source: Path, dsn: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*gateway_command(), "storage-copy", "--state-dir", str(source), "--to-postgres", dsn],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=DEADLINE_S,
    )


def _statuses(dsn: str, realm: str) -> dict[str, tuple[str, str]]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute("SELECT id, status, trust FROM records WHERE realm = %s", (realm,)).fetchall()
    return {memory_id: (status, trust) for memory_id, status, trust in rows}


def _source(tmp_path: Path, open_runtime: Any, clock: Any) -> tuple[Path, History]:
    state = tmp_path / "state"
    runtime = open_runtime(state, Backend("sqlite"))
    history = write_history(runtime, clock)
    runtime.close()
    return state, history


def test_storage_copy_keeps_the_status_and_trust_the_source_serves(
    tmp_path: Path, open_runtime: Any, clock: Any, request: pytest.FixtureRequest
) -> None:
    state, history = _source(tmp_path, open_runtime, clock)

    for pg in make_backend("postgres", request):
        assert pg.dsn is not None
        done = _copy(state, pg.dsn)

        assert done.returncode == 0, done.stderr
        copied = _statuses(pg.dsn, "default")
        assert copied[history.released.id] == ("active", "agent_observed")
        assert copied[history.quarantined.id] == ("quarantined", "agent_observed")
        assert copied[history.realm_scoped.id] == ("active", "operator")


@pytest.mark.parametrize(
    ("edit", "role", "broken"),
    [
        (
            "UPDATE records SET trust = 'operator' WHERE id = ?",
            "quarantined",
            "tier-ceiling: LLM-authored records are capped at trust 'agent_verified'",
        ),
        (
            "UPDATE records SET trust = 'application', ever_quarantined = 1 WHERE id = ?",
            "update",
            "tier-ceiling: records derived from untrusted or quarantined content are capped at trust "
            "'agent_observed'",
        ),
    ],
)
def test_storage_copy_refuses_a_realm_holding_a_record_written_outside_the_rules(
    tmp_path: Path,
    open_runtime: Any,
    clock: Any,
    request: pytest.FixtureRequest,
    edit: str,
    role: str,
    broken: str,
) -> None:
    state, history = _source(tmp_path, open_runtime, clock)
    memory_id = getattr(history, role).id
    with closing(sqlite3.connect(StateLayout.at(state).realm_db_path("default"))) as db, db:
        db.execute(edit, (memory_id,))

    for pg in make_backend("postgres", request):
        assert pg.dsn is not None
        done = _copy(state, pg.dsn)

        assert done.returncode == 1, done.stderr
        assert done.stderr.splitlines()[-1] == (
            f"meta_gateway: realm:default not copied: realm:default: record '{memory_id}' breaks a rule "
            f"every stored record keeps ({broken}); the source was written outside the store's rules, "
            "and nothing of it was copied"
        )
        assert _statuses(pg.dsn, "default") == {}
        assert _statuses(pg.dsn, "second") == {history.other_realm.id: ("active", "agent_observed")}
