"""The in-process Python handle: the builder, typed results, and typed errors carrying wire codes."""

from __future__ import annotations

from pathlib import Path

import pytest

from meta_memory import (
    AgentMemoryForgetResult,
    AgentMemoryRecord,
    CapabilityUnavailable,
    ConfigError,
    InvalidParams,
    MemoryIndexResult,
    MemoryQueryResult,
    MemoryStoreInfo,
    Meta,
    MetaError,
    MetaHandle,
    StorageRefused,
    local_json,
)
from meta_memory.errors import MethodNotFound


def test_the_builder_boots_a_persistent_handle_whose_agent_memory_honours_max_entries(tmp_path: Path) -> None:
    builder = (
        Meta.builder().persistent_state(tmp_path / "state").memory(local_json()).agent_memory(maxEntries=4)
    )
    with builder.build() as meta:
        made = [
            meta.remember_agent_memory("lead:main", title=f"Deploy note {i}", body=f"Deploy rule number {i}.")
            for i in range(6)
        ]
        recalled = meta.recall_agent_memory("lead:main", selection="always")
        assert meta.status()["features"]["ledger"]["persisted"] is True
    assert len(recalled) == 4
    assert all(isinstance(r, AgentMemoryRecord) for r in recalled)
    assert {r.memory_id for r in recalled} <= {m.memory_id for m in made}
    assert (tmp_path / "state" / "agent-memory" / "default.sqlite3").is_file()


def test_ledger_calls_return_typed_results(handle: MetaHandle) -> None:
    index = handle.memory_index(
        " Deploy ", "Window", store="Timeline", fact="Tuesdays only", metadata={"k": 1}
    )
    assert index == MemoryIndexResult("deploy", "window", "timeline", index.assertion_id, False)
    query = handle.memory_query("tuesdays", store="timeline")
    assert isinstance(query, MemoryQueryResult)
    assert [(a["assertion_id"], a["metadata"]) for a in query.assertions] == [(index.assertion_id, {"k": 1})]
    stores = handle.memory_stores()
    assert all(isinstance(s, MemoryStoreInfo) for s in stores)
    assert [(s.store, s.record_count) for s in stores] == [
        ("knowledge_graph", 0),
        ("vector", 0),
        ("timeline", 1),
        ("todo", 0),
        ("top_of_mind", 0),
    ]


def test_agent_memory_calls_return_typed_records_and_forget_results(handle: MetaHandle) -> None:
    made = handle.remember_agent_memory(
        "lead:main", title="Pager", body="Pager rota is weekly.", tags=["ops"]
    )
    assert isinstance(made, AgentMemoryRecord) and made.tags == ("ops",)
    assert handle.forget_agent_memory("lead:main", made.memory_id) == AgentMemoryForgetResult(
        made.memory_id, True
    )
    assert handle.forget_agent_memory("lead:main", made.memory_id) == AgentMemoryForgetResult(
        made.memory_id, False
    )
    assert handle.recall_agent_memory("lead:main", selection="always") == []


def test_errors_raise_meta_error_subclasses_carrying_their_wire_code(
    tmp_path: Path, handle: MetaHandle
) -> None:
    with pytest.raises(InvalidParams, match=r"^Invalid params: entity must be a non-empty string$") as bad:
        handle.memory_index("  ", "topic", fact="f")
    with pytest.raises(MethodNotFound) as unknown:
        handle.call("meta/memory/delete")
    with (
        Meta.builder().persistent_state(tmp_path / "bare").build() as bare,
        pytest.raises(CapabilityUnavailable) as off,
    ):
        bare.remember_agent_memory("a", title="t", body="b")
    assert [e.value.code for e in (bad, unknown, off)] == [-32602, -32601, -32004]
    assert all(isinstance(e.value, MetaError) for e in (bad, unknown, off))


def test_memory_with_stores_is_refused_with_value_error_naming_the_option(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="stores"):
        Meta.builder().persistent_state(tmp_path / "state").memory(stores=["vector", "timeline"])


def test_build_without_persistent_state_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="persistent_state"):
        Meta.builder().memory(local_json()).build()


def test_an_out_of_range_builder_option_is_a_config_error_naming_key_and_range(tmp_path: Path) -> None:
    with pytest.raises(
        ConfigError, match=r"agent_memory\.max_entries must be between 1 and 64 \(got 65\)"
    ) as refused:
        Meta.builder().persistent_state(tmp_path / "state").agent_memory(maxEntries=65).build()
    assert refused.value.code == -32602
    assert not (tmp_path / "state").exists()


def test_an_unknown_agent_memory_option_raises_value_error_at_the_builder_call(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="agent_memory got unsupported option"):
        Meta.builder().persistent_state(tmp_path / "state").agent_memory(maxEntrys=4)


def test_a_second_handle_on_a_served_state_dir_is_refused_until_the_first_closes(tmp_path: Path) -> None:
    first = Meta.builder().persistent_state(tmp_path / "state").memory(local_json()).build()
    with pytest.raises(StorageRefused, match="another meta runtime") as refused:
        Meta.builder().persistent_state(tmp_path / "state").build()
    assert refused.value.code == -32014
    first.memory_index("e", "t", fact="kept")
    first.close()
    with Meta.builder().persistent_state(tmp_path / "state").memory(local_json()).build() as second:
        assert [a["fact"] for a in second.memory_query().assertions] == ["kept"]


def test_a_lone_surrogate_in_a_title_is_invalid_params_not_an_internal_error(handle: MetaHandle) -> None:
    with pytest.raises(InvalidParams):
        handle.call("meta/agent_memory/remember", {"identity": "a", "title": "\ud800", "body": "b"})
