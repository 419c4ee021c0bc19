"""``meta/agent_memory/list`` (an identity's records by filter, newest updated first, keyset pages),
``meta/agent_memory/get`` (one record and its current successor) and recall's ``tags`` filter, on the
application surface. Expectations come from a model of what each test wrote, never from the store."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meta_memory import InvalidParams, Meta, MetaHandle
from meta_memory.clock import ManualClock
from meta_memory.errors import InternalError, MetaError, UnknownRecord
from meta_memory.gateway.dispatch import CONSOLE, CallContext
from meta_memory.memory.manage import list_page
from meta_memory.memory.params import parse_list
from meta_memory.memory.records import (
    APPLICATION,
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
from meta_memory.memory.rows import FullRecordsPage
from meta_memory.memory.store import RealmStore
from meta_memory.memory.validator import CreateOp, WriteBatch

from ..conftest import Backend

LIST = "meta/agent_memory/list"
GET = "meta/agent_memory/get"
RECALL = "meta/agent_memory/recall"
MANAGED_KEYS = {
    "memory_id", "title", "body", "tags", "created_at_ms", "updated_at_ms", "realm", "scope_kind",
    "scope_key", "kind", "description", "status", "quarantine_reason", "trust", "author", "supersedes",
    "superseded_by", "derived_from", "ever_quarantined", "content_hash", "expires_at_ms",
}  # fmt: skip


def _store(handle: MetaHandle, realm: str = "default") -> RealmStore:
    assert handle.runtime.agent_memory is not None
    return handle.runtime.agent_memory.store(realm)


@dataclass
class Model:
    """What the test wrote, and what each record must be now: the oracle."""

    records: dict[str, dict[str, Any]] = field(default_factory=dict)

    def expected(self, keep: Callable[[dict[str, Any]], bool]) -> list[str]:
        rows = [r for r in self.records.values() if r["identity"] == "alice" and keep(r)]
        return [r["id"] for r in sorted(rows, key=lambda r: (r["updated"], r["id"]), reverse=True)]


def _put(
    handle: MetaHandle,
    model: Model | None,
    memory_id: str,
    *,
    realm: str = "default",
    identity: str = "alice",
    scope_kind: ScopeKind = ScopeKind.IDENTITY,
    kind: RecordKind = RecordKind.FACT,
    tags: tuple[str, ...] = (),
    created: int = 1_000,
    updated: int | None = None,
    quarantined: bool = False,
    supersedes: str | None = None,
) -> Record:
    """A record committed through the realm store's validator, with the times given."""
    title, body = f"Note {memory_id}", f"Body of {memory_id}."
    author = Author("agent", identity=identity) if quarantined else APPLICATION
    record = Record(
        id=memory_id,
        scope=Scope(scope_kind, realm, identity if scope_kind is ScopeKind.IDENTITY else "crew"),
        kind=kind,
        title=title,
        description="",
        body=body,
        tags=tags,
        provenance=Provenance(author=author),
        trust=Trust.AGENT_OBSERVED,
        status=Status.QUARANTINED if quarantined else Status.ACTIVE,
        quarantine_reason="test" if quarantined else None,
        created_at_ms=created,
        updated_at_ms=created if updated is None else updated,
        content_hash=content_hash(title, body),
        supersedes=supersedes,
    )
    made = _store(handle, realm).commit(WriteBatch(realm, author, (CreateOp(record),))).records[0]
    if model is not None:
        model.records[memory_id] = {
            "id": memory_id,
            "identity": identity if scope_kind is ScopeKind.IDENTITY else None,
            "kind": kind.value,
            "tags": set(tags),
            "created": record.created_at_ms,
            "updated": record.updated_at_ms,
            "status": record.status.value,
        }
    return made


def _pages(handle: MetaHandle, params: dict[str, Any], limit: int) -> tuple[list[str], list[int]]:
    """Every page of a listing: the ids in order and each page's size."""
    ids: list[str] = []
    sizes: list[int] = []
    cursor: str | None = None
    for _ in range(10_000):
        page = handle.call(LIST, {**params, "limit": limit, **({"cursor": cursor} if cursor else {})})
        ids.extend(r["memory_id"] for r in page["records"])
        sizes.append(len(page["records"]))
        cursor = page["next_cursor"]
        if cursor is None:
            return ids, sizes
    raise AssertionError("the listing never ended")


@pytest.fixture
def corpus(handle: MetaHandle, clock: ManualClock) -> Model:
    """Forty of alice's records over a few milliseconds (created and updated times tie), every
    kind and status and a mix of tags, beside bob's records and a mob's."""
    model = Model()
    rng = random.Random(20_250_101)
    tag_sets = [(), ("ops",), ("ops", "prod"), ("home",), ("home", "prod"), ("prod",)]
    kinds = list(RecordKind)
    for n in range(40):
        _put(
            handle,
            model,
            f"mem-a{n:02}",
            kind=rng.choice(kinds),
            tags=rng.choice(tag_sets),
            created=1_000 + rng.randrange(20),
            quarantined=rng.random() < 0.15,
        )
    for n in range(5):
        _put(handle, model, f"mem-b{n}", identity="bob", tags=("ops",), created=1_000 + n)
    _put(handle, model, "mem-crew", scope_kind=ScopeKind.MOB, tags=("ops",), created=1_005)
    active = [r for r in model.records.values() if r["identity"] == "alice" and r["status"] == "active"]
    for n, old in enumerate(rng.sample(active, 6)):
        clock.set(1_030 + n // 2)
        successor = f"{old['id']}-v2"
        _put(
            handle,
            model,
            successor,
            tags=tuple(sorted(old["tags"])),
            created=clock.now_ms(),
            supersedes=old["id"],
        )
        old.update(status="superseded", updated=clock.now_ms())
    active = [r for r in model.records.values() if r["identity"] == "alice" and r["status"] == "active"]
    for n, gone in enumerate(rng.sample(active, 5)):
        clock.set(1_040 + n // 2)
        assert _store(handle).forget(Scope.identity("default", "alice"), gone["id"], APPLICATION)
        gone.update(status="tombstoned", updated=clock.now_ms())
    return model


# -- list ---------------------------------------------------------------------------------------


def test_list_returns_whole_records_in_the_recall_shape_plus_what_a_manager_needs(handle: MetaHandle) -> None:
    made = handle.remember_agent_memory("alice", title="Deploys", body="Deploys need approval.", tags=["Ops"])

    page = handle.call(LIST, {"identity": "alice"})

    assert page["realm"] == "default" and page["next_cursor"] is None
    (row,) = page["records"]
    assert set(row) == MANAGED_KEYS
    recalled = handle.call(RECALL, {"identity": "alice", "selection": "always"})["records"][0]
    assert recalled.pop("score") is None  # recall's own: how well it matched (none for always)
    assert {k: row[k] for k in recalled} == recalled  # recall's record shape, field for field
    assert (row["memory_id"], row["body"], row["tags"]) == (made.memory_id, "Deploys need approval.", ["ops"])
    assert (row["status"], row["kind"], row["trust"], row["author"]) == (
        "active",
        "fact",
        "agent_observed",
        {"author": "application"},
    )
    assert (row["scope_kind"], row["scope_key"], row["supersedes"], row["superseded_by"]) == (
        "identity",
        "alice",
        None,
        None,
    )


FILTERS: list[tuple[dict[str, Any], Callable[[dict[str, Any]], bool]]] = [
    ({}, lambda r: r["status"] == "active"),
    ({"status": "any"}, lambda r: True),
    ({"status": "active"}, lambda r: r["status"] == "active"),
    ({"status": "quarantined"}, lambda r: r["status"] == "quarantined"),
    ({"status": "superseded"}, lambda r: r["status"] == "superseded"),
    ({"status": "tombstoned"}, lambda r: r["status"] == "tombstoned"),
    ({"status": "any", "kind": "gotcha"}, lambda r: r["kind"] == "gotcha"),
    ({"kind": "preference"}, lambda r: r["kind"] == "preference" and r["status"] == "active"),
    ({"status": "any", "tags_any": ["ops", "HOME "]}, lambda r: bool(r["tags"] & {"ops", "home"})),
    ({"status": "any", "tags_all": ["prod", "ops"]}, lambda r: {"ops", "prod"} <= r["tags"]),
    (
        {"status": "any", "tags_all": ["prod"], "tags_any": ["home", "ops"]},
        lambda r: "prod" in r["tags"] and bool(r["tags"] & {"home", "ops"}),
    ),
    ({"status": "any", "created_after_ms": 1_010}, lambda r: r["created"] >= 1_010),
    ({"status": "any", "created_before_ms": 1_010}, lambda r: r["created"] < 1_010),
    (
        {"status": "any", "created_after_ms": 1_005, "created_before_ms": 1_012},
        lambda r: 1_005 <= r["created"] < 1_012,
    ),
    ({"status": "any", "updated_after_ms": 1_031}, lambda r: r["updated"] >= 1_031),
    ({"status": "any", "updated_before_ms": 1_031}, lambda r: r["updated"] < 1_031),
    (
        {"status": "any", "updated_after_ms": 1_019, "updated_before_ms": 1_041},
        lambda r: 1_019 <= r["updated"] < 1_041,
    ),
    (
        {"status": "superseded", "tags_any": ["prod"], "updated_after_ms": 1_031},
        lambda r: r["status"] == "superseded" and "prod" in r["tags"] and r["updated"] >= 1_031,
    ),
]


@pytest.mark.parametrize(("params", "keep"), FILTERS, ids=[str(p) for p, _ in FILTERS])
def test_each_filter_narrows_to_exactly_the_matching_records_of_the_identity(
    handle: MetaHandle, corpus: Model, params: dict[str, Any], keep: Callable[[dict[str, Any]], bool]
) -> None:
    expected = corpus.expected(keep)
    assert expected, "the corpus has no record for this filter: the case would prove nothing"
    if params != {"status": "any"}:  # that one narrows to the identity alone (bob's and the mob's stay out)
        assert len(expected) < len(corpus.expected(lambda r: True)), "the filter must narrow something"

    ids, sizes = _pages(handle, {"identity": "alice", **params}, limit=4)

    assert ids == expected
    assert all(size == 4 for size in sizes[:-1]) and sizes[-1] > 0  # no short page before the end


def test_one_page_can_hold_every_record_and_then_has_no_cursor(handle: MetaHandle, corpus: Model) -> None:
    everything = corpus.expected(lambda r: True)

    page = handle.call(LIST, {"identity": "alice", "status": "any", "limit": 200})

    assert [r["memory_id"] for r in page["records"]] == everything and page["next_cursor"] is None
    exact = handle.call(LIST, {"identity": "alice", "status": "any", "limit": len(everything)})
    assert exact["next_cursor"] is None  # the last page is known to be the last


def test_a_superseded_record_moves_to_its_update_time_and_names_its_successor(handle: MetaHandle) -> None:
    old = handle.remember_agent_memory("alice", title="Deploys", body="One approval.")
    new = handle.update_agent_memory("alice", old.memory_id, title="Deploys", body="Two approvals.")

    rows = handle.call(LIST, {"identity": "alice", "status": "any"})["records"]

    assert [(r["memory_id"], r["status"]) for r in rows] == [
        (new.memory_id, "active"),
        (old.memory_id, "superseded"),
    ]
    assert rows[0]["supersedes"] == old.memory_id and rows[1]["superseded_by"] == new.memory_id


def test_another_realm_lists_only_its_own_records_and_a_realm_without_a_store_is_not_created(
    handle: MetaHandle,
) -> None:
    handle.remember_agent_memory("alice", title="Home", body="In the default realm.")
    there = handle.remember_agent_memory("alice", title="Away", body="Elsewhere.", realm="elsewhere")

    listed = handle.call(LIST, {"identity": "alice", "realm": "elsewhere"})

    assert [r["memory_id"] for r in listed["records"]] == [there.memory_id] and listed["realm"] == "elsewhere"
    assert handle.call(LIST, {"identity": "alice", "realm": "nowhere"}) == {
        "realm": "nowhere",
        "records": [],
        "next_cursor": None,
    }
    assert handle.runtime.agent_memory is not None
    assert not handle.runtime.agent_memory.has_realm("nowhere")


_IDS = st.text(alphabet="aZ09-:_é", min_size=1, max_size=4).map(lambda s: "m" + s)
_realms = itertools.count()


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rows=st.lists(
        st.tuples(
            _IDS,
            st.integers(0, 3),  # update times from a tiny range: ties everywhere
            st.booleans(),  # quarantined
            st.sampled_from([(), ("t",), ("t", "u")]),
        ),
        unique_by=lambda row: row[0],
        max_size=24,
    ),
    limit=st.integers(1, 7),
    where=st.sampled_from(
        [
            {},
            {"status": "any"},
            {"status": "quarantined"},
            {"status": "any", "tags_any": ["u"]},
            {"tags_all": ["t"]},
        ]
    ),
)
def test_paging_visits_every_matching_record_exactly_once_in_order_whatever_the_ties(
    handle: MetaHandle, rows: list[tuple[str, int, bool, tuple[str, ...]]], limit: int, where: dict[str, Any]
) -> None:
    realm = f"page{next(_realms)}"
    model = Model()
    for memory_id, updated, quarantined, tags in rows:
        _put(handle, model, memory_id, realm=realm, tags=tags, created=updated, quarantined=quarantined)

    def keep(r: dict[str, Any]) -> bool:
        status = where.get("status", "active")
        if status != "any" and r["status"] != status:
            return False
        if "tags_any" in where and not set(where["tags_any"]) & r["tags"]:
            return False
        return set(where.get("tags_all", ())) <= r["tags"]

    ids, sizes = _pages(handle, {"identity": "alice", "realm": realm, **where}, limit)

    assert ids == model.expected(keep)
    assert len(ids) == len(set(ids))
    assert all(size == limit for size in sizes[:-1])
    assert sizes[-1] > 0 or len(sizes) == 1


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, "identity must be a valid non-empty string"),
        ({"identity": " alice"}, "identity must be a valid non-empty string"),
        ({"identity": "alice", "realm": ""}, "realm must be a non-empty string when provided"),
        (
            {"identity": "alice", "status": "deleted"},
            "status must be one of active, quarantined, superseded, tombstoned, expired, any (got 'deleted')",
        ),
        (
            {"identity": "alice", "status": ["active"]},
            "status must be one of active, quarantined, superseded, tombstoned, expired, any (got 'list')",
        ),
        (
            {"identity": "alice", "kind": "FACT"},
            "kind must be one of preference, fact, gotcha, procedure, relationship, open_loop, reference (got 'FACT')",
        ),
        ({"identity": "alice", "tags_any": "ops"}, "tags_any must be an array when provided"),
        ({"identity": "alice", "tags_any": []}, "tags_any must contain at least one tag when provided"),
        ({"identity": "alice", "tags_any": ["ops", " "]}, "tags_any must contain only non-empty strings"),
        ({"identity": "alice", "tags_all": [7]}, "tags_all must contain only non-empty strings"),
        ({"identity": "alice", "tags_all": ["x"] * 33}, "tags_all must contain at most 32 entries"),
        ({"identity": "alice", "tags_all": ["x" * 65]}, "tags_all must be at most 64 bytes"),
        (
            {"identity": "alice", "created_after_ms": -1},
            "created_after_ms must be an integer between 0 and 2^63-1 when provided",
        ),
        (
            {"identity": "alice", "created_before_ms": 1.5},
            "created_before_ms must be an integer between 0 and 2^63-1 when provided",
        ),
        (
            {"identity": "alice", "updated_after_ms": True},
            "updated_after_ms must be an integer between 0 and 2^63-1 when provided",
        ),
        (
            {"identity": "alice", "updated_before_ms": 2**63},
            "updated_before_ms must be an integer between 0 and 2^63-1 when provided",
        ),
        (
            {"identity": "alice", "created_after_ms": 5, "created_before_ms": 5},
            "created_after_ms must be less than created_before_ms (the window is [after, before))",
        ),
        (
            {"identity": "alice", "updated_after_ms": 9, "updated_before_ms": 3},
            "updated_after_ms must be less than updated_before_ms (the window is [after, before))",
        ),
        ({"identity": "alice", "limit": 0}, "limit must be an integer between 1 and 200 when provided"),
        ({"identity": "alice", "limit": 201}, "limit must be an integer between 1 and 200 when provided"),
        ({"identity": "alice", "limit": "5"}, "limit must be an integer between 1 and 200 when provided"),
        (
            {"identity": "alice", "cursor": "later"},
            "cursor must be '<updated_at_ms>:<memory_id>' as returned in next_cursor",
        ),
        (
            {"identity": "alice", "cursor": 5},
            "cursor must be '<updated_at_ms>:<memory_id>' as returned in next_cursor",
        ),
    ],
)
def test_list_refuses_each_bad_parameter_naming_it(
    handle: MetaHandle, params: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidParams) as refused:
        handle.call(LIST, params)
    assert (refused.value.code, refused.value.message) == (-32602, message)


@pytest.mark.parametrize("limit", [1, 200])
def test_list_accepts_limit_at_both_bounds(handle: MetaHandle, limit: int) -> None:
    handle.remember_agent_memory("alice", title="One", body="One.")
    handle.remember_agent_memory("alice", title="Two", body="Two.")
    assert len(handle.call(LIST, {"identity": "alice", "limit": limit})["records"]) == min(limit, 2)


def test_list_defaults_to_fifty_records_a_page(handle: MetaHandle, clock: ManualClock) -> None:
    for n in range(51):
        _put(handle, None, f"mem-{n:02}", created=1_000 + n)
    page = handle.call(LIST, {"identity": "alice"})
    assert len(page["records"]) == 50 and page["next_cursor"] == "1001:mem-01"


# -- get ------------------------------------------------------------------------------------------


def test_get_returns_the_whole_record_and_no_successor_while_it_is_current(handle: MetaHandle) -> None:
    made = handle.remember_agent_memory("alice", title="Deploys", body="Deploys need approval.", tags=["ops"])

    found = handle.call(GET, {"identity": "alice", "memory_id": made.memory_id})

    listed = handle.call(LIST, {"identity": "alice"})["records"][0]
    assert found == {"realm": "default", "record": listed, "successor": None}


def test_get_follows_updates_to_the_current_record_and_stops_at_a_forgotten_end(handle: MetaHandle) -> None:
    first = handle.remember_agent_memory("alice", title="Deploys", body="One approval.")
    second = handle.update_agent_memory("alice", first.memory_id, title="Deploys", body="Two approvals.")
    third = handle.update_agent_memory("alice", second.memory_id, title="Deploys", body="Three approvals.")

    def successor(memory_id: str) -> Any:
        return handle.call(GET, {"identity": "alice", "memory_id": memory_id})["successor"]

    assert [successor(i) for i in (first.memory_id, second.memory_id, third.memory_id)] == [
        third.memory_id,
        third.memory_id,
        None,
    ]
    handle.forget_agent_memory("alice", third.memory_id)
    assert successor(first.memory_id) == third.memory_id  # a tombstone ends the chain
    assert successor(third.memory_id) is None
    gone = handle.call(GET, {"identity": "alice", "memory_id": third.memory_id})["record"]
    assert gone["status"] == "tombstoned" and gone["body"] == "Three approvals."


@pytest.mark.parametrize("case", ["unknown", "other_identity", "other_realm", "mob_scope"])
def test_get_of_a_record_outside_the_identity_scope_is_an_unknown_record(
    handle: MetaHandle, case: str
) -> None:
    bob = handle.remember_agent_memory("bob", title="Bob's", body="Bob only.")
    crew = _put(handle, None, "mem-crew", scope_kind=ScopeKind.MOB)
    identity, memory_id, realm = {
        "unknown": ("alice", "mem-does-not-exist", None),
        "other_identity": ("alice", bob.memory_id, None),
        "other_realm": ("bob", bob.memory_id, "elsewhere"),
        "mob_scope": ("alice", crew.id, None),
    }[case]
    params = {"identity": identity, "memory_id": memory_id, **({"realm": realm} if realm else {})}

    with pytest.raises(UnknownRecord) as refused:
        handle.call(GET, params)

    assert (refused.value.code, refused.value.message) == (-32001, f"unknown memory record '{memory_id}'")
    assert handle.call(GET, {"identity": "bob", "memory_id": bob.memory_id})["record"]["body"] == "Bob only."


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"memory_id": "mem-1"}, "identity must be a valid non-empty string"),
        ({"identity": 3, "memory_id": "mem-1"}, "identity must be a valid non-empty string"),
        ({"identity": "alice"}, "memory_id must be a non-empty string"),
        ({"identity": "alice", "memory_id": " "}, "memory_id must be a non-empty string"),
        ({"identity": "alice", "memory_id": "mem-1", "realm": "a\nb"}, None),
    ],
)
def test_get_refuses_each_bad_parameter_naming_it(
    handle: MetaHandle, params: dict[str, Any], message: str | None
) -> None:
    with pytest.raises(InvalidParams) as refused:
        handle.call(GET, params)
    assert refused.value.code == -32602
    if message is None:
        assert refused.value.message.startswith("realm ")
    else:
        assert refused.value.message == message


# -- the successor across a quarantine release --------------------------------------------------


@pytest.fixture
def reviewing(tmp_path: Path, clock: ManualClock, backend: Backend) -> Iterator[MetaHandle]:
    """Every LLM write lands quarantined; decisions are made on the (unguarded) console."""
    builder = Meta.builder().persistent_state(tmp_path / "reviewing")
    with (
        builder.agent_memory(llm_writes="quarantined", **backend.store_config()).clock(clock).build() as meta
    ):
        yield meta


def _llm(meta: MetaHandle, arguments: dict[str, Any]) -> str:
    result = meta.open_session("alice").memory_tool(arguments)
    assert result.outcome == "quarantined", result
    return [w.strip(".,") for w in result.content.split() if w.startswith("mem-")][-1]


def _release(meta: MetaHandle, memory_id: str) -> None:
    record = _store(meta).get(memory_id)
    assert record is not None
    params = {
        "identity": "alice",
        "memory_id": memory_id,
        "verdict": "release",
        "expected_content_hash": record.content_hash,
    }
    meta._dispatcher.call("meta/memory/quarantine/decide", params, CallContext(CONSOLE))


def test_a_released_record_leads_to_its_released_successor_and_on_through_updates(
    reviewing: MetaHandle, clock: ManualClock
) -> None:
    origin = _llm(reviewing, {"action": "remember", "title": "Deploys", "body": "Deploys on Tuesdays."})
    get = lambda memory_id: reviewing.call(GET, {"identity": "alice", "memory_id": memory_id})  # noqa: E731
    assert get(origin)["successor"] is None  # waiting for review: nothing replaced it yet
    clock.advance(10)
    _release(reviewing, origin)

    assert get(origin)["record"]["status"] == "tombstoned"
    assert get(origin)["successor"] == f"{origin}-released"
    clock.advance(10)
    newer = reviewing.update_agent_memory("alice", f"{origin}-released", title="Deploys", body="Wednesdays.")

    assert get(origin)["successor"] == newer.memory_id
    assert get(f"{origin}-released")["successor"] == newer.memory_id


def test_a_released_quarantined_update_is_the_successor_of_the_record_it_updates(
    reviewing: MetaHandle, clock: ManualClock
) -> None:
    prior = reviewing.remember_agent_memory("alice", title="Deploys", body="Deploys on Tuesdays.")
    update = _llm(
        reviewing, {"action": "update", "memory_id": prior.memory_id, "title": "Deploys", "body": "Fridays."}
    )
    get = lambda memory_id: reviewing.call(GET, {"identity": "alice", "memory_id": memory_id})  # noqa: E731
    assert get(prior.memory_id)["successor"] is None  # a quarantined update replaces nothing yet
    clock.advance(10)
    _release(reviewing, update)

    assert get(prior.memory_id)["successor"] == f"{update}-released"
    assert get(update)["successor"] == f"{update}-released"
    assert get(f"{update}-released")["successor"] is None


def test_a_discarded_quarantined_record_has_no_successor(reviewing: MetaHandle) -> None:
    origin = _llm(reviewing, {"action": "remember", "title": "Deploys", "body": "Deploys on Tuesdays."})
    record = _store(reviewing).get(origin)
    assert record is not None
    params = {
        "identity": "alice",
        "memory_id": origin,
        "verdict": "tombstone",
        "expected_content_hash": record.content_hash,
    }
    reviewing._dispatcher.call("meta/memory/quarantine/decide", params, CallContext(CONSOLE))

    found = reviewing.call(GET, {"identity": "alice", "memory_id": origin})

    assert (found["record"]["status"], found["successor"]) == ("tombstoned", None)
    # A record that merely carries the released name, not derived from the original, is no successor.
    _put(reviewing, None, f"{origin}-released")
    assert reviewing.call(GET, {"identity": "alice", "memory_id": origin})["successor"] is None


def test_quarantined_records_are_listed_only_when_asked_for(reviewing: MetaHandle) -> None:
    kept = reviewing.remember_agent_memory("alice", title="Kept", body="Application note.")
    held = _llm(reviewing, {"action": "remember", "title": "Held", "body": "An LLM note."})

    def listed(**params: Any) -> list[str]:
        return [r["memory_id"] for r in reviewing.call(LIST, {"identity": "alice", **params})["records"]]

    assert listed() == [kept.memory_id]
    assert listed(status="quarantined") == [held]
    assert set(listed(status="any")) == {kept.memory_id, held}


# -- recall's tags --------------------------------------------------------------------------------


def test_recall_tags_keep_only_records_carrying_every_tag_before_the_cut(handle: MetaHandle) -> None:
    remember = handle.remember_agent_memory
    loud = [
        remember("alice", title=f"Deploy {n}", body="Deploy, deploy, deploy the deploy pipeline.")
        for n in range(5)
    ]
    remember("alice", title="Deploy ops", body="A deploy note.", tags=["ops"])  # one tag of two
    tagged = {
        remember(
            "alice", title=f"Note {n}", body="A quiet deploy note.", tags=["ops", "prod", f"n{n}"]
        ).memory_id
        for n in range(3)
    }
    remember("alice", title="Coffee", body="Espresso grinder setting.", tags=["ops", "prod"])  # no query word
    remember("bob", title="Deploy bob", body="A deploy note.", tags=["ops", "prod"])
    unfiltered = handle.call(RECALL, {"identity": "alice", "query_text": "deploy", "max_entries": 3})[
        "records"
    ]
    assert {r["memory_id"] for r in unfiltered} <= {r.memory_id for r in loud}  # the cut would drop them all

    filtered = handle.call(
        RECALL, {"identity": "alice", "query_text": "deploy", "max_entries": 3, "tags": ["PROD", "ops "]}
    )["records"]

    assert {r["memory_id"] for r in filtered} == tagged
    assert handle.call(RECALL, {"identity": "alice", "query_text": "deploy", "tags": ["nowhere"]}) == {
        "records": [],
        "vectors_behind": None,
    }


def test_recall_always_with_tags_returns_the_newest_tagged_records(
    handle: MetaHandle, clock: ManualClock
) -> None:
    made = []
    for n in range(6):
        clock.advance(1)
        made.append(
            handle.remember_agent_memory(
                "alice", title=f"N{n}", body=f"Note {n}.", tags=["t"] if n % 2 else []
            )
        )
        clock.advance(1)
        handle.remember_agent_memory("alice", title=f"U{n}", body=f"Untagged {n}.")

    newest = handle.call(
        RECALL, {"identity": "alice", "selection": "always", "max_entries": 2, "tags": ["t"]}
    )

    assert [r["memory_id"] for r in newest["records"]] == [made[5].memory_id, made[3].memory_id]


def test_recall_tags_leave_out_a_forgotten_tagged_record(handle: MetaHandle) -> None:
    gone = handle.remember_agent_memory("alice", title="Deploy", body="A deploy note.", tags=["ops"])
    kept = handle.remember_agent_memory(
        "alice", title="Deploy again", body="Another deploy note.", tags=["ops"]
    )
    handle.forget_agent_memory("alice", gone.memory_id)
    for extra in ({"query_text": "deploy"}, {"selection": "always"}):
        found = handle.call(RECALL, {"identity": "alice", "tags": ["ops"], **extra})["records"]
        assert [r["memory_id"] for r in found] == [kept.memory_id], extra


@pytest.mark.parametrize(
    ("tags", "message"),
    [
        ("ops", "tags must be an array when provided"),
        ([], "tags must contain at least one tag when provided"),
        ([""], "tags must contain only non-empty strings"),
        (["ops", None], "tags must contain only non-empty strings"),
        (["x"] * 33, "tags must contain at most 32 entries"),
        (["é" * 33], "tags must be at most 64 bytes"),
    ],
)
def test_recall_refuses_bad_tags_naming_them(handle: MetaHandle, tags: Any, message: str) -> None:
    with pytest.raises(MetaError) as refused:
        handle.call(RECALL, {"identity": "alice", "query_text": "deploy", "tags": tags})
    assert (refused.value.code, refused.value.message) == (-32602, message)


def test_a_store_whose_cursor_does_not_move_is_refused_rather_than_read_forever() -> None:
    class Stalled:
        """Answers every page past the cursor with nothing readable and the same cursor again."""

        def __init__(self, record: Record) -> None:
            self.record = record

        def full_records_page(self, where: Any, after: Any, limit: int) -> FullRecordsPage:
            return FullRecordsPage((self.record,), (5, "mem-x"))

    class Nobody:
        def record(self, record: Record) -> bool:
            return False

        def require_record(self, record: Record) -> None: ...

        def require_identity(self, identity: str) -> None: ...

    record = Record(
        id="mem-x",
        scope=Scope.identity("default", "alice"),
        kind=RecordKind.FACT,
        title="t",
        description="",
        body="b",
        tags=(),
        provenance=Provenance(author=APPLICATION),
        trust=Trust.AGENT_OBSERVED,
        status=Status.ACTIVE,
        created_at_ms=5,
        updated_at_ms=5,
        content_hash=content_hash("t", "b"),
    )
    p = parse_list({"identity": "alice"}, default_realm="default")

    with pytest.raises(InternalError, match="did not advance past 5:mem-x"):
        list_page(Stalled(record), p, Nobody())  # type: ignore[arg-type]
