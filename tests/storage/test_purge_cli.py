"""``meta_gateway purge`` on a state dir: it asks first (a refusal erases nothing), erases a
record's lineage or an identity with ``--yes``, prints the receipt, and after it no file under the
state dir holds the purged text; a missing state dir or neither/both of --memory-id and --all is
refused."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from meta_memory import Meta

from ..conftest import gateway_command

MARK = "qzclipurgemark"


def _cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [gateway_command(), "purge", *args], input=stdin, capture_output=True, text=True, timeout=300
    )


def _files(state: Path) -> bytes:
    return b"".join(p.read_bytes() for p in state.rglob("*") if p.is_file()).lower()


def test_purge_on_a_state_dir_asks_then_erases_and_prints_the_receipt(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with Meta.builder().persistent_state(state).memory().agent_memory().build() as meta:
        first = meta.remember_agent_memory("lead", title="Plan", body=f"The plan {MARK}1.")
        second = meta.update_agent_memory("lead", first.memory_id, title="Plan", body=f"New plan {MARK}2.")
        meta.remember_agent_memory("lead", title="Other", body=f"Another {MARK}3.")
        kept = meta.remember_agent_memory("scout", title="Scout", body="The scout's note qzscoutkeep.")

    declined = _cli(
        "--state-dir", str(state), "--identity", "lead", "--memory-id", first.memory_id, stdin="n\n"
    )
    assert declined.returncode == 1 and f"{MARK}1".encode() in _files(state)

    done = _cli(
        "--state-dir", str(state), "--identity", "lead", "--memory-id", second.memory_id, "--yes", "--json"
    )
    assert done.returncode == 0, done.stderr
    receipt = json.loads(done.stdout)
    assert {r["memory_id"] for r in receipt["records"]} == {first.memory_id, second.memory_id}
    assert receipt["by"]["kind"] == "console" and receipt["by"]["principal"].startswith("local:")
    stored = _files(state)
    assert f"{MARK}1".encode() not in stored and f"{MARK}2".encode() not in stored
    assert f"{MARK}3".encode() in stored

    everything = _cli("--state-dir", str(state), "--identity", "lead", "--all", "--yes")
    assert everything.returncode == 0, everything.stderr
    assert "purged 1 record(s) of lead; receipt purge-" in everything.stderr
    stored = _files(state)
    assert MARK.encode() not in stored and b"qzscoutkeep" in stored
    with Meta.builder().persistent_state(state).memory().agent_memory().build() as meta:
        assert meta.get_agent_memory("scout", kept.memory_id).record.status == "active"


def test_purge_refuses_bad_usage_and_a_missing_state_dir(tmp_path: Path) -> None:
    missing = _cli("--state-dir", str(tmp_path / "nowhere"), "--identity", "lead", "--all", "--yes")
    assert missing.returncode == 2 and "does not exist" in missing.stderr
    assert not (tmp_path / "nowhere").exists()
    neither = _cli("--state-dir", str(tmp_path), "--identity", "lead", "--yes")
    assert neither.returncode == 2 and "exactly one of --memory-id ID and --all" in neither.stderr
    both = _cli("--state-dir", str(tmp_path), "--identity", "lead", "--all", "--memory-id", "m", "--yes")
    assert both.returncode == 2
