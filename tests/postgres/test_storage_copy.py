"""``meta_gateway storage-copy``, run as the real command: every table of every SQLite realm and the
timeline arrive in PostgreSQL exactly (checked here row by row against the realm files, not with
the copy's own digests), a gateway on the copy recalls what the SQLite gateway recalled in the same
order, a second run copies nothing, and a realm that cannot be copied whole is not copied at all
while the others are."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from meta_memory.clock import ManualClock
from meta_memory.config import load_config_dict
from meta_memory.review.decide import parse_decide_params
from meta_memory.runtime import MetaRuntime
from meta_memory.sdk import MetaHandle
from meta_memory.storage.layout import StateLayout

from ..conftest import Backend
from ..gateway.conftest import DEADLINE_S, gateway_command

REALMS = ("default", "other")
QUERIES = ("deploys tuesday", "vpn staging", "coffee", "queue worker restart", "fact number")


def _config(backend: Backend) -> Any:
    return load_config_dict(
        backend.config(
            {
                "agent_memory": {"enabled": True, "llm_writes": "quarantined"},
                "roster": [{"identity": "lead", "mob": "crew"}, {"identity": "scout", "mob": "crew"}],
            }
        )
    )


def _populate(state: Path) -> None:
    """A state dir as a SQLite gateway leaves it: every status, review, sessions, proposals, events."""
    clock = ManualClock()
    with MetaRuntime.open(state, _config(Backend("sqlite")), clock=clock) as runtime:
        meta = MetaHandle(runtime)
        for realm in REALMS:
            for n in range(12):
                clock.advance(7)
                meta.remember_agent_memory(
                    "lead", title=f"Fact {n}", body=f"Fact number {n}: deploys on Tuesday {n}.", realm=realm
                )
            kept = meta.remember_agent_memory(
                "lead", title="Coffee", body="Lead takes coffee black.", realm=realm
            )
            meta.update_agent_memory(
                "lead", kept.memory_id, title="Coffee", body="Lead takes coffee with milk.", realm=realm
            )
            gone = meta.remember_agent_memory(
                "scout", title="VPN", body="The staging VPN drops links.", realm=realm
            )
            meta.forget_agent_memory("scout", gone.memory_id, realm=realm)
            session = meta.open_session("lead", realm=realm, mob="crew")
            session.turn("when do deploys happen on tuesday?")  # injections, recall counters
            for title, body in (
                ("Runbook", "Restart the queue worker first."),
                ("Gotcha", "Staging VPN idles out."),
            ):
                result = session.memory_tool({"action": "remember", "title": title, "body": body})
                assert result.outcome == "quarantined"
            session.memory_tool(
                {"action": "propose_to_mob", "title": "Crew rule", "body": "Deploy after standup."}
            )
        assert runtime.agent_memory is not None and runtime.review is not None
        store = runtime.agent_memory.store("default")
        held = store.get(store.quarantined(10)[0].memory_id)
        assert held is not None
        params = {
            "identity": "lead",
            "memory_id": held.id,
            "verdict": "release",
            "expected_content_hash": held.content_hash,
        }
        decided = runtime.review.decide(
            parse_decide_params(params, default_realm="default"),
            reviewer={"kind": "console", "principal": "ops"},
        )
        assert decided.outcome == "released"
    with closing(sqlite3.connect(StateLayout.at(state).realm_db_path("default"))) as db, db:
        # Rows the steward writes, so that every table has some.
        db.execute("INSERT INTO stage_batches VALUES ('stage-1', '{\"ops\": []}', 5)")
        db.execute(
            "INSERT INTO promotions VALUES ('gate-1', 'stage-1', 'mem-x', 'mob', 'crew', 'why', 'pending', NULL, 5, NULL)"
        )
        db.execute("INSERT INTO dream_runs VALUES ('run-1', 'mob:crew', 5, 9, 2, '{\"phase\": \"done\"}')")
        db.execute("INSERT INTO harvests VALUES ('lead', 'sess-9', 'retired', 7, 'pending')")
        db.execute(
            "INSERT INTO audit_verdicts (run_id, record_id, verdict, rationale, status, created_at_ms) VALUES ('run-1', 'mem-x', 'dead_weight', NULL, 'open', 8)"
        )
        db.execute("INSERT INTO legacy_imports VALUES ('lead.md', 3, 1, NULL)")


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    state = tmp_path_factory.mktemp("copy") / "state"
    _populate(state)
    return state


def _copy(state: Path, dsn: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*gateway_command(), "storage-copy", "--state-dir", str(state), "--to-postgres", dsn, *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=DEADLINE_S,
    )


# The test's own reading of both sides: each table's rows as comparable values, JSON parsed, flags as
# booleans, scopes by (kind, key); the SQLite side read straight from the realm file.
TABLES = {
    "records": ("id", "s.kind", "s.key", "r.kind", "title", "description", "body", "tags", "provenance", "trust", "r.status",
                "superseded_by", "quarantine_reason", "supersedes", "derived_from", "ever_quarantined",
                "working_set_rank", "content_hash", "created_at_ms", "updated_at_ms", "injected_count",
                "last_injected_at_ms", "explicit_recall_count", "last_recalled_at_ms", "judged_useful_count",
                "last_useful_at_ms"),
    "audit": ("at_ms", "op", "record_id", "author", "detail"),
    "injections": ("record_id", "identity", "session_key", "surface", "at_ms"),
    "proposals": ("proposal_id", "scope_kind", "scope_key", "kind", "title", "body", "tags", "author", "status",
                  "tainted", "created_at_ms"),
    "stage_batches": ("stage_token", "batch", "created_at_ms"),
    "promotions": ("pending_id", "stage_token", "record_id", "status", "created_at_ms", "resolved_at_ms"),
    "dream_runs": ("run_id", "partition", "started_at_ms", "completed_at_ms", "ops_committed", "detail"),
    "harvests": ("identity", "session_key", "cause", "retired_at_ms", "status"),
    "audit_verdicts": ("run_id", "record_id", "verdict", "rationale", "status", "created_at_ms"),
    "legacy_imports": ("file_name", "imported", "skipped", "completed_at_ms"),
}  # fmt: skip
JSON_COLUMNS = {"tags", "provenance", "derived_from", "author", "detail", "batch"}
FLAG_COLUMNS = {"ever_quarantined", "tainted"}


def _value(column: str, value: Any) -> Any:
    name = column.split(".")[-1]
    if name in JSON_COLUMNS and isinstance(value, str):
        return json.loads(value)
    if name in FLAG_COLUMNS:
        return bool(value)
    return value


def _rows(conn: Any, table: str, realm: str | None, placeholder: str) -> list[tuple[Any, ...]]:
    columns = TABLES[table]
    source = "records r JOIN scopes s ON s.scope_id = r.scope_id" if table == "records" else table
    where = f" WHERE {'r.' if table == 'records' else ''}realm = {placeholder}" if realm is not None else ""
    rows = conn.execute(
        f"SELECT {', '.join(columns)} FROM {source}{where}", (realm,) if realm else ()
    ).fetchall()
    return sorted((tuple(_value(c, v) for c, v in zip(columns, row, strict=True)) for row in rows), key=repr)


def _sqlite_rows(state: Path, realm: str, table: str) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(StateLayout.at(state).realm_db_path(realm))) as db:
        return _rows(db, table, None, "?")


def _pg_rows(pg: Backend, realm: str, table: str) -> list[tuple[Any, ...]]:
    import psycopg

    assert pg.dsn is not None
    with psycopg.connect(pg.dsn) as conn:
        return _rows(conn, table, realm, "%s")


def _recalls(runtime: MetaRuntime, realm: str) -> list[list[str]]:
    meta = MetaHandle(runtime)
    return [
        [r.memory_id for r in meta.recall_agent_memory("lead", query_text=q, realm=realm, max_entries=8)]
        for q in QUERIES
    ]


def test_every_table_of_every_realm_and_the_timeline_arrive_exactly(
    source: Path, pg: Backend, tmp_path: Path
) -> None:
    assert pg.dsn is not None
    with MetaRuntime.open(source, _config(Backend("sqlite")), clock=ManualClock()) as runtime:
        before = {realm: _recalls(runtime, realm) for realm in REALMS}
        events_before = MetaHandle(runtime).call("meta/timeline/query", {"limit": 500})["events"]

    done = _copy(source, pg.dsn)

    assert done.returncode == 0, done.stderr
    for part in ("realm:default", "realm:other", "events"):
        assert part in done.stdout
    assert "refused" not in done.stdout and "Traceback" not in done.stderr
    for realm in REALMS:
        for table in TABLES:
            expected = _sqlite_rows(source, realm, table)
            assert _pg_rows(pg, realm, table) == expected, (realm, table)
            if realm == "default":
                assert expected, table  # the fixture fills every table
    # A gateway on the copy ranks exactly as the SQLite gateway did, and serves the timeline.
    with MetaRuntime.open(tmp_path / "pg-state", _config(pg), clock=ManualClock()) as copied:
        assert {realm: _recalls(copied, realm) for realm in REALMS} == before
        events = MetaHandle(copied).call("meta/timeline/query", {"limit": 500})["events"]
    strip = [(e["event_type"], e["identity"], e["timestamp_ms"], e["data"]) for e in events_before]
    assert [(e["event_type"], e["identity"], e["timestamp_ms"], e["data"]) for e in events] == strip


def _count(pg: Backend, sql: str) -> int:
    [(n,)] = pg.stored(Path("."), sql)
    return int(n)


def test_a_second_run_copies_nothing_and_a_changed_source_is_refused_not_merged(
    source: Path, pg: Backend, tmp_path: Path
) -> None:
    assert pg.dsn is not None
    state = tmp_path / "state"
    subprocess.run(["cp", "-a", str(source), str(state)], check=True)
    assert _copy(state, pg.dsn).returncode == 0
    counts = {t: _count(pg, f"SELECT count(*) FROM {t}") for t in (*TABLES, "postings", "events")}

    again = _copy(state, pg.dsn)

    assert again.returncode == 0, again.stderr
    assert again.stdout.count("already copied") == 3
    assert {t: _count(pg, f"SELECT count(*) FROM {t}") for t in counts} == counts

    with MetaRuntime.open(state, _config(Backend("sqlite")), clock=ManualClock()) as runtime:
        MetaHandle(runtime).remember_agent_memory("lead", title="Later", body="Written after the copy.")
    changed = _copy(state, pg.dsn)

    assert changed.returncode == 1
    assert (
        "meta_gateway: realm:default not copied:" in changed.stderr and "has changed since" in changed.stderr
    )
    assert _count(pg, "SELECT count(*) FROM records WHERE title = 'Later'") == 0


@pytest.fixture
def spoiled(source: Path, tmp_path: Path) -> Iterator[Path]:
    state = tmp_path / "state"
    subprocess.run(["cp", "-a", str(source), str(state)], check=True)
    yield state


@pytest.mark.parametrize(
    ("spoil", "said"),
    [
        ("UPDATE records SET body = 'tampered' WHERE id = (SELECT min(id) FROM records)", "content hash"),
        (
            "UPDATE records SET description = 'a' || char(0) || 'b' WHERE id = (SELECT min(id) FROM records)",
            "NUL",
        ),
    ],
    ids=["content-hash", "nul"],
)
def test_a_realm_that_cannot_be_copied_whole_is_not_copied_at_all_and_the_others_are(
    spoiled: Path, pg: Backend, spoil: str, said: str
) -> None:
    assert pg.dsn is not None
    with closing(sqlite3.connect(StateLayout.at(spoiled).realm_db_path("default"))) as db, db:
        db.execute(spoil)

    done = _copy(spoiled, pg.dsn)

    assert done.returncode == 1, done.stderr
    [line] = [x for x in done.stderr.splitlines() if "not copied" in x]
    assert line.startswith("meta_gateway: realm:default not copied:") and said in line
    for table in ("records", "audit", "injections", "proposals"):
        assert _count(pg, f"SELECT count(*) FROM {table} WHERE realm = 'default'") == 0
    assert _count(pg, "SELECT count(*) FROM storage_copies WHERE part = 'realm:default'") == 0
    assert _count(pg, "SELECT count(*) FROM records WHERE realm = 'other'") == len(
        _sqlite_rows(spoiled, "other", "records")
    )


def test_a_realm_the_database_already_holds_is_refused_and_left_as_it_was(
    source: Path, pg: Backend, tmp_path: Path
) -> None:
    assert pg.dsn is not None
    with MetaRuntime.open(tmp_path / "gateway", _config(pg), clock=ManualClock()) as runtime:
        MetaHandle(runtime).remember_agent_memory("lead", title="Native", body="Written on PostgreSQL.")

    done = _copy(source, pg.dsn)

    assert done.returncode == 1
    assert "realm:default not copied: realm 'default' already holds" in done.stderr
    assert _count(pg, "SELECT count(*) FROM records WHERE realm = 'default'") == 1
    assert _count(pg, "SELECT count(*) FROM records WHERE realm = 'other'") > 0


def test_a_state_dir_a_gateway_serves_is_refused_before_anything_is_copied(
    source: Path, pg: Backend, tmp_path: Path
) -> None:
    assert pg.dsn is not None
    state = tmp_path / "state"
    subprocess.run(["cp", "-a", str(source), str(state)], check=True)
    with MetaRuntime.open(state, _config(Backend("sqlite")), clock=ManualClock()):
        done = _copy(state, pg.dsn)

    assert done.returncode == 2
    assert "already serves" in done.stderr
    assert pg.stored(state, "SELECT to_regclass('records')") == [(None,)]  # the database was not touched
