"""Factories for the host-session tests: in-process handles with chosen agent-memory options, a
reader for the runtime's events, and a real ``meta_gateway stdio`` subprocess with a config file."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from meta_memory import Meta, MetaHandle
from meta_memory.clock import ManualClock
from meta_memory.sdk import MemoryToolResult

from ..conftest import BACKENDS, Backend, make_backend
from .serving import start_gateways  # noqa: F401 (the fixture `start`: real gateway processes)

OpenMeta = Callable[..., MetaHandle]
# The mob the sessions' proposals go to: alice and bob work in it, carol in none.
TEAM = ({"identity": "alice", "mob": "team"}, {"identity": "bob", "mob": "team"})


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    """Host sessions and the firewall run against both backends."""
    yield from make_backend(request.param, request)


@pytest.fixture
def open_meta(tmp_path: Path, clock: ManualClock, backend: Backend) -> Iterator[OpenMeta]:
    """Build a handle on a fresh state dir; keyword arguments go to ``.agent_memory(...)``."""
    opened: list[MetaHandle] = []

    def open_(**agent_memory: Any) -> MetaHandle:
        state = tmp_path / f"state-{len(opened)}"
        # A recall budget no loaded machine misses: these tests are about what a turn injects (the
        # budget is tests/agent_memory's), and a loaded CI machine took over 500 ms on a first turn.
        options = {"recall_timeout_ms": 30_000, **backend.store_config(), **agent_memory}
        builder = Meta.builder().persistent_state(state).agent_memory(**options).clock(clock)
        handle = builder.roster(*TEAM).build()
        opened.append(handle)
        return handle

    yield open_
    for handle in opened:
        handle.close()


@pytest.fixture
def meta(open_meta: OpenMeta) -> MetaHandle:
    """The default posture: ``llm_writes = "observed"``."""
    return open_meta(llm_writes="observed")


@pytest.fixture
def events_of() -> Callable[[MetaHandle, str], list[dict[str, Any]]]:
    """Every envelope of one event type the handle's runtime emitted so far, oldest first."""

    def read(meta: MetaHandle, event_type: str) -> list[dict[str, Any]]:
        sink: Any = meta.runtime.events  # the bundled sinks (in-memory window, timeline) both read back
        return list(sink.events(event_type))

    return read


@pytest.fixture
def id_of() -> Callable[[MemoryToolResult], str]:
    """The new record id a ``remember``/``update`` confirmation names (its last ``mem-`` word)."""

    def find(result: MemoryToolResult) -> str:
        ids = [w.strip(".,:;") for w in result.content.split() if w.startswith("mem-")]
        assert ids, result.content
        return ids[-1]

    return find


@pytest.fixture
def status_of() -> Callable[[MetaHandle, str], str]:
    """A record's stored status: ``active``, ``quarantined``, ``superseded`` or ``tombstoned``."""

    def read(meta: MetaHandle, memory_id: str) -> str:
        assert meta.runtime.agent_memory is not None
        record = meta.runtime.agent_memory.store(meta.runtime.config.agent_memory.realm).get(memory_id)
        assert record is not None, memory_id
        return record.status.value

    return read


@pytest.fixture
def stdio_gateway(tmp_path: Path, start_stdio_gateway: Callable[[list[str]], Any]) -> Callable[[str], Any]:
    """Start ``meta_gateway stdio`` on a fresh state dir with the given TOML config text."""
    count = 0

    def start(config_toml: str) -> Any:
        nonlocal count
        config = tmp_path / f"gateway-{count}.toml"
        config.write_text(config_toml, encoding="utf-8")
        args = ["--state-dir", str(tmp_path / f"gateway-state-{count}"), "--config", str(config)]
        count += 1
        return start_stdio_gateway(args)

    return start
