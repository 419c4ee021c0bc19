"""Fixtures for the steward: a runtime (every LLM write quarantined, the roster putting ``lead`` and
``scout`` in mob ``crew``) whose steward judges with a :class:`ScriptedReviewer`, and a ``bench`` that
writes the queue (quarantined records, proposals, harvests), runs dreams, decides gates, and reads the
store behind its API on a connection of its own, on either backend."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from meta_memory.clock import ManualClock
from meta_memory.config import load_config_dict
from meta_memory.gating import parse_decide_params
from meta_memory.memory.params import parse_remember
from meta_memory.memory.records import Record, RecordKind
from meta_memory.memory.service import AgentDraft, AgentMemory
from meta_memory.memory.store import RealmStore
from meta_memory.runtime import MetaRuntime
from meta_memory.steward import DreamInput, DreamReport, DreamVerdicts, Steward

from ..conftest import BACKENDS, Backend, RawDb, make_backend

REALM = "default"
MOB = "crew"
DAY_MS = 24 * 3600 * 1000
SEVEN_DAYS_MS = 7 * DAY_MS


@dataclass
class ScriptedReviewer:
    """Answers whatever ``script`` returns for the input it is shown, and keeps every input it saw."""

    script: Callable[[DreamInput], DreamVerdicts] = lambda dream: DreamVerdicts()
    seen: list[DreamInput] = field(default_factory=list)

    @property
    def name(self) -> str:
        return "scripted"

    def review(self, dream: DreamInput) -> DreamVerdicts:
        self.seen.append(dream)
        return self.script(dream)


def config(backend: Backend | None = None, **steward: Any) -> Any:
    return load_config_dict(
        (backend or Backend("sqlite")).config(
            {
                "memory": {"kind": "local_json"},
                "agent_memory": {
                    "enabled": True,
                    "llm_writes": "quarantined",
                    "steward": {"enabled": False, **steward},
                },
                "roster": [
                    {"identity": "lead", "mob": MOB},
                    {"identity": "scout", "mob": MOB},
                    {"identity": "solo"},
                ],
            }
        )
    )


@dataclass
class Bench:
    runtime: MetaRuntime
    clock: ManualClock
    reviewer: ScriptedReviewer
    backend: Backend = field(default_factory=lambda: Backend("sqlite"))

    @property
    def memory(self) -> AgentMemory:
        assert self.runtime.agent_memory is not None
        return self.runtime.agent_memory

    @property
    def steward(self) -> Steward:
        assert self.runtime.steward is not None
        return self.runtime.steward

    @property
    def store(self) -> RealmStore:
        return self.memory.store(REALM)

    def quarantine(
        self, title: str, body: str, *, identity: str = "lead", kind: RecordKind = RecordKind.FACT
    ) -> Record:
        draft = AgentDraft(identity=identity, realm=REALM, title=title, body=body, kind=kind)
        record, _ = self.memory.agent_remember(draft, quarantine_reason="llm_writes_quarantined")
        return record

    def remember(self, title: str, body: str, *, identity: str = "lead") -> Record:
        return self.memory.remember(
            parse_remember({"identity": identity, "title": title, "body": body}, default_realm="default")
        )

    def propose(
        self, title: str, body: str, *, identity: str = "lead", mob: str = MOB, tainted: bool = False
    ) -> str:
        draft = AgentDraft(identity=identity, realm=REALM, title=title, body=body)
        return self.memory.propose(draft, mob, tainted=tainted)

    def record(self, memory_id: str) -> Record:
        found = self.store.get(memory_id)
        assert found is not None, memory_id
        return found

    def dream(self, script: Callable[[DreamInput], DreamVerdicts] | None = None) -> DreamReport:
        if script is not None:
            self.reviewer.script = script
        return self.steward.dream(REALM)

    def decide_gate(self, pending_id: str, decision: str, approver: str = "operator-1") -> Any:
        """Decide as a quarantine reviewer does on the console (its reviewer check lets it)."""
        params = {"pending_id": pending_id, "approver_id": approver, "decision": decision}
        return self.runtime.gating.decide(parse_decide_params(params), reviewer=lambda entry: None)

    def events(self, event_type: str | None = None) -> list[dict[str, Any]]:
        sink: Any = self.runtime.events
        return list(sink.events(event_type))

    @contextmanager
    def db(self) -> Iterator[RawDb]:
        with self.backend.db(self.runtime.layout.root) as conn:
            yield conn

    def promotion(self, pending_id: str) -> tuple[str, int | None]:
        with self.db() as conn:
            row = conn.execute(
                "SELECT status, resolved_at_ms FROM promotions WHERE pending_id = ?", (pending_id,)
            ).fetchone()
        assert row is not None, pending_id
        return row[0], row[1]

    def promotions(self) -> list[tuple[str, str, str]]:
        with self.db() as conn:
            return conn.execute(
                "SELECT pending_id, record_id, status FROM promotions ORDER BY created_at_ms"
            ).fetchall()

    def stage_count(self) -> int:
        with self.db() as conn:
            return int(conn.execute("SELECT count(*) FROM stage_batches").fetchone()[0])

    def proposal_status(self, proposal_id: str) -> str:
        with self.db() as conn:
            return str(
                conn.execute("SELECT status FROM proposals WHERE proposal_id = ?", (proposal_id,)).fetchone()[
                    0
                ]
            )

    def scope_records(self, kind: str, key: str) -> list[Record]:
        with self.db() as conn:
            ids = [
                r[0]
                for r in conn.execute(
                    "SELECT r.id FROM records r JOIN scopes s ON s.scope_id = r.scope_id "
                    "WHERE s.kind = ? AND s.key = ? ORDER BY r.doc",
                    (kind, key),
                )
            ]
        return [self.record(i) for i in ids]

    def rewrite(self, memory_id: str, body: str) -> str:
        """Rewrite a stored record's body behind the validator (hash kept consistent); returns the hash."""
        title = self.record(memory_id).title
        t = title.encode()
        digest = hashlib.sha256(len(t).to_bytes(8, "little") + t + body.encode()).hexdigest()
        with self.db() as conn:
            conn.execute(
                "UPDATE records SET body = ?, content_hash = ? WHERE id = ?", (body, digest, memory_id)
            )
        return digest


def open_bench(path: Path, clock: ManualClock, backend: Backend | None = None, **steward: Any) -> Bench:
    reviewer = ScriptedReviewer()
    backend = backend or Backend("sqlite")
    runtime = MetaRuntime.open(path, config(backend, **steward), clock=clock, steward_reviewer=reviewer)
    return Bench(runtime, clock, reviewer, backend)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    """This suite runs against both backends."""
    yield from make_backend(request.param, request)


@pytest.fixture
def bench(tmp_path: Path, clock: ManualClock, backend: Backend) -> Iterator[Bench]:
    b = open_bench(tmp_path / "state", clock, backend)
    yield b
    b.runtime.close()
