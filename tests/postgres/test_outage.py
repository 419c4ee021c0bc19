"""When the database goes away: a write is refused with StoreUnavailable (-32014) within the pool's
timeout and applies nothing, a turn is not held (it goes on without a memory block), a read whose
connection dies is retried once on a fresh one, and when the server is back the same gateway serves
again without a restart, with everything it acknowledged. The server is never stopped: a relay
between gateway and server is cut, or the server ends one of the gateway's connections
(``pg_terminate_backend``) while the call is blocked on a lock the test holds."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import psycopg
import pytest

from meta_memory.clock import ManualClock
from meta_memory.config import load_config_dict
from meta_memory.errors import MetaError, StoreUnavailable
from meta_memory.memory.postgres.connect import APPLICATION_NAME
from meta_memory.memory.postgres.store import realm_lock_key
from meta_memory.runtime import MetaRuntime
from meta_memory.sdk import MetaHandle

from ..conftest import Backend
from .conftest import Relay, dsn_through

DEADLINE_S = 60.0


def _open(state: Path, dsn: str, **postgres: Any) -> MetaRuntime:
    config = {"agent_memory": {"enabled": True, "store": "postgres", "postgres": {"dsn": dsn, **postgres}}}
    return MetaRuntime.open(state, load_config_dict(config), clock=ManualClock())


@pytest.fixture
def pool() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(max_workers=2) as executor:
        yield executor


def _titles(pg: Backend, tmp_path: Path) -> list[str]:
    return sorted(t for (t,) in pg.stored(tmp_path, "SELECT title FROM records"))


def _refusal(future: Future[Any]) -> MetaError:
    with pytest.raises(MetaError) as refused:
        future.result(timeout=DEADLINE_S)  # returns, refused, well within the deadline
    return refused.value


def test_an_outage_refuses_writes_does_not_hold_turns_and_the_same_gateway_recovers(
    pg: Backend, relay: Callable[[], Relay], pool: ThreadPoolExecutor, tmp_path: Path
) -> None:
    assert pg.dsn is not None
    link = relay()
    with _open(tmp_path / "state", dsn_through(pg.dsn, link.port), timeout_s=2) as runtime:
        meta = MetaHandle(runtime)
        acknowledged = [
            meta.remember_agent_memory("alice", title=f"Fact {n}", body=f"Deploys happen on day {n}.").title
            for n in range(5)
        ]
        session = meta.open_session("alice")

        link.cut()
        write = _refusal(pool.submit(meta.remember_agent_memory, "alice", title="Lost", body="Never stored."))
        assert isinstance(write, StoreUnavailable) and write.code == -32014
        assert write.data == {"kind": "store_unavailable"}
        assert "psycopg" not in write.message and "127.0.0.1" not in write.message
        recall = _refusal(pool.submit(meta.recall_agent_memory, "alice", query_text="deploys"))
        assert isinstance(recall, StoreUnavailable)
        # A turn goes on without its memory block (recall_failure_policy = "skip").
        text, injected = pool.submit(session.turn, "when do deploys happen?").result(timeout=DEADLINE_S)
        assert injected == [] and "Agent memory" not in (text or "")

        link.restore()
        after = meta.remember_agent_memory("alice", title="After", body="Stored once the server is back.")
        recalled = meta.recall_agent_memory("alice", query_text="deploys day", max_entries=10)

    assert after.title == "After"
    assert sorted(r.title for r in recalled) == sorted(acknowledged)
    assert _titles(pg, tmp_path) == sorted([*acknowledged, "After"])  # nothing lost, "Lost" never applied


def _blocked_backend(admin: psycopg.Connection, wait_event_type: str, *, other_than: int = 0) -> int:
    """The pid of the gateway's connection waiting on a lock (polled until it is), other than
    ``other_than`` (a backend just terminated may still be listed for a moment)."""
    for _ in range(int(DEADLINE_S / 0.02)):
        row = admin.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = %s AND wait_event_type = %s "
            "AND datname = current_database() AND pid <> %s",
            (APPLICATION_NAME, wait_event_type, other_than),
        ).fetchone()
        if row is not None:
            return int(row[0])
        threading.Event().wait(0.02)
    raise AssertionError("the gateway's call never blocked on the test's lock")


def test_a_write_whose_connection_dies_mid_transaction_is_refused_and_applies_nothing(
    pg: Backend, admin: psycopg.Connection, pool: ThreadPoolExecutor, tmp_path: Path
) -> None:
    assert pg.dsn is not None
    with _open(tmp_path / "state", pg.dsn) as runtime:
        meta = MetaHandle(runtime)
        meta.remember_agent_memory("alice", title="Before", body="Stored first.")
        (schema,) = admin.execute("SELECT current_schema()").fetchone() or ("",)
        admin.execute("SELECT pg_advisory_lock(%s)", (realm_lock_key(schema, "default"),))
        try:
            write = pool.submit(
                meta.remember_agent_memory, "alice", title="Doomed", body="Its connection dies."
            )
            pid = _blocked_backend(admin, "Lock")  # inside the write's transaction, at the realm lock
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
            refused = _refusal(write)
        finally:
            admin.execute("SELECT pg_advisory_unlock_all()")
        assert isinstance(refused, StoreUnavailable)
        meta.remember_agent_memory("alice", title="After", body="The pool hands out a healthy connection.")

    assert _titles(pg, tmp_path) == ["After", "Before"]


def test_a_read_whose_connection_dies_is_retried_once_on_a_fresh_connection(
    pg: Backend, pool: ThreadPoolExecutor, tmp_path: Path
) -> None:
    assert pg.dsn is not None
    with _open(tmp_path / "state", pg.dsn) as runtime, psycopg.connect(pg.dsn, autocommit=True) as admin:
        meta = MetaHandle(runtime)
        made = meta.remember_agent_memory("alice", title="Kept", body="Read back after a retry.")
        assert runtime.agent_memory is not None
        store = runtime.agent_memory.store("default")
        with psycopg.connect(pg.dsn) as locker:  # holds the table until the first read is gone
            locker.execute("LOCK TABLE records IN ACCESS EXCLUSIVE MODE")
            read = pool.submit(store.get, made.memory_id)
            first = _blocked_backend(admin, "Lock")
            admin.execute("SELECT pg_terminate_backend(%s)", (first,))
            _blocked_backend(admin, "Lock", other_than=first)  # the retry, on another connection
            locker.rollback()  # the lock goes; the retry reads
        record = read.result(timeout=DEADLINE_S)

    assert record is not None and record.id == made.memory_id and record.title == "Kept"


def test_a_gateway_whose_listener_lost_the_server_catches_up_on_the_events_it_missed(
    pg: Backend, relay: Callable[[], Relay], tmp_path: Path
) -> None:
    assert pg.dsn is not None
    link = relay()
    with (
        _open(tmp_path / "a", dsn_through(pg.dsn, link.port), timeout_s=2) as a,
        _open(tmp_path / "b", pg.dsn) as b,
    ):
        heard: list[dict[str, Any]] = []
        got = threading.Condition()

        def listen(event: dict[str, Any]) -> None:
            with got:
                heard.append(event)
                got.notify_all()

        def wait_for(n: int) -> list[str]:
            with got:
                assert got.wait_for(lambda: len(heard) >= n, timeout=DEADLINE_S), heard
                return [e["data"]["n"] for e in heard]

        a.events.subscribe(listen)
        b.events.emit("memory.test", {"n": 1})
        assert wait_for(1) == [1]

        link.cut()
        b.events.emit("memory.test", {"n": 2})
        b.events.emit("memory.test", {"n": 3})
        link.restore()

        assert wait_for(3) == [1, 2, 3]  # in commit order, once each
        b.events.emit("memory.test", {"n": 4})
        assert wait_for(4) == [1, 2, 3, 4]
