"""Factories for the host-session tests: in-process handles with chosen agent-memory options, a
reader for the runtime's events, and a real ``meta_gateway stdio`` subprocess with a config file."""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from meta_memory import Meta, MetaHandle
from meta_memory.clock import ManualClock
from meta_memory.sdk import MemoryToolResult

OpenMeta = Callable[..., MetaHandle]


@pytest.fixture
def open_meta(tmp_path: Path, clock: ManualClock) -> Iterator[OpenMeta]:
    """Build a handle on a fresh state dir; keyword arguments go to ``.agent_memory(...)``."""
    opened: list[MetaHandle] = []

    def open_(**agent_memory: Any) -> MetaHandle:
        state = tmp_path / f"state-{len(opened)}"
        handle = Meta.builder().persistent_state(state).agent_memory(**agent_memory).clock(clock).build()
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
        self.handshake = self._read()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(b"")

    def _read(self, timeout: float = 20.0) -> dict[str, Any]:
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
        reply = self._read()
        assert reply["id"] == self._next_id
        return reply

    def result(self, method: str, params: dict[str, Any] | None = None) -> Any:
        reply = self.request(method, params)
        assert "result" in reply, reply
        return reply["result"]

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
def stdio_gateway(tmp_path: Path) -> Iterator[Callable[[str], StdioGateway]]:
    """Start ``meta_gateway stdio`` on a fresh state dir with the given TOML config text."""
    started: list[StdioGateway] = []

    def start(config_toml: str) -> StdioGateway:
        n = len(started)
        config = tmp_path / f"gateway-{n}.toml"
        config.write_text(config_toml, encoding="utf-8")
        args = ["--state-dir", str(tmp_path / f"gateway-state-{n}"), "--config", str(config)]
        gateway = StdioGateway(args, tmp_path / f"gateway-{n}-stderr.log")
        started.append(gateway)
        return gateway

    yield start
    for gateway in started:
        gateway.close()
