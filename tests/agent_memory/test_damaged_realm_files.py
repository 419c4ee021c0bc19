"""A damaged realm file is refused, never opened as an empty realm: new files are born whole (built
under a stage name, then renamed), so a canonical file that is empty or holds no realm schema can
only be damage. The file and its recall index are left exactly as found, other realms keep
working, and the doctor reports an error and exits non-zero."""

from __future__ import annotations

import hashlib
import json
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest

from meta_memory import MetaHandle, StoreCorrupt
from meta_memory.clock import ManualClock
from meta_memory.memory.sqlite.migrations import SCHEMA_VERSION
from meta_memory.memory.sqlite.store import SqliteRealmStore

from ..conftest import SQLITE_ONLY, gateway_command


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _two_realms(open_handle: Callable[[], MetaHandle]) -> None:
    handle = open_handle()
    for realm in ("default", "other"):
        for n in range(3):
            handle.remember_agent_memory("alice", title=f"note {n}", body=f"{realm} body {n}", realm=realm)
        handle.recall_agent_memory("alice", query_text="body", realm=realm)  # builds the index file
    handle.close()


def _doctor(state_dir: Path) -> tuple[int, dict[str, object]]:
    done = subprocess.run(
        [gateway_command(), "doctor", "--state-dir", str(state_dir), "--json"],
        capture_output=True,
        timeout=60,
    )
    return done.returncode, json.loads(done.stdout)


def _damage_findings(report: dict[str, object]) -> list[dict[str, str]]:
    findings = report["diagnosis"]["findings"]  # type: ignore[index]
    return [f for f in findings if f["code"] == "realm-damaged"]  # type: ignore[union-attr]


@SQLITE_ONLY
@pytest.mark.parametrize(
    ("damage", "said"),
    [
        ("truncate", "is empty (0 bytes)"),
        ("replace with an empty database", "holds no realm schema"),
    ],
)
def test_a_truncated_or_replaced_realm_file_is_refused_and_left_untouched(
    open_handle: Callable[[], MetaHandle], state_dir: Path, damage: str, said: str
) -> None:
    _two_realms(open_handle)
    path = state_dir / "agent-memory" / "default.sqlite3"
    index = state_dir / "agent-memory" / "default.sqlite3-index"
    if damage == "truncate":
        path.write_bytes(b"")
    else:
        path.unlink()
        with closing(sqlite3.connect(path)) as db:
            db.execute("CREATE TABLE unrelated (x)")
            db.commit()
    before, index_before = _digest(path), _digest(index)

    handle = open_handle()
    for call in (
        lambda: handle.recall_agent_memory("alice", query_text="body"),
        lambda: handle.recall_agent_memory("alice", selection="always"),
        lambda: handle.remember_agent_memory("alice", title="new", body="lands on top?"),
    ):
        with pytest.raises(StoreCorrupt) as refused:
            call()
        assert refused.value.code == -32014
        assert f"its file agent-memory/default.sqlite3 {said}" in refused.value.message
        assert str(state_dir) not in refused.value.message
    assert [r.body for r in handle.recall_agent_memory("alice", selection="always", realm="other")] == [
        "other body 2",
        "other body 1",
        "other body 0",
    ]
    handle.close()
    assert (_digest(path), _digest(index)) == (before, index_before)

    status, report = _doctor(state_dir)
    assert status == 1
    [finding] = _damage_findings(report)
    assert finding["severity"] == "error" and finding["realm"] == "default"
    assert said in finding["message"]
    assert "realm-ok" not in [
        f["code"] for f in report["diagnosis"]["findings"] if f.get("realm") == "default"
    ]  # type: ignore[union-attr]


@SQLITE_ONLY
def test_a_realm_file_missing_beside_its_wal_is_refused_and_nothing_is_created(
    open_handle: Callable[[], MetaHandle], state_dir: Path
) -> None:
    root = state_dir / "agent-memory"
    root.mkdir(parents=True)
    wal = root / "default.sqlite3-wal"
    wal.write_bytes(b"\x37\x7f\x06\x82" + bytes(60))  # the start of another file's WAL
    handle = open_handle()
    with pytest.raises(StoreCorrupt) as refused:
        handle.remember_agent_memory("alice", title="t", body="b")
    assert "is missing while its WAL file default.sqlite3-wal is present" in refused.value.message
    handle.close()
    assert sorted(p.name for p in root.iterdir()) == ["default.sqlite3-wal"]
    status, report = _doctor(state_dir)
    assert status == 1 and [f["realm"] for f in _damage_findings(report)] == ["default"]


def test_a_stage_left_by_an_interrupted_build_is_replaced_by_a_whole_file(
    tmp_path: Path, clock: ManualClock
) -> None:
    path = tmp_path / "r.sqlite3"
    (tmp_path / "r.sqlite3.tmp").write_bytes(b"half a file")
    (tmp_path / "r.sqlite3.tmp-wal").write_bytes(b"its WAL")
    SqliteRealmStore(path, "r", clock=clock).close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.sqlite3", "r.sqlite3-index"]
    with closing(sqlite3.connect(path)) as db:
        assert max(v for (v,) in db.execute("SELECT version FROM schema_migrations")) == SCHEMA_VERSION


_BUILD = """
import sys
from pathlib import Path
from meta_memory.memory.sqlite.files import create_realm_file
print("ready", flush=True)
sys.stdin.readline()
create_realm_file(Path(sys.argv[1]), 0, durability="process")
"""


def test_a_build_killed_at_any_moment_leaves_no_canonical_file_or_a_whole_one(tmp_path: Path) -> None:
    outcomes = set()
    for attempt in range(16):
        path = tmp_path / f"realm-{attempt}.sqlite3"
        proc = subprocess.Popen(
            [sys.executable, "-c", _BUILD, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
        assert proc.stdin is not None
        proc.stdin.write(b"go\n")
        proc.stdin.flush()
        time.sleep(attempt * 0.002)  # from before the build starts to after it ends
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        proc.stdin.close()
        proc.stdout.close()
        if not path.exists():
            outcomes.add("absent")
            continue
        outcomes.add("whole")
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            versions = [v for (v,) in db.execute("SELECT version FROM schema_migrations")]
        assert versions == list(range(1, SCHEMA_VERSION + 1))
    assert "absent" in outcomes  # the kill did land mid-build for the early attempts
