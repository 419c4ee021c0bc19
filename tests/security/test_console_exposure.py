"""A console with no console token beside application tokens: with ``[[rpc.auth.tokens]]`` and no
``[[console.auth.tokens]]``, neither ``meta_gateway serve`` nor the app factory lets the console,
its timeline stream or ``GET /metrics`` answer tokenless callers (any local process, the agent
host included, would review its own quarantine), unless ``[console.auth] allow_anonymous = true``
opens it on purpose, which logs a warning at startup; ``allow_anonymous = false`` closes it."""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from meta_memory.access import hash_token
from meta_memory.config import load_config_dict
from meta_memory.errors import ConfigError
from meta_memory.gateway.http import build_app
from meta_memory.runtime import MetaRuntime

from ..conftest import free_port, gateway_command
from .conftest import APP_TOKEN, DEADLINE_S, Served

RPC_ONLY = f"""
[[rpc.auth.tokens]]
token_sha256 = "{hash_token(APP_TOKEN)}"
subject = "app"
"""
APP = {"token_sha256": hash_token(APP_TOKEN), "subject": "app"}
STATUS = {"jsonrpc": "2.0", "id": 1, "method": "meta/status"}


def open_runtime(tmp_path: Path, config: dict[str, Any]) -> MetaRuntime:
    return MetaRuntime.open(tmp_path / "state", load_config_dict(config))


def test_the_app_factory_refuses_application_tokens_beside_a_tokenless_console(tmp_path: Path) -> None:
    runtime = open_runtime(tmp_path, {"rpc": {"auth": {"tokens": [APP]}}})
    try:
        with pytest.raises(ConfigError) as refused:
            build_app(runtime)
    finally:
        runtime.close()
    assert "[[console.auth.tokens]]" in refused.value.message
    assert "allow_anonymous" in refused.value.message and "[[rpc.auth.tokens]]" in refused.value.message


def test_a_scrape_token_alone_does_not_close_the_console(tmp_path: Path) -> None:
    metrics = {"token_sha256": hash_token("scrape-token")}
    runtime = open_runtime(tmp_path, {"rpc": {"auth": {"tokens": [APP]}}, "metrics": metrics})
    try:
        with pytest.raises(ConfigError, match=r"\[\[console.auth.tokens\]\]"):
            build_app(runtime)
    finally:
        runtime.close()


def test_an_explicitly_open_console_is_served_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = {"rpc": {"auth": {"tokens": [APP]}}, "console": {"auth": {"allow_anonymous": True}}}
    runtime = open_runtime(tmp_path, config)
    with caplog.at_level(logging.WARNING, logger="meta_memory.gateway.http"):
        app = build_app(runtime, on_shutdown=runtime.close)
    [warning] = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert "allow_anonymous = true" in warning.getMessage() and "/metrics" in warning.getMessage()
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        assert client.post("/console/rpc", json=STATUS).status_code == 200
        assert client.get("/metrics").status_code == 200
        assert client.post("/rpc", json=STATUS).status_code == 401


def test_a_closed_console_needs_nothing_more(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    config = {"rpc": {"auth": {"tokens": [APP]}}, "console": {"auth": {"allow_anonymous": False}}}
    runtime = open_runtime(tmp_path, config)
    with caplog.at_level(logging.WARNING, logger="meta_memory.gateway.http"):
        app = build_app(runtime, on_shutdown=runtime.close)
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        assert client.post("/console/rpc", json=STATUS).status_code == 401
        assert client.get("/console/timeline/stream").status_code == 401
        assert client.get("/metrics").status_code == 401
        assert (
            client.post("/rpc", json=STATUS, headers={"Authorization": f"Bearer {APP_TOKEN}"}).status_code
            == 200
        )


def test_serve_refuses_application_tokens_beside_a_tokenless_console(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(RPC_ONLY)
    argv = [gateway_command(), "serve", "--state-dir", str(tmp_path / "state"), "--port", str(free_port())]
    done = subprocess.run(
        [*argv, "--config", str(tmp_path / "config.toml")],
        capture_output=True,
        text=True,
        timeout=DEADLINE_S,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert "[[console.auth.tokens]]" in done.stderr and "allow_anonymous" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "state").exists()  # refused before the state dir was touched


def test_serve_opens_the_console_on_purpose_and_warns(serve: Any) -> None:
    gateway: Served = serve(RPC_ONLY + "\n[console.auth]\nallow_anonymous = true\n")
    assert "result" in gateway.rpc("meta/status", path="/console/rpc")
    assert "result" in gateway.rpc("meta/status", token=APP_TOKEN)
    gateway.stop()
    warnings = [line for line in gateway.stderr().splitlines() if "WARNING meta_memory.gateway" in line]
    assert len(warnings) == 1 and "allow_anonymous = true" in warnings[0], warnings
