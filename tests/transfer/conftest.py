"""Fixtures for export and import: runtimes on real state dirs of either backend, a second store to
import into (a fresh state dir; on PostgreSQL a schema of its own too), a realm with a history
written through the runtime's normal API, and real ``meta_gateway`` runs configured onto the
backend."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from meta_memory.clock import ManualClock
from meta_memory.config import DEFAULT_CONFIG, load_config_dict
from meta_memory.memory.params import ForgetParams, RememberParams, UpdateParams
from meta_memory.memory.records import OPERATOR, Record, Scope, ScopeKind
from meta_memory.memory.service import AgentDraft, AgentMemory
from meta_memory.memory.store import RealmStore
from meta_memory.memory.validator import CreateOp, WriteBatch
from meta_memory.review import DecideParams
from meta_memory.runtime import MetaRuntime

from ..conftest import BACKENDS, Backend, make_backend
from ..gateway.conftest import (  # noqa: F401  (fixtures shared with the gateway suite)
    DEADLINE_S,
    gateway_command,
    launch_stdio,
    stdio_gateway,
)

FIXTURES = Path(__file__).parent / "fixtures"
UNICODE_BODY = (
    "Zürich café ☕, 東京 and עברית; a line\u2028separator, a next line\u0085 and e\u0301 combined 🧪"
)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    """Export and import run against both backends."""
    yield from make_backend(request.param, request)


@pytest.fixture
def target(backend: Backend, request: pytest.FixtureRequest) -> Iterator[Backend]:
    """Where an export is imported: the same kind of backend, empty (PostgreSQL: another schema)."""
    yield from make_backend(backend.name, request)


def toml_config(backend: Backend) -> str:
    """The default config (ledger persisted, agent memory on) as TOML, on ``backend``."""
    text = '[memory]\nkind = "local_json"\n\n[agent_memory]\nenabled = true\n'
    if backend.dsn is not None:
        text += f'store = "postgres"\n\n[agent_memory.postgres]\ndsn = "{backend.dsn}"\n'
    return text


@dataclass(frozen=True)
class Run:
    status: int
    stdout: bytes
    stderr: str

    @property
    def text(self) -> str:
        return self.stdout.decode("utf-8")


@pytest.fixture
def cli(tmp_path: Path) -> Callable[..., Run]:
    """``cli(backend, *args, stdin=b"")``: ``meta_gateway <args> --config <backend's config>`` to
    completion (the config is written once per backend)."""

    def run(backend: Backend, *args: str, stdin: bytes = b"") -> Run:
        config = tmp_path / f"config-{backend.name}-{abs(hash(backend.dsn))}.toml"
        if not config.exists():
            config.write_text(toml_config(backend))
        done = subprocess.run(
            [*gateway_command(), *args, "--config", str(config)],
            input=stdin,
            capture_output=True,
            timeout=DEADLINE_S,
        )
        return Run(done.returncode, done.stdout, done.stderr.decode("utf-8", "replace"))

    return run


@pytest.fixture
def open_runtime(clock: ManualClock) -> Iterator[Callable[[Path, Backend], MetaRuntime]]:
    """``open_runtime(state_dir, backend)``: a runtime on ``state_dir`` (closed at teardown unless
    closed before: the CLI needs the state dir's lock)."""
    opened: list[MetaRuntime] = []

    def open_(state_dir: Path, backend: Backend) -> MetaRuntime:
        runtime = MetaRuntime.open(state_dir, load_config_dict(backend.config(DEFAULT_CONFIG)), clock=clock)
        opened.append(runtime)
        return runtime

    yield open_
    for runtime in opened:
        runtime.close()


def memory_of(runtime: MetaRuntime) -> AgentMemory:
    assert runtime.agent_memory is not None
    return runtime.agent_memory


@dataclass
class History:
    """What :func:`write_history` left, by role."""

    updated: Record  # superseded by ``update``
    update: Record
    forgotten: Record
    released_origin: Record  # quarantined, then released: tombstoned, with its successor
    released: Record
    quarantined: Record  # still awaiting review (a quarantined update of ``update``)
    other_realm: Record
    realm_scoped: Record


def write_history(runtime: MetaRuntime, clock: ManualClock) -> History:
    """A realm with every kind of history, through the runtime's normal API: tags, unicode, an
    update, a forget, a quarantine released, one still pending, a second realm and a realm-scoped
    record an operator wrote."""
    memory = memory_of(runtime)

    ALICE = Scope.identity("default", "alice")

    def tick() -> None:
        clock.advance(1000)

    first = memory.remember(
        RememberParams("alice", "default", "Coffee order", UNICODE_BODY, ("pref", "日本語"), ALICE)
    )
    tick()
    update, _ = memory.update(
        UpdateParams(
            "alice", "default", first.id, "Coffee order, v2", "Flat white, no sugar", ("pref",), ALICE
        )
    )
    tick()
    forgotten = memory.remember(RememberParams("alice", "default", "Old address", "12 Elm Street", (), ALICE))
    tick()
    memory.forget(ForgetParams("alice", "default", forgotten.id, ALICE))
    tick()
    origin, _ = memory.agent_remember(
        AgentDraft(
            "alice", "default", "Deploy key rotation", "Rotate the deploy key every 90 days", ("ops",)
        ),
        quarantine_reason="written in a tainted session",
    )
    tick()
    assert runtime.review is not None
    outcome = runtime.review.decide(
        DecideParams("default", "alice", origin.id, "release", origin.content_hash, "checked by hand"),
        reviewer={"kind": "console", "principal": "op"},
    )
    assert outcome.successor is not None
    tick()
    pending = memory.agent_update(
        AgentDraft("alice", "default", "Coffee order, v3", "Oat milk now"),
        update.id,
        quarantine_reason="written in a tainted session",
    )
    tick()
    other = memory.remember(
        RememberParams(
            "bob", "second", "Bob's realm", "Bob keeps his own realm", ("x",), Scope.identity("second", "bob")
        )
    )
    tick()
    store = memory.store("default")
    realm_scoped = _operator_note(store, clock)
    return History(
        updated=_now(store, first.id),
        update=_now(store, update.id),
        forgotten=_now(store, forgotten.id),
        released_origin=_now(store, origin.id),
        released=_now(store, outcome.successor.id),
        quarantined=_now(store, pending.id),
        other_realm=_now(memory.store("second"), other.id),
        realm_scoped=realm_scoped,
    )


def _operator_note(store: RealmStore, clock: ManualClock) -> Record:
    from meta_memory.memory.records import Provenance, RecordKind, Status, Trust, content_hash

    title, body = "House rule", "Every realm answers in English"
    record = Record(
        id="note-1",
        scope=Scope(ScopeKind.REALM, "default"),
        kind=RecordKind.PROCEDURE,
        title=title,
        description="written by an operator",
        body=body,
        tags=("rule",),
        provenance=Provenance(author=OPERATOR),
        trust=Trust.OPERATOR,
        status=Status.ACTIVE,
        created_at_ms=clock.now_ms(),
        updated_at_ms=clock.now_ms(),
        content_hash=content_hash(title, body),
    )
    store.commit(WriteBatch("default", OPERATOR, (CreateOp(record),)))
    return _now(store, record.id)


def _now(store: RealmStore, memory_id: str) -> Record:
    found = store.get(memory_id)
    assert found is not None, memory_id
    return found


def lines_of(data: bytes) -> list[dict[str, Any]]:
    """An export's lines, parsed (the header first)."""
    return [json.loads(line) for line in data.split(b"\n") if line]


RELEASED_ON_ARRIVAL = "import: it was quarantined, and no release of it is committed in this store"
"""The quarantine reason a released record gets when it is imported: nothing in a file proves a
release, so it waits for a reviewer again."""


def as_arrived(export: bytes, quarantined: dict[str, str]) -> bytes:
    """``export`` as a fresh store holds it after an import: the records ``quarantined`` names
    (by id) arrive quarantined with the reason given, every other line unchanged."""
    lines = lines_of(export)
    for line in lines[1:]:
        reason = quarantined.get(line["record"]["id"])
        if reason is not None:
            line["record"]["status"] = {"status": "quarantined", "reason": reason}
            line["record"]["ever_quarantined"] = True
    return export_file(lines[1:], header=lines[0])


def export_file(records: list[dict[str, Any]], *, header: dict[str, Any] | None = None) -> bytes:
    """An export file of ``records`` (line objects), the way the exporter lays lines out."""
    head = header or {
        "format": "meta-memory-export",
        "version": 1,
        "include_history": True,
        "realm": None,
        "identity": None,
    }
    lines = [head, *records]
    return b"".join(
        json.dumps(line, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
        for line in lines
    )


def record_line(
    memory_id: str, title: str = "A title", body: str = "A body", **fields: Any
) -> dict[str, Any]:
    """A line of an application record of ``alice`` in realm ``default``; ``fields`` override the
    record's wire fields (``realm=`` the line's and the scope's realm)."""
    from meta_memory.memory.records import content_hash

    realm = fields.pop("realm", "default")
    record: dict[str, Any] = {
        "id": memory_id,
        "scope": {"scope": "identity", "realm": realm, "identity": "alice"},
        "kind": "fact",
        "title": title,
        "description": "",
        "body": body,
        "tags": [],
        "provenance": {"author": {"author": "application"}, "evidence": []},
        "trust": "agent_observed",
        "status": {"status": "active"},
        "supersedes": None,
        "derived_from": [],
        "ever_quarantined": False,
        "working_set_rank": None,
        "content_hash": content_hash(title, body),
        "created_at_ms": 1_700_000_000_000,
        "updated_at_ms": 1_700_000_000_000,
    }
    record.update(fields)
    return {"content_hash": record["content_hash"], "realm": realm, "record": record}
