from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meta_memory.clock import ManualClock
from meta_memory.errors import MemoryBackendUnavailable, StorageRefused
from meta_memory.ledger import (
    STORES,
    Assertion,
    ConflictSignal,
    IndexResult,
    Ledger,
    LedgerSnapshot,
    LocalJsonBackend,
    parse_query_params,
)
from meta_memory.ledger.local_json import assemble_document
from meta_memory.ledger.model import encode_metadata, restore_snapshot
from meta_memory.storage.layout import StateLayout

Index = Callable[..., IndexResult]
Open = Callable[..., Ledger]


def everything(ledger: Ledger) -> dict[str, Any]:
    return ledger.query(parse_query_params(None)).to_wire()


def write_state(layout: StateLayout, state: object) -> None:
    layout.root.mkdir(parents=True, exist_ok=True)
    layout.ledger_path.write_text(json.dumps(state), encoding="utf-8")


def row(i: int, **overrides: Any) -> dict[str, Any]:
    base = {
        "assertion_id": f"memory-assert-{i:06d}",
        "entity": "e",
        "topic": "t",
        "store": "todo",
        "fact": f"fact {i}",
        "metadata": None,
        "indexed_at_ms": i,
    }
    return {**base, **overrides}


def signal(**overrides: Any) -> dict[str, Any]:
    return {"entity": "e", "topic": "t", "store": "todo", "reason": None, "updated_at_ms": 1, **overrides}


def test_index_rewrites_the_file_as_pretty_printed_json_of_the_whole_ledger(
    open_ledger: Open, layout: StateLayout, index: Index
) -> None:
    ledger = open_ledger()
    index(ledger, entity="e", topic="t", fact="f", metadata={"source": "runbook", "n": [1, {"x": None}]})
    index(ledger, entity="e", topic="t", store="vector", conflict=True)
    text = layout.ledger_path.read_text(encoding="utf-8")
    assert text == json.dumps(everything(ledger), indent=2)
    assert '\n      "metadata": {\n        "source": "runbook",' in text
    assert not layout.ledger_stage_path.exists()


def test_empty_arrays_and_absent_metadata_or_reason_are_written_as_upstream_does(
    open_ledger: Open, layout: StateLayout, index: Index
) -> None:
    index(open_ledger(), entity="e", topic="t", conflict=True)
    assert json.loads(layout.ledger_path.read_bytes()) == {
        "assertions": [],
        "conflicts": [
            {"entity": "e", "topic": "t", "store": "knowledge_graph", "reason": None, "updated_at_ms": 1_000}
        ],
    }
    assert layout.ledger_path.read_text(encoding="utf-8").startswith(
        '{\n  "assertions": [],\n  "conflicts": [\n'
    )


def test_a_reopened_ledger_holds_what_was_indexed_and_continues_the_sequence(
    open_ledger: Open, index: Index
) -> None:
    first = open_ledger()
    index(first, entity="ops", topic="deploy", fact="Ünïcode fact \ud800", metadata={"k": 1.5})
    index(first, entity="ops", topic="deploy", store="todo", conflict=True, conflict_reason="why")
    reopened = open_ledger()
    assert everything(reopened) == everything(first)
    assert index(reopened, entity="e", topic="t", fact="next").assertion_id == "memory-assert-000001"


def test_a_missing_file_loads_as_an_empty_ledger(open_ledger: Open, layout: StateLayout) -> None:
    assert everything(open_ledger()) == {"assertions": [], "conflicts": []}
    assert not layout.ledger_path.exists()


def test_missing_top_level_arrays_default_to_empty(open_ledger: Open, layout: StateLayout) -> None:
    write_state(layout, {"conflicts": [signal()]})
    assert len(everything(open_ledger())["conflicts"]) == 1
    write_state(layout, {"assertions": [row(0)], "extra": True})
    assert len(everything(open_ledger())["assertions"]) == 1


def test_persist_creates_the_state_directory_when_missing(
    layout: StateLayout, clock: ManualClock, index: Index
) -> None:
    nested = StateLayout.at(layout.root / "deeper" / "still")
    ledger = Ledger.open(LocalJsonBackend.for_layout(nested), clock=clock)
    index(ledger, entity="e", topic="t", fact="f")
    assert nested.ledger_path.is_file()


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"{not json", "is not valid JSON"),
        (b"", "is not valid JSON"),
        (b'{"assertions": [], "conflicts": [NaN]}', "is not valid JSON"),
        (b'\xef\xbb\xbf{"assertions": []}', "is not valid JSON"),
        (b'{"assertions": ["\xff"]}', "is not valid JSON"),
        (b"[]", "is malformed: the top level must be an object"),
        (b'{"assertions": null}', 'is malformed: "assertions" must be an array'),
        (b'{"conflicts": {}}', 'is malformed: "conflicts" must be an array'),
        (b'{"assertions": [1]}', "is malformed: assertions[0] must be an object"),
    ],
)
def test_unreadable_ledger_file_refuses_boot_naming_the_file(
    open_ledger: Open, layout: StateLayout, content: bytes, problem: str
) -> None:
    layout.root.mkdir(parents=True)
    layout.ledger_path.write_bytes(content)
    with pytest.raises(StorageRefused) as caught:
        open_ledger()
    assert caught.value.message.startswith(f"storage refused: memory ledger {layout.ledger_path} {problem}")


@pytest.mark.parametrize(
    ("state", "problem"),
    [
        (
            {"assertions": [row(0), {k: v for k, v in row(1).items() if k != "indexed_at_ms"}]},
            'assertions[1] is missing "indexed_at_ms"',
        ),
        (
            {"assertions": [{k: v for k, v in row(0).items() if k != "fact"}]},
            'assertions[0] is missing "fact"',
        ),
        (
            {"assertions": [{k: v for k, v in row(0).items() if k != "store"}]},
            'assertions[0] is missing "store"',
        ),
        (
            {"assertions": [{k: v for k, v in row(0).items() if k != "assertion_id"}]},
            'assertions[0] is missing "assertion_id"',
        ),
        ({"assertions": [row(0, fact=None)]}, "assertions[0].fact must be a string"),
        ({"assertions": [row(0, entity=5)]}, "assertions[0].entity must be a string"),
        (
            {"assertions": [row(0, indexed_at_ms="1")]},
            "assertions[0].indexed_at_ms must be a non-negative integer",
        ),
        (
            {"assertions": [row(0, indexed_at_ms=-1)]},
            "assertions[0].indexed_at_ms must be a non-negative integer",
        ),
        (
            {"assertions": [row(0, indexed_at_ms=1.5)]},
            "assertions[0].indexed_at_ms must be a non-negative integer",
        ),
        (
            {"assertions": [row(0, indexed_at_ms=True)]},
            "assertions[0].indexed_at_ms must be a non-negative integer",
        ),
        (
            {"assertions": [row(0, indexed_at_ms=2**64)]},
            "assertions[0].indexed_at_ms must be a non-negative integer",
        ),
        (
            {"conflicts": [{k: v for k, v in signal().items() if k != "updated_at_ms"}]},
            'conflicts[0] is missing "updated_at_ms"',
        ),
        (
            {"conflicts": [{k: v for k, v in signal().items() if k != "entity"}]},
            'conflicts[0] is missing "entity"',
        ),
        ({"conflicts": [signal(reason=3)]}, "conflicts[0].reason must be a string or null"),
    ],
)
def test_structurally_malformed_rows_refuse_boot(
    open_ledger: Open, layout: StateLayout, state: dict[str, Any], problem: str
) -> None:
    write_state(layout, state)
    with pytest.raises(StorageRefused) as caught:
        open_ledger()
    assert (
        caught.value.message == f"storage refused: memory ledger {layout.ledger_path} is malformed: {problem}"
    )


def test_a_directory_in_place_of_the_file_refuses_boot(open_ledger: Open, layout: StateLayout) -> None:
    layout.ledger_path.mkdir(parents=True)
    with pytest.raises(StorageRefused, match="could not be read"):
        open_ledger()


def test_rows_failing_normalization_are_dropped_and_the_rest_normalized(
    open_ledger: Open, layout: StateLayout
) -> None:
    write_state(
        layout,
        {
            "assertions": [
                row(0, entity="  "),
                row(1, topic=""),
                row(2, store="graph"),
                row(3, fact=" \t "),
                row(4, entity=" OPS ", topic="Deploy", store=" TODO ", fact="  Keep Me  ", metadata=[1, "x"]),
            ],
            "conflicts": [
                signal(entity=" "),
                signal(topic=""),
                signal(store="nope"),
                signal(entity="CRM", store="Vector", reason="   "),
            ],
        },
    )
    assert everything(open_ledger()) == {
        "assertions": [
            {
                "assertion_id": "memory-assert-000004",
                "entity": "ops",
                "topic": "deploy",
                "store": "todo",
                "fact": "Keep Me",
                "metadata": [1, "x"],
                "indexed_at_ms": 4,
            }
        ],
        "conflicts": [{"entity": "crm", "topic": "t", "store": "vector", "reason": None, "updated_at_ms": 1}],
    }


def test_the_last_of_several_conflicts_with_one_key_wins(open_ledger: Open, layout: StateLayout) -> None:
    write_state(
        layout, {"conflicts": [signal(reason="first"), signal(entity=" E ", reason="last", updated_at_ms=9)]}
    )
    assert everything(open_ledger())["conflicts"] == [signal(reason="last", updated_at_ms=9)]


def test_the_cap_applies_at_load_before_the_sequence_is_computed(
    open_ledger: Open, layout: StateLayout, index: Index
) -> None:
    # The highest id sits in the oldest row, which the 4,096 cap evicts before the sequence is read.
    rows = [row(0, assertion_id="memory-assert-999999")] + [row(i) for i in range(1, 4100)]
    write_state(layout, {"assertions": rows})
    ledger = open_ledger()
    kept = everything(ledger)["assertions"]
    assert (len(kept), kept[0]["assertion_id"]) == (4096, "memory-assert-000004")
    assert index(ledger, entity="e", topic="t", fact="f").assertion_id == "memory-assert-004100"


def test_the_sequence_resumes_after_the_largest_numeric_id_suffix(
    open_ledger: Open, layout: StateLayout, index: Index
) -> None:
    write_state(
        layout, {"assertions": [row(0, assertion_id="memory-assert-+41"), row(1, assertion_id="x-7")]}
    )
    assert index(open_ledger(), entity="e", topic="t", fact="f").assertion_id == "memory-assert-000042"


def test_the_sequence_falls_back_to_the_retained_count_when_no_id_parses(
    open_ledger: Open, layout: StateLayout, index: Index
) -> None:
    write_state(
        layout, {"assertions": [row(0, assertion_id="custom"), row(1, assertion_id="memory-assert-x")]}
    )
    assert index(open_ledger(), entity="e", topic="t", fact="f").assertion_id == "memory-assert-000002"


def test_a_failed_persist_rolls_back_everything_and_reports_backend_unavailable(
    open_ledger: Open, layout: StateLayout, index: Index
) -> None:
    ledger = open_ledger()
    index(ledger, entity="e", topic="t", fact="kept", conflict=True, conflict_reason="original")
    before, on_disk = everything(ledger), layout.ledger_path.read_bytes()
    # A directory where the stage file goes: unlike a chmod, this stops root too.
    layout.ledger_stage_path.mkdir()
    with pytest.raises(MemoryBackendUnavailable) as caught:
        index(ledger, entity="e", topic="t", fact="lost", conflict=True, conflict_reason="replaced?")
    assert caught.value.code == -32012
    assert caught.value.message.startswith("Memory backend unavailable: memory backend persistence failed: ")
    assert "Is a directory" in caught.value.message
    assert everything(ledger) == before
    assert ledger.stores().to_wire()["stores"][0] == {"store": "knowledge_graph", "record_count": 2}
    assert layout.ledger_path.read_bytes() == on_disk
    assert layout.ledger_stage_path.is_dir()  # not ours to delete
    layout.ledger_stage_path.rmdir()
    assert index(ledger, entity="e", topic="t", fact="again").assertion_id == "memory-assert-000001"


def test_a_failed_rename_removes_the_stage_file(open_ledger: Open, layout: StateLayout, index: Index) -> None:
    ledger = open_ledger()
    layout.ledger_path.mkdir(parents=True)  # the rename over the target fails
    with pytest.raises(MemoryBackendUnavailable, match="memory backend persistence failed"):
        index(ledger, entity="e", topic="t", fact="f")
    assert not layout.ledger_stage_path.exists()
    assert everything(ledger)["assertions"] == []


# -- property: the assembled file is exactly json.dumps(state, indent=2) -------------------------

any_text = st.text(st.characters(exclude_categories=()), max_size=12)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | any_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(any_text, inner, max_size=3),
    max_leaves=8,
)
millis = st.integers(min_value=0, max_value=2**64 - 1)
store_names = st.sampled_from(STORES) | any_text
assertions = st.builds(
    Assertion,
    assertion_id=any_text,
    entity=any_text,
    topic=any_text,
    store=store_names,
    fact=any_text,
    # JSON null metadata is absent metadata (None), never the text "null".
    metadata_json=st.none() | json_values.filter(lambda v: v is not None).map(encode_metadata),
    indexed_at_ms=millis,
)
conflicts = st.builds(
    ConflictSignal,
    entity=any_text,
    topic=any_text,
    store=store_names,
    reason=st.none() | any_text,
    updated_at_ms=millis,
)


@given(st.lists(assertions, max_size=6), st.lists(conflicts, max_size=4))
def test_the_assembled_file_is_byte_identical_to_json_dumps_of_the_state(
    rows: list[Assertion], signals: list[ConflictSignal]
) -> None:
    backend = LocalJsonBackend.for_layout(StateLayout.at("/nonexistent"))
    document = assemble_document(
        [backend.encode_assertion(a) for a in rows], [backend.encode_conflict(c) for c in signals]
    )
    expected = {
        "assertions": [a.to_wire() for a in rows],
        "conflicts": [c.to_wire() for c in signals],
    }
    assert json.loads(document) == expected
    assert document == json.dumps(expected, indent=2).encode("ascii")


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=50)
@given(st.lists(assertions, max_size=6), st.lists(conflicts, max_size=4))
def test_a_persisted_ledger_loads_back_to_the_same_snapshot(
    layout: StateLayout, rows: list[Assertion], signals: list[ConflictSignal]
) -> None:
    snapshot = restore_snapshot(rows, signals)
    backend = LocalJsonBackend.for_layout(layout)
    layout.root.mkdir(parents=True, exist_ok=True)
    backend.persist(
        [backend.encode_assertion(a) for a in snapshot.assertions],
        [backend.encode_conflict(c) for c in snapshot.conflicts],
    )
    assert backend.load() == snapshot


def test_an_empty_json_object_loads_as_an_empty_snapshot(layout: StateLayout) -> None:
    write_state(layout, {})
    assert LocalJsonBackend.for_layout(layout).load() == LedgerSnapshot()
