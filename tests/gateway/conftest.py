"""Gateway fixtures: the installed ``meta_gateway`` command, real stdio sessions (every read has a
deadline), boot-refusal runs, and in-process HTTP clients over the Starlette app."""

from __future__ import annotations

import contextlib
import json
import queue
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pytest
from starlette.testclient import TestClient

from meta_memory.config import load_config_dict
from meta_memory.gateway.http import build_app
from meta_memory.runtime import MetaRuntime

# Generous: the interpreter alone takes a second or two to import everything on a busy machine.
DEADLINE_S = 60.0


def gateway_command() -> list[str]:
    """The installed console script of *this* interpreter (not a shim), else the same entry point."""
    beside = Path(sys.executable).with_name("meta_gateway")
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("meta_gateway")
    return [found] if found else [sys.executable, "-c", "from meta_memory.cli import main; main()"]


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def strict_json(line: bytes | str) -> Any:
    """Parse one wire line as strict JSON (no NaN/Infinity), failing loudly on anything else."""
    return json.loads(line, parse_constant=_no_constants)


def request(method: str, params: Any = None, *, id: Any = 1) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return message


class StdioGateway:
    """One real ``meta_gateway stdio`` process. Stdout is read by a thread into a queue, so a missing
    reply fails the test at the deadline instead of hanging it; stderr goes to a file."""

    def __init__(self, state_dir: Path, extra_args: list[str], stderr_path: Path) -> None:
        self.stderr_path = stderr_path
        self._stderr: IO[bytes] = stderr_path.open("wb")
        self.proc = subprocess.Popen(
            [*gateway_command(), "stdio", "--state-dir", str(state_dir), *extra_args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
        )
        self.handshake: Any = None
        self.transcript: list[bytes] = []
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read_stdout, daemon=True)
        self._reader.start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.transcript.append(line)
            self._lines.put(line)
        self._lines.put(None)

    def read_line(self) -> bytes:
        try:
            line = self._lines.get(timeout=DEADLINE_S)
        except queue.Empty:
            raise AssertionError(f"no line from the gateway within {DEADLINE_S}s") from None
        if line is None:
            raise AssertionError(f"gateway closed stdout; stderr:\n{self.stderr_text()}")
        return line

    def read(self) -> Any:
        return strict_json(self.read_line())

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: Any) -> None:
        self.send_raw(json.dumps(message).encode() + b"\n")

    def call(self, method: str, params: Any = None, *, id: Any = 1) -> dict[str, Any]:
        """One request, one reply (which must carry the same id)."""
        self.send(request(method, params, id=id))
        reply: dict[str, Any] = self.read()
        assert reply.get("id") == id, reply
        return reply

    def close(self) -> int:
        """Close stdin (EOF ends the loop) and wait for the exit status."""
        assert self.proc.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            self.proc.stdin.close()
        return self.wait()

    def signal(self, signum: int = signal.SIGTERM) -> int:
        self.proc.send_signal(signum)
        return self.wait()

    def wait(self) -> int:
        status = self.proc.wait(timeout=DEADLINE_S)
        self._reader.join(timeout=DEADLINE_S)
        return status

    def remaining_lines(self) -> list[bytes]:
        """Every stdout line not read yet (only meaningful after the process exited)."""
        lines: list[bytes] = []
        while (line := self._lines.get(timeout=DEADLINE_S)) is not None:
            lines.append(line)
        return lines

    def stderr_text(self) -> str:
        self._stderr.flush()
        return self.stderr_path.read_text(errors="replace")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=DEADLINE_S)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        self._stderr.close()


@pytest.fixture(scope="session")
def launch_stdio() -> Callable[..., StdioGateway]:
    """Start a gateway and wait for its handshake line (returned as ``.handshake``)."""

    def launch(state_dir: Path, *extra_args: str, stderr_path: Path, handshake: bool = True) -> StdioGateway:
        gateway = StdioGateway(state_dir, list(extra_args), stderr_path)
        if handshake:
            gateway.handshake = gateway.read()
        return gateway

    return launch


@pytest.fixture
def stdio_gateway(
    launch_stdio: Callable[..., StdioGateway], tmp_path: Path
) -> Iterator[Callable[..., StdioGateway]]:
    """Factory: ``stdio_gateway(state_dir, "--config", path)``; every process is reaped at teardown."""
    started: list[StdioGateway] = []

    def start(state_dir: Path, *extra_args: str, handshake: bool = True) -> StdioGateway:
        stderr_path = tmp_path / f"stderr-{len(started)}.log"
        gateway = launch_stdio(state_dir, *extra_args, stderr_path=stderr_path, handshake=handshake)
        started.append(gateway)
        return gateway

    yield start
    for gateway in started:
        gateway.kill()


@dataclass(frozen=True)
class Run:
    status: int
    stdout: str
    stderr: str


@pytest.fixture(scope="session")
def run_gateway() -> Callable[..., Run]:
    """Run ``meta_gateway <args>`` to completion with empty stdin."""

    def run(*args: str) -> Run:
        done = subprocess.run(
            [*gateway_command(), *args], stdin=subprocess.DEVNULL, capture_output=True, timeout=DEADLINE_S
        )
        return Run(done.returncode, done.stdout.decode(), done.stderr.decode())

    return run


@pytest.fixture(scope="session")
def gateway_argv() -> list[str]:
    return gateway_command()


@pytest.fixture(scope="session")
def wire_json() -> Callable[[bytes | str], Any]:
    """The strict wire parser: JSON only, no NaN / Infinity."""
    return strict_json


@pytest.fixture
def write_config(tmp_path: Path) -> Callable[[str], Path]:
    """Write a TOML config file and return its path."""

    def write(text: str) -> Path:
        path = tmp_path / f"config-{len(list(tmp_path.glob('config-*.toml')))}.toml"
        path.write_text(text)
        return path

    return write


@pytest.fixture
def http_gateway(tmp_path: Path) -> Iterator[Callable[..., TestClient]]:
    """Factory: a TestClient over the real Starlette app on a booted runtime.

    Use it as ``with http_gateway(state_dir, config) as client:``; leaving the block runs the app's
    shutdown, which closes the runtime and releases the state dir.
    """
    with contextlib.ExitStack() as cleanup:

        def start(state_dir: Path | None = None, config: dict[str, Any] | None = None) -> TestClient:
            runtime = MetaRuntime.open(
                state_dir or tmp_path / "state", None if config is None else load_config_dict(config)
            )
            cleanup.callback(runtime.close)
            app = build_app(runtime, on_shutdown=runtime.close)
            return TestClient(app, base_url="http://127.0.0.1:8765")

        yield start


@pytest.fixture
def rpc() -> Callable[..., dict[str, Any]]:
    """POST one JSON-RPC request through a TestClient and return the decoded reply."""

    def call(
        client: TestClient, method: str, params: Any = None, *, path: str = "/rpc", id: Any = 1
    ) -> dict[str, Any]:
        response = client.post(path, json=request(method, params, id=id))
        assert response.status_code == 200, response.text
        reply: dict[str, Any] = strict_json(response.content)
        return reply

    return call
