"""What the CLI says is true: a port out of range is refused naming ``--port``; "serving on" is
printed only once the socket is bound, and a port already in use is one line and a non-zero exit,
with the state dir untouched; ``doctor`` defaults ``--state-dir`` as the other commands do."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest


@pytest.mark.parametrize("port", ["99999", "0", "-1", "http"])
def test_a_port_out_of_range_is_refused_naming_the_option(
    run_gateway: Callable[..., Any], tmp_path: Path, port: str
) -> None:
    state = tmp_path / "state"
    run = run_gateway("serve", "--state-dir", str(state), "--port", port)
    assert run.status == 2
    assert "--port" in run.stderr and port in run.stderr
    assert "serving" not in run.stdout + run.stderr and "Traceback" not in run.stderr
    assert not state.exists()


def test_a_port_in_use_is_one_line_and_a_failure_before_anything_is_served(
    run_gateway: Callable[..., Any], tmp_path: Path
) -> None:
    state = tmp_path / "state"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        run = run_gateway("serve", "--state-dir", str(state), "--port", str(port))
    assert run.status != 0
    assert "serving" not in run.stdout + run.stderr
    assert "Traceback" not in run.stderr and "Errno" not in run.stderr
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, run.stderr
    assert f"127.0.0.1:{port}" in lines[0] and "--port" in lines[0] and "in use" in lines[0]
    assert not state.exists()  # the address is checked before the state dir is made


def test_doctor_defaults_the_state_dir_like_the_other_commands(
    run_gateway: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    run = run_gateway("doctor", "--json")
    assert "Missing option" not in run.stderr
    assert ".meta/state" in run.stdout + run.stderr


def _quarantined(tmp_path: Path, identity: str, titles: list[str]) -> dict[str, str]:
    """A state dir and config whose LLM writes quarantine, holding one held write per title;
    the environment that points the review commands at them."""
    from meta_memory import Meta

    state = tmp_path / "state"
    config = tmp_path / "meta.toml"
    config.write_text('[memory]\nkind = "local_json"\n[agent_memory]\nllm_writes = "quarantined"\n')
    builder = Meta.builder().persistent_state(state).memory().agent_memory(llm_writes="quarantined")
    with builder.build() as meta:
        session = meta.open_session(identity)
        for title in titles:
            session.memory_tool({"action": "remember", "title": title, "body": "Rotate keys monthly."})
    return {"META_STATE_DIR": str(state), "META_CONFIG": str(config)}


def _review(*args: str, env: dict[str, str]) -> Any:
    from click.testing import CliRunner

    from meta_memory.cli import main

    return CliRunner().invoke(main, ["review", *args], env=env)


@pytest.mark.parametrize("columns", ["60", "80", "120"])
def test_review_list_prints_every_id_whole_at_any_terminal_width(tmp_path: Path, columns: str) -> None:
    titles = [f"Title {i} " * 6 for i in range(2)]
    env = {**_quarantined(tmp_path, "lead:with-a-rather-long-identity-name", titles), "COLUMNS": columns}
    ids = [row["memory_id"] for row in json.loads(_review("list", "--json", env=env).output)]
    assert len(ids) == 2
    listed = _review("list", env=env)
    assert listed.exit_code == 0, listed.output
    for memory_id in ids:
        assert memory_id in listed.output


def test_a_refused_decision_names_the_flag_the_user_typed(tmp_path: Path) -> None:
    env = _quarantined(tmp_path, "lead", ["Keys"])
    (row,) = json.loads(_review("list", "--json", env=env).output)
    refused = _review("release", row["memory_id"], "--hash", "deadbeef", env=env)
    assert refused.exit_code != 0
    assert "--hash" in refused.output and "expected_content_hash" not in refused.output


def test_help_covers_both_token_kinds_and_the_port(run_gateway: Callable[..., Any]) -> None:
    hashing = run_gateway("hash-token", "--help").stdout
    assert "[[console.auth.tokens]]" in hashing and "[[rpc.auth.tokens]]" in hashing
    serving = run_gateway("serve", "--help").stdout
    assert "TCP port to listen on" in serving


def test_the_listening_socket_says_tcp_so_connections_run_without_nagle() -> None:
    """asyncio turns Nagle's algorithm off only on the connections of a socket whose proto says
    TCP; with proto 0 every keep-alive reply waited for the client's delayed ACK (40 ms)."""
    from meta_memory.gateway.server import listening_socket

    sock = listening_socket("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP
        with socket.create_connection(sock.getsockname()) as client:
            accepted, _ = sock.accept()
            with accepted:
                assert accepted.proto == socket.IPPROTO_TCP
                assert client.getsockname()
    finally:
        sock.close()
