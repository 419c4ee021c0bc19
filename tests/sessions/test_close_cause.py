"""Closing a host session with a retirement cause over the wire (``POST /rpc`` of the real app, on
both backends) queues an exit-interview harvest of the identity when the steward is on: durably, in
the realm store, once per session. ``panel/harvests`` lists it and the next dream takes it. Without
a cause, or with the steward off, nothing is queued, and the result says which."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from meta_memory import Meta
from meta_memory.clock import ManualClock
from meta_memory.config import load_config_dict
from meta_memory.gateway.http import build_app
from meta_memory.runtime import MetaRuntime
from meta_memory.steward import DreamInput, DreamVerdicts, HarvestVerdict

from ..conftest import Backend


@dataclass
class Interviewer:
    """A reviewer that keeps every harvested record, and remembers what it was shown."""

    seen: list[DreamInput] = field(default_factory=list)

    @property
    def name(self) -> str:
        return "interviewer"

    def review(self, dream: DreamInput) -> DreamVerdicts:
        self.seen.append(dream)
        kept = tuple(HarvestVerdict(r.id, "keep", "worth keeping") for h in dream.harvests for r in h.records)
        return DreamVerdicts(harvests=kept)


@dataclass
class Gateway:
    client: TestClient
    backend: Backend
    state: Path
    interviewer: Interviewer

    def call(self, method: str, params: dict[str, Any] | None = None, *, console: bool = False) -> Any:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}
        return self.client.post("/console/rpc" if console else "/rpc", json=body).json()

    def open(self, identity: str = "lead") -> str:
        return str(self.call("meta/session/open", {"identity": identity})["result"]["session_key"])

    def harvests(self) -> list[tuple[str, str, str]]:
        listed = self.call("meta/memory/panel/harvests", console=True)["result"]["harvests"]
        return [(h["identity"], h["session_key"], h["cause"]) for h in listed]

    def stored(self) -> list[tuple[Any, ...]]:
        return self.backend.stored(self.state, "SELECT identity, session_key, cause, status FROM harvests")


Serve = Callable[..., Gateway]


@pytest.fixture
def serve(tmp_path: Path, backend: Backend) -> Iterator[Serve]:
    opened: list[tuple[MetaRuntime, TestClient]] = []

    def start(*, steward: bool = True) -> Gateway:
        state = tmp_path / f"state-{len(opened)}"
        # A steward written with a day-long cadence: on, without a dream of its own during a test.
        section = {"enabled": True, "cadence": "*/1d"} if steward else {"enabled": False}
        config = load_config_dict(backend.config({"agent_memory": {"enabled": True, "steward": section}}))
        interviewer = Interviewer()
        runtime = MetaRuntime.open(state, config, clock=ManualClock(), steward_reviewer=interviewer)
        client = TestClient(build_app(runtime), base_url="http://127.0.0.1:8765")
        client.__enter__()
        opened.append((runtime, client))
        return Gateway(client, backend, state, interviewer)

    yield start
    for runtime, client in opened:
        client.__exit__(None, None, None)
        runtime.close()


def test_a_retirement_close_queues_an_exit_interview_the_next_dream_takes(serve: Serve) -> None:
    gateway = serve()
    note = gateway.call(
        "meta/agent_memory/remember", {"identity": "lead", "title": "VPN", "body": "Use the new VPN."}
    )
    key = gateway.open()

    closed = gateway.call("meta/session/close", {"session_key": key, "cause": "retired"})["result"]

    assert closed == {"closed": True, "harvest": "queued"}
    assert gateway.harvests() == [("lead", key, "retired")]
    assert gateway.stored() == [("lead", key, "retired", "pending")]
    report = gateway.call("meta/memory/steward/dream", {})["result"]
    [dream] = gateway.interviewer.seen
    assert [(h.identity, h.session_key, h.cause) for h in dream.harvests] == [("lead", key, "retired")]
    assert [r.id for r in dream.harvests[0].records] == [note["result"]["memory_id"]]
    assert ("harvest", "keep", "kept") in {
        (o["subject"], o["verdict"], o["outcome"]) for o in report["outcomes"]
    }
    assert gateway.harvests() == [] and gateway.stored() == [("lead", key, "retired", "completed")]


def test_a_close_without_a_cause_queues_nothing(serve: Serve) -> None:
    gateway = serve()
    closed = gateway.call("meta/session/close", {"session_key": gateway.open()})["result"]

    assert closed == {"closed": True, "harvest": None}
    assert gateway.harvests() == [] and gateway.stored() == []


def test_with_the_steward_off_a_retirement_close_queues_nothing_and_says_so(serve: Serve) -> None:
    gateway = serve(steward=False)
    closed = gateway.call("meta/session/close", {"session_key": gateway.open(), "cause": "respawned"})[
        "result"
    ]

    assert closed == {"closed": True, "harvest": "steward_disabled"}
    assert gateway.harvests() == [] and gateway.stored() == []


@pytest.mark.parametrize("cause", ["fired", "RETIRED", "", 1, ["retired"]])
def test_an_unknown_cause_is_refused_naming_cause_and_the_session_stays_open(
    serve: Serve, cause: Any
) -> None:
    gateway = serve()
    key = gateway.open()

    error = gateway.call("meta/session/close", {"session_key": key, "cause": cause})["error"]

    assert error["code"] == -32602 and error["message"].startswith("cause must be 'retired' or 'respawned'")
    assert "result" in gateway.call("meta/session/turn", {"session_key": key, "message": "still here?"})
    assert gateway.stored() == []


def test_a_session_closes_once_so_it_queues_one_harvest(serve: Serve) -> None:
    gateway = serve()
    key = gateway.open()
    gateway.call("meta/session/close", {"session_key": key, "cause": "retired"})

    again = gateway.call("meta/session/close", {"session_key": key, "cause": "respawned"})["error"]

    assert again["data"] == {"kind": "session_refused", "reason": "closed"}
    assert gateway.stored() == [("lead", key, "retired", "pending")]


def test_the_python_session_takes_the_cause_and_a_restart_keeps_the_harvest(
    tmp_path: Path, backend: Backend, clock: ManualClock
) -> None:
    def build() -> Any:
        options = {**backend.store_config(), "steward": {"enabled": True, "cadence": "*/1d"}}
        return (
            Meta.builder().persistent_state(tmp_path / "state").agent_memory(**options).clock(clock).build()
        )

    with build() as meta:
        session = meta.open_session("scout")
        assert session.close(cause="respawned") == "queued"
        assert meta.open_session("scout").close() is None
    with build() as meta:  # durable: the queue is the realm store's, not the process's
        [row] = meta.console.call("meta/memory/panel/harvests")["harvests"]
    assert (row["identity"], row["session_key"], row["cause"]) == ("scout", session.key, "respawned")
