"""Action patterns and rule validation at config load: refusals name the rule by its id."""

from __future__ import annotations

import re
from typing import Any

import pytest

from meta_memory.access import ACTIONS, AccessEngine, UnknownAction, pattern_matches, validate_pattern
from meta_memory.config import AccessConfig, AccessRule, load_config_dict
from meta_memory.errors import ConfigError


def _load_rules(*rules: dict[str, Any]) -> None:
    load_config_dict({"access": {"enabled": True, "admins": ["root"], "rules": list(rules)}})


def test_the_vocabulary_holds_the_reference_memory_actions_and_the_console_actions() -> None:
    assert sorted(ACTIONS) == sorted(
        [
            "agent.memory.admin",
            "agent.memory.delete",
            "agent.memory.read",
            "agent.memory.write",
            "agent.view",
            "console.read",
            "gating.decide",
            "gating.view",
            "memory.quarantine.review",
            "mob.memory.commit",
            "mob.memory.propose",
            "mob.memory.read",
            "operator.memory.read",
            "runtime.admin",
            "timeline.read",
        ]
    )
    assert all(isinstance(doc, str) and doc for doc in ACTIONS.values())


@pytest.mark.parametrize(
    "pattern", ["*", "agent.*", "agent.memory.*", "memory.*", "memory.quarantine.*", "agent.view"]
)
def test_valid_patterns_are_exact_actions_covering_prefixes_or_star(pattern: str) -> None:
    assert validate_pattern(pattern) == pattern


@pytest.mark.parametrize(
    "pattern",
    [
        "agent.memory.reed",
        "agent",
        "agent.mem.*",
        "*.read",
        "agent.*.read",
        "agent*",
        "**",
        ".*",
        "agent..*",
        "",
        "Agent.view",
    ],
)
def test_patterns_that_cover_no_known_action_or_misplace_a_wildcard_are_unknown(pattern: str) -> None:
    with pytest.raises(UnknownAction, match="unknown action"):
        validate_pattern(pattern)


def test_a_prefix_pattern_matches_whole_segments_only() -> None:
    assert pattern_matches("agent.*", "agent.memory.read") and pattern_matches(
        "agent.memory.*", "agent.memory.read"
    )
    assert not pattern_matches("memory.*", "agent.memory.read")
    assert not pattern_matches("mob.*", "mob")


def test_an_unknown_action_is_refused_at_load_naming_the_rule_id() -> None:
    with pytest.raises(ConfigError) as refused:
        _load_rules({"id": "r1", "actions": ["agent.view"]}, {"id": "r2", "actions": ["agent.memory.reed"]})
    assert str(refused.value) == "config: access rule 'r2': unknown action 'agent.memory.reed'"


def test_an_unknown_action_is_refused_even_with_access_disabled() -> None:
    with pytest.raises(ConfigError, match=re.escape("access rule 'off': unknown action 'gating.*.x'")):
        load_config_dict({"access": {"rules": [{"id": "off", "actions": ["gating.*.x"]}]}})


def test_a_rule_with_no_actions_is_refused_naming_its_id() -> None:
    with pytest.raises(ConfigError, match="access rule 'empty': actions must name at least one action"):
        _load_rules({"id": "empty", "actions": []})


def test_other_rule_errors_name_the_rule_id_too() -> None:
    with pytest.raises(
        ConfigError, match=re.escape("access rule 'r7' effect must be one of 'allow' | 'deny'")
    ):
        _load_rules({"id": "r7", "effect": "permit", "actions": ["agent.view"]})
    with pytest.raises(ConfigError, match="unsupported access rule 'r7' fields: colour"):
        _load_rules({"id": "r7", "actions": ["agent.view"], "colour": "red"})


def test_a_rule_without_a_usable_id_is_named_by_its_position() -> None:
    with pytest.raises(ConfigError, match=re.escape("access.rules.1.id")):
        _load_rules({"id": "ok", "actions": ["agent.view"]}, {"actions": ["agent.view"]})


def test_the_engine_refuses_an_unvalidated_rule_naming_its_id() -> None:
    rule = AccessRule.model_construct(id="sneaky", effect="allow", actions=("agent.memory.reed",))
    config = AccessConfig.model_construct(enabled=True, admins=("root",), rules=(rule,))
    with pytest.raises(
        ConfigError, match=re.escape("access rule 'sneaky': unknown action 'agent.memory.reed'")
    ):
        AccessEngine(config)
