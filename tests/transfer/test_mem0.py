"""A mem0 export (``Memory.get_all()`` JSON) imports as application records of the identity each
memory names, recallable afterwards; a second run skips them all (real ``meta_gateway`` runs on
both backends, and the reading of single items)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from meta_memory.memory.params import RecallParams
from meta_memory.memory.records import OPERATOR, Scope, ScopeKind, Status, Trust
from meta_memory.memory.transfer import (
    bytes_opener,
    import_source,
    mem0_entries,
    read_source,
    title_from_text,
)
from meta_memory.memory.validator import TITLE_MAX_BYTES

from ..conftest import Backend
from .conftest import FIXTURES, Run, memory_of

FIXTURE = FIXTURES / "mem0_get_all.json"


def _items() -> list[dict[str, Any]]:
    return list(json.loads(FIXTURE.read_text())["results"])


def _ms(iso: str) -> int:
    return int(datetime.fromisoformat(iso).timestamp() * 1000)


def test_a_mem0_export_imports_as_application_records_of_each_user(
    tmp_path: Path, backend: Backend, cli: Callable[..., Run], open_runtime
) -> None:
    state = tmp_path / "state"

    run = cli(backend, "import", str(FIXTURE), "--state-dir", str(state))

    assert run.status == 0, run.stderr
    assert run.text.startswith("imported 7, skipped 0, refused 0 of 7 records in mem0_get_all.json (mem0)")
    memory = memory_of(open_runtime(state, backend))
    store = memory.store("default")
    first = _items()[0]
    record = store.get(f"mem0-{first['id']}")
    assert record is not None
    assert record.scope == Scope(ScopeKind.IDENTITY, "default", "alice")
    assert record.provenance.author.kind == "application"
    assert (record.trust, record.status) == (Trust.AGENT_OBSERVED, Status.ACTIVE)
    assert (record.title, record.body) == ("Is a vegetarian and allergic to nuts", first["memory"])
    assert record.tags == ("health", "food")
    assert (record.created_at_ms, record.updated_at_ms) == (
        _ms(first["created_at"]),
        _ms(first["updated_at"]),
    )
    recalled = memory.recall(RecallParams("alice", "default", "contextual", "allergic nuts", (), 5)).records
    assert [r.id for r in recalled][:1] == [record.id]
    assert memory.recall(RecallParams("bob", "default", "contextual", "allergic nuts", (), 5)).records == []


def test_mem0_metadata_is_kept_where_a_record_holds_it(
    tmp_path: Path, backend: Backend, cli: Callable[..., Run], open_runtime
) -> None:
    state = tmp_path / "state"
    assert cli(backend, "import", str(FIXTURE), "--state-dir", str(state)).status == 0
    store = memory_of(open_runtime(state, backend)).store("default")
    items = {item["id"]: item for item in _items()}

    coffee = store.get("mem0-d2f2e8a3-5c3b-4a52-9b0e-7c1d6a9e4f10")
    seats = store.get("mem0-f4a1c2b3-d4e5-4f60-8172-93a4b5c6d7e8")
    dog = store.get("mem0-a9b8c7d6-e5f4-4a3b-9c2d-1e0f9a8b7c6d")
    bot = store.get("mem0-3c2b1a09-8f7e-4d6c-b5a4-9382716f5e4d")
    trip = store.get("mem0-0c9e1f3a-7b5d-4e2f-8a6c-1d3b5f7e9a2c")

    assert coffee is not None and coffee.tags == ("preferences",)
    assert coffee.description == 'mem0 {"metadata":{"source":"onboarding-chat"}}'
    assert seats is not None and seats.scope.key == "bob"
    assert json.loads(seats.description.removeprefix("mem0 ")) == {
        "agent_id": "travel-agent",
        "metadata": {"topic": "travel"},
        "run_id": "trip-planning-0042",
    }
    assert dog is not None and dog.updated_at_ms == dog.created_at_ms  # no updated_at: its creation
    assert bot is not None and bot.scope.key == "support-bot"  # no user: the agent's identity
    assert trip is not None and trip.title.endswith("…") and len(trip.title) <= 80
    assert trip.body == items["0c9e1f3a-7b5d-4e2f-8a6c-1d3b5f7e9a2c"]["memory"]


def test_importing_a_mem0_export_again_skips_every_memory(
    tmp_path: Path, backend: Backend, cli: Callable[..., Run]
) -> None:
    state = str(tmp_path / "state")
    assert cli(backend, "import", str(FIXTURE), "--state-dir", state).status == 0

    again = cli(backend, "import", str(FIXTURE), "--state-dir", state)

    assert again.status == 0, again.stderr
    assert again.text.startswith("imported 0, skipped 7, refused 0 of 7 records")


def test_identity_overrides_and_realm_places_a_bare_mem0_list(
    tmp_path: Path, backend: Backend, cli: Callable[..., Run], open_runtime
) -> None:
    bare = tmp_path / "v1.json"
    bare.write_text(json.dumps(_items()[:3]))  # mem0's output before v1.1: a bare list
    state = tmp_path / "state"

    run = cli(
        backend, "import", str(bare), "--state-dir", str(state), "--identity", "carol", "--realm", "crm"
    )

    assert run.status == 0, run.stderr
    memory = memory_of(open_runtime(state, backend))
    assert not memory.has_realm("default")
    recalled = memory.recall(RecallParams("carol", "crm", "always", None, (), 10)).records
    assert len(recalled) == 3


def test_a_memory_with_no_owner_is_refused_and_the_rest_imports(
    tmp_path: Path, cli: Callable[..., Run]
) -> None:
    items = _items()[:2]
    items[1] = {k: v for k, v in items[1].items() if k != "user_id"}
    path = tmp_path / "no-owner.json"
    path.write_text(json.dumps({"results": items}))

    run = cli(Backend("sqlite"), "import", str(path), "--state-dir", str(tmp_path / "state"))

    assert run.status == 1
    assert run.text.startswith("imported 1, skipped 0, refused 1 of 2 records")
    assert run.stderr.strip() == (
        f"meta_gateway: no-owner.json item 2 (mem0-{items[1]['id']}): refused, no-identity: "
        "the memory has no user_id or agent_id: give --identity"
    )


def test_the_same_text_twice_for_one_user_is_imported_once(
    tmp_path: Path, backend: Backend, open_runtime
) -> None:
    items = [
        {"id": "1", "memory": "Likes jazz", "user_id": "alice", "created_at": "2024-01-01T00:00:00Z"},
        {"id": "2", "memory": "Likes jazz", "user_id": "alice", "created_at": "2024-01-02T00:00:00Z"},
        {"id": "3", "memory": "Likes jazz", "user_id": "bob", "created_at": "2024-01-03T00:00:00Z"},
    ]
    source = read_source(
        bytes_opener(json.dumps(items).encode()), "x.json", realm="default", identity=None, now_ms=0
    )

    report = import_source(
        source, memory_of(open_runtime(tmp_path / "state", backend)).store, author=OPERATOR
    )

    assert (report.imported, report.skipped) == (2, 1)
    assert [(o.at, o.rule, o.message) for o in report.outcomes] == [
        ("item 2", "duplicate-content", "the same text is already active in its scope as 'mem0-1'")
    ]


def test_categories_that_are_not_valid_tags_are_named_not_kept() -> None:
    item = {"id": "x", "memory": "m", "user_id": "u", "categories": ["ok", "", "t" * 65, "ok"]}

    (entry,) = mem0_entries([item], realm="default", identity=None, now_ms=5)

    assert entry.record is not None and entry.record.tags == ("ok",)
    assert len(entry.notes) == 2
    assert entry.record.created_at_ms == entry.record.updated_at_ms == 5  # no times: the import's


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("Short and sweet", "Short and sweet"),
        ("  first line  \nsecond line", "first line"),
        ("word " * 30, ("word " * 16).strip() + "…"),  # 79 characters and the mark
        ("東" * 100, "東" * 65 + "…"),
        ("x" * 300, "x" * 79 + "…"),
    ],
)
def test_a_title_is_the_first_line_cut_at_a_word(text: str, title: str) -> None:
    made = title_from_text(text)

    assert made == title
    assert len(made) <= 80 and len(made.encode()) <= TITLE_MAX_BYTES
