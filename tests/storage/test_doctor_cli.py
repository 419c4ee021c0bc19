"""``meta_gateway doctor`` as a real subprocess: the human tables, ``--json`` (the RPC result object),
and the exit status (0 without error findings, 1 with one, 2 for bad usage)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from meta_memory.memory.sqlite.doctor import SqliteDoctor
from meta_memory.memory.sqlite.migrations import SCHEMA_VERSION
from meta_memory.runtime import MetaRuntime
from meta_memory.sdk import MetaHandle
from meta_memory.storage.doctor import diagnose

SQLITE = SqliteDoctor()


@dataclass(frozen=True)
class Run:
    status: int
    stdout: str
    stderr: str


def doctor(*args: str, columns: int = 200) -> Run:
    beside = Path(sys.executable).with_name("meta_gateway")
    found = str(beside) if beside.is_file() else shutil.which("meta_gateway")
    command = [found] if found else [sys.executable, "-c", "from meta_memory.cli import main; main()"]
    done = subprocess.run(
        [*command, "doctor", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
        env={**os.environ, "COLUMNS": str(columns), "NO_COLOR": "1"},
    )
    # Tables pad to the terminal width; a line's meaning ends where its text does.
    stdout = "\n".join(line.rstrip() for line in done.stdout.decode().splitlines())
    return Run(done.returncode, stdout, done.stderr.decode())


def healthy_state(tmp_path: Path, *realms: str) -> Path:
    state = tmp_path / "state"
    with MetaRuntime.open(state) as runtime:
        handle = MetaHandle(runtime)
        for realm in realms or ("default",):
            handle.remember_agent_memory("alice", title="Deploys", body="Deploys on Tuesdays.", realm=realm)
            handle.remember_agent_memory("bob", title="Pager", body="Bob holds the pager.", realm=realm)
    return state


def test_human_output_is_a_findings_table_and_a_realm_table_and_exits_0_when_healthy(tmp_path: Path) -> None:
    state = healthy_state(tmp_path, "default", "ops team")
    run = doctor("--state-dir", str(state))
    assert run.status == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == f"Storage doctor {state}"
    assert "Findings" in lines and "Realms" in lines
    finding_rows = [line for line in lines if line.startswith("info ")]
    assert [row.split()[1] for row in finding_rows] == [
        "durability-census-unavailable",
        "realm-ok",
        "realm-ok",
    ]
    realm_rows = {
        line.split("  ")[0]: line.split() for line in lines if line.startswith(("default ", "ops team "))
    }
    assert realm_rows["default"][1:6] == [str(SCHEMA_VERSION), "2", "0", "0", "0"]
    assert realm_rows["ops team"][2:7] == [str(SCHEMA_VERSION), "2", "0", "0", "0"]
    assert "agent-memory/ops%20team.sqlite3" in run.stdout
    assert lines[-1] == "0 error(s), 0 warning(s), 2 realm file(s)"


def test_identity_adds_its_per_status_counts_as_a_column(tmp_path: Path) -> None:
    state = healthy_state(tmp_path)
    run = doctor("--state-dir", str(state), "--identity", "alice")
    assert run.status == 0
    header = next(line for line in run.stdout.splitlines() if line.strip().startswith("alice"))
    assert header.split() == ["alice"]
    assert (
        next(line for line in run.stdout.splitlines() if line.startswith("default ")).split()[-1] == "1/0/0/0"
    )


def test_an_error_finding_makes_the_exit_status_1_and_is_shown_first(tmp_path: Path) -> None:
    state = healthy_state(tmp_path)
    (state / "elephant-memory-state.json").write_bytes(b"{}")
    run = doctor("--state-dir", str(state))
    assert run.status == 1
    first = next(line for line in run.stdout.splitlines() if line.startswith(("error ", "warning ", "info ")))
    assert first.split()[:2] == ["error", "predecessor-ledger"]
    assert "storage-adopt-predecessor" in run.stdout
    assert run.stdout.splitlines()[-1].startswith("1 error(s)")


def test_warnings_alone_keep_the_exit_status_0(tmp_path: Path) -> None:
    state = healthy_state(tmp_path)
    (state / "memory-ledger-state.tmp").write_bytes(b"{")
    run = doctor("--state-dir", str(state))
    assert run.status == 0
    assert any(line.split()[:2] == ["warning", "leftover-stage"] for line in run.stdout.splitlines() if line)


def test_json_prints_the_rpc_result_object_with_the_same_exit_status(tmp_path: Path) -> None:
    state = healthy_state(tmp_path)
    (state / "agent-memory" / "junk.sqlite3").write_bytes(b"junk" * 50)
    run = doctor("--state-dir", str(state), "--json", "--identity", "bob")
    assert run.status == 1
    result = json.loads(run.stdout)
    assert result == diagnose(state, "bob", backend=SQLITE).to_wire()
    assert result["storage"] is None
    assert {f["code"] for f in result["diagnosis"]["findings"]} >= {"realm-unreadable", "realm-ok"}


def test_a_missing_state_dir_exits_1_and_is_not_created(tmp_path: Path) -> None:
    run = doctor("--state-dir", str(tmp_path / "nowhere"), "--json")
    assert run.status == 1
    codes = [f["code"] for f in json.loads(run.stdout)["diagnosis"]["findings"]]
    assert "state-dir-missing" in codes
    assert not (tmp_path / "nowhere").exists()


def test_bad_usage_exits_2(tmp_path: Path) -> None:
    assert doctor("--state-dir", str(tmp_path), "--identity", " ").status == 2
    assert doctor("--no-such-flag").status == 2


def test_names_that_look_like_rich_markup_are_printed_literally(tmp_path: Path) -> None:
    state = healthy_state(tmp_path, "[bold]ops")
    run = doctor("--state-dir", str(state))
    assert run.status == 0
    assert "realm '[bold]ops'" in run.stdout
    assert any(line.startswith("[bold]ops ") for line in run.stdout.splitlines())


def test_paths_are_printed_whole_at_80_columns(tmp_path: Path) -> None:
    deep = tmp_path / ("a-rather-long-directory-name-" * 3) / "state"
    with MetaRuntime.open(deep) as runtime:
        MetaHandle(runtime).remember_agent_memory("alice", title="Deploys", body="Deploys on Tuesdays.")
    run = doctor("--state-dir", str(deep), columns=80)
    assert run.status == 0, run.stderr
    assert f"Storage doctor {deep}" in run.stdout.splitlines()
    assert any(line.strip() == "default: agent-memory/default.sqlite3" for line in run.stdout.splitlines())
    missing = doctor("--state-dir", str(deep / "nowhere"), columns=80)  # a finding naming a path
    assert any(
        line.startswith("error state-dir-missing") and str(deep / "nowhere") in line
        for line in missing.stdout.splitlines()
    )
