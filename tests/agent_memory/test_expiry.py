"""Expiry on both backends: ``remember`` / ``update`` with ``ttl_ms`` or ``expires_at_ms``. From the
moment a record's expiry comes it is never recalled (contextual or newest), injected or exported,
``list`` shows it only under ``status: expired`` and ``get`` and ``history`` say ``expired``; the
upkeep's sweep then deletes it with its lineage and leaves a receipt. An update keeps the expiry
unless it sets or clears it; bad expiry params are refused naming the field. Time is the
runtime's manual clock, so "expired" is exact, never a sleep."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from meta_memory.errors import InvalidParams, UnknownRecord
from meta_memory.memory.transfer.exporter import export_realms

from ..conftest import Backend
from ..panel.conftest import Bench, access_config, open_bench

GET = "meta/agent_memory/get"
RECALL = "meta/agent_memory/recall"
LIST = "meta/agent_memory/list"


@pytest.fixture
def bench(tmp_path: Path, backend: Backend) -> Iterator[Bench]:
    made = open_bench(tmp_path / "state", access_config(), backend)
    yield made
    made.runtime.close()


def _remember(bench: Bench, title: str, body: str, **expiry: Any) -> dict[str, Any]:
    bench.tick()
    reply: dict[str, Any] = bench.sdk(
        "meta/agent_memory/remember", {"identity": "lead", "title": title, "body": body, **expiry}
    )
    return reply


def _recalled(bench: Bench, **params: Any) -> list[str]:
    reply = bench.sdk(RECALL, {"identity": "lead", **params})
    return [r["memory_id"] for r in reply["records"]]


def _listed(bench: Bench, status: str | None = None) -> dict[str, str]:
    params = {"identity": "lead", "limit": 200, **({"status": status} if status else {})}
    return {r["memory_id"]: r["status"] for r in bench.sdk(LIST, params)["records"]}


def test_an_expired_record_is_never_recalled_injected_listed_as_active_or_exported(bench: Bench) -> None:
    now = bench.clock.now_ms()
    plan = _remember(bench, "Plan for today", "Ship the release notes today.", ttl_ms=60_000)
    assert plan["expires_at_ms"] == now + 1 + 60_000  # the write's own time plus the ttl
    keep = _remember(bench, "Release rule", "Release notes ship with every release.")
    assert "expires_at_ms" not in keep
    session = bench.session("lead")
    assert (
        plan["memory_id"]
        in bench.sdk("meta/session/turn", {"session_key": session, "message": "release notes"})["injected"]
    )

    bench.tick(plan["expires_at_ms"] - 1 - bench.clock.now_ms())  # one millisecond before: still there
    assert plan["memory_id"] in _recalled(bench, query_text="release notes")
    bench.tick(1)  # its expiry has come
    assert _recalled(bench, query_text="release notes") == [keep["memory_id"]]
    assert _recalled(bench, selection="always") == [keep["memory_id"]]
    fresh = bench.session("lead")
    turn = bench.sdk(
        "meta/session/turn", {"session_key": fresh, "message": "what about the release notes today?"}
    )
    assert plan["memory_id"] not in turn["injected"] and keep["memory_id"] in turn["injected"]
    assert "Ship the release notes" not in turn["text"]
    built = bench.sdk("meta/session/build_context", {"session_key": bench.session("lead")})
    assert "Ship the release notes" not in json.dumps(built)

    assert _listed(bench) == {keep["memory_id"]: "active"}
    assert _listed(bench, "expired") == {plan["memory_id"]: "expired"}
    assert _listed(bench, "any")[plan["memory_id"]] == "expired"
    got = bench.sdk(GET, {"identity": "lead", "memory_id": plan["memory_id"]})["record"]
    assert got["status"] == "expired" and got["expires_at_ms"] == plan["expires_at_ms"]
    (version,) = bench.sdk("meta/agent_memory/history", {"identity": "lead", "memory_id": plan["memory_id"]})[
        "versions"
    ]
    assert version["ended"] == "expired"

    lines: list[bytes] = []
    export_realms([bench.store()], lines.append, now_ms=bench.clock.now_ms())
    exported = {json.loads(line)["record"]["id"] for line in lines[1:]}
    assert exported == {keep["memory_id"]}


def test_the_sweep_deletes_expired_records_with_their_lineage_and_leaves_a_receipt(bench: Bench) -> None:
    first = _remember(bench, "Door code", "The door code is changing soon.", ttl_ms=1_000)
    bench.tick()
    second = bench.sdk(
        "meta/agent_memory/update",
        {
            "identity": "lead",
            "memory_id": first["memory_id"],
            "title": "Door code",
            "body": "It changed today.",
        },
    )
    kept = _remember(bench, "Office", "The office is on the third floor.")
    memory = bench.runtime.agent_memory
    assert memory is not None
    assert memory.expiry.sweep() is False  # nothing due yet: nothing deleted
    assert (
        bench.sdk(GET, {"identity": "lead", "memory_id": second["memory_id"]})["record"]["status"] == "active"
    )

    bench.tick(1_000)  # the update kept the expiry of the version it replaced
    memory.expiry.sweep()
    for memory_id in (first["memory_id"], second["memory_id"]):
        with pytest.raises(UnknownRecord):
            bench.sdk(GET, {"identity": "lead", "memory_id": memory_id})
    assert (
        bench.sdk(GET, {"identity": "lead", "memory_id": kept["memory_id"]})["record"]["status"] == "active"
    )
    (receipt,) = [r for r in bench.store().audit_rows() if r["op"] == "purge"]
    assert receipt["detail"]["by"] == {"kind": "expiry", "principal": None}
    assert {r["memory_id"] for r in receipt["detail"]["records"]} == {first["memory_id"], second["memory_id"]}
    assert _listed(bench, "expired") == {}


def test_an_update_sets_keeps_or_clears_the_expiry(bench: Bench) -> None:
    base = _remember(bench, "Note", "A note.", ttl_ms=10_000)

    def update(memory_id: str, **expiry: Any) -> dict[str, Any]:
        bench.tick()
        new = bench.sdk(
            "meta/agent_memory/update",
            {
                "identity": "lead",
                "memory_id": memory_id,
                "title": "Note",
                "body": f"A note {bench.clock.now_ms()}.",
                **expiry,
            },
        )["memory_id"]
        record: dict[str, Any] = bench.sdk(GET, {"identity": "lead", "memory_id": new})["record"]
        return record

    kept = update(base["memory_id"])
    assert kept["expires_at_ms"] == base["expires_at_ms"]
    later = bench.clock.now_ms() + 500_000
    moved = update(kept["memory_id"], expires_at_ms=later)
    assert moved["expires_at_ms"] == later
    cleared = update(moved["memory_id"], expires_at_ms=None)
    assert cleared["expires_at_ms"] is None
    bench.tick(10**9)
    assert cleared["memory_id"] in _recalled(bench, query_text="note")


def test_a_record_that_expires_is_never_the_duplicate_a_remember_returns(bench: Bench) -> None:
    temporary = _remember(bench, "Parking", "Park on level two.", ttl_ms=1_000)
    lasting = _remember(bench, "Parking", "Park on level two.")
    assert lasting["memory_id"] != temporary["memory_id"] and "expires_at_ms" not in lasting
    again = _remember(bench, "Parking", "Park on level two.")
    assert again["memory_id"] == lasting["memory_id"]  # the one that never expires is the duplicate
    bench.tick(1_000)
    assert _recalled(bench, query_text="parking") == [lasting["memory_id"]]


@pytest.mark.parametrize(
    ("expiry", "message"),
    [
        ({"ttl_ms": 0}, "ttl_ms must be an integer between 1 and"),
        ({"ttl_ms": "soon"}, "ttl_ms must be an integer"),
        ({"ttl_ms": 5, "expires_at_ms": 10**13}, "expires_at_ms and ttl_ms are exclusive"),
        ({"expires_at_ms": 1}, "expires_at_ms must be in the future"),
        ({"expires_at_ms": True}, "expires_at_ms must be a positive integer"),
    ],
)
def test_bad_expiry_params_are_refused_naming_the_field(
    bench: Bench, expiry: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidParams, match=message):
        _remember(bench, "Refused", "Never written.", **expiry)
    assert _listed(bench, "any") == {}
