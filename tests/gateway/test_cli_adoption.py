"""``meta_gateway storage-adopt-predecessor``: a dry run by default, a byte-for-byte rename with
``--apply``, and a refusal that changes nothing when a stage or an adopted ledger is in the way."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

PREDECESSOR = "elephant-memory-state.json"
LEDGER = "memory-ledger-state.json"
# A real predecessor document, with deliberately unusual spacing: adoption must not rewrite it.
PREDECESSOR_BYTES = json.dumps(
    {
        "assertions": [
            {
                "assertion_id": "memory-assert-000007",
                "entity": "deploy",
                "topic": "window",
                "store": "timeline",
                "fact": "Tuesdays only",
                "metadata": {"source": "runbook"},
                "indexed_at_ms": 1_700_000_000_000,
            }
        ],
        "conflicts": [],
    },
    indent=5,
).encode()


def snapshot(state: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(state.iterdir())}


@pytest.fixture
def predecessor_state(tmp_path: Path) -> Path:
    state = tmp_path / "state"
    state.mkdir()
    (state / PREDECESSOR).write_bytes(PREDECESSOR_BYTES)
    return state


def test_the_dry_run_says_what_it_would_rename_and_changes_nothing(
    predecessor_state: Path, run_gateway: Callable[..., Any]
) -> None:
    before = snapshot(predecessor_state)
    run = run_gateway("storage-adopt-predecessor", "--state-dir", str(predecessor_state))
    assert run.status == 0
    assert "would rename" in run.stdout and "--apply" in run.stdout
    assert (
        str(predecessor_state / PREDECESSOR) in run.stdout and str(predecessor_state / LEDGER) in run.stdout
    )
    assert snapshot(predecessor_state) == before


def test_apply_renames_byte_for_byte_and_the_gateway_then_serves_the_adopted_ledger(
    predecessor_state: Path, run_gateway: Callable[..., Any], stdio_gateway: Callable[..., Any]
) -> None:
    inode = (predecessor_state / PREDECESSOR).stat().st_ino
    run = run_gateway("storage-adopt-predecessor", "--state-dir", str(predecessor_state), "--apply")
    assert run.status == 0 and "adopted" in run.stdout
    assert snapshot(predecessor_state) == {LEDGER: PREDECESSOR_BYTES}
    assert (predecessor_state / LEDGER).stat().st_ino == inode  # renamed, not copied

    gateway = stdio_gateway(predecessor_state)
    [adopted] = gateway.call("meta/memory/query", {"query": "tuesdays"})["result"]["assertions"]
    assert (adopted["assertion_id"], adopted["metadata"]) == ("memory-assert-000007", {"source": "runbook"})
    index = gateway.call("meta/memory/index", {"entity": "e", "topic": "t", "fact": "f"}, id=2)["result"]
    assert index["assertion_id"] == "memory-assert-000008"
    assert gateway.close() == 0


@pytest.mark.parametrize("in_the_way", ["elephant-memory-state.tmp", LEDGER])
def test_apply_refuses_and_changes_nothing_when_a_stage_or_an_adopted_ledger_sits_beside_it(
    predecessor_state: Path, run_gateway: Callable[..., Any], in_the_way: str
) -> None:
    (predecessor_state / in_the_way).write_bytes(b'{"assertions": [], "conflicts": []}')
    before = snapshot(predecessor_state)
    run = run_gateway("storage-adopt-predecessor", "--state-dir", str(predecessor_state), "--apply")
    assert run.status == 2
    assert str(predecessor_state / in_the_way) in run.stderr and "refusing" in run.stderr
    assert "Traceback" not in run.stderr
    assert snapshot(predecessor_state) == before
