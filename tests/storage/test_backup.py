"""``meta_gateway backup`` / ``restore`` against a real gateway: a backup taken while the gateway
serves a stream of writes restores to a state dir the doctor passes and that holds every record
acknowledged before the backup began, and none acknowledged after it ended (a snapshot, not the
live file); a damaged, foreign or edited backup, a non-empty target and an existing destination
are refused with nothing written."""

from __future__ import annotations

import hashlib
import json
import subprocess
import threading
import time
from pathlib import Path

import httpx

from meta_memory import Meta
from meta_memory.memory.sqlite.backup import MANIFEST_FILE

from ..conftest import gateway_command


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([gateway_command(), *args], capture_output=True, text=True, timeout=300)


def _remember(client: httpx.Client, base: str, n: int) -> str:
    body = {
        "jsonrpc": "2.0",
        "id": n,
        "method": "meta/agent_memory/remember",
        "params": {"identity": "lead", "title": f"Note {n}", "body": f"Record {n} of the stream."},
    }
    reply = client.post(f"{base}/rpc", json=body, timeout=30).json()
    memory_id: str = reply["result"]["memory_id"]
    return memory_id


def test_a_backup_under_writes_restores_every_record_acknowledged_before_it_began(
    served: tuple[Path, str], tmp_path: Path
) -> None:
    state, base = served
    acked: list[tuple[float, str]] = []  # (when acknowledged, id)
    stop = threading.Event()

    def write() -> None:
        with httpx.Client() as client:
            n = 0
            while not stop.is_set():
                n += 1
                memory_id = _remember(client, base, n)
                acked.append((time.monotonic(), memory_id))

    writer = threading.Thread(target=write)
    writer.start()
    try:
        while len(acked) < 300:  # a realm file, its index and vectors, the event log, all busy
            time.sleep(0.01)
        began = time.monotonic()
        done = _cli("backup", "--state-dir", str(state), "--to", str(tmp_path / "backup"))
        ended = time.monotonic()
        time.sleep(0.3)  # and more writes after it
    finally:
        stop.set()
        writer.join(timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("backed up ")
    before = [memory_id for at, memory_id in acked if at < began]
    after = [memory_id for at, memory_id in acked if at > ended]
    assert len(before) >= 300 and after, (len(before), len(after))

    manifest = json.loads((tmp_path / "backup" / MANIFEST_FILE).read_text())
    kinds = {entry["path"]: entry["kind"] for entry in manifest["files"]}
    assert kinds["event_log.sqlite3"] == "sqlite"
    assert {p for p in kinds if p.startswith("agent-memory/")} >= {
        "agent-memory/default.sqlite3",
        "agent-memory/default.sqlite3-index",
        "agent-memory/default.sqlite3-vectors",
    }
    assert not [p for p in kinds if p.endswith(("-wal", "-shm", ".meta-runtime.lock"))]
    for entry in manifest["files"]:  # the manifest's sums, recomputed here
        data = (tmp_path / "backup" / entry["path"]).read_bytes()
        assert (len(data), hashlib.sha256(data).hexdigest()) == (entry["size"], entry["sha256"])

    restored = tmp_path / "restored"
    done = _cli("restore", "--from", str(tmp_path / "backup"), "--state-dir", str(restored))
    assert done.returncode == 0, done.stderr
    doctor = _cli("doctor", "--state-dir", str(restored), "--json")
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    with Meta.builder().persistent_state(restored).memory().agent_memory().build() as meta:
        listed = meta.list_agent_memory("lead", limit=200)
        ids: set[str] = set()
        page = listed
        while True:
            ids.update(r.memory_id for r in page.records)
            if page.next_cursor is None:
                break
            page = meta.list_agent_memory("lead", limit=200, cursor=page.next_cursor)
        assert set(before) <= ids, len(set(before) - ids)
        assert not set(after) & ids  # a snapshot of the file, not the file as it went on
        # Recall works on the restored index.
        assert meta.recall_agent_memory("lead", query_text="Record 7 stream", max_entries=3)


def test_restore_refuses_a_damaged_edited_or_foreign_backup_and_a_non_empty_target(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with Meta.builder().persistent_state(state).memory().agent_memory().build() as meta:
        meta.remember_agent_memory("lead", title="Deploys", body="Deploys need ops approval.")
        meta.memory_index("deploys", "approval", fact="ops approves")  # the ledger file, too
    assert (state / "memory-ledger-state.json").is_file()
    good = tmp_path / "backup"
    assert _cli("backup", "--state-dir", str(state), "--to", str(good)).returncode == 0

    # The destination exists: refused, and the existing one untouched.
    again = _cli("backup", "--state-dir", str(state), "--to", str(good))
    assert again.returncode == 2 and "already exists" in again.stderr
    assert (
        _cli("backup", "--state-dir", str(tmp_path / "nowhere"), "--to", str(tmp_path / "b2")).returncode == 2
    )
    assert not (tmp_path / "b2").exists()

    # A non-empty target.
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "keep.txt").write_text("mine")
    refused = _cli("restore", "--from", str(good), "--state-dir", str(occupied))
    assert refused.returncode == 2 and "is not empty" in refused.stderr
    assert [p.name for p in occupied.iterdir()] == ["keep.txt"]

    def damaged(name: str, edit: object) -> Path:
        copy = tmp_path / name
        subprocess.run(["cp", "-a", str(good), str(copy)], check=True)
        edit(copy)  # type: ignore[operator]
        return copy

    def flip(copy: Path) -> None:
        realm = copy / "agent-memory" / "default.sqlite3"
        data = bytearray(realm.read_bytes())
        data[len(data) // 2] ^= 0xFF
        realm.write_bytes(bytes(data))

    cases = {
        "flipped": (flip, "does not match its sha256"),
        "missing": (lambda c: (c / "agent-memory" / "default.sqlite3").unlink(), "is missing"),
        "extra": (lambda c: (c / "planted.sqlite3").write_bytes(b"x"), "does not list: planted.sqlite3"),
        "foreign": (lambda c: (c / MANIFEST_FILE).write_text('{"format": "other"}'), "is not a backup"),
        "escaping": (
            lambda c: (c / MANIFEST_FILE).write_text(
                json.dumps({"format": "meta-memory-state-backup", "version": 1, "files": [{"path": "../x"}]})
            ),
            "unsafe path",
        ),
    }
    for name, (edit, message) in cases.items():
        target = tmp_path / f"restored-{name}"
        done = _cli("restore", "--from", str(damaged(name, edit)), "--state-dir", str(target))
        assert done.returncode == 2 and message in done.stderr, (name, done.stderr)
        assert not target.exists() and not (tmp_path / f"restored-{name}.restoring").exists(), name

    # The good one restores, and its ledger is the source's, byte for byte.
    restored = tmp_path / "restored"
    assert _cli("restore", "--from", str(good), "--state-dir", str(restored)).returncode == 0
    ledger = "memory-ledger-state.json"
    assert (restored / ledger).read_bytes() == (state / ledger).read_bytes()


def test_a_database_is_copied_with_what_its_wal_holds_and_the_served_dir_is_never_written(
    tmp_path: Path,
) -> None:
    import sqlite3

    from meta_memory.memory.sqlite.backup import backup, restore

    state = tmp_path / "state"
    (state / "agent-memory").mkdir(parents=True)
    path = state / "agent-memory" / "default.sqlite3"
    live = sqlite3.connect(path)
    live.execute("PRAGMA journal_mode = WAL")
    live.execute("PRAGMA wal_autocheckpoint = 0")  # every commit stays in the -wal file
    live.execute("CREATE TABLE t (n INTEGER)")
    live.executemany("INSERT INTO t VALUES (?)", [(n,) for n in range(1000)])
    live.commit()
    assert (state / "agent-memory" / "default.sqlite3-wal").stat().st_size > 0
    before = sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in state.rglob("*"))

    report = backup(state, tmp_path / "backup")
    live.execute("INSERT INTO t VALUES (1000)")  # after the backup: not in it
    live.commit()

    assert report.files == ("agent-memory/default.sqlite3",)
    restore(tmp_path / "backup", tmp_path / "restored")
    copy = sqlite3.connect(tmp_path / "restored" / "agent-memory" / "default.sqlite3")
    assert copy.execute("SELECT count(*), max(n) FROM t").fetchone() == (1000, 999)
    copy.close()
    # The backup read the served files only: sizes and times as they were (the WAL grew later).
    after = sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in state.rglob("*"))
    assert [a for a in after if not a[0].endswith("-wal")] == [b for b in before if not b[0].endswith("-wal")]
    live.close()
