"""Security fixtures: real ``meta_gateway serve`` processes on ports of their own, configured with
the tokens and boundary settings a test names, and raw HTTP access to them (httpx with exactly
the headers a test gives, and bare sockets for what httpx would not send)."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from meta_memory.access import hash_token

from ..conftest import free_port, gateway_command
from ..console.conftest import browser  # noqa: F401  (the module-scoped Chromium fixture, shared)

DEADLINE_S = 60.0
CONSOLE_TOKEN = "console-token-1"
APP_TOKEN = "app-token-1"
TENANT_TOKEN = "tenant-a-token"
OTHER_TENANT_TOKEN = "tenant-b-token"

TOKENS_TOML = f"""
[agent_memory]
llm_writes = "quarantined"

[[console.auth.tokens]]
token_sha256 = "{hash_token(CONSOLE_TOKEN)}"
subject = "ops"

[[rpc.auth.tokens]]
token_sha256 = "{hash_token(APP_TOKEN)}"
subject = "app"

[[rpc.auth.tokens]]
token_sha256 = "{hash_token(TENANT_TOKEN)}"
subject = "tenant-a"
realms = ["tenant-a"]

[[rpc.auth.tokens]]
token_sha256 = "{hash_token(OTHER_TENANT_TOKEN)}"
subject = "tenant-b"
realms = ["tenant-b"]
"""


@dataclass
class Served:
    """One ``meta_gateway serve`` process."""

    proc: subprocess.Popen[bytes]
    port: int
    state_dir: Path
    stderr_path: Path
    host: str = "127.0.0.1"  # where to connect to it

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def client(self, **headers: str) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=DEADLINE_S, headers=headers)

    def post(
        self,
        path: str,
        body: Any,
        *,
        token: str | None = None,
        content_type: str = "application/json",
        **headers: str,
    ) -> httpx.Response:
        """POST ``body`` (JSON-encoded unless bytes) with exactly these headers."""
        sent = {"content-type": content_type, **{k.replace("_", "-"): v for k, v in headers.items()}}
        if token is not None:
            sent["authorization"] = f"Bearer {token}"
        content = body if isinstance(body, bytes) else json.dumps(body).encode()
        with httpx.Client(base_url=self.url, timeout=DEADLINE_S) as http:
            return http.post(path, content=content, headers=sent)

    def rpc(self, method: str, params: Any = None, *, path: str = "/rpc", token: str | None = None) -> Any:
        """A JSON-RPC call that must reach the dispatcher (HTTP 200); returns the reply object."""
        response = self.post(
            path, {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, token=token
        )
        assert response.status_code == 200, (response.status_code, response.text)
        return response.json()

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.terminate()
        return self.proc.wait(timeout=DEADLINE_S)


def wait_listening(proc: subprocess.Popen[bytes], port: int, host: str = "127.0.0.1") -> None:
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=1):
                return
        except OSError:
            pass
        try:
            status = proc.wait(timeout=0.05)
        except subprocess.TimeoutExpired:
            continue
        raise AssertionError(f"serve exited with status {status} before listening")
    raise AssertionError(f"serve did not listen on port {port} within {DEADLINE_S}s")


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., Served]]:
    """``serve(config_toml=None, *extra_args)``: start ``meta_gateway serve`` and wait until it
    listens; every process is stopped at teardown."""
    started: list[Served] = []

    def start(config_toml: str | None = None, *extra: str, host: str = "127.0.0.1") -> Served:
        n = len(started)
        state = tmp_path / f"state-{n}"
        args = [gateway_command(), "serve", "--state-dir", str(state), "--host", host]
        if config_toml is not None:
            config = tmp_path / f"config-{n}.toml"
            config.write_text(config_toml)
            args += ["--config", str(config)]
        port = free_port()
        stderr_path = tmp_path / f"serve-{n}.log"
        with stderr_path.open("wb") as err:
            proc = subprocess.Popen(
                [*args, "--port", str(port), *extra], stdout=subprocess.DEVNULL, stderr=err
            )
        connect = "127.0.0.1" if host in ("0.0.0.0", "::", "localhost") else host
        served = Served(proc, port, state, stderr_path, connect)
        started.append(served)
        wait_listening(proc, port, connect)
        return served

    yield start
    for served in started:
        if served.proc.poll() is None:
            served.proc.kill()
            served.proc.wait(timeout=DEADLINE_S)
