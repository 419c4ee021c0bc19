"""No console caller ever receives an event, a pending promotion or a quarantined record outside its
grants, over generated access configurations, principals and data, through the real console surface.

Each example opens a runtime on a fresh state dir, writes quarantined memory through host sessions,
emits identity and system events, plants pending gated promotions in the realm file, and then reads
``meta/timeline/query``, ``meta/memory/panel/quarantine`` and ``meta/memory/panel/record`` as several
principals (always including anonymous and an admin). What each caller may receive is computed
independently from the access engine; adding a deny rule is checked never to widen what is served.
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from meta_memory.access import ACTIONS, ANONYMOUS, Principal, Resource
from meta_memory.access.actions import MEMORY_QUARANTINE_REVIEW, TIMELINE_READ
from meta_memory.clock import ManualClock
from meta_memory.config import load_config_dict
from meta_memory.errors import AccessDenied
from meta_memory.events import SYSTEM_IDENTITY
from meta_memory.gateway.dispatch import CONSOLE, CallContext, Dispatcher
from meta_memory.gateway.methods import build_dispatcher
from meta_memory.runtime import MetaRuntime
from meta_memory.sessions import MemoryToolParams, parse_open

ADMIN = "root"
REALM = "default"
ROSTER: list[dict[str, Any]] = [
    {"identity": "red", "mob": "alpha", "role": "writer", "labels": {"team": "red"}},
    {"identity": "blue", "mob": "alpha", "role": "reviewer", "labels": {"team": "blue", "tier": "gold"}},
    {"identity": "bare"},
]
# ``ghost`` writes memory and has events but the console does not know it (selectors fail closed).
IDENTITIES = ["red", "blue", "bare", "ghost"]
PATTERNS = [*sorted(ACTIONS), "*", "agent.*", "agent.memory.*", "memory.*", "mob.*", "timeline.*"]
TARGETS = [
    *(("identity", i) for i in IDENTITIES),
    ("mob", "alpha"),
    ("mob", "beta"),
    ("operator", "acme"),
    ("realm", ""),
]

_few = st.lists


# Whole grants a reader needs, drawn as often as loose patterns so callers do receive things.
BUNDLES = [
    ["*"],
    ["agent.*", "memory.*", "mob.*", "operator.memory.read", "timeline.read"],
    ["agent.memory.read", "agent.view", "memory.quarantine.review", "timeline.read"],
    ["agent.memory.read", "agent.view", "memory.quarantine.review", "mob.memory.read"],
    ["agent.memory.*", "agent.view", "timeline.*"],
    ["agent.memory.read", "agent.view", "mob.memory.read"],
    ["memory.quarantine.review"],
]


def selector(values: list[str]) -> st.SearchStrategy[list[str]]:
    """Mostly empty (unconstrained), else one or two values."""
    return st.one_of(st.just([]), _few(st.sampled_from(values), min_size=1, max_size=2, unique=True))


def rule(effect: str | None = None) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "effect": st.just(effect) if effect else st.sampled_from(["allow", "allow", "deny"]),
            "subjects": selector(["*", "alice", "bob", ADMIN]),
            "groups": selector(["ops", "sre"]),
            "actions": st.one_of(
                st.sampled_from(BUNDLES), _few(st.sampled_from(PATTERNS), min_size=1, max_size=4, unique=True)
            ),
            "agents": selector([*IDENTITIES, "nobody"]),
            "roles": selector(["writer", "reviewer", "intern"]),
            "match_labels": st.one_of(
                st.just({}),
                st.dictionaries(
                    st.sampled_from(["team", "tier"]),
                    st.sampled_from(["red", "blue", "gold"]),
                    min_size=1,
                    max_size=1,
                ),
            ),
        }
    )


rules = _few(rule(), min_size=1, max_size=5)
principals = _few(
    st.builds(
        Principal, st.sampled_from(["alice", "bob", "carol"]), st.frozensets(st.sampled_from(["ops", "sre"]))
    ),
    min_size=1,
    max_size=3,
    unique=True,
)


@dataclass(frozen=True)
class World:
    """The data of one example: who writes quarantined memory, which events, which promotions."""

    writers: list[str]
    events: list[str]  # an identity, or SYSTEM_IDENTITY
    promotions: list[tuple[int, tuple[str, str]]]  # (index into writers, target scope)


@st.composite
def worlds(draw: st.DrawFn) -> World:
    writers = draw(_few(st.sampled_from(IDENTITIES), min_size=1, max_size=4))
    events = draw(_few(st.sampled_from([*IDENTITIES, SYSTEM_IDENTITY]), max_size=6))
    promotions = draw(_few(st.tuples(st.integers(0, len(writers) - 1), st.sampled_from(TARGETS)), max_size=4))
    return World(writers, events, promotions)


@dataclass
class Planted:
    """What a world wrote: quarantined record id → (identity, body), promotion id → (source, target)."""

    records: dict[str, tuple[str, str]] = field(default_factory=dict)
    promotions: dict[str, tuple[str, tuple[str, str]]] = field(default_factory=dict)
    stage_tokens: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Served:
    """What one caller received: event ids, pending promotion ids, quarantined record ids with body."""

    events: frozenset[str]
    promotions: frozenset[str]
    bodies: frozenset[str]


def config(tables: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "agent_memory": {"enabled": True, "llm_writes": "quarantined"},
        "roster": ROSTER,
        "access": {
            "enabled": True,
            "admins": [ADMIN],
            "rules": [{"id": f"r{i}", **t} for i, t in enumerate(tables)],
        },
    }


@contextmanager
def opened(state: Path, tables: list[dict[str, Any]]) -> Iterator[tuple[MetaRuntime, Dispatcher]]:
    runtime = MetaRuntime.open(state, load_config_dict(config(tables)), clock=ManualClock())
    try:
        yield runtime, build_dispatcher(runtime)
    finally:
        runtime.close()


def plant(runtime: MetaRuntime, world: World) -> Planted:
    """Quarantined writes through host sessions, events, and pending promotions in the realm file."""
    assert runtime.sessions is not None and runtime.agent_memory is not None
    planted = Planted()
    ids = []
    for n, identity in enumerate(world.writers):
        session = runtime.sessions.open(parse_open({"identity": identity}, default_realm="default"))
        body = f"Planted note {n} about the harbour schedule for {identity}."
        outcome = runtime.sessions.memory_tool(
            MemoryToolParams(session.key, {"action": "remember", "title": f"Note {n}", "body": body})
        )
        assert outcome.outcome == "quarantined", outcome
        memory_id = [w.strip(".,") for w in outcome.content.split() if w.startswith("mem-")][-1]
        planted.records[memory_id] = (identity, body)
        ids.append(memory_id)
    for n, identity in enumerate(world.events):
        runtime.events.emit("test.probe", {"n": n}, identity=identity)
    now = runtime.clock.now_ms()
    path = runtime.agent_memory.store(REALM).path
    with closing(sqlite3.connect(path)) as db, db:
        for n, (source, (kind, key)) in enumerate(world.promotions):
            pending_id, token = f"gate-{n}", f"stage-token-{n}-do-not-leak"
            db.execute(
                "INSERT INTO promotions (pending_id, stage_token, record_id, scope_kind, scope_key, rationale, "
                "status, proposal_id, created_at_ms, resolved_at_ms) "
                "VALUES (?, ?, ?, ?, ?, 'worth sharing', 'pending', NULL, ?, NULL)",
                (pending_id, token, ids[source], kind, key, now + n),
            )
            planted.promotions[pending_id] = (ids[source], (kind, key))
            planted.stage_tokens.append(token)
    return planted


def call(dispatcher: Dispatcher, method: str, params: dict[str, Any], principal: Principal) -> Any:
    """A console call; ``None`` when the caller is denied (-32030) outright."""
    try:
        return dispatcher.call(method, params, CallContext(CONSOLE, principal=principal))
    except AccessDenied as exc:
        assert exc.code == -32030
        return None


def serve(runtime: MetaRuntime, dispatcher: Dispatcher, planted: Planted, principal: Principal) -> Served:
    """Everything the three console reads give ``principal``, checked against the engine on the way."""
    engine = runtime.access
    assert engine is not None
    results = []

    def reviewable(memory_id: str) -> bool:
        """The caller may read this quarantined record (read + view + review on its identity)."""
        owner = planted.records[memory_id][0]
        return engine.can_read_record(
            principal, scope_kind="identity", scope_key=owner, status="quarantined", ever_quarantined=False
        )

    # 1. events: identity events with read + view on the identity, system events with unscoped timeline.read
    timeline = call(dispatcher, "meta/timeline/query", {"limit": 500}, principal)
    events: list[dict[str, Any]] = [] if timeline is None else timeline["events"]
    for event in events:
        if event["identity"] == SYSTEM_IDENTITY:
            assert engine.allows(principal, TIMELINE_READ, None), event
        else:
            assert engine.can_read_identity_memory(principal, event["identity"]), event
    # ... and none it may read is withheld from a caller who may read the timeline at all
    assert runtime.timeline is not None
    readable = [
        e["event_id"]
        for e in runtime.timeline.events()
        if (
            engine.allows(principal, TIMELINE_READ, None)
            if e["identity"] == SYSTEM_IDENTITY
            else engine.can_read_identity_memory(principal, e["identity"])
        )
    ]
    expected = readable if engine.may_ever(principal, TIMELINE_READ) else []
    assert [e["event_id"] for e in events] == expected
    results.append(timeline)

    # 2. promotions: the target scope and the (quarantined) source record are both readable
    queue = call(dispatcher, "meta/memory/panel/quarantine", {}, principal)
    promotions: list[dict[str, Any]] = [] if queue is None else queue["pending_promotions"]
    for row in promotions:
        source, (kind, key) = planted.promotions[row["pending_id"]]
        assert (row["record_id"], row["scope_kind"], row["scope_key"]) == (source, kind, key)
        assert engine.can_read_scope(principal, kind, key), row
        assert reviewable(source), row
    listed = {r["memory_id"] for r in ([] if queue is None else queue["records"])}
    # ... and the queue withholds no promotion or quarantined row the caller may read
    assert {r["pending_id"] for r in promotions} == {
        pending_id
        for pending_id, (source, target) in planted.promotions.items()
        if engine.can_read_scope(principal, *target) and reviewable(source)
    }
    assert listed == {memory_id for memory_id in planted.records if reviewable(memory_id)}
    results.append(queue)

    # 3. quarantined records: the body only with review (and read + view) on the identity
    bodies = set()
    for memory_id, (identity, body) in planted.records.items():
        may = engine.can_read_identity_memory(principal, identity) and engine.allows(
            principal, MEMORY_QUARANTINE_REVIEW, Resource.for_identity(identity)
        )
        detail = call(
            dispatcher, "meta/memory/panel/record", {"memory_id": memory_id, "realm": REALM}, principal
        )
        assert (detail is not None) == may, (memory_id, identity, detail)
        if detail is not None:
            assert detail["record"]["id"] == memory_id and detail["record"]["body"] == body
            bodies.add(memory_id)
        results.append(detail)

    wire = json.dumps(results)
    for token in planted.stage_tokens:
        assert token not in wire
    return Served(
        frozenset(e["event_id"] for e in events),
        frozenset(r["pending_id"] for r in promotions),
        frozenset(bodies),
    )


def everyone(drawn: list[Principal]) -> list[Principal]:
    return [*drawn, ANONYMOUS, Principal(ADMIN), Principal(ADMIN, frozenset({"ops"}))]


@settings(max_examples=25, deadline=None)
@given(rules, worlds(), principals)
def test_no_caller_receives_an_event_promotion_or_quarantined_body_outside_its_grants(
    tables: list[dict[str, Any]], world: World, drawn: list[Principal]
) -> None:
    with tempfile.TemporaryDirectory() as state, opened(Path(state), tables) as (runtime, dispatcher):
        planted = plant(runtime, world)
        for principal in everyone(drawn):
            serve(runtime, dispatcher, planted, principal)


@settings(max_examples=25, deadline=None)
@given(rules, worlds())
def test_an_admin_receives_every_event_promotion_and_quarantined_body(
    tables: list[dict[str, Any]], world: World
) -> None:
    with tempfile.TemporaryDirectory() as state, opened(Path(state), tables) as (runtime, dispatcher):
        planted = plant(runtime, world)
        assert runtime.timeline is not None
        everything = {e["event_id"] for e in runtime.timeline.events()}
        served = serve(runtime, dispatcher, planted, Principal(ADMIN))

    assert served == Served(frozenset(everything), frozenset(planted.promotions), frozenset(planted.records))


@settings(max_examples=25, deadline=None)
@given(rules, rule("deny"), st.integers(min_value=0, max_value=6), worlds(), principals)
def test_adding_a_deny_rule_never_makes_a_caller_receive_more(
    tables: list[dict[str, Any]], deny: dict[str, Any], at: int, world: World, drawn: list[Principal]
) -> None:
    with tempfile.TemporaryDirectory() as state:
        with opened(Path(state), tables) as (runtime, dispatcher):
            planted = plant(runtime, world)
            before = {p: serve(runtime, dispatcher, planted, p) for p in everyone(drawn)}
        with opened(Path(state), [*tables[:at], deny, *tables[at:]]) as (runtime, dispatcher):
            after = {p: serve(runtime, dispatcher, planted, p) for p in everyone(drawn)}

    for principal, served in after.items():
        assert served.events <= before[principal].events, principal
        assert served.promotions <= before[principal].promotions, principal
        assert served.bodies <= before[principal].bodies, principal
