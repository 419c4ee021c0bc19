"""Every configuration refusal names the offending key or value (and the range or the allowed
values), in our own words, through the same loader ``--config FILE`` uses."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from meta_memory.config import MetaConfig
from meta_memory.errors import ConfigError, StorageRefused

Load = Callable[[str], MetaConfig]

AM = "[agent_memory]\nenabled = true\n"

REFUSALS = {
    "elephant-kind": ('[memory]\nkind = "elephant"\n', ["memory.kind", "'elephant'", "local_json"]),
    "elephant-kind-any-case": ('[memory]\nkind = " Elephant "\n', ["memory.kind", "local_json"]),
    "other-kind": ('[memory]\nkind = "redis"\n', ["memory.kind", "'redis'", "local_json"]),
    "memory-stores": (
        '[memory]\nkind = "local_json"\nstores = ["vector"]\n',
        ["unsupported memory fields: stores"],
    ),
    "memory-space-id": (
        '[memory]\nkind = "local_json"\nspace_id = "s1"\n',
        ["unsupported memory fields: space_id"],
    ),
    "memory-collection": (
        '[memory]\nkind = "local_json"\ncollection = "c"\n',
        ["unsupported memory fields: collection"],
    ),
    "memory-all-three": (
        '[memory]\nkind = "local_json"\nstores = []\nspace_id = "s"\ncollection = "c"\n',
        ["unsupported memory fields: collection, space_id, stores"],
    ),
    "unknown-section": (
        '[memory]\nkind = "local_json"\n[ledger]\npath = "x"\n',
        ["unsupported top-level sections: ledger"],
    ),
    "agent-memory-unknown-key": (AM + "max_entry = 4\n", ["unsupported agent_memory fields: max_entry"]),
    "content-trust-unknown-key": (
        AM + "[agent_memory.content_trust]\ntrusted = []\n",
        ["unsupported agent_memory.content_trust fields: trusted"],
    ),
    "blank-health-endpoint": (
        '[memory]\nkind = "local_json"\nhealth_check_endpoint = " "\n',
        ["health_check_endpoint"],
    ),
    "max-entries-0": (
        AM + "max_entries = 0\n",
        ["agent_memory.max_entries must be between 1 and 64 (got 0)"],
    ),
    "max-entries-65": (
        AM + "max_entries = 65\n",
        ["agent_memory.max_entries must be between 1 and 64 (got 65)"],
    ),
    "max-entries-string": (AM + 'max_entries = "8"\n', ["agent_memory.max_entries", "between 1 and 64"]),
    "timeout-0": (
        AM + "recall_timeout_ms = 0\n",
        ["agent_memory.recall_timeout_ms must be between 1 and 30000 (got 0)"],
    ),
    "timeout-30001": (
        AM + "recall_timeout_ms = 30001\n",
        ["agent_memory.recall_timeout_ms must be between 1 and 30000 (got 30001)"],
    ),
    "selection": (
        AM + 'selection = "sometimes"\n',
        ["agent_memory.selection", "'always'", "'contextual'", "'sometimes'"],
    ),
    "failure-policy": (
        AM + 'recall_failure_policy = "retry"\n',
        ["agent_memory.recall_failure_policy", "'skip'", "'fail'"],
    ),
    "per-turn-injection": (
        AM + 'per_turn_injection = "always"\n',
        ["agent_memory.per_turn_injection", "'budgeted'"],
    ),
    "llm-writes": (
        AM + 'llm_writes = "trusted"\n',
        ["agent_memory.llm_writes", "'observed'", "'quarantined'"],
    ),
    "operator-scope": (AM + 'operator_scope = "global"\n', ["agent_memory.operator_scope", "'provisional'"]),
    "store-enum": (AM + 'store = "mysql"\n', ["agent_memory.store", "'sqlite'", "'postgres'"]),
    "postgres-without-dsn": (AM + 'store = "postgres"\n', ["agent_memory.postgres", "dsn", "dsn_env"]),
    "postgres-both-dsns": (
        AM + 'store = "postgres"\n[agent_memory.postgres]\ndsn = "postgresql://h/db"\ndsn_env = "PG"\n',
        ["agent_memory.postgres", "dsn", "dsn_env"],
    ),
    "postgres-pool-range": (
        AM + 'store = "postgres"\n[agent_memory.postgres]\ndsn = "postgresql://h/db"\npool_max = 0\n',
        ["agent_memory.postgres.pool_max"],
    ),
    "steward-range": (
        AM + "[agent_memory.steward]\nruns_per_day = 97\n",
        ["agent_memory.steward.runs_per_day", "1 and 96"],
    ),
    "selector-retired": (AM + 'selector = "lexical"\n', ["agent_memory.selector", "retired"]),
    "markdown-with-llm-writes": (
        AM + 'store = "markdown"\nllm_writes = "observed"\n',
        ["llm_writes require store = 'sqlite'"],
    ),
    "markdown-with-content-trust": (
        AM + 'store = "markdown"\n[agent_memory.content_trust]\ntrusted_tools = ["search"]\n',
        ["content_trust require store = 'sqlite'"],
    ),
    "not-toml": ("[memory\nkind = ", ["not valid TOML"]),
}


@pytest.mark.parametrize(("toml", "names"), REFUSALS.values(), ids=REFUSALS.keys())
def test_a_refused_config_is_one_config_error_naming_the_key_in_our_own_words(
    load_toml: Load, toml: str, names: list[str]
) -> None:
    with pytest.raises(ConfigError) as refused:
        load_toml(toml)
    assert refused.value.code == -32602
    for name in names:
        assert name in refused.value.message
    for leak in ("validation error", "pydantic", "Input should", "For further information"):
        assert leak not in refused.value.message


@pytest.mark.parametrize("extra", ["", 'realm = "ops"\n', "defang_inbound = false\n"])
def test_a_markdown_agent_memory_store_is_refused_as_storage_with_32014(load_toml: Load, extra: str) -> None:
    with pytest.raises(StorageRefused) as refused:
        load_toml(AM + 'store = "markdown"\n' + extra)
    assert refused.value.code == -32014
    assert "markdown" in refused.value.message and "store = 'sqlite'" in refused.value.message
    assert not isinstance(refused.value, ConfigError)


@pytest.mark.parametrize(
    ("key", "edges"),
    [("max_entries", (1, 64)), ("recall_timeout_ms", (1, 30_000))],
)
def test_range_edges_are_accepted(load_toml: Load, key: str, edges: tuple[int, int]) -> None:
    for value in edges:
        assert getattr(load_toml(f"{AM}{key} = {value}\n").agent_memory, key) == value
