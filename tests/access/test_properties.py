"""Invariants of the engine over generated rule sets, principals and resources."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from meta_memory.access import ACTIONS, ANONYMOUS, AccessEngine, Principal, Resource, Roster
from meta_memory.config import AccessConfig, RosterEntry

ROSTER = (
    RosterEntry(identity="red-writer", mob="alpha", role="writer", labels={"team": "red"}),
    RosterEntry(identity="blue-reviewer", mob="beta", role="reviewer", labels={"team": "blue"}),
    RosterEntry(identity="bare"),
)
IDENTITIES = ["red-writer", "blue-reviewer", "bare", "stranger"]
PATTERNS = [*sorted(ACTIONS), "*", "agent.*", "agent.memory.*", "memory.*", "mob.*", "gating.*"]
ADMIN = "root"

_few = st.lists
subjects = _few(st.sampled_from(["*", "alice", "bob", ADMIN]), max_size=2, unique=True)
groups = _few(st.sampled_from(["ops", "sre"]), max_size=2, unique=True)
agents = _few(
    st.sampled_from([*IDENTITIES, "alpha/red-writer", "beta/stranger", "gamma/bare"]), max_size=2, unique=True
)
roles = _few(st.sampled_from(["writer", "reviewer", "intern"]), max_size=2, unique=True)
labels = st.dictionaries(st.sampled_from(["team", "tier"]), st.sampled_from(["red", "blue"]), max_size=2)


def rule(effect: str | None = None) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "effect": st.just(effect) if effect else st.sampled_from(["allow", "deny"]),
            "subjects": subjects,
            "groups": groups,
            "actions": _few(st.sampled_from(PATTERNS), min_size=1, max_size=3, unique=True),
            "agents": agents,
            "roles": roles,
            "match_labels": labels,
        }
    )


rules = _few(rule(), max_size=6)
principals = st.one_of(
    st.just(ANONYMOUS),
    st.builds(
        Principal,
        st.sampled_from(["alice", "bob", "carol", ADMIN]),
        st.frozensets(st.sampled_from(["ops", "sre"])),
    ),
)
resources = st.one_of(
    st.none(),
    st.builds(
        Resource.for_identity,
        st.sampled_from(IDENTITIES),
        mob=st.sampled_from([None, "alpha", "beta", "gamma"]),
    ),
    st.builds(
        Resource.for_record,
        st.just("mem-1"),
        identity=st.sampled_from(IDENTITIES),
    ),
    st.builds(Resource.for_mob, st.sampled_from(["alpha", "beta"])),
    st.builds(Resource.for_operator, st.just("op")),
    st.builds(Resource.for_realm, st.just("default")),
)
actions = st.sampled_from(sorted(ACTIONS))


def engine(rule_tables: list[dict[str, Any]], *, enabled: bool = True, shared: bool = False) -> AccessEngine:
    config = AccessConfig.model_validate(
        {
            "enabled": enabled,
            "admins": [ADMIN],
            "rules": [{"id": f"r{i}", **r} for i, r in enumerate(rule_tables)],
        }
    )
    return AccessEngine(config, Roster(ROSTER, shared=shared))


@settings(max_examples=200, deadline=None)
@given(rules, rule("deny"), st.integers(min_value=0, max_value=6), principals, resources, st.booleans())
def test_adding_a_deny_rule_never_grants_anything(
    tables: list[dict[str, Any]],
    deny: dict[str, Any],
    at: int,
    principal: Principal,
    resource: Resource | None,
    shared: bool,
) -> None:
    before = engine(tables, shared=shared)
    after = engine([*tables[:at], deny, *tables[at:]], shared=shared)
    for action in ACTIONS:
        if after.allows(principal, action, resource):
            assert before.allows(principal, action, resource), action


@settings(max_examples=100, deadline=None)
@given(rules, rule("allow"), principals, resources, st.booleans())
def test_adding_an_allow_rule_never_revokes_anything(
    tables: list[dict[str, Any]],
    allow: dict[str, Any],
    principal: Principal,
    resource: Resource | None,
    shared: bool,
) -> None:
    before, after = engine(tables, shared=shared), engine([*tables, allow], shared=shared)
    for action in ACTIONS:
        if before.allows(principal, action, resource):
            assert after.allows(principal, action, resource), action


@settings(max_examples=100, deadline=None)
@given(rules, principals, actions, resources)
def test_with_access_disabled_everything_is_allowed(
    tables: list[dict[str, Any]], principal: Principal, action: str, resource: Resource | None
) -> None:
    assert engine(tables, enabled=False).allows(principal, action, resource)


@settings(max_examples=100, deadline=None)
@given(rules, actions, resources)
def test_an_admin_is_allowed_everything_whatever_the_rules(
    tables: list[dict[str, Any]], action: str, resource: Resource | None
) -> None:
    assert engine(tables).allows(Principal(ADMIN, frozenset({"ops"})), action, resource)


@settings(max_examples=200, deadline=None)
@given(rules, actions, resources)
def test_anonymous_is_judged_only_by_rules_without_subjects_or_groups(
    tables: list[dict[str, Any]], action: str, resource: Resource | None
) -> None:
    open_rules = [r for r in tables if not r["subjects"] and not r["groups"]]
    assert engine(tables).allows(ANONYMOUS, action, resource) == engine(open_rules).allows(
        ANONYMOUS, action, resource
    )


@settings(max_examples=200, deadline=None)
@given(rules, principals, actions)
def test_a_resource_less_check_is_judged_only_by_unscoped_rules(
    tables: list[dict[str, Any]], principal: Principal, action: str
) -> None:
    unscoped = [r for r in tables if not r["agents"] and not r["roles"] and not r["match_labels"]]
    assert engine(tables).allows(principal, action) == engine(unscoped).allows(principal, action)


@settings(max_examples=200, deadline=None)
@given(rules, principals, actions, resources)
def test_whatever_is_allowed_somewhere_is_seen_by_may_ever(
    tables: list[dict[str, Any]], principal: Principal, action: str, resource: Resource | None
) -> None:
    built = engine(tables)
    if built.allows(principal, action, resource):
        assert built.may_ever(principal, action)
