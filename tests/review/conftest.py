"""Fixtures for quarantine review: a runtime whose LLM writes all land quarantined, and a ``desk`` that
quarantines records, decides them on the console surface, and reads the store behind its API (audit rows,
gated-promotion mappings and staged batches) on a connection of its own, on either backend."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from meta_memory import Meta, MetaHandle
from meta_memory.clock import ManualClock
from meta_memory.errors import MetaError
from meta_memory.gateway.dispatch import CONSOLE, CallContext
from meta_memory.memory.records import Record
from meta_memory.memory.store import RealmStore
from meta_memory.sdk import Session

from ..conftest import BACKENDS, Backend, RawDb, make_backend

DECIDE = "meta/memory/quarantine/decide"
VERDICT_EVENT = "memory.quarantine.verdict"
IDENTITY = "lead"


def crafted_hash(title: str, body: str) -> str:
    """REFERENCE 3.2 spelled out independently: sha256(len(title) as u64 LE ‖ title ‖ body)."""
    t = title.encode("utf-8")
    return hashlib.sha256(len(t).to_bytes(8, "little") + t + body.encode("utf-8")).hexdigest()


@dataclass
class Desk:
    """One reviewer's desk over one in-process runtime (``llm_writes = "quarantined"``)."""

    meta: MetaHandle
    clock: ManualClock
    backend: Backend

    @property
    def store(self) -> RealmStore:
        assert self.meta.runtime.agent_memory is not None
        return self.meta.runtime.agent_memory.store("default")

    def quarantine(
        self,
        title: str,
        body: str,
        *,
        identity: str = IDENTITY,
        session: Session | None = None,
        **arguments: Any,
    ) -> Record:
        """An LLM ``remember`` through a host session's ``memory`` tool; it must land quarantined."""
        return self._tool(
            identity, session, {"action": "remember", "title": title, "body": body, **arguments}
        )

    def quarantine_update(self, memory_id: str, title: str, body: str, *, identity: str = IDENTITY) -> Record:
        """An LLM ``update`` of ``memory_id``; it must land quarantined (the prior stays active)."""
        return self._tool(
            identity, None, {"action": "update", "memory_id": memory_id, "title": title, "body": body}
        )

    def _tool(self, identity: str, session: Session | None, arguments: dict[str, Any]) -> Record:
        result = (session or self.meta.open_session(identity)).memory_tool(arguments)
        assert result.outcome == "quarantined", result
        return self.record([w.strip(".,") for w in result.content.split() if w.startswith("mem-")][-1])

    def record(self, memory_id: str) -> Record:
        found = self.store.get(memory_id)
        assert found is not None, memory_id
        return found

    def decide(
        self,
        memory_id: str,
        verdict: str,
        *,
        principal: Any = None,
        expected: str | None = None,
        identity: str = IDENTITY,
        **extra: Any,
    ) -> Any:
        """``meta/memory/quarantine/decide`` on the console surface, bound to the current hash by default."""
        params = {
            "identity": identity,
            "memory_id": memory_id,
            "verdict": verdict,
            "expected_content_hash": expected
            if expected is not None
            else self.record(memory_id).content_hash,
            **extra,
        }
        return self.call(DECIDE, params, principal=principal)

    def call(self, method: str, params: Any, *, principal: Any = None) -> Any:
        return self.meta._dispatcher.call(method, params, CallContext(CONSOLE, principal=principal))

    def refusal(self, memory_id: str, verdict: str, **kwargs: Any) -> MetaError:
        with pytest.raises(MetaError) as caught:
            self.decide(memory_id, verdict, **kwargs)
        return caught.value

    def events(self) -> list[dict[str, Any]]:
        """Every ``memory.quarantine.verdict`` envelope so far (the sink is the runtime's timeline)."""
        sink: Any = self.meta.runtime.events
        return list(sink.events(VERDICT_EVENT))

    @contextmanager
    def db(self) -> Iterator[RawDb]:
        """A second connection to the store; committed on exit."""
        with self.backend.db(self.meta.runtime.layout.root) as conn:
            yield conn

    def audit_count(self) -> int:
        with self.db() as conn:
            return int(conn.execute("SELECT count(*) FROM audit").fetchone()[0])

    def add_promotion(
        self, record_id: str, *, pending_id: str, created_at_ms: int, status: str = "pending"
    ) -> str:
        """A gated-promotion mapping row and its staged batch; returns the stage token."""
        token = f"stage-{pending_id}"
        with self.db() as conn:
            conn.execute(
                "INSERT INTO promotions (pending_id, stage_token, record_id, scope_kind, scope_key, rationale, "
                "status, proposal_id, created_at_ms, resolved_at_ms) VALUES (?, ?, ?, 'mob', 'crew', 'promote', "
                "?, NULL, ?, NULL)",
                (pending_id, token, record_id, status, created_at_ms),
            )
            conn.execute(
                "INSERT INTO stage_batches (stage_token, batch, created_at_ms) VALUES (?, '{}', ?)",
                (token, created_at_ms),
            )
        return token

    def promotion(self, pending_id: str) -> tuple[str, int | None]:
        with self.db() as conn:
            status, resolved = conn.execute(
                "SELECT status, resolved_at_ms FROM promotions WHERE pending_id = ?", (pending_id,)
            ).fetchone()
        return status, resolved

    def staged(self, token: str) -> bool:
        with self.db() as conn:
            return (
                conn.execute("SELECT 1 FROM stage_batches WHERE stage_token = ?", (token,)).fetchone()
                is not None
            )

    def rewrite(self, memory_id: str, *, title: str | None = None, body: str) -> str:
        """Rewrite a stored record's content behind the validator (hash kept consistent); returns the hash."""
        current = self.record(memory_id)
        assert crafted_hash(current.title, current.body) == current.content_hash  # same rule as the store
        title = title if title is not None else current.title
        digest = crafted_hash(title, body)
        with self.db() as conn:
            conn.execute(
                "UPDATE records SET title = ?, body = ?, content_hash = ? WHERE id = ?",
                (title, body, digest, memory_id),
            )
        return digest


def _open(state: Path, clock: ManualClock, llm_writes: str, backend: Backend) -> MetaHandle:
    builder = Meta.builder().persistent_state(state)
    return builder.agent_memory(llm_writes=llm_writes, **backend.store_config()).clock(clock).build()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    """This suite runs against both backends."""
    yield from make_backend(request.param, request)


@pytest.fixture
def desk(tmp_path: Path, clock: ManualClock, backend: Backend) -> Iterator[Desk]:
    """Every LLM write quarantines (``llm_writes = "quarantined"``)."""
    with _open(tmp_path / "state", clock, "quarantined", backend) as meta:
        yield Desk(meta, clock, backend)


@pytest.fixture
def observed_desk(tmp_path: Path, clock: ManualClock, backend: Backend) -> Iterator[Desk]:
    """The default posture: only writes of tainted sessions quarantine (``llm_writes = "observed"``)."""
    with _open(tmp_path / "observed", clock, "observed", backend) as meta:
        yield Desk(meta, clock, backend)
