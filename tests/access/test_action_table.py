"""The table-driven suite: every known action under allow, deny, anonymous, admin, label and role rules."""

from __future__ import annotations

import pytest

from meta_memory.access import ACTIONS, ANONYMOUS, Principal, Resource

from .conftest import ADMIN, ALICE, BOB, CAROL_OPS, MakeEngine

EVERY_ACTION = sorted(ACTIONS)
RED_WRITER = Resource.for_identity("red-writer")
BLUE_WRITER = Resource.for_identity("blue-writer")
RED_REVIEWER = Resource.for_identity("red-reviewer")
UNKNOWN = Resource.for_identity("nobody-declared")


def _other(action: str) -> str:
    return next(a for a in EVERY_ACTION if a != action)


@pytest.mark.parametrize("action", EVERY_ACTION)
def test_an_allow_rule_grants_its_action_to_its_subject_and_no_one_else(
    make_engine: MakeEngine, action: str
) -> None:
    engine = make_engine({"subjects": ["alice"], "actions": [action]})
    assert engine.allows(ALICE, action) and engine.allows(ALICE, action, RED_WRITER)
    assert not engine.allows(ALICE, _other(action))
    assert not engine.allows(BOB, action) and not engine.allows(ANONYMOUS, action)


@pytest.mark.parametrize("action", EVERY_ACTION)
def test_a_deny_rule_takes_its_action_back_from_a_wildcard_allow(
    make_engine: MakeEngine, action: str
) -> None:
    engine = make_engine(
        {"subjects": ["alice"], "actions": ["*"]},
        {"effect": "deny", "subjects": ["alice"], "actions": [action]},
    )
    denied = engine.check(ALICE, action, RED_WRITER)
    assert (denied.allowed, denied.reason, denied.rule_id) == (False, "rule_denied", "r2")
    assert not engine.allows(ALICE, action)
    assert engine.allows(ALICE, _other(action), RED_WRITER)


@pytest.mark.parametrize("action", EVERY_ACTION)
def test_anonymous_matches_only_rules_without_a_subject_or_group_constraint(
    make_engine: MakeEngine, action: str
) -> None:
    open_rule = make_engine({"actions": [action]})
    assert open_rule.allows(ANONYMOUS, action) and open_rule.allows(ALICE, action)
    any_subject = make_engine({"subjects": ["*"], "actions": [action]})
    assert any_subject.allows(ALICE, action) and not any_subject.allows(ANONYMOUS, action)
    by_group = make_engine({"groups": ["ops"], "actions": [action]})
    assert by_group.allows(CAROL_OPS, action) and not by_group.allows(ANONYMOUS, action)


@pytest.mark.parametrize("action", EVERY_ACTION)
def test_an_admin_is_allowed_every_action_even_against_a_deny(make_engine: MakeEngine, action: str) -> None:
    engine = make_engine({"effect": "deny", "subjects": [ADMIN, "alice"], "actions": ["*"]})
    decision = engine.check(Principal(ADMIN), action, RED_WRITER)
    assert (decision.allowed, decision.reason) == (True, "admin")
    assert engine.allows(Principal(ADMIN), action)
    assert not engine.allows(ALICE, action, RED_WRITER)


@pytest.mark.parametrize("action", EVERY_ACTION)
def test_a_label_selector_grants_only_on_identities_carrying_the_label(
    make_engine: MakeEngine, action: str
) -> None:
    engine = make_engine({"groups": ["ops"], "actions": [action], "match_labels": {"team": "red"}})
    assert engine.allows(CAROL_OPS, action, RED_WRITER) and engine.allows(CAROL_OPS, action, RED_REVIEWER)
    assert not engine.allows(CAROL_OPS, action, BLUE_WRITER)
    assert not engine.allows(CAROL_OPS, action, UNKNOWN)  # unknown labels fail closed
    assert not engine.allows(CAROL_OPS, action)  # a scoped rule is no unscoped grant


@pytest.mark.parametrize("action", EVERY_ACTION)
def test_a_role_selector_grants_only_on_identities_holding_the_role(
    make_engine: MakeEngine, action: str
) -> None:
    engine = make_engine({"groups": ["ops"], "actions": [action], "roles": ["writer"]})
    assert engine.allows(CAROL_OPS, action, RED_WRITER) and engine.allows(CAROL_OPS, action, BLUE_WRITER)
    assert not engine.allows(CAROL_OPS, action, RED_REVIEWER)
    assert not engine.allows(CAROL_OPS, action, Resource.for_identity("no-role"))
    assert not engine.allows(CAROL_OPS, action, UNKNOWN)  # an unknown role fails closed
    assert not engine.allows(CAROL_OPS, action)
