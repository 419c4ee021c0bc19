"""The doctor never writes: every file's bytes and mtime, every directory's mtime and the listing are
the same before and after, on a cold directory full of findings and beside a live runtime whose
realm file holds uncheckpointed writes in its WAL (diagnosed in process and from another process)."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from meta_memory.errors import StorageRefused
from meta_memory.memory.sqlite import checkpoint
from meta_memory.memory.sqlite.doctor import SqliteDoctor
from meta_memory.runtime import MetaRuntime
from meta_memory.sdk import MetaHandle
from meta_memory.storage.doctor import diagnose

SQLITE = SqliteDoctor()

Snapshot = dict[str, tuple[str, int, bytes]]


def snapshot(root: Path, *, skip: frozenset[str] = frozenset()) -> Snapshot:
    """Every entry under ``root`` (and ``root`` itself): kind, mtime and, for files, the bytes."""
    out: Snapshot = {}
    for path in [root, *sorted(root.rglob("*"))]:
        name = str(path.relative_to(root))
        stat = path.stat()
        if path.is_dir():
            out[name] = ("dir", stat.st_mtime_ns, b"")
        elif name in skip:
            out[name] = ("file", 0, b"")  # present, contents not compared (see the caller)
        else:
            out[name] = ("file", stat.st_mtime_ns, path.read_bytes())
    return out


def doctor_command() -> list[str]:
    beside = Path(sys.executable).with_name("meta_gateway")
    found = str(beside) if beside.is_file() else shutil.which("meta_gateway")
    return [found] if found else [sys.executable, "-c", "from meta_memory.cli import main; main()"]


def write(path: Path, data: bytes = b"") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def records_in_main_file(realm_file: Path, tmp_path: Path) -> int:
    """Records the main file holds without its WAL, read from a copy (so the live file is untouched)."""
    copy = tmp_path / "main-file-copy.sqlite3"
    shutil.copyfile(realm_file, copy)
    with closing(sqlite3.connect(f"file:{copy}?mode=ro&immutable=1", uri=True)) as db:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        return int(db.execute("SELECT count(*) FROM records").fetchone()[0]) if "records" in tables else 0


@pytest.fixture
def live(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A live runtime with 12 records in realm ``default``, all still in the realm file's WAL (the
    quiet-time truncation, after a wall-clock ``QUIET_S`` without a write, put off for the test)."""
    monkeypatch.setattr(checkpoint, "QUIET_S", 3600.0)
    state = tmp_path / "state"
    with MetaRuntime.open(state) as runtime:
        handle = MetaHandle(runtime)
        for n in range(12):
            handle.remember_agent_memory("alice", title=f"Note {n}", body=f"Alice's note number {n}.")
        # A contextual recall applies the recall-index backlog now, the index's fresh tier is
        # merged and the usage counters are written back at once, so the runtime has no
        # background work left to write while a test compares bytes.
        assert len(handle.recall_agent_memory("alice", query_text="Alice's note", max_entries=12)) == 12
        store = runtime.agent_memory.store("default")  # type: ignore[union-attr]
        assert store.merge_fresh(1024) == 12
        store.flush_usage()
        realm = state / "agent-memory" / "default.sqlite3"
        assert realm.with_name("default.sqlite3-wal").stat().st_size > 0
        assert records_in_main_file(realm, tmp_path) < 12  # the writes are not checkpointed
        yield runtime


def test_a_cold_dir_full_of_findings_is_left_byte_for_byte_as_it_was(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with MetaRuntime.open(state) as runtime:
        MetaHandle(runtime).remember_agent_memory("alice", title="Deploys", body="Deploys on Tuesdays.")
        MetaHandle(runtime).memory_index("deploy", "window", fact="Tuesdays only")
    assert not (state / "agent-memory" / "default.sqlite3-wal").exists()  # closed: WAL mode, no -wal
    (state / "agent-memory-sqlite").mkdir()
    write(state / "elephant-memory-state.json", b"{}")
    write(state / "elephant-memory-state.tmp", b"{")
    write(state / "memory-ledger-state.tmp", b"{")
    write(state / "agent-memory" / "default" / "alice.md", b"# MobKit Agent Memory\n")
    write(state / "agent-memory" / "default" / "x y.md.import-failed")
    write(state / "agent-memory" / "bad name.sqlite3")
    write(state / "agent-memory" / "broken.sqlite3", b"not sqlite" * 20)
    write(state / "agent-memory" / "empty.sqlite3")
    write(state / "agent-memory-sqlite" / "old.sqlite3", b"")
    before = snapshot(state)

    diagnosis = diagnose(state, "alice", backend=SQLITE)

    assert snapshot(state) == before
    assert diagnosis.has_errors and len(diagnosis.inventory) == 4


def test_beside_a_live_runtime_the_doctor_reads_the_wal_and_changes_nothing_but_sqlite_reader_marks(
    live: MetaRuntime,
) -> None:
    state = live.state_dir
    # In the gateway's own process SQLite shares each open database's -shm (its shared-memory WAL
    # index, never data) with the runtime's connections, and a reader there sets its reader mark in
    # it like any reader of the runtime. Those two files are compared for presence only; the test
    # from another process below compares them byte for byte.
    shared = frozenset(
        {
            "agent-memory/default.sqlite3-shm",
            "agent-memory/default.sqlite3-index-shm",
            "event_log.sqlite3-shm",
        }
    )
    before = snapshot(state, skip=shared)

    diagnosis = diagnose(state, "alice", backend=SQLITE)

    assert snapshot(state, skip=shared) == before
    [entry] = diagnosis.inventory
    assert entry.records == {"active": 12, "quarantined": 0, "superseded": 0, "tombstoned": 0}
    assert entry.identity_records == entry.records
    assert "realm-read-immutable" not in diagnosis.codes() and not diagnosis.has_errors
    with pytest.raises(StorageRefused, match="another meta runtime"):
        MetaRuntime.open(state)  # the runtime's lock is still held: the doctor never touched it


def test_from_another_process_beside_a_live_runtime_not_one_byte_changes(live: MetaRuntime) -> None:
    state = live.state_dir
    before = snapshot(state)

    done = subprocess.run(
        [*doctor_command(), "doctor", "--state-dir", str(state), "--identity", "alice", "--json"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
    )

    assert snapshot(state) == before
    assert done.returncode == 0, done.stderr.decode()
    result = json.loads(done.stdout)
    [entry] = result["diagnosis"]["inventory"]
    assert entry["records"] == {"active": 12, "quarantined": 0, "superseded": 0, "tombstoned": 0}
    codes = [f["code"] for f in result["diagnosis"]["findings"]]
    assert "realm-read-immutable" not in codes and "realm-ok" in codes
    # And the runtime goes on writing as if nothing happened.
    MetaHandle(live).remember_agent_memory("alice", title="After", body="Written after the doctor ran.")


def test_a_wal_without_its_shm_is_read_without_creating_the_shm(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with MetaRuntime.open(state) as runtime:
        MetaHandle(runtime).remember_agent_memory("alice", title="Deploys", body="Deploys on Tuesdays.")
    write(state / "agent-memory" / "default.sqlite3-wal")
    before = snapshot(state)
    assert "realm-read-immutable" in diagnose(state, backend=SQLITE).codes()
    assert snapshot(state) == before
