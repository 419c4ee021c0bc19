"""Fixtures for operator decisions on proposals: a runtime on either backend served by the real
ASGI app (``POST /rpc`` for the application, ``POST /console/rpc`` with bearer tokens for the
console), a roster of two members of mob ``crew``, and console principals of every kind.

Console subjects (one token each): ``alice`` and ``bob`` review everything (mob and operator
memory, quarantine, gating); ``rita`` reads mobs but commits none; ``carl`` commits to mobs but
reads none; ``olga`` administers operator memory (``agent.memory.admin`` + ``operator.memory.read``)
and reads no mob.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from meta_memory.access import hash_token
from meta_memory.clock import ManualClock
from meta_memory.config import load_config_dict
from meta_memory.errors import MetaError, error_from_wire
from meta_memory.gateway.http import build_app
from meta_memory.memory.records import Record
from meta_memory.runtime import MetaRuntime

from ...conftest import BACKENDS, Backend, RawDb, make_backend

DECIDE = "meta/memory/proposals/decide"
SUBJECTS = ("alice", "bob", "rita", "carl", "olga")
ADMIN = "root"


def token(subject: str) -> str:
    return f"tok-{subject}-7f3a"


def floor_config(**agent_memory: Any) -> dict[str, Any]:
    return {
        "agent_memory": {"enabled": True, "operator_scope": "provisional", **agent_memory},
        "roster": [
            {"identity": "lead", "mob": "crew", "role": "lead"},
            {"identity": "scout", "mob": "crew", "role": "scout"},
        ],
        "console": {
            "auth": {
                "tokens": [{"token_sha256": hash_token(token(s)), "subject": s} for s in (*SUBJECTS, ADMIN)]
            }
        },
        "access": {
            "enabled": True,
            "admins": [ADMIN],
            "rules": [
                {
                    "id": "reviewers",
                    "subjects": ["alice", "bob"],
                    "actions": [
                        "agent.*",
                        "mob.memory.*",
                        "operator.memory.read",
                        "memory.quarantine.review",
                        "gating.*",
                        "timeline.read",
                    ],
                },
                {
                    "id": "mob-readers",
                    "subjects": ["rita"],
                    "actions": ["mob.memory.read", "agent.memory.read"],
                },
                {
                    "id": "mob-committers",
                    "subjects": ["carl"],
                    "actions": ["mob.memory.commit", "agent.memory.read"],
                },
                {
                    "id": "operators",
                    "subjects": ["olga"],
                    "actions": ["agent.memory.admin", "operator.memory.read", "agent.memory.read"],
                },
                # The members' agents propose to their mob and read it (an identity is its own principal).
                {
                    "id": "crew",
                    "subjects": ["lead", "scout"],
                    "actions": ["mob.memory.propose", "mob.memory.read"],
                },
            ],
        },
    }


@dataclass
class Floor:
    """One runtime behind the ASGI app: the application's calls and each console subject's."""

    runtime: MetaRuntime
    client: TestClient
    clock: ManualClock
    backend: Backend

    def _post(self, path: str, method: str, params: Any, headers: dict[str, str]) -> Any:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        reply = self.client.post(path, json=body, headers=headers).json()
        if "error" in reply:
            raise error_from_wire(reply["error"])
        return reply["result"]

    def rpc(self, method: str, params: Any = None) -> Any:
        """The application surface (``POST /rpc``; anonymous on loopback)."""
        return self._post("/rpc", method, params if params is not None else {}, {})

    def console(self, method: str, params: Any = None, *, subject: str = "alice") -> Any:
        """The console surface as ``subject``'s token."""
        headers = {"Authorization": f"Bearer {token(subject)}"}
        return self._post("/console/rpc", method, params if params is not None else {}, headers)

    def refused(self, call: Callable[[], Any]) -> MetaError:
        with pytest.raises(MetaError) as caught:
            call()
        return caught.value

    def propose(self, title: str, body: str, *, identity: str = "scout", tainted: bool = False) -> str:
        """A member's agent proposes to its mob through a host session's ``memory`` tool."""
        key = self.rpc("meta/session/open", {"identity": identity, "mob": "crew"})["session_key"]
        if tainted:
            self.rpc("meta/session/tool_result", {"session_key": key, "tool_name": "web_fetch"})
        arguments = {"action": "propose_to_mob", "title": title, "body": body}
        done = self.rpc("meta/session/memory_tool", {"session_key": key, "arguments": arguments})
        assert not done["is_error"], done
        return next(w.strip(".,;") for w in done["content"].split() if w.startswith("prop-"))

    def read(self, proposal_id: str, *, subject: str = "alice") -> dict[str, Any]:
        """``meta/memory/panel/proposal``: the proposal as a reviewer reads it."""
        found: dict[str, Any] = self.console(
            "meta/memory/panel/proposal", {"proposal_id": proposal_id}, subject=subject
        )
        return found["proposal"]

    def decide(
        self,
        proposal_id: str,
        verdict: str,
        *,
        subject: str = "alice",
        expected: str | None = None,
        **extra: Any,
    ) -> Any:
        """``meta/memory/proposals/decide``, bound to the hash a reviewer reads by default."""
        digest = expected if expected is not None else self.read(proposal_id, subject=ADMIN)["content_hash"]
        params = {"proposal_id": proposal_id, "verdict": verdict, "expected_content_hash": digest, **extra}
        return self.console(DECIDE, params, subject=subject)

    def listed(self, *, subject: str = "alice") -> dict[str, dict[str, Any]]:
        """The panel's open proposals, by id."""
        rows = self.console("meta/memory/panel/proposals", {}, subject=subject)["proposals"]
        return {row["proposal_id"]: row for row in rows}

    def status(self, proposal_id: str) -> str:
        return str(self.read(proposal_id, subject=ADMIN)["status"])

    def record(self, memory_id: str) -> Record:
        assert self.runtime.agent_memory is not None
        found = self.runtime.agent_memory.store("default").get(memory_id)
        assert found is not None, memory_id
        return found

    def mob_records(self) -> list[dict[str, Any]]:
        params = {"scope": "mob", "scope_key": "crew", "status": "active"}
        rows: list[dict[str, Any]] = self.console("meta/memory/panel/records", params, subject=ADMIN)[
            "records"
        ]
        return rows

    def events(self, event_type: str) -> list[dict[str, Any]]:
        assert self.runtime.timeline is not None
        return self.runtime.timeline.events(event_type)

    @contextmanager
    def db(self) -> Iterator[RawDb]:
        """A second connection to the realm's store; committed on exit."""
        assert self.runtime.agent_memory is not None
        self.runtime.agent_memory.store("default")  # the realm exists before rows are written behind the API
        with self.backend.db(self.runtime.layout.root) as conn:
            yield conn

    def audit_count(self) -> int:
        with self.db() as conn:
            return int(conn.execute("SELECT count(*) FROM audit").fetchone()[0])


@contextmanager
def serve(state: Path, config: dict[str, Any], backend: Backend, clock: ManualClock) -> Iterator[Floor]:
    runtime = MetaRuntime.open(state, load_config_dict(backend.config(config)), clock=clock)
    try:
        with TestClient(build_app(runtime), base_url="http://127.0.0.1:8765") as client:
            yield Floor(runtime, client, clock, backend)
    finally:
        runtime.close()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    """This suite runs against both backends."""
    yield from make_backend(request.param, request)


@pytest.fixture
def floor(tmp_path: Path, backend: Backend, clock: ManualClock) -> Iterator[Floor]:
    with serve(tmp_path / "state", floor_config(), backend, clock) as served:
        yield served
