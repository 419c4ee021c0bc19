"""``Meta.builder()...gateway(bin).build()``: the builder's options run in a real ``meta_gateway
stdio`` child, reached through a :class:`~meta_memory.client.MetaClient` with the handle's methods;
what cannot cross into a child (a callable) is refused before anything starts."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from meta_memory import Meta, MetaBuilder, MetaHandle, local_json
from meta_memory.client import MetaClient, MetaConnectionError
from meta_memory.clock import ManualClock
from meta_memory.errors import ConfigError, InvalidParams, StorageRefused

from ..conftest import gateway_command

Option = Callable[[MetaBuilder[MetaHandle]], MetaBuilder[MetaHandle]]

ACCESS = """
[access]
enabled = true
admins = ["ops"]

[[access.rules]]
id = "crew-reads"
groups = ["crew"]
actions = ["agent.memory.read"]
"""


def test_the_gateway_runs_the_builders_options_in_a_child_that_holds_the_state_dir(tmp_path: Path) -> None:
    state = tmp_path / "state"
    rules = tmp_path / "access.toml"
    rules.write_text(ACCESS)
    builder = (
        Meta.builder()
        .persistent_state(state)
        .memory(local_json())
        .agent_memory(
            realm="tenant-a",
            maxEntries=2,
            llm_writes="quarantined",
            contentTrust={"untrustedTools": ["scrape"]},
        )
        .roster({"identity": "lead:main", "mob": "crew", "labels": {"team": "platform"}})
        .access_control(rules)
        .console_read_only()
        .gateway(gateway_command())
    )
    with builder.build() as meta:
        assert isinstance(meta, MetaClient)
        features = meta.status()["features"]["agent_memory"]
        assert (features["realm"], features["llm_writes"]) == ("tenant-a", "quarantined")
        for n in (1, 2, 3):
            meta.remember_agent_memory("lead:main", title=f"Note {n}", body=f"Body number {n}.")
        assert len(meta.recall_agent_memory("lead:main", selection="always")) == 2  # max_entries
        assert meta.open_session("lead:main", mob="crew").key  # the roster put it in the mob
        with pytest.raises(InvalidParams, match="not a member"):
            meta.open_session("stranger", mob="crew")
        assert meta.memory_index("service:api", "owner", fact="Team platform.").assertion_id
        # The runtime is the child's, not this process's: it holds the state dir.
        with pytest.raises(StorageRefused) as held:
            Meta.builder().persistent_state(state).build()
        pid = re.search(r"pid (\d+)", held.value.message)
        assert pid and int(pid.group(1)) != os.getpid()
    # Closed: the child released the state dir, and what it wrote is there.
    with Meta.builder().persistent_state(state).memory().agent_memory(realm="tenant-a").build() as meta:
        assert len(meta.recall_agent_memory("lead:main", selection="always", max_entries=8)) == 3
        assert {s.store: s.record_count for s in meta.memory_stores()}["knowledge_graph"] == 1


@pytest.mark.parametrize(
    ("local", "named"),
    [
        (lambda b: b.roster_provider(lambda identity: None), "roster_provider(...)"),
        (lambda b: b.clock(ManualClock()), "clock(...)"),
    ],
    ids=["roster_provider", "clock"],
)
def test_a_callable_is_refused_with_the_gateway_naming_it(tmp_path: Path, local: Option, named: str) -> None:
    builder = local(Meta.builder().persistent_state(tmp_path / "state").agent_memory())
    with pytest.raises(ValueError, match=re.escape(named) + " cannot cross into the gateway"):
        builder.gateway(gateway_command()).build()
    assert not (tmp_path / "state").exists(), "nothing was started"
    with local(Meta.builder().persistent_state(tmp_path / "state").agent_memory()).build() as meta:
        assert meta.status()["state_dir"]  # in process, the callable is fine


def test_a_bad_option_is_refused_before_a_child_starts_and_a_missing_command_after(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with pytest.raises(ValueError, match="persistent_state"):
        Meta.builder().gateway(gateway_command()).build()
    with pytest.raises(ConfigError, match=r"agent_memory.max_entries must be between 1 and 64"):
        Meta.builder().persistent_state(state).agent_memory({"max_entries": 100}).gateway().build()
    with pytest.raises(StorageRefused, match="markdown"):
        Meta.builder().persistent_state(state).agent_memory(store="markdown").gateway().build()
    assert not state.exists(), "nothing was started"
    with pytest.raises(MetaConnectionError, match="cannot start the gateway"):
        Meta.builder().persistent_state(state).gateway(tmp_path / "no-such-gateway").build()
