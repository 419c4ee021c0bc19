"""``meta/agent_memory/forget`` (tombstones) and ``meta/agent_memory/update`` (supersede within
the identity's own lineage)."""

from __future__ import annotations

from typing import Any

import pytest

from meta_memory import InvalidParams, MetaHandle
from meta_memory.clock import ManualClock
from meta_memory.memory.records import Status
from meta_memory.memory.sqlite.store import SqliteRealmStore


def _store(handle: MetaHandle, realm: str = "default") -> SqliteRealmStore:
    assert handle.runtime.agent_memory is not None
    return handle.runtime.agent_memory.store(realm)


def test_forget_tombstones_the_record_and_writes_an_audit_row(handle: MetaHandle) -> None:
    record = handle.remember_agent_memory("alice", title="Espresso", body="Grinder setting 12.")
    result = handle.call("meta/agent_memory/forget", {"identity": "alice", "memory_id": record.memory_id})
    assert result == {"memory_id": record.memory_id, "deleted": True}
    stored = _store(handle).get(record.memory_id)
    assert stored is not None and stored.status is Status.TOMBSTONED
    audit = _store(handle).audit_rows(record.memory_id)
    assert [row["op"] for row in audit] == ["create", "tombstone"]
    assert audit[-1]["author"] == {"author": "application"}


def test_a_forgotten_record_is_never_recalled_again(handle: MetaHandle) -> None:
    record = handle.remember_agent_memory("alice", title="Espresso", body="Grinder setting 12.")
    handle.forget_agent_memory("alice", record.memory_id)
    assert handle.recall_agent_memory("alice", selection="always") == []
    assert handle.recall_agent_memory("alice", query_text="espresso grinder") == []
    assert handle.recall_agent_memory("alice", query_terms=["espresso"]) == []


@pytest.mark.parametrize("case", ["missing", "already_forgotten", "other_identity", "other_realm"])
def test_forget_reports_deleted_false_and_writes_nothing(handle: MetaHandle, case: str) -> None:
    record = handle.remember_agent_memory("alice", title="Espresso", body="Grinder setting 12.")
    identity, memory_id, realm = "alice", record.memory_id, None
    if case == "missing":
        memory_id = "mem-does-not-exist"
    elif case == "already_forgotten":
        assert handle.forget_agent_memory("alice", record.memory_id).deleted
    elif case == "other_identity":
        identity = "bob"
    else:
        realm = "elsewhere"
    audit_before = _store(handle).audit_rows()

    result = handle.forget_agent_memory(identity, memory_id, realm=realm)

    assert (result.memory_id, result.deleted) == (memory_id, False)
    assert _store(handle).audit_rows() == audit_before
    if case in ("other_identity", "other_realm"):
        assert handle.recall_agent_memory("alice", selection="always") == [record]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"identity": "alice"}, "memory_id must be a non-empty string"),
        ({"identity": "alice", "memory_id": "  "}, "memory_id must be a non-empty string"),
        ({"identity": "alice", "memory_id": 4}, "memory_id must be a non-empty string"),
        ({"memory_id": "mem-1"}, "identity must be a valid non-empty string"),
        (
            {"identity": "alice", "memory_id": "mem-1", "realm": ""},
            "realm must be a non-empty string when provided",
        ),
    ],
)
def test_forget_refuses_bad_parameters(handle: MetaHandle, params: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidParams) as refused:
        handle.call("meta/agent_memory/forget", params)
    assert refused.value.message == message


def test_update_supersedes_the_old_record_within_the_identity(handle: MetaHandle, clock: ManualClock) -> None:
    old = handle.remember_agent_memory("alice", title="Espresso", body="Grinder setting 12.", tags=["coffee"])
    clock.advance(1_000)
    result = handle.call(
        "meta/agent_memory/update",
        {"identity": "alice", "memory_id": old.memory_id, "title": "Espresso", "body": "Grinder setting 10."},
    )
    assert set(result) == {"memory_id", "supersedes"}
    assert result["supersedes"] == old.memory_id and result["memory_id"] != old.memory_id

    store = _store(handle)
    prior, new = store.get(old.memory_id), store.get(result["memory_id"])
    assert prior is not None and new is not None
    assert (prior.status, prior.superseded_by) == (Status.SUPERSEDED, new.id)
    assert (new.status, new.supersedes, new.tags) == (Status.ACTIVE, old.memory_id, ("coffee",))
    assert new.created_at_ms == clock.now_ms()
    recalled = handle.recall_agent_memory("alice", query_text="espresso grinder setting", max_entries=64)
    assert [r.memory_id for r in recalled] == [new.id]
    assert [row["op"] for row in store.audit_rows(new.id)] == ["supersede"]


def test_update_replaces_tags_when_given(handle: MetaHandle) -> None:
    old = handle.remember_agent_memory("alice", title="Espresso", body="Setting 12.", tags=["coffee"])
    update = handle.update_agent_memory(
        "alice", old.memory_id, title="Espresso", body="Setting 10.", tags=["Beans"]
    )
    assert handle.recall_agent_memory("alice", selection="always")[0].tags == ("beans",)
    assert update.supersedes == old.memory_id


def test_a_chain_of_updates_leaves_only_the_last_active_and_keeps_the_lineage(
    handle: MetaHandle, clock: ManualClock
) -> None:
    first = handle.remember_agent_memory("alice", title="Setting", body="Grinder setting 12.")
    ids = [first.memory_id]
    for n in (11, 10, 9, 8):
        clock.advance(10)
        ids.append(
            handle.update_agent_memory(
                "alice", ids[-1], title="Setting", body=f"Grinder setting {n}."
            ).memory_id
        )

    recalled = handle.recall_agent_memory("alice", selection="always")
    assert [r.memory_id for r in recalled] == [ids[-1]]
    assert recalled[0].body == "Grinder setting 8."
    store = _store(handle)
    lineage, current = [], store.get(ids[-1])
    while current is not None:
        lineage.append(current.id)
        current = store.get(current.supersedes) if current.supersedes else None
    assert lineage == ids[::-1]
    assert [store.get(i).status for i in ids] == [Status.SUPERSEDED] * 4 + [Status.ACTIVE]  # type: ignore[union-attr]


@pytest.mark.parametrize("case", ["superseded", "tombstoned", "other_identity", "missing", "other_realm"])
def test_update_refuses_a_record_that_is_not_an_active_record_of_the_identity(
    handle: MetaHandle, case: str
) -> None:
    record = handle.remember_agent_memory("alice", title="Espresso", body="Grinder setting 12.")
    identity, memory_id, realm = "alice", record.memory_id, None
    if case == "superseded":
        handle.update_agent_memory("alice", record.memory_id, title="Espresso", body="Grinder setting 10.")
    elif case == "tombstoned":
        handle.forget_agent_memory("alice", record.memory_id)
    elif case == "other_identity":
        identity = "bob"
    elif case == "missing":
        memory_id = "mem-does-not-exist"
    else:
        realm = "elsewhere"
    before = handle.recall_agent_memory("alice", selection="always")

    with pytest.raises(InvalidParams) as refused:
        handle.update_agent_memory(identity, memory_id, title="Hijack", body="Overwritten.", realm=realm)

    assert refused.value.code == -32602
    assert memory_id in refused.value.message
    assert handle.recall_agent_memory("alice", selection="always") == before
    assert handle.recall_agent_memory(identity, selection="always", realm=realm) == (
        before if (identity, realm) == ("alice", None) else []
    )


def test_update_validates_its_parameters_like_remember(handle: MetaHandle) -> None:
    record = handle.remember_agent_memory("alice", title="Espresso", body="Grinder setting 12.")
    with pytest.raises(InvalidParams, match=r"^title must be at most 200 bytes$"):
        handle.update_agent_memory("alice", record.memory_id, title="t" * 201, body="ok")
    with pytest.raises(InvalidParams, match=r"^memory_id must be a non-empty string$"):
        handle.call("meta/agent_memory/update", {"identity": "alice", "title": "t", "body": "b"})
    assert handle.recall_agent_memory("alice", selection="always") == [record]
