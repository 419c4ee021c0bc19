"""Observability fixtures: real ``meta_gateway`` processes started with the arguments and environment a
test names (stderr kept in a file, to read back as log lines), Prometheus text parsed into samples,
and in-process apps over the real Starlette app for the quick checks."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from starlette.testclient import TestClient

from meta_memory.access import hash_token
from meta_memory.config import load_config_dict
from meta_memory.gateway.http import build_app
from meta_memory.runtime import MetaRuntime

from ..conftest import free_port, gateway_command, wait_until_listening

DEADLINE_S = 60.0
CONSOLE_TOKEN = "console-token-obs-1"
APP_TOKEN = "app-token-obs-1"
METRICS_TOKEN = "metrics-token-obs-1"

TOKENS_TOML = f"""
[memory]
kind = "local_json"

[agent_memory]

[[console.auth.tokens]]
token_sha256 = "{hash_token(CONSOLE_TOKEN)}"
subject = "ops"

[[rpc.auth.tokens]]
token_sha256 = "{hash_token(APP_TOKEN)}"
subject = "app"
"""

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def samples(text: str) -> Samples:
    """Every sample of a Prometheus exposition, by (sample name, labels)."""
    out: Samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, frozenset(s.labels.items()))] = s.value
    return out


def sample(found: Samples, name: str, **labels: str) -> float | None:
    return found.get((name, frozenset(labels.items())))


def env_without_meta(**extra: str) -> dict[str, str]:
    """This process's environment without META_* defaults of its own, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("META_")}
    return {**env, "PYTHONUNBUFFERED": "1", **extra}


@dataclass
class Gateway:
    """One ``meta_gateway serve``."""

    proc: subprocess.Popen[bytes]
    port: int
    stderr_path: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def http(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=DEADLINE_S)

    def post(
        self, method: str, params: Any = None, *, token: str | None = None, path: str = "/rpc"
    ) -> httpx.Response:
        """One JSON-RPC request over HTTP, whatever the status."""
        headers = {"authorization": f"Bearer {token}"} if token is not None else {}
        with self.http() as http:
            return http.post(
                path, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, headers=headers
            )

    def rpc(self, method: str, params: Any = None, *, token: str | None = None, path: str = "/rpc") -> Any:
        """A JSON-RPC call that must reach the dispatcher (HTTP 200); its reply object."""
        reply = self.post(method, params, token=token, path=path)
        assert reply.status_code == 200, (reply.status_code, reply.text)
        return reply.json()

    def stop(self) -> str:
        """SIGTERM, wait, and return everything it wrote to stderr."""
        if self.proc.poll() is None:
            self.proc.terminate()
        assert self.proc.wait(timeout=DEADLINE_S) == 0
        return self.stderr_path.read_text(errors="replace")


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., Gateway]]:
    """``serve(*args, config=None, env=None)``: ``meta_gateway serve --state-dir <tmp> <args>`` on a
    free port (unless ``env`` names META_PORT), waited for until it listens; killed at teardown."""
    started: list[Gateway] = []

    def start(*args: str, config: str | None = None, env: dict[str, str] | None = None) -> Gateway:
        n = len(started)
        argv = [gateway_command(), "serve", *args]
        environment = env_without_meta(**(env or {}))
        if "META_STATE_DIR" not in environment and "--state-dir" not in args:
            argv += ["--state-dir", str(tmp_path / f"state-{n}")]
        if config is not None:
            path = tmp_path / f"config-{n}.toml"
            path.write_text(config)
            argv += ["--config", str(path)]
        port = int(environment.get("META_PORT", 0)) or free_port()
        if "META_PORT" not in environment and "--port" not in args:
            argv += ["--port", str(port)]
        stderr_path = tmp_path / f"serve-{n}.log"
        with stderr_path.open("wb") as err:
            proc = subprocess.Popen(
                argv, stdout=subprocess.DEVNULL, stderr=err, env=environment, cwd=tmp_path
            )
        gateway = Gateway(proc, port, stderr_path)
        started.append(gateway)
        wait_until_listening(proc, port)
        return gateway

    yield start
    for gateway in started:
        if gateway.proc.poll() is None:
            gateway.proc.kill()
            gateway.proc.wait(timeout=DEADLINE_S)


@dataclass(frozen=True)
class Ran:
    status: int
    stdout: str
    stderr: str


def run_stdio(
    state_dir: Path, *args: str, lines: Sequence[dict[str, Any]] = (), env: dict[str, str] | None = None
) -> Ran:
    """``meta_gateway stdio`` with these request lines on stdin, to its exit at end of input."""
    argv = [gateway_command(), "stdio", *args]
    if "--state-dir" not in args and "META_STATE_DIR" not in (env or {}):
        argv += ["--state-dir", str(state_dir)]
    done = subprocess.run(
        argv,
        input=b"".join(json.dumps(line).encode() + b"\n" for line in lines),
        capture_output=True,
        timeout=DEADLINE_S,
        env=env_without_meta(**(env or {})),
        cwd=state_dir.parent,  # a default state dir (.meta/state) lands in the test's directory
    )
    return Ran(done.returncode, done.stdout.decode(), done.stderr.decode())


def request(method: str, params: Any = None, id: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": params}


@pytest.fixture
def app_client(tmp_path: Path) -> Iterator[Callable[..., TestClient]]:
    """``app_client(config=None)``: a TestClient over the real app on a booted runtime (default config
    when ``None``), closed at teardown."""
    with contextlib.ExitStack() as cleanup:

        def start(config: dict[str, Any] | None = None, **client: Any) -> TestClient:
            n = len(list(tmp_path.glob("app-state-*")))
            runtime = MetaRuntime.open(
                tmp_path / f"app-state-{n}", None if config is None else load_config_dict(config)
            )
            cleanup.callback(runtime.close)
            test_client = TestClient(
                build_app(runtime, on_shutdown=runtime.close), base_url="http://127.0.0.1:8765", **client
            )
            cleanup.enter_context(test_client)
            return test_client

        yield start
