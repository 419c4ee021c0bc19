"""Boot refusals through the real ``meta_gateway`` command: exit status 2 before serving anything;
for ``stdio`` exactly one JSON-RPC error line (``id: null``) on stdout and nothing else."""

from __future__ import annotations

import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

PREDECESSOR_BYTES = b'{\n  "assertions": [],\n  "conflicts": []\n}'


def _predecessor(state: Path) -> None:
    state.mkdir(parents=True)
    (state / "elephant-memory-state.json").write_bytes(PREDECESSOR_BYTES)


def _twins(state: Path) -> None:
    (state / "agent-memory").mkdir(parents=True)
    (state / "agent-memory-sqlite").mkdir()


def _adopt_command(state: Path) -> list[str]:
    return [str(state), f"`meta_gateway storage-adopt-predecessor --state-dir {state} --apply`"]


@dataclass(frozen=True)
class Refusal:
    code: int
    config: str | None = None  # TOML text; None: no --config (the built-in default)
    prepare: Callable[[Path], None] | None = None
    names: Callable[[Path], list[str]] = field(default=lambda state: [])
    fixed_names: tuple[str, ...] = ()


REFUSALS = {
    "elephant-kind": Refusal(
        -32602, config='[memory]\nkind = "elephant"\n', fixed_names=("memory.kind", "local_json")
    ),
    "unknown-memory-keys": Refusal(
        -32602,
        config='[memory]\nkind = "local_json"\nstores = ["vector"]\nspace_id = "s"\ncollection = "c"\n',
        fixed_names=("collection", "space_id", "stores"),
    ),
    "markdown-store": Refusal(
        -32014,
        config='[agent_memory]\nenabled = true\nstore = "markdown"\n',
        fixed_names=("markdown", "sqlite"),
    ),
    "predecessor-with-memory": Refusal(-32014, prepare=_predecessor, names=_adopt_command),
    "predecessor-without-memory": Refusal(
        -32014, config="[agent_memory]\nenabled = true\n", prepare=_predecessor, names=_adopt_command
    ),
    "file-name-twins": Refusal(
        -32014,
        prepare=_twins,
        names=lambda state: [str(state / "agent-memory"), str(state / "agent-memory-sqlite"), "doctor"],
    ),
}


@pytest.mark.parametrize("case", REFUSALS.values(), ids=REFUSALS.keys())
def test_stdio_boot_refusal_exits_2_with_exactly_one_json_rpc_error_line(
    case: Refusal,
    run_gateway: Callable[..., Any],
    write_config: Callable[[str], Path],
    wire_json: Callable[[str], Any],
    tmp_path: Path,
) -> None:
    state = tmp_path / "state"
    if case.prepare is not None:
        case.prepare(state)
    before = sorted(p.name for p in state.iterdir()) if state.exists() else None
    args = [] if case.config is None else ["--config", str(write_config(case.config))]

    run = run_gateway("stdio", "--state-dir", str(state), *args)

    assert run.status == 2
    [line] = run.stdout.splitlines()
    reply = wire_json(line)
    assert reply == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": case.code, "message": reply["error"]["message"]},
    }
    for name in (*case.fixed_names, *case.names(state)):
        assert name in reply["error"]["message"]
    assert reply["error"]["message"] in run.stderr and "Traceback" not in run.stderr
    # Refused before serving: a config refusal never creates the state dir; a storage refusal adds nothing
    # but the lock file it took and released.
    after = sorted(p.name for p in state.iterdir()) if state.exists() else None
    assert after == (None if before is None else sorted({*before, ".meta-runtime.lock"}))


def test_serve_boot_refusal_exits_2_naming_the_cause_on_stderr_and_never_listens(
    run_gateway: Callable[..., Any], tmp_path: Path
) -> None:
    state = tmp_path / "state"
    _twins(state)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    run = run_gateway("serve", "--state-dir", str(state), "--port", str(port))

    assert run.status == 2
    assert run.stdout == ""
    assert str(state / "agent-memory") in run.stderr and str(state / "agent-memory-sqlite") in run.stderr
    assert "Traceback" not in run.stderr and "Uvicorn running" not in run.stderr
