"""The one write validator, driven through ``SqliteRealmStore.commit`` with crafted batches."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest

from meta_memory import WriteRefused
from meta_memory.clock import ManualClock
from meta_memory.memory.records import APPLICATION, OPERATOR, Author, Record, Scope, ScopeKind, Status, Trust
from meta_memory.memory.sqlite.store import SqliteRealmStore
from meta_memory.memory.validator import MAX_BATCH_OPS, RECREATE_WINDOW_MS, CreateOp, TombstoneOp, WriteBatch

MakeRecord = Callable[..., Record]
ALICE = Scope.identity("r", "alice")


def _batch(*ops: CreateOp | TombstoneOp, author: Author = APPLICATION, realm: str = "r") -> WriteBatch:
    return WriteBatch(realm, author, tuple(ops), rationale="test")


def _refused(store: SqliteRealmStore, batch: WriteBatch) -> str:
    with pytest.raises(WriteRefused) as refused:
        store.commit(batch)
    assert refused.value.code == -32602
    assert refused.value.data == {"kind": "memory_write_refused", "rule": refused.value.rule}
    return refused.value.rule


def test_an_empty_batch_is_refused(store: SqliteRealmStore) -> None:
    assert _refused(store, _batch()) == "empty-batch"


def test_a_batch_of_more_than_1024_ops_is_refused_and_1024_is_accepted(
    store: SqliteRealmStore, make_record: MakeRecord
) -> None:
    too_many = [CreateOp(make_record()) for _ in range(MAX_BATCH_OPS + 1)]
    assert MAX_BATCH_OPS == 1024
    assert _refused(store, _batch(*too_many)) == "batch-too-large"
    assert store.newest_active([ALICE], 64) == []
    assert len(store.commit(_batch(*too_many[:MAX_BATCH_OPS])).records) == MAX_BATCH_OPS


def test_a_scope_of_another_realm_is_refused(store: SqliteRealmStore, make_record: MakeRecord) -> None:
    assert (
        _refused(store, _batch(CreateOp(make_record(scope=Scope.identity("other", "alice")))))
        == "realm-mismatch"
    )
    assert _refused(store, _batch(CreateOp(make_record()), realm="other")) == "realm-mismatch"


@pytest.mark.parametrize(
    "scope",
    [Scope.identity("r", "bob"), Scope(ScopeKind.REALM, "r"), Scope(ScopeKind.MOB, "r", "alice")],
    ids=["other-identity", "realm-scope", "mob-scope"],
)
def test_an_agent_may_write_only_its_own_identity_scope(
    store: SqliteRealmStore, make_record: MakeRecord, agent_alice: Author, scope: Scope
) -> None:
    assert (
        _refused(store, _batch(CreateOp(make_record(scope=scope)), author=agent_alice)) == "outside-own-scope"
    )
    store.commit(_batch(CreateOp(make_record("bobs", scope=scope))))  # the application may
    assert _refused(store, _batch(TombstoneOp("bobs", scope), author=agent_alice)) == "outside-own-scope"
    assert store.commit(_batch(CreateOp(make_record()), author=agent_alice)).records[0].scope == ALICE


@pytest.mark.parametrize(
    "author",
    [
        Author("agent", identity="alice"),
        Author("steward", run_id="run-1"),
        Author("distiller", run_id="run-1"),
    ],
    ids=lambda a: a.kind,
)
@pytest.mark.parametrize("trust", [Trust.AGENT_VERIFIED, Trust.APPLICATION, Trust.OPERATOR])
def test_an_llm_author_cannot_write_above_agent_observed(
    store: SqliteRealmStore, make_record: MakeRecord, author: Author, trust: Trust
) -> None:
    assert _refused(store, _batch(CreateOp(make_record(trust=trust)), author=author)) == "tier-ceiling"
    assert store.commit(_batch(CreateOp(make_record(trust=Trust.AGENT_OBSERVED)), author=author)).records


@pytest.mark.parametrize("author", [APPLICATION, OPERATOR], ids=["application", "operator"])
def test_a_non_llm_author_may_write_above_agent_observed(
    store: SqliteRealmStore, make_record: MakeRecord, author: Author
) -> None:
    assert store.commit(_batch(CreateOp(make_record(trust=Trust.APPLICATION)), author=author)).records


def test_ever_quarantined_ancestry_caps_the_tier_even_after_the_ancestor_is_tombstoned(
    store: SqliteRealmStore, make_record: MakeRecord, agent_alice: Author
) -> None:
    tainted = make_record("tainted", status=Status.QUARANTINED, quarantine_reason="tainted session")
    store.commit(_batch(CreateOp(tainted), author=agent_alice))
    assert store.forget(ALICE, "tainted", APPLICATION)
    assert store.get("tainted").ever_quarantined  # type: ignore[union-attr]

    derived = make_record(trust=Trust.APPLICATION, derived_from=("tainted",))
    assert _refused(store, _batch(CreateOp(derived))) == "tier-ceiling"
    middle = make_record("middle", derived_from=("tainted",))
    store.commit(_batch(CreateOp(middle)))
    grandchild = make_record(trust=Trust.APPLICATION, supersedes="middle")
    assert _refused(store, _batch(CreateOp(grandchild))) == "tier-ceiling"
    assert store.commit(_batch(CreateOp(replace(grandchild, trust=Trust.AGENT_OBSERVED)))).records


def test_an_untrusted_ancestor_caps_the_tier(store: SqliteRealmStore, make_record: MakeRecord) -> None:
    store.commit(_batch(CreateOp(make_record("raw", trust=Trust.UNTRUSTED))))
    assert (
        _refused(store, _batch(CreateOp(make_record(trust=Trust.OPERATOR, supersedes="raw"))))
        == "tier-ceiling"
    )
    clean = make_record(trust=Trust.OPERATOR, derived_from=())
    assert store.commit(_batch(CreateOp(clean))).records[0].trust is Trust.OPERATOR


def test_a_duplicate_id_is_refused_in_the_store_and_within_a_batch(
    store: SqliteRealmStore, make_record: MakeRecord
) -> None:
    store.commit(_batch(CreateOp(make_record("same"))))
    assert _refused(store, _batch(CreateOp(make_record("same")))) == "duplicate-id"
    assert (
        _refused(store, _batch(CreateOp(make_record("twin")), CreateOp(make_record("twin"))))
        == "duplicate-id"
    )
    assert store.get("twin") is None


@pytest.mark.parametrize("prior_status", ["superseded", "tombstoned", "quarantined"])
def test_superseding_a_record_that_is_not_active_is_refused(
    store: SqliteRealmStore, make_record: MakeRecord, agent_alice: Author, prior_status: str
) -> None:
    if prior_status == "quarantined":
        store.commit(_batch(CreateOp(make_record("old", status=Status.QUARANTINED)), author=agent_alice))
    else:
        store.commit(_batch(CreateOp(make_record("old"))))
        if prior_status == "superseded":
            store.commit(_batch(CreateOp(make_record("newer", supersedes="old"))))
        else:
            store.forget(ALICE, "old", APPLICATION)
    assert _refused(store, _batch(CreateOp(make_record(supersedes="old")))) == "supersede-inactive"


def test_superseding_a_record_of_another_scope_or_a_missing_record_is_refused(
    store: SqliteRealmStore, make_record: MakeRecord
) -> None:
    store.commit(_batch(CreateOp(make_record("bobs", scope=Scope.identity("r", "bob")))))
    assert _refused(store, _batch(CreateOp(make_record(supersedes="bobs")))) == "unknown-record"
    assert _refused(store, _batch(CreateOp(make_record(supersedes="nowhere")))) == "unknown-record"
    assert _refused(store, _batch(TombstoneOp("nowhere", ALICE))) == "unknown-record"


def test_one_batch_cannot_supersede_the_same_record_twice(
    store: SqliteRealmStore, make_record: MakeRecord
) -> None:
    store.commit(_batch(CreateOp(make_record("old"))))
    fork = _batch(
        CreateOp(make_record("left", supersedes="old")), CreateOp(make_record("right", supersedes="old"))
    )
    assert _refused(store, fork) == "supersede-inactive"
    assert [r.id for r in store.newest_active([ALICE], 64)] == ["old"]


def test_one_batch_cannot_supersede_a_record_it_tombstones(
    store: SqliteRealmStore, make_record: MakeRecord
) -> None:
    store.commit(_batch(CreateOp(make_record("old"))))
    batch = _batch(TombstoneOp("old", ALICE), CreateOp(make_record("revived", supersedes="old")))
    assert _refused(store, batch) == "supersede-inactive"
    assert store.get("old").status is Status.ACTIVE  # type: ignore[union-attr]


def test_a_chain_of_supersedes_in_one_batch_is_accepted(
    store: SqliteRealmStore, make_record: MakeRecord
) -> None:
    store.commit(_batch(CreateOp(make_record("v1"))))
    store.commit(
        _batch(CreateOp(make_record("v2", supersedes="v1")), CreateOp(make_record("v3", supersedes="v2")))
    )
    assert [store.get(i).status for i in ("v1", "v2", "v3")] == [  # type: ignore[union-attr]
        Status.SUPERSEDED,
        Status.SUPERSEDED,
        Status.ACTIVE,
    ]


def test_an_llm_cannot_recreate_content_forgotten_in_the_same_scope_within_7_days(
    store: SqliteRealmStore, make_record: MakeRecord, agent_alice: Author, clock: ManualClock
) -> None:
    store.commit(_batch(CreateOp(make_record("orig", title="Espresso", body="Setting 12."))))
    store.forget(ALICE, "orig", APPLICATION)

    def again(memory_id: str, **fields: object) -> CreateOp:
        return CreateOp(make_record(memory_id, title="Espresso", body="Setting 12.", **fields))

    assert _refused(store, _batch(again("llm-1"), author=agent_alice)) == "recreate-tombstoned"
    clock.advance(RECREATE_WINDOW_MS)
    assert _refused(store, _batch(again("llm-2"), author=agent_alice)) == "recreate-tombstoned"
    bob = Author("agent", identity="bob")
    assert store.commit(_batch(again("bob-1", scope=Scope.identity("r", "bob")), author=bob)).records
    assert store.commit(_batch(again("app-1"))).records  # not an LLM author
    clock.advance(1)
    assert store.commit(_batch(again("llm-3"), author=agent_alice)).records[0].id == "llm-3"


def test_every_op_of_a_batch_writes_one_audit_row(
    store: SqliteRealmStore, make_record: MakeRecord, clock: ManualClock
) -> None:
    store.commit(_batch(CreateOp(make_record("old"))))
    result = store.commit(
        _batch(
            CreateOp(make_record("a")), CreateOp(make_record("b", supersedes="old")), TombstoneOp("a", ALICE)
        )
    )
    audit = store.audit_rows()
    assert [(row["op"], row["record_id"]) for row in audit] == [
        ("create", "old"),
        ("create", "a"),
        ("supersede", "b"),
        ("tombstone", "a"),
    ]
    assert result.audit_seq == audit[-1]["seq"]
    assert all(row["at_ms"] == clock.now_ms() for row in audit)
    assert audit[-1]["detail"] == {
        "op": "tombstone",
        "author": {"author": "application"},
        "rationale": "test",
        "quarantined": None,
    }


def test_a_refused_batch_writes_nothing_at_all(
    store: SqliteRealmStore, make_record: MakeRecord, agent_alice: Author
) -> None:
    store.commit(_batch(CreateOp(make_record("old"))))
    audit_before = store.audit_rows()
    secret = "AK" + "IA" + "IOSFODNN7EXAMPLE"
    batch = _batch(
        CreateOp(make_record("fine-1")),
        CreateOp(make_record("fine-2", supersedes="old")),
        TombstoneOp("old", ALICE),
        CreateOp(make_record("leaky", body=f"key {secret}")),
    )
    assert _refused(store, batch) == "secret-detected"
    assert store.audit_rows() == audit_before
    assert [store.get(i) for i in ("fine-1", "fine-2", "leaky")] == [None, None, None]
    assert [r.id for r in store.newest_active([ALICE], 64)] == ["old"]
    assert store.get("old").status is Status.ACTIVE  # type: ignore[union-attr]


def test_a_batch_that_fails_while_applying_rolls_back_without_confusing_scopes(
    store: SqliteRealmStore, make_record: MakeRecord
) -> None:
    carol = Scope.identity("r", "carol")
    with pytest.raises((WriteRefused, OverflowError)):  # an out-of-range value fails in SQLite itself
        store.commit(_batch(CreateOp(make_record("c1", scope=carol, working_set_rank=2**70))))
    store.commit(_batch(CreateOp(make_record("b1", scope=Scope.identity("r", "bob")))))
    store.commit(_batch(CreateOp(make_record("c2", scope=carol))))
    assert [r.id for r in store.newest_active([Scope.identity("r", "bob")], 64)] == ["b1"]
    assert [r.id for r in store.newest_active([carol], 64)] == ["c2"]
    assert store.get("c1") is None and store.audit_rows("c1") == []


@pytest.mark.parametrize("field", ["created_at_ms", "updated_at_ms"])
@pytest.mark.parametrize("value", [-1, 2**63])
def test_timestamps_outside_the_sqlite_integer_range_are_refused(
    store: SqliteRealmStore, make_record: MakeRecord, field: str, value: int
) -> None:
    assert _refused(store, _batch(CreateOp(make_record(**{field: value})))) == "field-invalid"
    assert store.commit(_batch(CreateOp(make_record(**{field: 2**63 - 1})))).records


@pytest.mark.parametrize(
    ("fields", "rule"),
    [
        ({"title": "t" * 201}, "field-too-large"),
        ({"description": "d" * 401}, "field-too-large"),
        ({"body": "b" * 65537}, "field-too-large"),
        ({"tags": tuple(f"t{i}" for i in range(33))}, "field-too-large"),
        ({"tags": ("t" * 65,)}, "field-too-large"),
        ({"tags": (" ",)}, "field-invalid"),
        ({"title": "  "}, "field-invalid"),
        ({"body": "\n"}, "field-invalid"),
        ({"status": Status.SUPERSEDED}, "invalid-status"),
        ({"status": Status.TOMBSTONED}, "invalid-status"),
    ],
)
def test_field_caps_and_statuses_hold_for_every_write_path(
    store: SqliteRealmStore, make_record: MakeRecord, fields: dict[str, object], rule: str
) -> None:
    assert _refused(store, _batch(CreateOp(make_record(**fields)))) == rule
