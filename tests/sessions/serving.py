"""Real ``meta_gateway serve`` processes for the host-session tests: one on a state dir and config
of the test's choosing (so it can be killed and restarted), spoken to over real HTTP."""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ..conftest import free_port, gateway_command
from ..security.conftest import DEADLINE_S, wait_listening

__all__ = ["Gateway", "start_gateways"]


class Gateway:
    """One ``meta_gateway serve`` on a state dir of the test's choosing (so it can be restarted)."""

    def __init__(self, state_dir: Path, config: Path, log: Path) -> None:
        self.port = free_port()
        with log.open("ab") as err:
            self.proc = subprocess.Popen(
                [
                    gateway_command(),
                    "serve",
                    "--state-dir",
                    str(state_dir),
                    "--config",
                    str(config),
                    "--port",
                    str(self.port),
                ],
                stdout=subprocess.DEVNULL,
                stderr=err,
            )
        wait_listening(self.proc, self.port)
        self.http = httpx.Client(base_url=f"http://127.0.0.1:{self.port}", timeout=DEADLINE_S)

    def call(
        self, method: str, params: dict[str, Any], *, token: str | None = None, console: bool = False
    ) -> dict[str, Any]:
        """The JSON-RPC reply object (``result`` or ``error``), from the application surface or
        (``console``) the console's."""
        headers = {"authorization": f"Bearer {token}"} if token else {}
        response = self.http.post(
            "/console/rpc" if console else "/rpc",
            json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
            headers=headers,
        )
        assert response.status_code == 200, response.text
        reply: dict[str, Any] = response.json()
        return reply

    def result(
        self, method: str, params: dict[str, Any], *, token: str | None = None, console: bool = False
    ) -> Any:
        reply = self.call(method, params, token=token, console=console)
        assert "result" in reply, reply
        return reply["result"]

    def kill(self) -> None:
        self.http.close()
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=DEADLINE_S)

    def stop(self) -> None:
        self.http.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=DEADLINE_S)


@pytest.fixture(name="start")
def start_gateways(tmp_path: Path) -> Iterator[Callable[..., Gateway]]:
    """``start(state_dir, config_toml)``: a gateway, stopped at teardown."""
    started: list[Gateway] = []

    def run(state_dir: Path, config_toml: str) -> Gateway:
        config = tmp_path / f"config-{len(started)}.toml"
        config.write_text(config_toml)
        gateway = Gateway(state_dir, config, tmp_path / "serve.log")
        started.append(gateway)
        return gateway

    yield run
    for gateway in started:
        gateway.http.close()
        if gateway.proc.poll() is None:
            gateway.proc.kill()
            gateway.proc.wait(timeout=DEADLINE_S)
