"""``meta/agent_memory/history`` on both backends: a record's lineage oldest first, whichever
version is asked for, through updates, a quarantined update's release (the quarantined record sits
between the record it updated and its released successor), a discard and a forget, each version
with its status, author, trust, content hash, times and the reason it ended."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from meta_memory import Meta, MetaHandle
from meta_memory.clock import ManualClock
from meta_memory.errors import UnknownRecord
from meta_memory.gateway.dispatch import CONSOLE, CallContext

from ..conftest import Backend

HISTORY = "meta/agent_memory/history"
GET = "meta/agent_memory/get"


@pytest.fixture
def meta(tmp_path: Path, clock: ManualClock, backend: Backend) -> Iterator[MetaHandle]:
    """LLM writes land quarantined; decisions are made on the (unguarded) console."""
    builder = Meta.builder().persistent_state(tmp_path / "state").clock(clock)
    with builder.agent_memory(llm_writes="quarantined", **backend.store_config()).build() as handle:
        yield handle


def _history(meta: MetaHandle, memory_id: str, identity: str = "alice") -> list[dict[str, Any]]:
    reply = meta.call(HISTORY, {"identity": identity, "memory_id": memory_id})
    assert reply["memory_id"] == memory_id and reply["realm"] == "default"
    versions = list(reply["versions"])
    for version in versions:
        # Each version is the record as get shows it, plus why it ended.
        found = meta.call(GET, {"identity": identity, "memory_id": version["memory_id"]})["record"]
        assert {k: v for k, v in version.items() if k not in ("ended", "content_withheld")} == found
    return versions


def _llm(meta: MetaHandle, arguments: dict[str, Any]) -> str:
    result = meta.open_session("alice").memory_tool(arguments)
    assert result.outcome == "quarantined", result
    return [w.strip(".,") for w in result.content.split() if w.startswith("mem-")][-1]


def _decide(meta: MetaHandle, memory_id: str, verdict: str) -> None:
    (version,) = [v for v in _history(meta, memory_id) if v["memory_id"] == memory_id]
    params = {
        "identity": "alice",
        "memory_id": memory_id,
        "verdict": verdict,
        "expected_content_hash": version["content_hash"],
    }
    meta._dispatcher.call("meta/memory/quarantine/decide", params, CallContext(CONSOLE))


def test_a_chain_of_updates_and_a_forget_is_the_same_history_from_every_version(
    meta: MetaHandle, clock: ManualClock
) -> None:
    first = meta.remember_agent_memory("alice", title="Deploys", body="Deploys on Tuesdays.")
    clock.advance(10)
    second = meta.update_agent_memory("alice", first.memory_id, title="Deploys", body="Wednesdays.")
    clock.advance(10)
    third = meta.update_agent_memory(
        "alice", second.memory_id, title="Deploys", body="Thursdays.", tags=["ops"]
    )
    clock.advance(10)
    meta.forget_agent_memory("alice", third.memory_id)

    ids = [first.memory_id, second.memory_id, third.memory_id]
    for asked in ids:
        versions = _history(meta, asked)
        assert [v["memory_id"] for v in versions] == ids
        assert [v["status"] for v in versions] == ["superseded", "superseded", "tombstoned"]
        assert [v["ended"] for v in versions] == ["superseded", "superseded", "forgotten"]
        assert [v["body"] for v in versions] == ["Deploys on Tuesdays.", "Wednesdays.", "Thursdays."]
        assert versions[2]["tags"] == ["ops"]
        assert [v["supersedes"] for v in versions] == [None, first.memory_id, second.memory_id]
        assert [v["created_at_ms"] for v in versions] == sorted(v["created_at_ms"] for v in versions)
        for v in versions:
            assert v["author"]["author"] == "application" and v["content_withheld"] is False
            # The hash a reviewer binds a decision to, recomputed here from REFERENCE 5.1's formula.
            title = v["title"].encode()
            expected = hashlib.sha256(len(title).to_bytes(8, "little") + title + v["body"].encode())
            assert v["content_hash"] == expected.hexdigest()


def test_a_released_update_passes_through_the_quarantined_record_it_came_from(
    meta: MetaHandle, clock: ManualClock
) -> None:
    prior = meta.remember_agent_memory("alice", title="Deploys", body="Deploys on Tuesdays.")
    update = _llm(
        meta, {"action": "update", "memory_id": prior.memory_id, "title": "Deploys", "body": "Fridays."}
    )
    # Waiting for review: the update is its own lineage's current version, the prior still current too.
    assert [v["memory_id"] for v in _history(meta, prior.memory_id)] == [prior.memory_id]
    held = _history(meta, update)
    assert [(v["memory_id"], v["status"], v["ended"]) for v in held] == [
        (prior.memory_id, "active", None),
        (update, "quarantined", None),
    ]
    clock.advance(10)
    _decide(meta, update, "release")

    released = f"{update}-released"
    expected = [
        (prior.memory_id, "superseded", "superseded", "application"),
        (update, "tombstoned", "released", "agent"),
        (released, "active", None, "agent"),
    ]
    for asked in (prior.memory_id, update, released):
        versions = _history(meta, asked)
        assert [
            (v["memory_id"], v["status"], v["ended"], v["author"]["author"]) for v in versions
        ] == expected
        assert versions[1]["ever_quarantined"] and versions[2]["derived_from"] == [update]
        # The application surface reads its identity's quarantined content, as get does.
        assert versions[1]["body"] == "Fridays." and versions[1]["content_withheld"] is False


def test_a_discarded_record_ends_its_history_as_discarded(meta: MetaHandle) -> None:
    held = _llm(meta, {"action": "remember", "title": "Deploys", "body": "Deploys on Tuesdays."})
    _decide(meta, held, "tombstone")
    (version,) = _history(meta, held)
    assert (version["status"], version["ended"], version["ever_quarantined"]) == (
        "tombstoned",
        "discarded",
        True,
    )


def test_a_record_never_changed_is_its_own_history(meta: MetaHandle) -> None:
    made = meta.remember_agent_memory("alice", title="Deploys", body="Deploys on Tuesdays.")
    (version,) = _history(meta, made.memory_id)
    assert (version["memory_id"], version["status"], version["ended"]) == (made.memory_id, "active", None)


def test_another_identitys_record_or_an_unknown_id_is_unknown(meta: MetaHandle) -> None:
    theirs = meta.remember_agent_memory("bob", title="Bob", body="Bob's note.")
    for identity, memory_id in (("alice", theirs.memory_id), ("alice", "mem-nope")):
        with pytest.raises(UnknownRecord, match=f"unknown memory record '{memory_id}'"):
            meta.call(HISTORY, {"identity": identity, "memory_id": memory_id})


def test_the_python_api_reads_the_history_typed(meta: MetaHandle, clock: ManualClock) -> None:
    first = meta.remember_agent_memory("alice", title="Deploys", body="Tuesdays.")
    clock.advance(10)
    second = meta.update_agent_memory("alice", first.memory_id, title="Deploys", body="Fridays.")
    history = meta.agent_memory_history("alice", first.memory_id)
    assert history.memory_id == first.memory_id
    assert [(v.record.memory_id, v.ended) for v in history.versions] == [
        (first.memory_id, "superseded"),
        (second.memory_id, None),
    ]
    assert history.versions[1].record.body == "Fridays." and not history.versions[1].content_withheld
