"""Shared fixtures: real state directories, a controllable clock, a booted runtime, and real
``meta_gateway stdio`` subprocesses."""

from __future__ import annotations

import faulthandler
import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from meta_memory.clock import ManualClock
from meta_memory.config import DEFAULT_CONFIG, load_config_dict
from meta_memory.runtime import MetaRuntime
from meta_memory.sdk import MetaHandle

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


@pytest.fixture
def runtime(state_dir: Path, clock: ManualClock) -> Iterator[MetaRuntime]:
    rt = MetaRuntime.open(state_dir, load_config_dict(DEFAULT_CONFIG), clock=clock)
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
