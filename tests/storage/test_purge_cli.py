"""``meta_gateway purge`` on a state dir: it asks first (a refusal erases nothing), erases a
record's lineage or an identity with ``--yes``, prints the receipt, and after it no file under the
state dir holds the purged text; a missing state dir or neither/both of --memory-id and --all is
refused."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
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


def test_a_purge_through_a_served_gateway_leaves_no_byte_of_the_text_once_it_stops(
    served: tuple[Path, str], stop_served: Callable[[], None]
) -> None:
    """``meta_gateway serve`` (hybrid recall: its indexing process fills the recall-index and vector
    files) purges over HTTP; once it has stopped, no file under the state dir holds the text."""
    import httpx

    state, url = served
    base = f"{url}/rpc"

    def rpc(method: str, params: dict[str, object]) -> dict[str, object]:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        reply: dict[str, object] = httpx.post(base, json=body, timeout=60).json()
        assert "result" in reply, reply
        result = reply["result"]
        assert isinstance(result, dict)
        return result

    for n in range(60):
        rpc(
            "meta/agent_memory/remember",
            {"identity": "lead", "title": f"L{n}", "body": f"{MARK}{n} lead."},
        )
        rpc(
            "meta/agent_memory/remember",
            {"identity": "scout", "title": f"S{n}", "body": f"qzscoutkeep{n}."},
        )
    # Recall until the indexing process has caught up (hybrid recall: vectors too).
    for _ in range(200):
        found = rpc("meta/agent_memory/recall", {"identity": "lead", "query_text": f"{MARK}59"})
        if found["records"] and not found["vectors_behind"]:
            break
    receipt = rpc("meta/agent_memory/purge", {"identity": "lead", "all": True})
    assert len(receipt["records"]) == 60  # type: ignore[arg-type]
    assert rpc("meta/agent_memory/recall", {"identity": "lead", "query_text": f"{MARK}59"})["records"] == []
    stop_served()
    stored = _files(state)
    assert MARK.encode() not in stored
    assert all(f"qzscoutkeep{n}".encode() in stored for n in range(60))
