from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from meta_memory.clock import ManualClock
from meta_memory.ledger import (
    MAX_RETAINED_ASSERTIONS,
    Assertion,
    IndexResult,
    Ledger,
    LedgerSnapshot,
    parse_query_params,
)

Index = Callable[..., IndexResult]


def query(ledger: Ledger, **params: Any) -> dict[str, Any]:
    return ledger.query(parse_query_params(params)).to_wire()


def ids(ledger: Ledger, **params: Any) -> list[str]:
    return [a["assertion_id"] for a in query(ledger, **params)["assertions"]]


def test_first_assertion_id_is_zero_padded_zero_and_ids_count_up_by_one(ledger: Ledger, index: Index) -> None:
    first = index(ledger, entity="e", topic="t", fact="one")
    second = index(ledger, entity="e", topic="t", fact="two")
    assert (first.assertion_id, second.assertion_id) == ("memory-assert-000000", "memory-assert-000001")


def test_ids_are_padded_to_at_least_six_digits_and_grow_past_them(clock: ManualClock, index: Index) -> None:
    ledger = Ledger(clock=clock, snapshot=LedgerSnapshot(next_sequence=999_999))
    assert index(ledger, entity="e", topic="t", fact="a").assertion_id == "memory-assert-999999"
    assert index(ledger, entity="e", topic="t", fact="b").assertion_id == "memory-assert-1000000"


def test_index_echoes_canonical_values_and_the_default_store(ledger: Ledger, index: Index) -> None:
    result = index(ledger, entity=" Identity:OPS ", topic="DEPLOY", fact="Needs approval")
    assert result.to_wire() == {
        "entity": "identity:ops",
        "topic": "deploy",
        "store": "knowledge_graph",
        "assertion_id": "memory-assert-000000",
        "conflict_active": False,
    }


def test_assertion_records_fact_metadata_and_the_clock_time(
    ledger: Ledger, clock: ManualClock, index: Index
) -> None:
    clock.set(42_000)
    index(ledger, entity="e", topic="t", store="todo", fact=" Call back ", metadata={"source": "runbook"})
    assert query(ledger)["assertions"] == [
        {
            "assertion_id": "memory-assert-000000",
            "entity": "e",
            "topic": "t",
            "store": "todo",
            "fact": "Call back",
            "metadata": {"source": "runbook"},
            "indexed_at_ms": 42_000,
        }
    ]


def test_retention_keeps_the_newest_4096_assertions_and_the_sequence_runs_on(
    ledger: Ledger, index: Index
) -> None:
    for i in range(MAX_RETAINED_ASSERTIONS + 3):
        index(ledger, entity="e", topic="t", fact=f"fact {i}")
    kept = ids(ledger)
    assert len(kept) == MAX_RETAINED_ASSERTIONS == 4096
    assert kept[0] == "memory-assert-000003"
    assert kept[-1] == "memory-assert-004098"
    assert index(ledger, entity="e", topic="t", fact="next").assertion_id == "memory-assert-004099"


def test_conflict_only_write_records_a_signal_and_no_assertion(
    ledger: Ledger, clock: ManualClock, index: Index
) -> None:
    result = index(ledger, entity="e", topic="t", store="vector", conflict=True, conflict_reason="disagree")
    assert (result.assertion_id, result.conflict_active) == (None, True)
    assert query(ledger) == {
        "assertions": [],
        "conflicts": [
            {
                "entity": "e",
                "topic": "t",
                "store": "vector",
                "reason": "disagree",
                "updated_at_ms": clock.now_ms(),
            }
        ],
    }


def test_fact_together_with_conflict_true_records_both(ledger: Ledger, index: Index) -> None:
    result = index(ledger, entity="e", topic="t", fact="f", conflict=True)
    assert (result.assertion_id, result.conflict_active) == ("memory-assert-000000", True)
    wire = query(ledger)
    assert (len(wire["assertions"]), len(wire["conflicts"])) == (1, 1)


def test_conflict_upsert_keeps_one_signal_per_key_and_replaces_the_reason(
    ledger: Ledger, clock: ManualClock, index: Index
) -> None:
    index(ledger, entity="e", topic="t", conflict=True, conflict_reason="first")
    clock.advance(10)
    index(ledger, entity=" E ", topic="T", conflict=True, conflict_reason="second")
    assert query(ledger)["conflicts"] == [
        {"entity": "e", "topic": "t", "store": "knowledge_graph", "reason": "second", "updated_at_ms": 1_010}
    ]
    clock.advance(10)
    index(ledger, entity="e", topic="t", conflict=True)
    assert query(ledger)["conflicts"][0]["reason"] is None
    assert query(ledger)["conflicts"][0]["updated_at_ms"] == 1_020


def test_conflict_false_never_removes_a_signal(ledger: Ledger, index: Index) -> None:
    index(ledger, entity="e", topic="t", conflict=True, conflict_reason="why")
    result = index(ledger, entity="e", topic="t", fact="resolved?", conflict=False)
    assert result.conflict_active is True
    assert len(query(ledger)["conflicts"]) == 1


def test_conflict_active_means_same_entity_and_topic_in_any_store(ledger: Ledger, index: Index) -> None:
    index(ledger, entity="e", topic="t", store="todo", conflict=True)
    assert index(ledger, entity="e", topic="t", store="vector", fact="f").conflict_active is True
    assert index(ledger, entity="e", topic="other", fact="f").conflict_active is False
    assert index(ledger, entity="other", topic="t", fact="f").conflict_active is False


def test_signals_in_different_stores_are_separate_and_listed_in_key_order(
    ledger: Ledger, index: Index
) -> None:
    for entity, topic, store in [
        ("b", "t", "vector"),
        ("a", "t", "todo"),
        ("a", "t", "timeline"),
        ("a", "s", "todo"),
    ]:
        index(ledger, entity=entity, topic=topic, store=store, conflict=True)
    keys = [(c["entity"], c["topic"], c["store"]) for c in query(ledger)["conflicts"]]
    assert keys == [("a", "s", "todo"), ("a", "t", "timeline"), ("a", "t", "todo"), ("b", "t", "vector")]


def test_query_filters_match_canonical_entity_topic_and_store_exactly(ledger: Ledger, index: Index) -> None:
    index(ledger, entity="ops", topic="deploy", store="todo", fact="a")
    index(ledger, entity="ops", topic="deploy", store="vector", fact="b")
    index(ledger, entity="ops", topic="billing", fact="c")
    index(ledger, entity="opsx", topic="deploy", fact="d")
    assert ids(ledger, entity=" OPS ") == [
        "memory-assert-000000",
        "memory-assert-000001",
        "memory-assert-000002",
    ]
    assert ids(ledger, entity="ops", topic="Deploy") == ["memory-assert-000000", "memory-assert-000001"]
    assert ids(ledger, entity="ops", topic="deploy", store="VECTOR") == ["memory-assert-000001"]
    assert ids(ledger, store="graph") == ids(ledger)  # unsupported store: no filter
    assert ids(ledger, entity="  ", topic="") == ids(ledger)


def test_query_substring_matches_entity_topic_or_fact_ignoring_ascii_case(
    ledger: Ledger, index: Index
) -> None:
    index(ledger, entity="identity:ops", topic="deploy", fact="Needs APPROVAL first")
    index(ledger, entity="billing", topic="invoices", fact="monthly")
    index(ledger, entity="crm", topic="sync", fact="ÄRGER with the API")
    assert ids(ledger, query="approval") == ["memory-assert-000000"]
    assert ids(ledger, query=" IDENTITY:") == ["memory-assert-000000"]
    assert ids(ledger, query="voice") == ["memory-assert-000001"]
    assert ids(ledger, query="Ärger") == ["memory-assert-000002"]  # Ä is not ASCII: compared as written
    assert ids(ledger, query="ärger") == []


def test_query_substring_matches_conflicts_by_entity_topic_or_reason(ledger: Ledger, index: Index) -> None:
    index(ledger, entity="ops", topic="deploy", conflict=True, conflict_reason="Runbooks DISAGREE")
    index(ledger, entity="crm", topic="sync", conflict=True)
    assert [c["entity"] for c in query(ledger, query="disagree")["conflicts"]] == ["ops"]
    assert [c["entity"] for c in query(ledger, query="syn")["conflicts"]] == ["crm"]
    assert query(ledger, query="nothing")["conflicts"] == []


def test_query_filters_apply_to_conflicts_too(ledger: Ledger, index: Index) -> None:
    index(ledger, entity="ops", topic="deploy", store="todo", conflict=True)
    index(ledger, entity="ops", topic="billing", store="vector", conflict=True)
    assert [c["topic"] for c in query(ledger, store="vector")["conflicts"]] == ["billing"]
    assert [c["topic"] for c in query(ledger, entity="ops", topic="deploy")["conflicts"]] == ["deploy"]


def test_stores_counts_assertions_plus_signals_for_all_five_stores_in_order(
    ledger: Ledger, index: Index
) -> None:
    index(ledger, entity="e", topic="t", fact="a")
    index(ledger, entity="e", topic="t", store="todo", fact="b", conflict=True)
    index(ledger, entity="e", topic="u", store="todo", conflict=True)
    assert ledger.stores().to_wire() == {
        "stores": [
            {"store": "knowledge_graph", "record_count": 1},
            {"store": "vector", "record_count": 0},
            {"store": "timeline", "record_count": 0},
            {"store": "todo", "record_count": 3},
            {"store": "top_of_mind", "record_count": 0},
        ]
    }


def test_conflict_for_canonicalizes_and_matches_entity_topic_or_either_alone(
    ledger: Ledger, index: Index
) -> None:
    assert ledger.has_conflicts() is False
    index(ledger, entity="ops", topic="deploy", store="vector", conflict=True, conflict_reason="v")
    index(ledger, entity="ops", topic="deploy", store="todo", conflict=True, conflict_reason="t")
    index(ledger, entity="crm", topic="sync", conflict=True)
    assert ledger.has_conflicts() is True
    found = ledger.conflict_for(" OPS ", "Deploy")
    assert found is not None and found.store == "todo"  # first in key order
    assert ledger.conflict_for("ops", None) == found
    sync = ledger.conflict_for(None, "SYNC")
    assert sync is not None and sync.entity == "crm"
    assert ledger.conflict_for("ops", "sync") is None
    assert ledger.conflict_for(None, None) is None
    assert ledger.conflict_for("  ", "") is None


def test_snapshot_assertions_start_the_ledger(clock: ManualClock, index: Index) -> None:
    seeded = Assertion("memory-assert-000007", "e", "t", "todo", "old", None, 1)
    ledger = Ledger(clock=clock, snapshot=LedgerSnapshot(assertions=(seeded,), next_sequence=8))
    index(ledger, entity="e", topic="t", fact="new")
    assert ids(ledger) == ["memory-assert-000007", "memory-assert-000008"]


def test_concurrent_index_calls_lose_no_write_and_never_reuse_an_id(ledger: Ledger, index: Index) -> None:
    barrier = threading.Barrier(8)

    def writer(n: int) -> None:
        barrier.wait(timeout=10)
        for i in range(50):
            index(ledger, entity=f"w{n}", topic="t", fact=f"{i}")

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert ids(ledger) == [f"memory-assert-{i:06d}" for i in range(400)]
    for n in range(8):
        assert [a["fact"] for a in query(ledger, entity=f"w{n}")["assertions"]] == [str(i) for i in range(50)]
