"""PostgreSQL writes a lone create (a remember, an agent's observation) as one statement
(``meta_create_record``) and every other batch through its transaction. Both must leave the same
rows: the record, its postings and scope statistics, and its audit row; and the statement must
refuse what the validator refuses through the transaction (a taken id, content an LLM forgot in
the last seven days), and find what dedup finds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from meta_memory.clock import ManualClock
from meta_memory.config import load_config_dict
from meta_memory.errors import WriteRefused
from meta_memory.memory.records import (
    APPLICATION,
    Author,
    Provenance,
    Record,
    RecordKind,
    Scope,
    Status,
    Trust,
    content_hash,
)
from meta_memory.memory.store import RealmStore
from meta_memory.memory.validator import CreateOp, TombstoneOp, WriteBatch
from meta_memory.runtime import MetaRuntime

from ..conftest import Backend

AGENT = Author("agent", identity="alice")


@pytest.fixture
def store(pg: Backend, tmp_path: Path, clock: ManualClock) -> Any:
    config = load_config_dict(pg.config({"agent_memory": {"enabled": True}}))
    with MetaRuntime.open(tmp_path / "state", config, clock=clock) as runtime:
        assert runtime.agent_memory is not None
        yield runtime.agent_memory.store("default")


def _record(memory_id: str, title: str, body: str, clock: ManualClock, **extra: Any) -> Record:
    now = clock.now_ms()
    fields: dict[str, Any] = {
        "id": memory_id,
        "scope": Scope.identity("default", "alice"),
        "kind": RecordKind.FACT,
        "title": title,
        "description": "",
        "body": body,
        "tags": ("ops",),
        "provenance": Provenance(APPLICATION),
        "trust": Trust.AGENT_OBSERVED,
        "status": Status.ACTIVE,
        "created_at_ms": now,
        "updated_at_ms": now,
        "content_hash": content_hash(title, body),
        **extra,
    }
    return Record(**fields)


def _rows(pg: Backend, tmp_path: Path, memory_id: str) -> tuple[Any, ...]:
    """Everything stored about one record, with the parts that name the path left out."""
    [record] = pg.stored(
        tmp_path,
        "SELECT kind, title, description, body, tags, provenance, trust, status, quarantine_reason, "
        "derived_from, ever_quarantined, content_hash, created_at_ms, updated_at_ms FROM records WHERE id = ?",
        (memory_id,),
    )
    postings = pg.stored(
        tmp_path,
        "SELECT p.term, p.tf_title, p.tf_body, p.tf_tags, p.length FROM postings p "
        "JOIN records r ON r.doc = p.doc WHERE r.id = ? ORDER BY p.term",
        (memory_id,),
    )
    audit = pg.stored(tmp_path, "SELECT op, author, detail FROM audit WHERE record_id = ?", (memory_id,))
    return record, postings, audit


def test_a_lone_create_and_a_create_in_a_batch_leave_the_same_rows(
    store: RealmStore, pg: Backend, tmp_path: Path, clock: ManualClock
) -> None:
    title, body = "Deploy window", "Deploys happen on Tuesdays after the standup, never on Fridays."
    store.commit(WriteBatch("default", APPLICATION, (CreateOp(_record("mem-alone", title, body, clock)),)))
    # The same record beside a second one: a batch of two goes through the transaction.
    other = _record("mem-other", "Other", "Something else entirely.", clock)
    store.commit(
        WriteBatch(
            "default", APPLICATION, (CreateOp(_record("mem-batched", title, body, clock)), CreateOp(other))
        )
    )

    assert _rows(pg, tmp_path, "mem-alone") == _rows(pg, tmp_path, "mem-batched")
    [(docs, length)] = pg.stored(tmp_path, "SELECT doc_count, total_len FROM scope_stats")
    [(total,)] = pg.stored(tmp_path, "SELECT sum(length) FROM (SELECT DISTINCT doc, length FROM postings) d")
    assert (docs, length) == (3, total)


def test_the_statement_refuses_what_the_validator_refuses_and_dedups_what_it_dedups(
    store: RealmStore, clock: ManualClock
) -> None:
    made = store.commit(
        WriteBatch("default", APPLICATION, (CreateOp(_record("mem-1", "Fact", "The fact.", clock)),))
    )
    again = WriteBatch("default", APPLICATION, (CreateOp(_record("mem-2", "Fact", "The fact.", clock)),))
    assert store.commit(again, dedup=True).records[0].id == "mem-1"
    assert store.commit(again, dedup=True).deduplicated

    with pytest.raises(WriteRefused) as taken:
        store.commit(WriteBatch("default", APPLICATION, (CreateOp(_record("mem-1", "New", "Body.", clock)),)))
    assert taken.value.rule == "duplicate-id"

    mine = WriteBatch("default", AGENT, (CreateOp(_record("mem-3", "Mine", "My note.", clock)),))
    store.commit(mine)
    store.commit(WriteBatch("default", AGENT, (TombstoneOp("mem-3", Scope.identity("default", "alice")),)))
    clock.advance(1)
    with pytest.raises(WriteRefused) as forgotten:
        store.commit(WriteBatch("default", AGENT, (CreateOp(_record("mem-4", "Mine", "My note.", clock)),)))
    assert forgotten.value.rule == "recreate-tombstoned"
    assert store.get("mem-4") is None and made.audit_seq is not None
