"""The common flags of every ``meta_gateway`` command take their defaults from ``META_*`` environment
variables, named in ``--help``; a flag on the command line wins."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from meta_memory.cli import main

from ..conftest import free_port, gateway_command
from .conftest import DEADLINE_S, TOKENS_TOML, Gateway, env_without_meta, request, run_stdio

COMMON = ["META_STATE_DIR", "META_CONFIG"]
SERVING = [*COMMON, "META_LOG_LEVEL", "META_LOG_FORMAT"]


@pytest.mark.parametrize(
    ("command", "variables"),
    [
        ("serve", [*SERVING, "META_HOST", "META_PORT"]),
        ("stdio", [*SERVING, "META_LOG_REQUESTS"]),
        ("mcp", [*SERVING, "META_LOG_REQUESTS", "META_GATEWAY_URL", "META_GATEWAY_TOKEN"]),
        ("init", COMMON),
        ("doctor", COMMON),
        ("export", COMMON),
        ("import", COMMON),
        ("import-legacy", COMMON),
        ("storage-copy", ["META_STATE_DIR", "META_STORAGE_COPY_DSN"]),
        ("storage-adopt-predecessor", ["META_STATE_DIR"]),
        ("review list", [*COMMON, "META_GATEWAY_URL", "META_CONSOLE_TOKEN"]),
        ("review release", [*COMMON, "META_GATEWAY_URL", "META_CONSOLE_TOKEN"]),
    ],
)
def test_help_names_the_environment_variable_behind_each_common_flag(
    command: str, variables: list[str]
) -> None:
    result = CliRunner().invoke(main, [*command.split(), "--help"], env={v: "" for v in variables})
    assert result.exit_code == 0, result.output
    shown = " ".join(result.output.split())
    for variable in variables:
        assert f"env var: {variable}" in shown, variable


def test_serve_takes_state_dir_config_host_port_and_log_format_from_the_environment(
    serve: Callable[..., Gateway], tmp_path: Path
) -> None:
    config = tmp_path / "gateway.toml"
    config.write_text(TOKENS_TOML)
    state, port = tmp_path / "from-env", free_port()
    env = {
        "META_STATE_DIR": str(state),
        "META_CONFIG": str(config),
        "META_HOST": "127.0.0.1",
        "META_PORT": str(port),
        "META_LOG_FORMAT": "json",
        "META_LOG_LEVEL": "INFO",
    }
    gateway = serve(env=env)
    assert gateway.port == port
    assert gateway.post("meta/status").status_code == 401  # the config's tokens are in force
    stderr = gateway.stop()
    assert (state / ".meta-runtime.lock").is_file()  # the runtime held the state dir of the environment
    assert all(json.loads(line)["logger"] for line in stderr.splitlines() if line.strip())


def test_a_flag_on_the_command_line_wins_over_the_environment(tmp_path: Path) -> None:
    env = {"META_STATE_DIR": str(tmp_path / "env"), "META_LOG_FORMAT": "json"}
    ran = run_stdio(tmp_path, "--state-dir", str(tmp_path / "flag"), "--log-format", "text", env=env)
    assert ran.status == 0 and (tmp_path / "flag").is_dir() and not (tmp_path / "env").exists()
    assert " INFO meta_memory.runtime: runtime ready" in ran.stderr
    quiet = run_stdio(tmp_path, lines=[request("meta/status")], env={**env, "META_LOG_LEVEL": "WARNING"})
    assert quiet.status == 0 and (tmp_path / "env").is_dir() and quiet.stderr == ""


def test_mcp_with_a_gateway_on_the_command_line_leaves_a_state_dir_of_the_environment_alone(
    tmp_path: Path,
) -> None:
    env = env_without_meta(META_STATE_DIR=str(tmp_path / "env-state"), META_CONFIG=str(tmp_path / "no.toml"))
    done = subprocess.run(
        [gateway_command(), "mcp", "--gateway", f"http://127.0.0.1:{free_port()}", "--identity", "lead:main"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=DEADLINE_S,
        env=env,
    )
    stderr = done.stderr.decode()
    assert done.returncode == 2 and "meta_gateway:" in stderr  # the gateway is unreachable: refused
    assert "exactly one" not in stderr and "--config" not in stderr
    assert not (tmp_path / "env-state").exists()


def test_review_takes_its_state_dir_and_config_from_the_environment_and_a_gateway_flag_wins(
    tmp_path: Path,
) -> None:
    from meta_memory import Meta

    state = tmp_path / "state"
    config = tmp_path / "meta.toml"
    config.write_text('[memory]\nkind = "local_json"\n[agent_memory]\nllm_writes = "quarantined"\n')
    builder = Meta.builder().persistent_state(state).memory().agent_memory(llm_writes="quarantined")
    with builder.build() as meta:
        session = meta.open_session("lead")
        session.memory_tool({"action": "remember", "title": "Keys", "body": "Rotate keys monthly."})
    env = {"META_STATE_DIR": str(state), "META_CONFIG": str(config)}
    listed = CliRunner().invoke(main, ["review", "list", "--json"], env=env)
    assert listed.exit_code == 0, listed.output
    assert "Keys" in listed.output
    # --gateway on the command line: the environment's state dir and config give way to it.
    through = CliRunner().invoke(
        main, ["review", "list", "--gateway", f"http://127.0.0.1:{free_port()}"], env=env
    )
    assert through.exit_code != 0
    assert "exactly one" not in through.output and "--config goes with" not in through.output
