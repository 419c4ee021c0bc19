"""Deny-overrides, as properties with oracles of their own (REFERENCE 6): a deny that covers a
request denies it wherever it stands among any other rules, and a resource-less check answers
what a reference evaluator written from the reference's words answers."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from meta_memory.access import ACTIONS, ANONYMOUS, Principal, Resource

from .test_properties import ADMIN, ROSTER, engine, resources, rule

# Callers the rules judge (an admin bypasses them, so it is not drawn here).
callers = st.one_of(
    st.just(ANONYMOUS),
    st.builds(
        Principal,
        st.sampled_from(["alice", "bob", "carol"]),
        st.frozensets(st.sampled_from(["ops", "sre"])),
    ),
)
actions = st.sampled_from(sorted(ACTIONS))
KNOWN = {entry.identity: entry for entry in ROSTER}


@st.composite
def covering(
    draw: st.DrawFn, effect: str, principal: Principal, action: str, resource: Resource | None
) -> dict[str, Any]:
    """A rule built to match the request by REFERENCE 6's words, one dimension at a time."""
    who: list[dict[str, Any]] = [{}]  # no subject or group constraint: matches anyone, anonymous too
    if principal.subject is not None:
        who += [{"subjects": ["*"]}, {"subjects": [principal.subject, "zed"]}]
        who += [{"subjects": [principal.subject], "groups": [g, "nobody"]} for g in sorted(principal.groups)]
    prefixes = [action.rsplit(".", n)[0] + ".*" for n in range(1, action.count(".") + 1)]
    covering = draw(st.sampled_from(["*", action, *prefixes]))
    extra = draw(st.lists(st.sampled_from(sorted(ACTIONS)), max_size=2))
    what: list[dict[str, Any]] = [{}]  # no resource selector: applies to every resource
    identity = resource.identity if resource is not None else None
    attrs = KNOWN.get(identity) if identity is not None else None
    if identity is not None and (attrs is not None or effect == "deny"):
        what.append({"agents": [identity, "someone-else"]})
        if attrs is None:  # attributes the roster does not know fail a deny's selectors closed
            what += [{"roles": ["writer"]}, {"match_labels": {"team": "red"}}]
        else:
            if attrs.role is not None:
                what.append({"roles": [attrs.role, "intern"]})
            what += [{"match_labels": dict([label])} for label in sorted(attrs.labels.items())]
    return {
        "effect": effect,
        "actions": list(dict.fromkeys([covering, *extra])),
        **draw(st.sampled_from(who)),
        **draw(st.sampled_from(what)),
    }


@settings(max_examples=300, deadline=None)
@given(st.data(), st.lists(rule(), max_size=6), callers, actions, resources)
def test_a_covering_deny_wins_wherever_it_stands_among_the_rules(
    data: st.DataObject,
    others: list[dict[str, Any]],
    principal: Principal,
    action: str,
    resource: Resource | None,
) -> None:
    # Allows that cover the request too, among the others in any order: the deny must beat them
    # whether it stands before or after them.
    allows = data.draw(st.lists(covering("allow", principal, action, resource), max_size=2))
    others = data.draw(st.permutations([*others, *allows]))
    deny = data.draw(covering("deny", principal, action, resource))
    at = data.draw(st.integers(min_value=0, max_value=len(others)))
    rules = [*others[:at], deny, *others[at:]]
    decision = engine(rules).check(principal, action, resource)
    assert not decision.allowed
    assert decision.reason == "rule_denied"


def reference_allows(rules: list[dict[str, Any]], principal: Principal, action: str) -> bool:
    """REFERENCE 6 for a resource-less check by a non-admin: only rules without resource
    selectors match; subjects (``*``: any authenticated subject) and groups constrain the caller,
    and an anonymous caller matches only rules with neither; an action pattern is exact, ``*`` or
    ``prefix.*``; then deny-overrides, then allow, else deny."""

    def matches(rule: dict[str, Any]) -> bool:
        if rule["agents"] or rule["roles"] or rule["match_labels"]:
            return False
        if rule["subjects"] or rule["groups"]:
            if principal.subject is None:
                return False
            if rule["subjects"] and "*" not in rule["subjects"] and principal.subject not in rule["subjects"]:
                return False
            if rule["groups"] and not set(rule["groups"]) & principal.groups:
                return False
        return any(
            p in ("*", action) or (p.endswith(".*") and action.startswith(p[:-1])) for p in rule["actions"]
        )

    effects = {rule["effect"] for rule in rules if matches(rule)}
    return "deny" not in effects and "allow" in effects


NEAR = ["agent.memory.read", "agent.view", "gating.view", "gating.decide"]


def near_rules(principal: Principal, action: str) -> st.SearchStrategy[dict[str, Any]]:
    """Rules drawn close to one request, so that allows and denies often both match it, in
    either order (each dimension matches or misses it; resource selectors are mostly absent)."""
    subject = principal.subject or "alice"
    prefixes = [action.rsplit(".", n)[0] + ".*" for n in range(1, action.count(".") + 1)]
    return st.fixed_dictionaries(
        {
            "effect": st.sampled_from(["allow", "deny"]),
            "subjects": st.sampled_from([[], [], ["*"], [subject], ["zed"]]),
            "groups": st.sampled_from([[], [], ["ops"], ["sre", "ops"]]),
            "actions": st.lists(
                st.sampled_from(["*", action, *prefixes, "timeline.read"]),
                min_size=1,
                max_size=2,
                unique=True,
            ),
            "agents": st.sampled_from([[], [], [], ["red-writer"]]),
            "roles": st.sampled_from([[], [], [], ["writer"]]),
            "match_labels": st.sampled_from([{}, {}, {}, {"team": "red"}]),
        }
    )


@settings(max_examples=300, deadline=None)
@given(st.data(), callers, st.sampled_from(NEAR))
def test_a_resource_less_check_answers_as_the_reference_evaluator(
    data: st.DataObject, principal: Principal, action: str
) -> None:
    rules = data.draw(st.lists(st.one_of(near_rules(principal, action), rule()), max_size=8))
    assert principal.subject != ADMIN
    assert engine(rules).allows(principal, action) == reference_allows(rules, principal, action)
