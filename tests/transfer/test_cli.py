"""The ``export`` and ``import`` commands at the edge: a state dir a gateway serves is refused, a
missing one or an unknown realm is a clean refusal, ``--output`` appears whole, and progress is
shown on a terminal or for a long file, never otherwise (real ``meta_gateway`` processes)."""

from __future__ import annotations

import os
import pty
import select
import subprocess
from collections.abc import Callable
from pathlib import Path

from ..conftest import Backend
from .conftest import DEADLINE_S, Run, export_file, gateway_command, record_line, toml_config


def test_import_into_a_state_dir_a_gateway_serves_is_refused(
    tmp_path: Path, backend: Backend, cli: Callable[..., Run], stdio_gateway
) -> None:
    state = tmp_path / "state"
    config = tmp_path / "gateway.toml"
    config.write_text(toml_config(backend))
    export = tmp_path / "one.jsonl"
    export.write_bytes(export_file([record_line("rec-1")]))
    gateway = stdio_gateway(state, "--config", str(config))

    refused = cli(backend, "import", str(export), "--state-dir", str(state))
    exported = cli(backend, "export", "--state-dir", str(state))

    assert refused.status == 2
    assert "already serves state dir" in refused.stderr
    assert refused.stderr.startswith("meta_gateway: storage refused: another meta runtime")
    assert exported.status == 2 and "already serves state dir" in exported.stderr
    reply = gateway.call("meta/agent_memory/recall", {"identity": "alice", "selection": "always"})
    assert reply["result"]["records"] == []  # nothing was written behind the gateway's back
    assert gateway.close() == 0
    assert cli(backend, "import", str(export), "--state-dir", str(state)).status == 0


def test_export_of_a_missing_state_dir_or_unknown_realm_is_refused(
    tmp_path: Path, cli: Callable[..., Run]
) -> None:
    sqlite = Backend("sqlite")
    missing = cli(sqlite, "export", "--state-dir", str(tmp_path / "nowhere"))
    (tmp_path / "state").mkdir()
    unknown = cli(sqlite, "export", "--state-dir", str(tmp_path / "state"), "--realm", "nope")

    assert missing.status == 2 and "does not exist: nothing to export" in missing.stderr
    assert not (tmp_path / "nowhere").exists()
    assert unknown.status == 2 and "realm 'nope' has no store in this state dir" in unknown.stderr
    assert missing.stdout == unknown.stdout == b""


def test_export_to_a_file_writes_what_stdout_would(tmp_path: Path, cli: Callable[..., Run]) -> None:
    sqlite = Backend("sqlite")
    state = tmp_path / "state"
    source = tmp_path / "in.jsonl"
    source.write_bytes(export_file([record_line("rec-1"), record_line("rec-2", body="second")]))
    assert cli(sqlite, "import", str(source), "--state-dir", str(state)).status == 0
    out = tmp_path / "out.jsonl"

    written = cli(sqlite, "export", "--state-dir", str(state), "--output", str(out), "--include-history")
    streamed = cli(sqlite, "export", "--state-dir", str(state), "--include-history")

    assert written.status == 0 and written.stdout == b""
    assert written.stderr.strip() == "exported 2 records from 1 realm(s)"
    assert out.read_bytes() == streamed.stdout == source.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("out")) == ["out.jsonl"]


def test_an_export_of_one_identity_names_it_in_its_header(tmp_path: Path, cli: Callable[..., Run]) -> None:
    sqlite = Backend("sqlite")
    state = tmp_path / "state"
    bob = {"scope": "identity", "realm": "default", "identity": "bob"}
    source = tmp_path / "in.jsonl"
    source.write_bytes(export_file([record_line("a"), record_line("b", body="bob's", scope=bob)]))
    assert cli(sqlite, "import", str(source), "--state-dir", str(state)).status == 0

    run = cli(sqlite, "export", "--state-dir", str(state), "--identity", "bob", "--realm", "default")

    header, *lines = run.stdout.splitlines()
    assert (
        header
        == b'{"format":"meta-memory-export","identity":"bob","include_history":false,"realm":"default","version":1}'
    )
    assert [b'"id":"b"' in line for line in lines] == [True]


def _run_on_a_terminal(args: list[str]) -> tuple[int, str]:
    """Run ``meta_gateway`` with its stderr on a pseudo-terminal; returns (status, what it showed)."""
    leader, follower = pty.openpty()
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "100"}
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen(
        [*gateway_command(), *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=follower,
        env=env,
    )
    os.close(follower)
    shown = b""
    while True:
        ready, _, _ = select.select([leader], [], [], DEADLINE_S)
        if not ready:
            proc.kill()
            raise AssertionError("no output from the terminal within the deadline")
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: every writer closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    status = proc.wait(timeout=DEADLINE_S)
    assert proc.stdout is not None
    proc.stdout.close()
    return status, shown.decode("utf-8", "replace")


def test_import_shows_progress_on_a_terminal(tmp_path: Path) -> None:
    source = tmp_path / "few.jsonl"
    source.write_bytes(export_file([record_line(f"rec-{i}", body=f"body {i}") for i in range(3)]))

    status, shown = _run_on_a_terminal(["import", str(source), "--state-dir", str(tmp_path / "state")])

    assert status == 0
    assert "importing few.jsonl" in shown and "3/3" in shown


def test_a_long_import_shows_progress_off_a_terminal_and_a_short_one_does_not(
    tmp_path: Path, cli: Callable[..., Run]
) -> None:
    from meta_memory.cli import LARGE_IMPORT

    sqlite = Backend("sqlite")
    long = tmp_path / "long.jsonl"
    long.write_bytes(export_file([record_line(f"rec-{i}", body=f"body {i}") for i in range(LARGE_IMPORT)]))
    short = tmp_path / "short.jsonl"
    short.write_bytes(export_file([record_line("one")]))

    shown = cli(sqlite, "import", str(long), "--state-dir", str(tmp_path / "a"))
    quiet = cli(sqlite, "import", str(short), "--state-dir", str(tmp_path / "b"))

    assert shown.status == 0 and f"{LARGE_IMPORT}/{LARGE_IMPORT}" in shown.stderr
    assert quiet.status == 0 and quiet.stderr == ""


def test_import_reads_standard_input(tmp_path: Path, cli: Callable[..., Run]) -> None:
    data = export_file([record_line("rec-1")])

    run = cli(Backend("sqlite"), "import", "-", "--state-dir", str(tmp_path / "state"), stdin=data)

    assert run.status == 0, run.stderr
    assert run.text.startswith("imported 1, skipped 0, refused 0 of 1 records in <stdin> (jsonl)")


def test_a_file_of_neither_format_is_refused_naming_both(tmp_path: Path, cli: Callable[..., Run]) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("just some notes\n")
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")

    run = cli(Backend("sqlite"), "import", str(path), "--state-dir", str(tmp_path / "state"))
    nothing = cli(Backend("sqlite"), "import", str(empty), "--state-dir", str(tmp_path / "state"))
    absent = cli(
        Backend("sqlite"), "import", str(tmp_path / "absent.jsonl"), "--state-dir", str(tmp_path / "state")
    )

    assert run.status == 2 and "neither a meta-memory export nor a mem0 export" in run.stderr
    assert nothing.status == 2 and "empty.jsonl is empty" in nothing.stderr
    assert absent.status == 2 and "cannot read absent.jsonl" in absent.stderr
