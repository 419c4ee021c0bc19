"""Open realms are bounded: at most ``max_open_realms`` realm stores hold their files open, the least
recently used idle ones close first (their usage counters written back), and a closed realm reopens
on its next call with nothing lost. A gateway under a low open-files limit serves any number of
realms."""

from __future__ import annotations

import json
import os
import resource
import sqlite3
import subprocess
import threading
from contextlib import closing
from pathlib import Path

from meta_memory import Meta, MetaHandle
from meta_memory.clock import ManualClock

from ..conftest import gateway_command

FDS_PER_REALM = 8  # a realm file, its WAL and -shm; the same for its index file; a checkpointer's two


def _realm_fds(state_dir: Path) -> int:
    """Descriptors this process holds on files under the agent-memory root."""
    root = str(state_dir / "agent-memory")
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        count += target.startswith(root)
    return count


def _open(state_dir: Path, clock: ManualClock, limit: int) -> MetaHandle:
    return (
        Meta.builder()
        .persistent_state(state_dir)
        .agent_memory(max_open_realms=limit, index_worker="inline")
        .clock(clock)
        .build()
    )


def test_at_most_max_open_realms_hold_files_and_closed_ones_reopen_with_nothing_lost(
    state_dir: Path, clock: ManualClock
) -> None:
    limit = 3
    with _open(state_dir, clock, limit) as handle:
        made = {}
        for n in range(12):
            realm = f"realm-{n}"
            made[realm] = handle.remember_agent_memory(
                "alice", title=f"note {n}", body=f"fact {n}", realm=realm
            )
            assert handle.recall_agent_memory("alice", query_text=f"fact {n}", realm=realm) == [made[realm]]
            assert _realm_fds(state_dir) <= limit * FDS_PER_REALM
        assert _realm_fds(state_dir) > 0
        for realm, record in made.items():  # every realm again: each reopens and finds its record
            assert handle.recall_agent_memory("alice", selection="always", realm=realm) == [record]
            assert _realm_fds(state_dir) <= limit * FDS_PER_REALM
        # realm-0 was closed while its second recall's counter was pending: it was written back.
        with closing(sqlite3.connect(state_dir / "agent-memory" / "realm-0.sqlite3")) as db:
            assert db.execute("SELECT explicit_recall_count FROM records").fetchall() == [(2,)]


def test_realms_used_from_many_threads_under_a_tight_bound_lose_nothing(
    state_dir: Path, clock: ManualClock
) -> None:
    realms = [f"realm-{n}" for n in range(8)]
    failures: list[BaseException] = []
    with _open(state_dir, clock, 2) as handle:

        def work(worker: int) -> None:
            try:
                for n in range(60):
                    realm = realms[(worker * 3 + n) % len(realms)]
                    handle.remember_agent_memory(
                        f"w{worker}", title=f"n{n}", body=f"worker {worker} note {n}", realm=realm
                    )
                    handle.recall_agent_memory(f"w{worker}", query_text=f"note {n}", realm=realm)
            except BaseException as exc:  # reported below, with the others
                failures.append(exc)

        threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert failures == []
        for worker in range(4):
            found = sum(
                len(handle.recall_agent_memory(f"w{worker}", selection="always", realm=r, max_entries=64))
                for r in realms
            )
            assert found == 60


def _limit_open_files() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))


def test_a_gateway_limited_to_256_open_files_serves_300_realms(tmp_path: Path) -> None:
    realms = 300
    with (tmp_path / "stderr.log").open("wb") as stderr:
        proc = subprocess.Popen(
            [gateway_command(), "stdio", "--state-dir", str(tmp_path / "state")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            preexec_fn=_limit_open_files,
        )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        assert json.loads(proc.stdout.readline()) == {"contract_version": "0.9.9"}

        def call(method: str, params: dict[str, object]) -> dict[str, object]:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(
                json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode() + b"\n"
            )
            proc.stdin.flush()
            return dict(json.loads(proc.stdout.readline()))

        for n in range(realms):
            reply = call(
                "meta/agent_memory/remember",
                {
                    "identity": "alice",
                    "realm": f"realm-{n}",
                    "title": f"note {n}",
                    "body": f"the body of realm {n}",
                },
            )
            assert "result" in reply, (n, reply)
        for n in range(realms):
            reply = call(
                "meta/agent_memory/recall",
                {"identity": "alice", "realm": f"realm-{n}", "query_text": f"body {n}"},
            )
            assert [r["title"] for r in reply["result"]["records"]] == [f"note {n}"], (n, reply)  # type: ignore[index]
        reply = call("meta/agent_memory/recall", {"identity": "alice", "selection": "always"})
        assert reply["result"] == {"records": [], "vectors_behind": None}
        assert len(os.listdir(f"/proc/{proc.pid}/fd")) < 256
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
        proc.stdout.close()
    assert proc.returncode == 0
