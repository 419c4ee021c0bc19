"""Factories for the agent-memory tests: handles on real state dirs, a bare realm store, crafted
records for the validator, and a real ``meta_gateway stdio`` subprocess driven line by line."""

from __future__ import annotations

import sqlite3
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

from ..conftest import BACKENDS, Backend, make_backend

REALM = "r"


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    """Agent memory runs against both backends."""
    yield from make_backend(request.param, request)


@pytest.fixture
def open_handle(state_dir: Path, clock: ManualClock, backend: Backend) -> Iterator[Callable[[], MetaHandle]]:
    """Open a fresh runtime on ``state_dir`` (close the previous one first to "restart")."""
    opened: list[MetaHandle] = []

    def open_() -> MetaHandle:
        builder = Meta.builder().persistent_state(state_dir).agent_memory(**backend.store_config())
        handle = builder.clock(clock).build()
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


@pytest.fixture
def stdio_gateway(start_stdio_gateway: Callable[[list[str]], Any]) -> Callable[[Path], Any]:
    """Start ``meta_gateway stdio`` on a state dir (the shared helper of tests/conftest.py)."""

    def start(state_dir: Path) -> Any:
        return start_stdio_gateway(["--state-dir", str(state_dir)])

    return start
