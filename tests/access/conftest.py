"""Access fixtures: an engine factory that builds through the same config loader as ``--config``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import pytest

from meta_memory.access import AccessEngine, Principal, Roster
from meta_memory.config import RosterEntry, load_config_dict

ADMIN = "root"
ALICE = Principal("alice")
BOB = Principal("bob")
CAROL_OPS = Principal("carol", frozenset({"ops"}))

# A small declared roster: two teams, two roles, two mobs.
ROSTER: list[dict[str, Any]] = [
    {"identity": "red-writer", "mob": "alpha", "role": "writer", "labels": {"team": "red"}},
    {"identity": "blue-writer", "mob": "alpha", "role": "writer", "labels": {"team": "blue"}},
    {"identity": "red-reviewer", "mob": "beta", "role": "reviewer", "labels": {"team": "red"}},
    {"identity": "no-role", "mob": "beta"},
]


class MakeEngine(Protocol):
    def __call__(
        self,
        *rules: dict[str, Any],
        enabled: bool = True,
        admins: Sequence[str] = (ADMIN,),
        roster: Sequence[dict[str, Any]] = ...,
        provider: Callable[[str], RosterEntry | None] | None = None,
        shared: bool = False,
    ) -> AccessEngine: ...


@pytest.fixture
def make_engine() -> MakeEngine:
    """An engine from rule tables (ids default to ``r1``, ``r2``, ...) over :data:`ROSTER`."""

    def make(
        *rules: dict[str, Any],
        enabled: bool = True,
        admins: Sequence[str] = (ADMIN,),
        roster: Sequence[dict[str, Any]] = ROSTER,
        provider: Callable[[str], RosterEntry | None] | None = None,
        shared: bool = False,
    ) -> AccessEngine:
        tables = [{"id": f"r{i}", **rule} for i, rule in enumerate(rules, start=1)]
        config = load_config_dict(
            {
                "access": {"enabled": enabled, "admins": list(admins), "rules": tables},
                "roster": list(roster),
            }
        )
        return AccessEngine(config.access, Roster(config.roster, provider, shared=shared))

    return make
