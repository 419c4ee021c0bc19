"""What each section turns on: the built-in default, and a file taken exactly as written (no
``[memory]``: the ledger lives in memory only; no ``[agent_memory]``: agent memory is off)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from meta_memory import CapabilityUnavailable, MetaHandle
from meta_memory.config import DEFAULT_CONFIG, MetaConfig, load_config_dict
from meta_memory.gateway.signatures import SIGNATURES
from meta_memory.runtime import MetaRuntime

Load = Callable[[str], MetaConfig]
AGENT_MEMORY_METHODS = [
    "meta/agent_memory/remember",
    "meta/agent_memory/recall",
    "meta/agent_memory/forget",
    "meta/agent_memory/update",
]


@contextmanager
def serving(state: Path, config: MetaConfig | None) -> Iterator[MetaHandle]:
    with MetaRuntime.open(state, config) as runtime:
        yield MetaHandle(runtime)


def test_the_built_in_default_persists_the_ledger_and_turns_agent_memory_on(tmp_path: Path) -> None:
    config = load_config_dict(DEFAULT_CONFIG)
    assert config.memory is not None and config.memory.kind == "local_json"
    assert (config.agent_memory.enabled, config.agent_memory.store) == (True, "sqlite")
    with serving(tmp_path / "state", None) as meta:  # no config at all means the built-in default
        meta.memory_index("e", "t", fact="f")
        meta.remember_agent_memory("a", title="t", body="b")
        features = meta.status()["features"]
    assert features["ledger"]["persisted"] is True and features["agent_memory"]["enabled"] is True
    assert (tmp_path / "state" / "memory-ledger-state.json").is_file()


def test_a_file_without_memory_keeps_the_ledger_in_memory_only(tmp_path: Path, load_toml: Load) -> None:
    config = load_toml("[agent_memory]\nenabled = true\n")
    state = tmp_path / "state"
    with serving(state, config) as meta:
        meta.memory_index("deploy", "window", fact="Tuesdays")
        meta.memory_index("deploy", "window", conflict=True)
        assert len(meta.memory_query().assertions) == 1
        assert meta.status()["features"]["ledger"]["persisted"] is False
    names = {p.name for p in state.iterdir()}
    assert not names & {"memory-ledger-state.json", "memory-ledger-state.tmp"}  # no ledger file
    assert names <= {
        ".meta-runtime.lock",
        "event_log.sqlite3",
        "event_log.sqlite3-wal",
        "event_log.sqlite3-shm",
    }
    with serving(state, config) as meta:
        assert meta.memory_query().assertions == [] and meta.memory_query().conflicts == []


def test_a_file_with_memory_rewrites_the_ledger_file_on_every_index(tmp_path: Path, load_toml: Load) -> None:
    config = load_toml('[memory]\nkind = "local_json"\n')
    with serving(tmp_path / "state", config) as meta:
        meta.memory_index("deploy", "window", fact="Tuesdays")
        first = (tmp_path / "state" / "memory-ledger-state.json").read_bytes()
        meta.memory_index("deploy", "window", fact="Fridays")
        second = (tmp_path / "state" / "memory-ledger-state.json").read_bytes()
    assert b"Tuesdays" in first and b"Fridays" not in first and b"Fridays" in second


@pytest.mark.parametrize("method", AGENT_MEMORY_METHODS)
def test_a_file_without_agent_memory_turns_it_off(tmp_path: Path, load_toml: Load, method: str) -> None:
    with serving(tmp_path / "state", load_toml('[memory]\nkind = "local_json"\n')) as meta:
        with pytest.raises(CapabilityUnavailable) as off:
            full = {"identity": "a", "title": "t", "body": "b", "memory_id": "m"}
            meta.call(method, {k: v for k, v in full.items() if k in SIGNATURES[method].params.names})
        assert off.value.code == -32004
        assert method not in meta.call("meta/capabilities")["methods"]
        assert meta.status()["features"]["agent_memory"]["enabled"] is False
    assert not (tmp_path / "state" / "agent-memory").exists()


@pytest.mark.parametrize(
    ("toml", "enabled"),
    [
        ("", False),
        ("agent_memory = true\n", True),
        ("agent_memory = false\n", False),
        ('[agent_memory]\nrealm = "ops"\n', True),
        ("[agent_memory]\nenabled = false\n", False),
    ],
    ids=["empty-file", "true", "false", "table-without-enabled", "enabled-false"],
)
def test_agent_memory_is_on_exactly_when_the_file_turns_it_on(
    load_toml: Load, toml: str, enabled: bool
) -> None:
    config = load_toml(toml)
    assert config.agent_memory.enabled is enabled
    assert config.memory is None


def test_agent_memory_options_from_the_file_are_the_ones_served(tmp_path: Path, load_toml: Load) -> None:
    config = load_toml(
        '[agent_memory]\nenabled = true\nrealm = "ops"\nmax_entries = 2\nselection = "ALWAYS"\n'
    )
    with serving(tmp_path / "state", config) as meta:
        for i in range(3):
            meta.remember_agent_memory("a", title=f"Note {i}", body=f"Body {i}")
        assert len(meta.recall_agent_memory("a")) == 2  # max_entries and selection=always from the file
        assert meta.status()["features"]["agent_memory"] == {
            "enabled": True,
            "store": "sqlite",
            "realm": "ops",
            "selection": "always",
            "llm_writes": "observed",
            "recall": "lexical",
            "embedding": None,
        }
    assert (tmp_path / "state" / "agent-memory" / "ops.sqlite3").is_file()
