"""The roster: declared entries, the provider callback, and console names."""

from __future__ import annotations

import pytest

from meta_memory.access import Resource, Roster
from meta_memory.config import RosterEntry, load_config_dict
from meta_memory.errors import ConfigError

from .conftest import ALICE, MakeEngine


def test_declared_entries_give_an_identitys_mob_role_and_labels() -> None:
    config = load_config_dict(
        {"roster": [{"identity": "lead:main", "mob": "alpha", "role": "lead", "labels": {"team": "red"}}]}
    )
    attrs = Roster(config.roster).attributes("lead:main")
    assert attrs is not None
    assert (attrs.identity, attrs.mob, attrs.role, dict(attrs.labels)) == (
        "lead:main",
        "alpha",
        "lead",
        {"team": "red"},
    )
    assert Roster(config.roster).attributes("someone-else") is None


def test_the_provider_callback_answers_for_identities_no_entry_declares() -> None:
    asked: list[str] = []

    def provider(identity: str) -> RosterEntry | None:
        asked.append(identity)
        return RosterEntry(identity=identity, role="worker") if identity.startswith("worker-") else None

    roster = Roster([RosterEntry(identity="lead", role="lead")], provider)
    lead, worker = roster.attributes("lead"), roster.attributes("worker-7")
    assert lead is not None and lead.role == "lead"
    assert worker is not None and worker.role == "worker"
    assert roster.attributes("stranger") is None
    assert asked == ["worker-7", "stranger"]  # declared entries win; the provider is not asked for them


def test_the_provider_callback_feeds_role_selectors_in_the_engine(make_engine: MakeEngine) -> None:
    def provider(identity: str) -> RosterEntry | None:
        return RosterEntry(identity=identity, role="writer") if identity == "dynamic" else None

    engine = make_engine(
        {"subjects": ["alice"], "actions": ["agent.view"], "roles": ["writer"]}, roster=[], provider=provider
    )
    assert engine.allows(ALICE, "agent.view", Resource.for_identity("dynamic"))
    assert not engine.allows(ALICE, "agent.view", Resource.for_identity("static"))


def test_a_provider_answering_for_another_identity_is_a_bug_not_a_guess() -> None:
    roster = Roster(provider=lambda identity: RosterEntry(identity="someone-else"))
    with pytest.raises(TypeError, match="must return a RosterEntry for that identity"):
        roster.attributes("asked-for")


def test_a_provider_answering_something_other_than_an_entry_is_refused() -> None:
    roster = Roster(provider=lambda identity: {"identity": identity})  # type: ignore[arg-type, return-value]
    with pytest.raises(TypeError, match="roster provider answered"):
        roster.attributes("x")


def test_an_identity_declared_twice_is_refused() -> None:
    with pytest.raises(ConfigError, match="identity 'x' is declared twice"):
        Roster([RosterEntry(identity="x"), RosterEntry(identity="x", role="r")])


def test_console_names_are_bare_on_a_single_console_and_mob_prefixed_on_a_shared_one() -> None:
    entries = [RosterEntry(identity="lead:main", mob="alpha"), RosterEntry(identity="loner")]
    assert Roster(entries).console_name("lead:main") == "lead:main"
    shared = Roster(entries, shared=True)
    assert shared.console_name("lead:main") == "alpha/lead:main"
    assert shared.console_name("lead:main", mob="beta") == "alpha/lead:main"  # the roster's mob wins
    assert shared.console_name("stranger", mob="beta") == "beta/stranger"
    assert shared.console_name("loner") is None and shared.console_name("stranger") is None
