"""Panel fixtures: a runtime with an access config (groups, roles, labels, tokens, a deny), principals
for each kind of reader, and a ``bench`` that writes memory through the public APIs and calls the
panel on the console surface as a given principal.

Roster: ``lead`` (role lead, team red), ``scout`` (role scout, team blue), ``analyst`` (role analyst,
team red); ``ghost`` is written to but unknown to the console. Readers:

- ``ROOT``: admin, sees everything.
- ``LEADS``: read + view on role ``lead`` only (no unscoped grant).
- ``RED``: read + view + quarantine review on team ``red`` identities.
- ``AUDITOR``: unscoped read + view + mob read, minus ``scout`` (an agent-scoped deny, which also
  withholds identities the console does not know); no review, no operator read.
- ``REVIEWER``: unscoped everything memory, including review and operator read.
- ``OUTSIDER``: authenticated, no grant.
- ``BLIND``: unscoped ``agent.memory.read`` without ``agent.view``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from meta_memory.access import Principal, hash_token
from meta_memory.clock import ManualClock
from meta_memory.config import load_config_dict
from meta_memory.errors import MetaError
from meta_memory.gateway.dispatch import CONSOLE, SDK, CallContext, Dispatcher
from meta_memory.gateway.methods import build_dispatcher
from meta_memory.memory.records import (
    OPERATOR,
    Author,
    Provenance,
    Record,
    RecordKind,
    Scope,
    ScopeKind,
    Status,
    Trust,
    content_hash,
)
from meta_memory.memory.store import RealmStore
from meta_memory.memory.validator import CreateOp, WriteBatch
from meta_memory.runtime import MetaRuntime

from ..conftest import BACKENDS, Backend, RawDb, make_backend

ROOT = Principal("root")
LEADS = Principal("lena", frozenset({"leads"}))
RED = Principal("rex", frozenset({"red"}))
AUDITOR = Principal("ada", frozenset({"audit"}))
REVIEWER = Principal("rev", frozenset({"review"}))
OUTSIDER = Principal("otto")
BLIND = Principal("bea", frozenset({"blind"}))

ROOT_TOKEN, AUDITOR_TOKEN = "tok-root-1", "tok-ada-1"
PANEL = "meta/memory/panel/"


def access_config(*, enabled: bool = True) -> dict[str, Any]:
    return {
        "agent_memory": {"enabled": True, "llm_writes": "quarantined"},
        "roster": [
            {"identity": "lead", "mob": "ops", "role": "lead", "labels": {"team": "red"}},
            {"identity": "scout", "mob": "ops", "role": "scout", "labels": {"team": "blue"}},
            {"identity": "analyst", "mob": "ops", "role": "analyst", "labels": {"team": "red"}},
        ],
        "console": {
            "auth": {
                # Anonymous callers beside tokens (explicitly allowed): the rules judge them too.
                "allow_anonymous": True,
                "tokens": [
                    {"token_sha256": hash_token(ROOT_TOKEN), "subject": "root"},
                    {"token_sha256": hash_token(AUDITOR_TOKEN), "subject": "ada", "groups": ["audit"]},
                ],
            }
        },
        "access": {
            "enabled": enabled,
            "admins": ["root"],
            "rules": [
                {
                    "id": "leads",
                    "groups": ["leads"],
                    "actions": ["agent.memory.read", "agent.view"],
                    "roles": ["lead"],
                },
                {
                    "id": "red-team",
                    "groups": ["red"],
                    "actions": ["agent.memory.read", "agent.view", "memory.quarantine.review"],
                    "match_labels": {"team": "red"},
                },
                {
                    "id": "auditors",
                    "groups": ["audit"],
                    "actions": ["agent.memory.read", "agent.view", "mob.memory.read"],
                },
                {
                    "id": "auditors-not-scout",
                    "effect": "deny",
                    "groups": ["audit"],
                    "actions": ["agent.memory.read"],
                    "agents": ["scout"],
                },
                {"id": "blind", "groups": ["blind"], "actions": ["agent.memory.read"]},
                # The identities' agents propose to their mob (an identity is its own principal).
                {
                    "id": "proposers",
                    "subjects": ["lead", "scout", "analyst"],
                    "actions": ["mob.memory.propose"],
                },
                {
                    "id": "reviewers",
                    "groups": ["review"],
                    "actions": [
                        "agent.memory.*",
                        "agent.view",
                        "mob.memory.read",
                        "operator.memory.read",
                        "memory.quarantine.review",
                    ],
                },
            ],
        },
    }


@dataclass
class Bench:
    """One runtime, written through its public APIs and read through the panel."""

    runtime: MetaRuntime
    clock: ManualClock
    dispatcher: Dispatcher
    backend: Backend = field(default_factory=lambda: Backend("sqlite"))

    def call(self, method: str, params: Any = None, principal: Principal = ROOT) -> Any:
        return self.dispatcher.call(method, params, CallContext(CONSOLE, principal=principal))

    def panel(self, verb: str, params: Any = None, principal: Principal = ROOT) -> Any:
        return self.call(PANEL + verb, params, principal)

    def refusal(self, verb: str, params: Any = None, principal: Principal = ROOT) -> MetaError:
        with pytest.raises(MetaError) as caught:
            self.panel(verb, params, principal)
        return caught.value

    def sdk(self, method: str, params: Any) -> Any:
        return self.dispatcher.call(method, params, CallContext(SDK))

    def tick(self, ms: int = 1) -> None:
        self.clock.advance(ms)

    def store(self, realm: str = "default") -> RealmStore:
        assert self.runtime.agent_memory is not None
        return self.runtime.agent_memory.store(realm)

    def remember(self, identity: str, title: str, body: str | None = None, *, realm: str = "default") -> str:
        """An application ``remember`` (active), one millisecond after the previous write."""
        self.tick()
        params = {"identity": identity, "title": title, "body": body or f"{title}: details.", "realm": realm}
        return str(self.sdk("meta/agent_memory/remember", params)["memory_id"])

    def session(self, identity: str, *, realm: str = "default", mob: str | None = None) -> str:
        params = {"identity": identity, "realm": realm, **({"mob": mob} if mob else {})}
        return str(self.sdk("meta/session/open", params)["session_key"])

    def tool(self, session_key: str, **arguments: Any) -> dict[str, Any]:
        self.tick()
        result: dict[str, Any] = self.sdk(
            "meta/session/memory_tool", {"session_key": session_key, "arguments": arguments}
        )
        return result

    def quarantine(
        self, identity: str, title: str, body: str | None = None, *, realm: str = "default", **arguments: Any
    ) -> str:
        """An LLM write through a host session's ``memory`` tool; it lands quarantined."""
        action = "update" if "memory_id" in arguments else "remember"
        result = self.tool(
            self.session(identity, realm=realm),
            action=action,
            title=title,
            body=body or f"{title}: details.",
            **arguments,
        )
        assert result["outcome"] == "quarantined", result
        return [w.strip(".,") for w in result["content"].split() if w.startswith("mem-")][-1]

    def decide(self, memory_id: str, verdict: str, *, identity: str, realm: str = "default") -> Any:
        """An operator's quarantine decision (as the admin), bound to the current content hash."""
        self.tick()
        record = self.store(realm).get(memory_id)
        assert record is not None
        params = {
            "realm": realm,
            "identity": identity,
            "memory_id": memory_id,
            "verdict": verdict,
            "expected_content_hash": record.content_hash,
        }
        return self.call("meta/memory/quarantine/decide", params)

    def put(
        self,
        realm: str,
        kind: ScopeKind,
        key: str,
        title: str,
        *,
        memory_id: str | None = None,
        status: Status = Status.ACTIVE,
        body: str | None = None,
        author: Author = OPERATOR,
        supersedes: str | None = None,
        at_ms: int | None = None,
    ) -> Record:
        """A record of any scope committed through the realm store's validator (``store.commit``)."""
        body = body or f"{title}: details."
        now = at_ms if at_ms is not None else self.clock.now_ms()
        digest = content_hash(title, body)
        record = Record(
            id=memory_id or f"mem-{kind.value}-{key or 'realm'}-{title.replace(' ', '-').lower()}",
            scope=Scope(kind, realm, key),
            kind=RecordKind.FACT,
            title=title,
            description="",
            body=body,
            tags=(),
            provenance=Provenance(author=author),
            trust=Trust.AGENT_OBSERVED if author.is_llm else Trust.OPERATOR,
            status=status,
            created_at_ms=now,
            updated_at_ms=now,
            content_hash=digest,
            supersedes=supersedes,
            quarantine_reason="test" if status is Status.QUARANTINED else None,
        )
        return (
            self.store(realm)
            .commit(WriteBatch(realm, author, (CreateOp(record),), f"put {title}"))
            .records[0]
        )

    @contextmanager
    def db(self, realm: str = "default") -> Iterator[RawDb]:
        """A second connection to the realm's store, for tables no API fills yet; committed on exit."""
        self.store(realm)  # the realm exists before rows are written behind the API
        with self.backend.db(self.runtime.layout.root, realm=realm) as conn:
            yield conn


def open_bench(state: Path, config: dict[str, Any], backend: Backend | None = None) -> Bench:
    backend = backend or Backend("sqlite")
    clock = ManualClock()
    runtime = MetaRuntime.open(state, load_config_dict(backend.config(config)), clock=clock)
    return Bench(runtime, clock, build_dispatcher(runtime), backend)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    """This suite runs against both backends."""
    yield from make_backend(request.param, request)


@pytest.fixture
def bench(tmp_path: Path, backend: Backend) -> Iterator[Bench]:
    made = open_bench(tmp_path / "state", access_config(), backend)
    yield made
    made.runtime.close()


@pytest.fixture
def unguarded(tmp_path: Path, backend: Backend) -> Iterator[Bench]:
    """The same data model with access control disabled: everything is visible."""
    made = open_bench(tmp_path / "open", access_config(enabled=False), backend)
    yield made
    made.runtime.close()
