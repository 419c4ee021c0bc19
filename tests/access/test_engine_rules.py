"""REFERENCE 6 rule semantics beyond the per-action table: dimensions, wildcards, unscoped grants,
fail-closed attributes, console names, operator scope, and the visibility helpers."""

from __future__ import annotations

import re

import pytest

from meta_memory.access import ANONYMOUS, AccessEngine, Principal, Resource, UnknownAction
from meta_memory.config import AccessConfig
from meta_memory.errors import AccessDenied

from .conftest import ALICE, BOB, CAROL_OPS, MakeEngine

RED_WRITER = Resource.for_identity("red-writer")
UNKNOWN = Resource.for_identity("nobody-declared")


def test_access_disabled_allows_everything_even_with_deny_rules(make_engine: MakeEngine) -> None:
    engine = make_engine({"effect": "deny", "actions": ["*"]}, enabled=False, admins=())
    decision = engine.check(ANONYMOUS, "runtime.admin")
    assert (decision.allowed, decision.reason) == (True, "access_disabled")
    assert engine.allows(BOB, "operator.memory.read", Resource.for_operator("op"))


def test_the_default_access_config_is_disabled_and_allows_all() -> None:
    engine = AccessEngine(AccessConfig())
    assert not engine.enabled and engine.allows(ANONYMOUS, "memory.quarantine.review", UNKNOWN)


def test_with_no_matching_rule_the_check_denies(make_engine: MakeEngine) -> None:
    decision = make_engine({"subjects": ["bob"], "actions": ["agent.view"]}).check(ALICE, "agent.view")
    assert (decision.allowed, decision.reason, decision.rule_id) == (False, "no_rule", None)


def test_an_allow_names_the_first_allow_rule_that_matched(make_engine: MakeEngine) -> None:
    engine = make_engine(
        {"subjects": ["bob"], "actions": ["*"]}, {"actions": ["agent.*"]}, {"actions": ["*"]}
    )
    assert engine.check(ALICE, "agent.view").rule_id == "r2"


def test_selectors_and_across_dimensions_and_or_within_a_list(make_engine: MakeEngine) -> None:
    engine = make_engine(
        {"subjects": ["alice", "carol"], "groups": ["ops", "sre"], "actions": ["agent.view", "gating.view"]}
    )
    assert engine.allows(Principal("carol", frozenset({"sre"})), "gating.view")
    assert not engine.allows(ALICE, "gating.view")  # subject matches, no group
    assert not engine.allows(Principal("dave", frozenset({"ops"})), "gating.view")  # group, not subject
    assert not engine.allows(CAROL_OPS, "gating.decide")  # principal matches, action does not


def test_resource_selectors_and_together_on_one_identity(make_engine: MakeEngine) -> None:
    engine = make_engine(
        {"actions": ["agent.view"], "agents": ["red-writer", "red-reviewer"], "roles": ["writer"]},
    )
    assert engine.allows(ALICE, "agent.view", RED_WRITER)
    assert not engine.allows(ALICE, "agent.view", Resource.for_identity("red-reviewer"))  # wrong role
    assert not engine.allows(ALICE, "agent.view", Resource.for_identity("blue-writer"))  # not named


def test_a_label_selector_needs_every_label_it_lists(make_engine: MakeEngine) -> None:
    roster = [
        {"identity": "x", "labels": {"team": "red", "tier": "gold"}},
        {"identity": "y", "labels": {"team": "red"}},
    ]
    engine = make_engine(
        {"actions": ["agent.view"], "match_labels": {"team": "red", "tier": "gold"}}, roster=roster
    )
    assert engine.allows(ALICE, "agent.view", Resource.for_identity("x"))
    assert not engine.allows(ALICE, "agent.view", Resource.for_identity("y"))


def test_a_prefix_pattern_covers_every_action_under_it_and_nothing_else(make_engine: MakeEngine) -> None:
    engine = make_engine({"subjects": ["alice"], "actions": ["agent.memory.*"]})
    for action in ("agent.memory.read", "agent.memory.write", "agent.memory.delete", "agent.memory.admin"):
        assert engine.allows(ALICE, action)
    for action in ("agent.view", "mob.memory.read", "memory.quarantine.review", "operator.memory.read"):
        assert not engine.allows(ALICE, action)


def test_a_star_pattern_covers_every_action(make_engine: MakeEngine) -> None:
    from meta_memory.access import ACTIONS

    engine = make_engine({"subjects": ["alice"], "actions": ["*"]})
    assert all(engine.allows(ALICE, action, RED_WRITER) for action in ACTIONS)


def test_a_deny_overrides_an_allow_whatever_their_order(make_engine: MakeEngine) -> None:
    deny_first = make_engine(
        {"effect": "deny", "actions": ["agent.view"]}, {"subjects": ["alice"], "actions": ["*"]}
    )
    deny_last = make_engine(
        {"subjects": ["alice"], "actions": ["*"]}, {"effect": "deny", "actions": ["agent.view"]}
    )
    for engine in (deny_first, deny_last):
        assert not engine.allows(ALICE, "agent.view", RED_WRITER)
        assert engine.allows(ALICE, "agent.memory.read", RED_WRITER)


def test_a_scoped_deny_leaves_other_identities_allowed(make_engine: MakeEngine) -> None:
    engine = make_engine(
        {"subjects": ["alice"], "actions": ["agent.memory.read"]},
        {"effect": "deny", "subjects": ["alice"], "actions": ["agent.memory.read"], "agents": ["red-writer"]},
    )
    assert not engine.allows(ALICE, "agent.memory.read", RED_WRITER)
    assert engine.allows(ALICE, "agent.memory.read", Resource.for_identity("blue-writer"))
    assert engine.allows(ALICE, "agent.memory.read")  # a scoped deny does not touch a resource-less check


def test_a_resource_less_check_matches_only_unscoped_rules(make_engine: MakeEngine) -> None:
    engine = make_engine({"subjects": ["alice"], "actions": ["agent.memory.read"], "agents": ["red-writer"]})
    assert engine.allows(ALICE, "agent.memory.read", RED_WRITER)
    assert not engine.allows(ALICE, "agent.memory.read")
    unscoped = make_engine({"subjects": ["alice"], "actions": ["agent.memory.read"]})
    assert unscoped.allows(ALICE, "agent.memory.read") and unscoped.allows(
        ALICE, "agent.memory.read", RED_WRITER
    )


def test_mob_operator_and_realm_resources_match_only_unscoped_rules(make_engine: MakeEngine) -> None:
    engine = make_engine({"subjects": ["alice"], "actions": ["*"], "agents": ["alpha"], "roles": ["writer"]})
    for resource in (Resource.for_mob("alpha"), Resource.for_operator("op"), Resource.for_realm("default")):
        assert not engine.allows(ALICE, "mob.memory.read", resource)


def test_an_unknown_identity_is_withheld_while_a_role_or_label_deny_applies(make_engine: MakeEngine) -> None:
    for selector in ({"roles": ["intern"]}, {"match_labels": {"team": "green"}}):
        engine = make_engine(
            {"subjects": ["alice"], "actions": ["*"]},
            {"effect": "deny", "subjects": ["alice"], "actions": ["agent.memory.write"], **selector},
        )
        assert not engine.allows(ALICE, "agent.memory.write", UNKNOWN)  # might be an intern: fail closed
        assert engine.allows(ALICE, "agent.memory.write", RED_WRITER)  # known, and not one
        assert engine.allows(ALICE, "agent.memory.read", UNKNOWN)


def test_an_agent_scoped_deny_on_read_or_view_withholds_an_unknown_identity(make_engine: MakeEngine) -> None:
    engine = make_engine(
        {"subjects": ["alice"], "actions": ["*"]},
        {
            "effect": "deny",
            "subjects": ["alice"],
            "actions": ["agent.view", "agent.memory.*"],
            "agents": ["bob-bot"],
        },
    )
    assert not engine.allows(ALICE, "agent.view", UNKNOWN)
    assert not engine.allows(ALICE, "agent.memory.read", UNKNOWN)
    assert engine.allows(ALICE, "agent.memory.write", UNKNOWN)  # judged by name: not bob-bot
    assert engine.allows(ALICE, "agent.view", RED_WRITER)  # a known identity, not named


def test_an_unknown_identity_is_granted_by_name_but_never_by_role_or_label(make_engine: MakeEngine) -> None:
    engine = make_engine(
        {"subjects": ["alice"], "actions": ["agent.view"], "agents": ["nobody-declared"]},
        {"subjects": ["bob"], "actions": ["agent.view"], "roles": ["writer"]},
    )
    assert engine.allows(ALICE, "agent.view", UNKNOWN)
    assert not engine.allows(BOB, "agent.view", UNKNOWN)


def test_a_known_identity_without_a_role_or_label_is_not_caught_by_their_denies(
    make_engine: MakeEngine,
) -> None:
    engine = make_engine(
        {"subjects": ["alice"], "actions": ["*"]},
        {"effect": "deny", "actions": ["agent.view"], "roles": ["intern"]},
        {"effect": "deny", "actions": ["agent.view"], "match_labels": {"team": "green"}},
    )
    assert engine.allows(ALICE, "agent.view", Resource.for_identity("no-role"))


def test_a_shared_console_names_identities_mob_slash_identity(make_engine: MakeEngine) -> None:
    rule = {"subjects": ["alice"], "actions": ["agent.view"], "agents": ["alpha/red-writer"]}
    shared = make_engine(rule, shared=True)
    assert shared.allows(ALICE, "agent.view", RED_WRITER)
    assert shared.roster.console_name("red-writer") == "alpha/red-writer"
    assert not make_engine(rule).allows(ALICE, "agent.view", RED_WRITER)  # single console: bare name
    bare = make_engine(
        {"subjects": ["alice"], "actions": ["agent.view"], "agents": ["red-writer"]}, shared=True
    )
    assert not bare.allows(ALICE, "agent.view", RED_WRITER)


def test_a_shared_console_names_an_unknown_identity_by_its_records_mob_or_not_at_all(
    make_engine: MakeEngine,
) -> None:
    engine = make_engine(
        {"subjects": ["alice"], "actions": ["*"], "agents": ["gamma/nobody-declared"]},
        {
            "effect": "deny",
            "subjects": ["alice"],
            "actions": ["agent.memory.write"],
            "agents": ["gamma/other"],
        },
        shared=True,
    )
    assert engine.allows(ALICE, "agent.view", Resource.for_identity("nobody-declared", mob="gamma"))
    assert engine.allows(ALICE, "agent.memory.write", Resource.for_identity("nobody-declared", mob="gamma"))
    # Without a mob the name cannot be told: no allow by name, and every agent-scoped deny applies.
    assert not engine.allows(ALICE, "agent.view", UNKNOWN)


def test_operator_memory_read_is_not_implied_by_an_unscoped_agent_memory_read(
    make_engine: MakeEngine,
) -> None:
    engine = make_engine(
        {"subjects": ["alice"], "actions": ["agent.memory.read", "agent.memory.*", "agent.view"]}
    )
    assert engine.can_read_scope(ALICE, "realm", "")
    assert not engine.can_read_scope(ALICE, "operator", "op-1")
    explicit = make_engine({"subjects": ["alice"], "actions": ["operator.memory.read"]})
    assert explicit.can_read_scope(ALICE, "operator", "op-1") and not explicit.can_read_scope(
        ALICE, "realm", ""
    )


def test_realm_scope_needs_an_unscoped_read_grant(make_engine: MakeEngine) -> None:
    scoped = make_engine(
        {"subjects": ["alice"], "actions": ["agent.memory.read", "agent.view"], "roles": ["writer"]}
    )
    assert scoped.can_read_scope(ALICE, "identity", "red-writer")
    assert not scoped.can_read_scope(ALICE, "realm", "")


def test_identity_memory_is_visible_only_with_both_read_and_view(make_engine: MakeEngine) -> None:
    read_only = make_engine({"subjects": ["alice"], "actions": ["agent.memory.read"]})
    assert not read_only.can_read_identity_memory(ALICE, "red-writer")
    both = make_engine({"subjects": ["alice"], "actions": ["agent.memory.read", "agent.view"]})
    assert both.can_read_identity_memory(ALICE, "red-writer") and both.can_read_scope(
        ALICE, "identity", "red-writer"
    )


def test_mob_scope_needs_mob_memory_read(make_engine: MakeEngine) -> None:
    engine = make_engine({"subjects": ["alice"], "actions": ["mob.memory.read"]})
    assert engine.can_read_scope(ALICE, "mob", "alpha")
    assert not engine.can_read_scope(BOB, "mob", "alpha")
    assert not make_engine({"subjects": ["alice"], "actions": ["agent.memory.read"]}).can_read_scope(
        ALICE, "mob", "alpha"
    )


def test_an_unknown_scope_kind_is_a_caller_bug(make_engine: MakeEngine) -> None:
    with pytest.raises(ValueError, match="unknown scope kind 'team'"):
        make_engine().can_read_scope(ALICE, "team", "x")


@pytest.mark.parametrize(
    ("status", "ever_quarantined", "needs_review"),
    [
        ("quarantined", True, True),
        ("tombstoned", True, True),  # a released or discarded original, a forgotten quarantined write
        ("tombstoned", False, False),
        ("active", True, False),  # a released successor is ordinary memory
        ("active", False, False),
        ("superseded", True, False),
    ],
)
def test_quarantine_only_content_needs_the_review_grant_to_read(
    make_engine: MakeEngine, status: str, ever_quarantined: bool, needs_review: bool
) -> None:
    reader = make_engine({"subjects": ["alice"], "actions": ["agent.memory.read", "agent.view"]})
    reviewer = make_engine(
        {"subjects": ["alice"], "actions": ["agent.memory.read", "agent.view", "memory.quarantine.review"]}
    )
    row = {
        "scope_kind": "identity",
        "scope_key": "red-writer",
        "status": status,
        "ever_quarantined": ever_quarantined,
    }
    assert reader.can_read_record(ALICE, **row) is not needs_review  # type: ignore[arg-type]
    assert reviewer.can_read_record(ALICE, **row)  # type: ignore[arg-type]


def test_require_raises_access_denied_naming_the_action_and_resource(make_engine: MakeEngine) -> None:
    engine = make_engine({"subjects": ["alice"], "actions": ["agent.view"]})
    with pytest.raises(AccessDenied) as denied:
        engine.require(ALICE, "agent.memory.read", Resource.for_record("mem-1", identity="red-writer"))
    assert denied.value.code == -32030 and denied.value.message == "access denied: agent.memory.read"
    assert denied.value.data == {"kind": "access_denied", "action": "agent.memory.read", "resource": "mem-1"}
    with pytest.raises(AccessDenied) as unscoped:
        engine.require(ALICE, "runtime.admin")
    assert unscoped.value.data is not None and unscoped.value.data["resource"] is None


def test_require_all_names_the_first_action_denied(make_engine: MakeEngine) -> None:
    engine = make_engine({"subjects": ["alice"], "actions": ["agent.memory.read"]})
    with pytest.raises(AccessDenied, match=re.escape("agent.view")) as denied:
        engine.require_all(ALICE, ["agent.memory.read", "agent.view", "agent.memory.write"], RED_WRITER)
    assert denied.value.data is not None and denied.value.data["resource"] == "red-writer"


def test_checking_an_unknown_action_is_a_caller_bug_not_a_denial(make_engine: MakeEngine) -> None:
    with pytest.raises(UnknownAction, match=re.escape("unknown action 'agent.memory.reed'")):
        make_engine().check(ALICE, "agent.memory.reed")
    with pytest.raises(UnknownAction):
        make_engine(enabled=False, admins=()).check(ALICE, "agent.*")


def test_may_ever_sees_scoped_allows_but_not_past_an_unscoped_deny(make_engine: MakeEngine) -> None:
    engine = make_engine(
        {"subjects": ["alice", "bob"], "actions": ["memory.quarantine.review"], "roles": ["writer"]},
        {"effect": "deny", "subjects": ["bob"], "actions": ["memory.*"]},
        {"effect": "deny", "subjects": ["alice"], "actions": ["memory.*"], "agents": ["red-writer"]},
    )
    assert engine.may_ever(ALICE, "memory.quarantine.review")
    assert not engine.may_ever(BOB, "memory.quarantine.review")
    assert not engine.may_ever(CAROL_OPS, "memory.quarantine.review")
    assert engine.may_ever(Principal("root"), "memory.quarantine.review")


def test_resources_refuse_to_be_built_without_what_they_name() -> None:
    with pytest.raises(ValueError, match="identity resource needs its identity"):
        Resource("identity")
    with pytest.raises(ValueError, match="record resource needs its record_id"):
        Resource("record", identity="x")
    assert Resource.for_realm("default").wire_id == "default"
    assert Resource.for_mob("alpha").wire_id == "alpha"
