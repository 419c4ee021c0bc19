"""``meta_gateway mcp`` as a process: boot refusals exit 2 with the cause on stderr and nothing on
stdout (the MCP channel); a served process exits 0 when the client closes stdin, releasing the state dir."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from meta_memory.runtime import MetaRuntime

DEADLINE_S = 60.0
IDENTITY = "lead:main"


@dataclass(frozen=True)
class Run:
    status: int
    stdout: str
    stderr: str


@pytest.fixture(scope="session")
def run_mcp(gateway_argv: list[str]) -> Callable[..., Run]:
    """Run ``meta_gateway mcp <args>`` to completion, ``stdin`` as its whole input."""

    def run(*args: str, stdin: bytes = b"") -> Run:
        done = subprocess.run(
            [*gateway_argv, "mcp", *args], input=stdin, capture_output=True, timeout=DEADLINE_S
        )
        return Run(done.returncode, done.stdout.decode(), done.stderr.decode())

    return run


def _predecessor(state: Path) -> None:
    state.mkdir(parents=True)
    (state / "elephant-memory-state.json").write_bytes(b'{"assertions": [], "conflicts": []}')


@pytest.mark.parametrize(
    ("prepare", "config", "identity", "named"),
    [
        (_predecessor, None, IDENTITY, "storage-adopt-predecessor"),
        (None, '[agent_memory]\nllm_writes = "sometimes"\n', IDENTITY, "agent_memory.llm_writes"),
        (None, None, " padded", "identity must be a valid non-empty string"),
    ],
    ids=["predecessor-ledger", "bad-config", "bad-identity"],
)
def test_boot_refusal_exits_2_with_the_cause_on_stderr_and_nothing_on_stdout(
    prepare: Callable[[Path], None] | None,
    config: str | None,
    identity: str,
    named: str,
    run_mcp: Callable[..., Run],
    tmp_path: Path,
) -> None:
    state = tmp_path / "state"
    if prepare is not None:
        prepare(state)
    args = ["--state-dir", str(state), "--identity", identity]
    if config is not None:
        (tmp_path / "config.toml").write_text(config)
        args += ["--config", str(tmp_path / "config.toml")]

    run = run_mcp(*args)

    assert run.status == 2
    assert run.stdout == ""
    assert named in run.stderr
    assert "Traceback" not in run.stderr


def test_closing_stdin_ends_the_server_with_status_0_and_releases_the_state_dir(
    run_mcp: Callable[..., Run], tmp_path: Path
) -> None:
    state = tmp_path / "state"
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        },
    }

    run = run_mcp(
        "--state-dir", str(state), "--identity", IDENTITY, stdin=json.dumps(initialize).encode() + b"\n"
    )

    assert run.status == 0, run.stderr
    [line] = run.stdout.splitlines()
    reply = json.loads(line)
    assert reply["id"] == 1 and reply["result"]["serverInfo"]["name"] == "meta-memory"
    assert "Traceback" not in run.stderr
    MetaRuntime.open(state).close()  # the lock was released: a new runtime may serve the dir
