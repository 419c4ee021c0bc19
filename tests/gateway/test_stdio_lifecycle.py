"""The stdio gateway's life cycle with real processes: restart on the same state dir, the
single-runtime lock, SIGTERM, and the legacy agent-memory directory."""

from __future__ import annotations

import shutil
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

from meta_memory import CONTRACT_VERSION, Meta, local_json

IDX, QRY, STO = "meta/memory/index", "meta/memory/query", "meta/memory/stores"
REM, REC = "meta/agent_memory/remember", "meta/agent_memory/recall"


def test_a_restart_on_the_same_state_dir_serves_what_was_indexed_and_remembered(
    stdio_gateway: Callable[..., Any], tmp_path: Path
) -> None:
    state = tmp_path / "state"
    first = stdio_gateway(state)
    fact = first.call(
        IDX, {"entity": " Deploy ", "topic": "Window", "store": "timeline", "fact": "Tuesdays only"}
    )
    first.call(
        IDX,
        {"entity": "deploy", "topic": "window", "conflict": True, "conflict_reason": "Ops: Fridays"},
        id=2,
    )
    note = first.call(
        REM, {"identity": "lead:main", "title": "Deploys", "body": "Deploys need ops approval."}, id=3
    )
    assert first.close() == 0

    second = stdio_gateway(state)
    query = second.call(QRY, {"entity": "DEPLOY"})["result"]
    assert [(a["assertion_id"], a["store"], a["fact"]) for a in query["assertions"]] == [
        (fact["result"]["assertion_id"], "timeline", "Tuesdays only")
    ]
    assert [(c["entity"], c["topic"], c["reason"]) for c in query["conflicts"]] == [
        ("deploy", "window", "Ops: Fridays")
    ]
    counts = {s["store"]: s["record_count"] for s in second.call(STO, id=2)["result"]["stores"]}
    assert counts == {"knowledge_graph": 1, "vector": 0, "timeline": 1, "todo": 0, "top_of_mind": 0}
    recalled = second.call(REC, {"identity": "lead:main", "selection": "always"}, id=3)["result"]
    assert [r["memory_id"] for r in recalled["records"]] == [note["result"]["memory_id"]]
    again = second.call(IDX, {"entity": "e", "topic": "t", "fact": "f"}, id=4)["result"]
    assert again["assertion_id"] > fact["result"]["assertion_id"]  # the sequence resumes, ids never repeat
    assert second.close() == 0


def test_a_second_runtime_is_refused_while_the_first_serves_and_starts_once_sigterm_ended_it(
    stdio_gateway: Callable[..., Any], tmp_path: Path, wire_json: Callable[[bytes], Any]
) -> None:
    state = tmp_path / "state"
    first = stdio_gateway(state)
    first.call(IDX, {"entity": "e", "topic": "t", "fact": "kept"})

    second = stdio_gateway(state, handshake=False)
    assert second.wait() == 2
    [line] = second.remaining_lines()
    error = wire_json(line)["error"]
    assert error["code"] == -32014
    assert f"pid {first.proc.pid}" in error["message"] and str(state) in error["message"]

    assert first.signal(signal.SIGTERM) == 0
    assert "Traceback" not in first.stderr_text()
    third = stdio_gateway(state)
    assert third.handshake == {"contract_version": CONTRACT_VERSION}
    assert [a["fact"] for a in third.call(QRY)["result"]["assertions"]] == ["kept"]
    assert third.close() == 0


def test_the_legacy_agent_memory_dir_alone_is_opened_in_place_and_no_twin_is_created(
    stdio_gateway: Callable[..., Any], tmp_path: Path
) -> None:
    state = tmp_path / "state"
    with Meta.builder().persistent_state(state).memory(local_json()).agent_memory().build() as meta:
        old = meta.remember_agent_memory("lead:main", title="Deploys", body="Deploys need ops approval.")
    shutil.move(state / "agent-memory", state / "agent-memory-sqlite")

    gateway = stdio_gateway(state)
    recalled = gateway.call(REC, {"identity": "lead:main", "selection": "always"})["result"]["records"]
    assert [r["memory_id"] for r in recalled] == [old.memory_id]
    gateway.call(
        REM,
        {"identity": "lead:main", "realm": "ops", "title": "Pager", "body": "Pager rota is weekly."},
        id=2,
    )
    assert gateway.close() == 0
    assert sorted(p.name for p in (state / "agent-memory-sqlite").glob("*.sqlite3")) == [
        "default.sqlite3",
        "ops.sqlite3",
    ]
    assert not (state / "agent-memory").exists()
