"""Factories for the agent-memory tests: handles on real state dirs, a bare realm store, crafted
records for the validator, and a real ``meta_gateway stdio`` subprocess driven line by line."""

from __future__ import annotations

import json
import os
import queue
import shutil
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from meta_memory import Meta, MetaHandle
from meta_memory.clock import ManualClock
from meta_memory.memory.records import (
    APPLICATION,
    Author,
    Provenance,
    Record,
    RecordKind,
    Scope,
    Status,
    Trust,
    content_hash,
)
from meta_memory.memory.sqlite.store import SqliteRealmStore

REALM = "r"


def gateway_command() -> str:
    """The installed ``meta_gateway`` script of this interpreter (PATH only as a fallback)."""
    beside = Path(sys.executable).parent / "meta_gateway"
    found = str(beside) if beside.exists() else shutil.which("meta_gateway")
    assert found, "meta_gateway is not installed"
    return found


@pytest.fixture
def open_handle(state_dir: Path, clock: ManualClock) -> Iterator[Callable[[], MetaHandle]]:
    """Open a fresh runtime on ``state_dir`` (close the previous one first to "restart")."""
    opened: list[MetaHandle] = []

    def open_() -> MetaHandle:
        handle = Meta.builder().persistent_state(state_dir).agent_memory().clock(clock).build()
        opened.append(handle)
        return handle

    yield open_
    for handle in opened:
        handle.close()


@pytest.fixture
def store(tmp_path: Path, clock: ManualClock) -> Iterator[SqliteRealmStore]:
    """A realm store for realm ``"r"`` on a real SQLite file."""
    s = SqliteRealmStore(tmp_path / "r.sqlite3", REALM, clock=clock)
    yield s
    s.close()


@pytest.fixture
def make_record(clock: ManualClock) -> Callable[..., Record]:
    """A valid active record of ``alice`` in realm ``r``; keyword arguments override fields."""
    counter = iter(range(1, 1_000_000))

    def make(memory_id: str | None = None, **fields: Any) -> Record:
        n = next(counter)
        title = fields.pop("title", f"title {n}")
        body = fields.pop("body", f"body {n}")
        values: dict[str, Any] = {
            "id": memory_id or f"rec-{n}",
            "scope": Scope.identity(REALM, "alice"),
            "kind": RecordKind.FACT,
            "title": title,
            "description": "",
            "body": body,
            "tags": (),
            "provenance": Provenance(author=fields.pop("author", APPLICATION)),
            "trust": Trust.AGENT_OBSERVED,
            "status": Status.ACTIVE,
            "created_at_ms": clock.now_ms(),
            "updated_at_ms": clock.now_ms(),
            "content_hash": content_hash(title, body),
        }
        values.update(fields)
        return Record(**values)

    return make


@pytest.fixture
def agent_alice() -> Author:
    return Author("agent", identity="alice")


@pytest.fixture
def sql() -> Callable[[Path, str], list[tuple[Any, ...]]]:
    """Run one read query on a SQLite file with a connection of its own."""

    def run(path: Path, query: str) -> list[tuple[Any, ...]]:
        with closing(sqlite3.connect(path)) as db:
            return db.execute(query).fetchall()

    return run


class StdioGateway:
    """``meta_gateway stdio`` in a subprocess; every read is bounded by a timeout."""

    def __init__(self, state_dir: Path, stderr_path: Path) -> None:
        self._stderr = stderr_path.open("ab")
        self.proc = subprocess.Popen(
            [gateway_command(), "stdio", "--state-dir", str(state_dir)],
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
def stdio_gateway(tmp_path: Path) -> Iterator[Callable[[Path], StdioGateway]]:
    started: list[StdioGateway] = []

    def start(state_dir: Path) -> StdioGateway:
        gateway = StdioGateway(state_dir, tmp_path / "gateway-stderr.log")
        started.append(gateway)
        return gateway

    yield start
    for gateway in started:
        if gateway.proc.returncode is None:
            gateway.close()


@pytest.fixture
def gateway_cmd() -> str:
    return gateway_command()
