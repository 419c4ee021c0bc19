"""Shared fixtures: real state directories, a controllable clock, a booted runtime, and real
``meta_gateway stdio`` subprocesses."""

from __future__ import annotations

import contextlib
import faulthandler
import json
import os
import queue
import re
import secrets
import shutil
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from meta_memory.clock import ManualClock
from meta_memory.config import DEFAULT_CONFIG, load_config_dict
from meta_memory.runtime import MetaRuntime
from meta_memory.sdk import MetaHandle
from meta_memory.storage.layout import StateLayout

# Property tests check behaviour, not speed: on a loaded CI machine an example that writes and
# fsyncs real files can take longer than Hypothesis's 200 ms deadline once and not when replayed,
# which Hypothesis reports as a flaky failure. Tests' own @settings still override the rest.
settings.register_profile("meta", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("meta")


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    return tmp_path / "state"


# -- storage backends --------------------------------------------------------------------------
#
# The suites that run against both backends (agent memory, the firewall, review, the steward, the
# panel, the timeline) override ``backend`` with ``params=BACKENDS`` in their conftest; everywhere
# else it is the embedded SQLite default. A PostgreSQL test runs in a schema of its own, created for
# it and dropped after. Without a reachable server the PostgreSQL tests are skipped, with the
# reason; with META_REQUIRE_POSTGRES=1 (.ci/run sets it) they fail instead.

BACKENDS = ["sqlite", "postgres"]
PG_DSN = os.environ.get("META_TEST_POSTGRES_DSN", "postgresql://127.0.0.1:5432/test")


@dataclass
class Backend:
    """The storage backend a test runs on: ``store_config()`` is its ``[agent_memory]`` keys."""

    name: str
    dsn: str | None = None

    @property
    def is_postgres(self) -> bool:
        return self.name == "postgres"

    def store_config(self) -> dict[str, Any]:
        if self.dsn is None:
            return {}
        return {"store": "postgres", "postgres": {"dsn": self.dsn}}

    def stored(
        self, state_dir: Path, query: str, args: tuple[Any, ...] = (), *, realm: str = "default"
    ) -> list[tuple[Any, ...]]:
        """Rows as the store holds them, read on a connection of their own (nothing the runtime
        keeps in memory counts): the realm file's, or the test's PostgreSQL schema's (``?``
        placeholders either way)."""
        if self.dsn is None:
            path = StateLayout.at(state_dir).realm_db_path(realm)
            db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            try:
                return db.execute(query, args).fetchall()
            finally:
                db.close()
        import psycopg

        with psycopg.connect(self.dsn, autocommit=True) as conn:
            return [tuple(row) for row in conn.execute(query.replace("?", "%s"), args).fetchall()]

    @contextmanager
    def db(self, state_dir: Path, *, realm: str = "default") -> Iterator[RawDb]:
        """A connection of the test's own to what the store holds, committed on exit: for checks and
        for rows written behind the validator (``?`` placeholders on either backend)."""
        if self.dsn is None:
            path = StateLayout.at(state_dir).realm_db_path(realm)
            with closing(sqlite3.connect(path)) as conn, conn:
                yield RawDb(conn, None)
            return
        import psycopg

        with psycopg.connect(self.dsn) as conn:
            yield RawDb(conn, realm)

    def config(self, data: dict[str, Any]) -> dict[str, Any]:
        """``data`` (a config mapping) on this backend: its agent memory moved to the store."""
        if self.dsn is None:
            return data
        out = dict(data)
        agent_memory = out.get("agent_memory")
        if agent_memory is None or agent_memory is False:
            return out
        section = {} if agent_memory is True else dict(agent_memory)
        if section.get("enabled", True) is False:
            return out
        out["agent_memory"] = {**section, **self.store_config()}
        return out


_DROPPED = [0]
# Every schema a test creates and drops leaves dead rows in the system catalogs; a server without
# autovacuum (as a test server often is) lets them pile up until every DDL statement slows down
# (measured here: pg_attribute at 2.1 million dead rows, the suite 40% slower). A vacuum of the
# catalogs this often keeps them small.
_RECLAIM_EVERY = 100
_CATALOGS = "pg_catalog.pg_attribute, pg_catalog.pg_class, pg_catalog.pg_depend, pg_catalog.pg_type"


def _reclaim_catalog(admin: Any) -> None:
    _DROPPED[0] += 1
    if _DROPPED[0] % _RECLAIM_EVERY == 0:
        import psycopg

        with contextlib.suppress(psycopg.Error):  # not allowed to: the suite is only slower
            admin.execute(f"VACUUM {_CATALOGS}")


def _postgres_schema() -> Iterator[str]:
    import psycopg

    try:
        admin = psycopg.connect(PG_DSN, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        reason = f"PostgreSQL is not reachable at {PG_DSN} ({type(exc).__name__}): the PostgreSQL tests need a server"
        if os.environ.get("META_REQUIRE_POSTGRES") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    schema = f"t_{secrets.token_hex(6)}"
    with admin:
        admin.execute(f"CREATE SCHEMA {schema}")
        try:
            yield f"{PG_DSN}?options=-csearch_path%3D{schema}"
        finally:
            admin.execute("SET lock_timeout = '10s'")  # a runtime the test leaked must not hang the suite
            admin.execute(f"DROP SCHEMA {schema} CASCADE")
            _reclaim_catalog(admin)


_INSERT = re.compile(r"^\s*INSERT INTO (\w+) \(", re.IGNORECASE)
_REALM_TABLES = {
    "promotions",
    "stage_batches",
    "proposals",
    "audit_verdicts",
    "harvests",
    "dream_runs",
    "injections",
    "audit",
}


class RawDb:
    """One connection to a store, with SQLite's ``?`` placeholders on either backend. On PostgreSQL
    an insert into a table of realm rows gets the realm column (the schema holds every realm)."""

    def __init__(self, conn: Any, realm: str | None) -> None:
        self._conn = conn
        self._realm = realm

    def execute(self, sql: str, args: tuple[Any, ...] | list[Any] = ()) -> Any:
        if self._realm is None:
            return self._conn.execute(sql, args)
        args = tuple(args)
        match = _INSERT.match(sql)
        if match is not None and match.group(1).lower() in _REALM_TABLES:
            sql = _INSERT.sub(lambda m: f"INSERT INTO {m.group(1)} (realm, ", sql, count=1)
            sql = re.sub(r"VALUES \(", "VALUES (?, ", sql, count=1, flags=re.IGNORECASE)
            args = (self._realm, *args)
        return self._conn.execute(sql.replace("?", "%s"), args)

    def executemany(self, sql: str, rows: list[tuple[Any, ...]] | list[list[Any]]) -> None:
        for row in rows:
            self.execute(sql, row)


# Tests of the embedded backend's own files and internals: they run on SQLite only.
SQLITE_ONLY = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)


def make_backend(name: str, request: pytest.FixtureRequest) -> Iterator[Backend]:
    if name == "sqlite":
        yield Backend("sqlite")
        return
    yield from (Backend("postgres", dsn) for dsn in _postgres_schema())


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    """The embedded default; the suites that run on both backends override this fixture."""
    yield from make_backend(getattr(request, "param", "sqlite"), request)


@pytest.fixture
def runtime(state_dir: Path, clock: ManualClock, backend: Backend) -> Iterator[MetaRuntime]:
    rt = MetaRuntime.open(state_dir, load_config_dict(backend.config(DEFAULT_CONFIG)), clock=clock)
    yield rt
    rt.close()


# Generous: a wait returns as soon as its condition holds, and a loaded or single-core CI machine
# can keep background work (an upkeep thread behind a catch-up, a helper process) from running
# for seconds. Checks that something does *not* happen pass a short timeout_s of their own.
EVENTUALLY_S = 30.0


def _eventually(condition: Callable[[], bool], timeout_s: float = EVENTUALLY_S) -> bool:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            if timeout_s >= EVENTUALLY_S:  # background work that never came: say where every thread is
                faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
            return False
        time.sleep(0.01)
    return True


@pytest.fixture
def eventually() -> Callable[..., bool]:
    """``eventually(condition, timeout_s=EVENTUALLY_S)``: poll until background work makes
    ``condition`` true; False if it never does (a bound on waiting, not a timing assertion)."""
    return _eventually


@pytest.fixture
def handle(runtime: MetaRuntime) -> MetaHandle:
    """The in-process Python handle over the runtime fixture (closed with it)."""
    return MetaHandle(runtime)


def gateway_command() -> str:
    """The installed ``meta_gateway`` script of this interpreter (PATH only as a fallback)."""
    beside = Path(sys.executable).parent / "meta_gateway"
    found = str(beside) if beside.exists() else shutil.which("meta_gateway")
    assert found, "meta_gateway is not installed"
    return found


class StdioGateway:
    """``meta_gateway stdio`` in a subprocess; every read is bounded by a timeout."""

    def __init__(self, args: list[str], stderr_path: Path) -> None:
        self._stderr = stderr_path.open("ab")
        self.proc = subprocess.Popen(
            [gateway_command(), "stdio", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        self._lines: queue.Queue[bytes] = queue.Queue()
        self._reader = threading.Thread(target=self._pump, daemon=True)
        self._reader.start()
        self._next_id = 0
        self.handshake = self.read()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(b"")

    def read(self, timeout: float = 20.0) -> dict[str, Any]:
        line = self._lines.get(timeout=timeout)
        assert line, "gateway closed stdout"
        return dict(json.loads(line))

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send one request and return the whole reply (``result`` or ``error``)."""
        assert self.proc.stdin is not None
        self._next_id += 1
        message = {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params}
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()
        reply = self.read()
        assert reply["id"] == self._next_id
        return reply

    def result(self, method: str, params: dict[str, Any] | None = None) -> Any:
        reply = self.request(method, params)
        assert "result" in reply, reply
        return reply["result"]

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs."""
        self.proc.kill()
        self.close()

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        self.proc.wait(timeout=20)
        self._reader.join(timeout=20)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None and not stream.closed:
                stream.close()
        self._stderr.close()


@pytest.fixture
def start_stdio_gateway(tmp_path: Path) -> Iterator[Callable[[list[str]], StdioGateway]]:
    """Start ``meta_gateway stdio <args>``; every gateway started is closed at teardown."""
    started: list[StdioGateway] = []

    def start(args: list[str]) -> StdioGateway:
        gateway = StdioGateway(args, tmp_path / f"gateway-{len(started)}-stderr.log")
        started.append(gateway)
        return gateway

    yield start
    for gateway in started:
        if gateway.proc.returncode is None:
            gateway.close()


@pytest.fixture
def gateway_cmd() -> str:
    return gateway_command()


# -- real servers ---------------------------------------------------------------------------------


def free_port() -> int:
    """A TCP port nothing listens on right now (for a server a test starts)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_until_listening(proc: subprocess.Popen[bytes], port: int, deadline_s: float = 60.0) -> None:
    """Return once ``proc`` accepts connections on ``port``; fail if it exits or never does."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            pass
        try:  # the pause between probes doubles as a check that the server did not die
            status = proc.wait(timeout=0.05)
        except subprocess.TimeoutExpired:
            continue
        raise AssertionError(f"the server exited with status {status} before listening")
    raise AssertionError(f"the server did not listen on port {port} within {deadline_s}s")


@contextmanager
def chat_completions_server(
    respond: Callable[[dict[str, Any]], tuple[int, bytes]], requests: list[dict[str, Any]]
) -> Iterator[str]:
    """A fake OpenAI-compatible chat-completions endpoint on 127.0.0.1 (never the network): each
    POST is appended to ``requests`` (path, headers, JSON body) and answered with ``respond(body)``
    (status, payload). Yields the base URL (``.../v1``)."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            requests.append({"path": self.path, "headers": dict(self.headers), "json": body})
            status, payload = respond(body)
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
