"""``meta_gateway serve`` refuses to listen beyond loopback unauthenticated: without both kinds of
tokens it exits 2 before serving, naming what is missing; ``--allow-unauthenticated`` (for a
deployment behind an authenticating proxy) serves and logs a warning. Over HTTP the storage
doctor diagnoses only the gateway's own state dir."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from meta_memory.access import hash_token

from ..conftest import gateway_command
from .conftest import APP_TOKEN, CONSOLE_TOKEN, DEADLINE_S, TOKENS_TOML, Served, free_port

CONSOLE_ONLY = f"""
[[console.auth.tokens]]
token_sha256 = "{hash_token(CONSOLE_TOKEN)}"
subject = "ops"
"""
RPC_ONLY = f"""
[[rpc.auth.tokens]]
token_sha256 = "{hash_token(APP_TOKEN)}"
subject = "app"
"""


def _serve_once(tmp_path: Path, config: str | None, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [
        gateway_command(),
        "serve",
        "--state-dir",
        str(tmp_path / "state"),
        "--port",
        str(free_port()),
        *args,
    ]
    if config is not None:
        (tmp_path / "config.toml").write_text(config)
        cmd += ["--config", str(tmp_path / "config.toml")]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=DEADLINE_S, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.1.2.3", "memory.example.com"])
@pytest.mark.parametrize(
    ("config", "named"),
    [
        (None, ["[[rpc.auth.tokens]]", "[[console.auth.tokens]]"]),
        (CONSOLE_ONLY, ["[[rpc.auth.tokens]]"]),
        (RPC_ONLY, ["[[console.auth.tokens]]"]),
        (TOKENS_TOML + "\n[console.auth]\nallow_anonymous = true\n", ["allow_anonymous = true"]),
    ],
    ids=["no tokens", "console tokens only", "rpc tokens only", "anonymous console"],
)
def test_serving_beyond_loopback_unauthenticated_exits_2_naming_what_is_missing(
    tmp_path: Path, host: str, config: str | None, named: list[str]
) -> None:
    done = _serve_once(tmp_path, config, "--host", host)
    assert done.returncode == 2
    for section in named:
        assert section in done.stderr
    assert "--allow-unauthenticated" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "state").exists()  # refused before the state dir was touched


def test_beyond_loopback_with_both_kinds_of_tokens_it_serves(serve: object) -> None:
    gateway: Served = serve(TOKENS_TOML, host="0.0.0.0")  # type: ignore[operator]
    assert "result" in gateway.rpc("meta/status", token=APP_TOKEN)
    assert gateway.post("/rpc", {"jsonrpc": "2.0", "id": 1, "method": "meta/status"}).status_code == 401


def test_allow_unauthenticated_serves_behind_a_proxy_and_warns(serve: object) -> None:
    gateway: Served = serve(None, "--allow-unauthenticated", host="0.0.0.0")  # type: ignore[operator]
    assert "result" in gateway.rpc("meta/status")
    gateway.stop()
    warning = [
        line
        for line in gateway.stderr().splitlines()
        if "WARNING" in line and "without authentication" in line
    ]
    assert len(warning) == 1 and "[[rpc.auth.tokens]]" in warning[0]


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "127.0.0.2"])
def test_loopback_needs_no_token(serve: object, host: str) -> None:
    gateway: Served = serve(None, host=host)  # type: ignore[operator]
    assert "result" in gateway.rpc("meta/status")


def test_over_http_the_doctor_diagnoses_only_its_own_state_dir(serve: object, tmp_path: Path) -> None:
    gateway: Served = serve()  # type: ignore[operator]
    other: Served = serve()  # type: ignore[operator]
    other.rpc("meta/agent_memory/remember", {"identity": "secret-customer", "title": "t", "body": "b"})
    refused = gateway.rpc(
        "meta/storage/doctor", {"state_dir": str(other.state_dir), "identity": "secret-customer"}
    )
    assert refused["error"]["code"] == -32602
    assert "own state directory" in refused["error"]["message"]
    assert str(other.state_dir) not in refused["error"]["message"]
    own = gateway.rpc("meta/storage/doctor", {"state_dir": str(gateway.state_dir)})["result"]
    assert own["storage"] is not None  # its own directory, with the live census
    console = gateway.rpc("meta/storage/doctor", {"state_dir": str(tmp_path)}, path="/console/rpc")
    assert console["error"]["code"] == -32602
