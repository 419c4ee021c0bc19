"""Which scopes an identity reads: its own, and the shared scopes it belongs to.

An identity reads its own identity scope, and beside it the memory a team shares: its mob's
(the roster's), the realm's operator scopes when ``[agent_memory] operator_scope`` is on, and the
realm scope, each only where access control lets the identity read it. Recall, the ``memory``
tool's ``recall`` and injection rank all of them together (memory/recall): a shared record
competes with an identity's own on relevance alone. Who belongs where and who may read what are
the roster's and the access rules' (``access/reading.py`` implements :class:`SharedScopes` over
them); this module only names the seam and the order of the scopes.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Protocol

from .records import Scope, ScopeKind

__all__ = [
    "SCOPE_KINDS",
    "SCOPE_WEIGHTS",
    "OwnScopeOnly",
    "SharedScopes",
    "reading_scopes",
]

SCOPE_KINDS: tuple[str, ...] = tuple(kind.value for kind in ScopeKind)
"""``identity``, ``mob``, ``operator``, ``realm``: a recall's ``scopes`` filter names these."""

SCOPE_WEIGHTS: dict[str, int] = {"identity": 4, "mob": 2, "operator": 1, "realm": 1}
"""How the build-time manifest's bytes are shared between the scopes (REFERENCE 3.5)."""


class SharedScopes(Protocol):
    """The shared scopes (beyond its own) an identity reads in a realm."""

    def shared_scopes(self, realm: str, identity: str, operator_keys: Sequence[str]) -> list[Scope]:
        """Its mob's, the operator scopes of ``operator_keys``, and the realm scope, each where the
        identity may read it, in that order."""
        ...

    @property
    def reads_operator_scope(self) -> bool:
        """Whether operator scopes are read at all (``operator_scope`` on): only then does the
        caller look up which operator scopes the realm holds."""
        ...

    def mob_of(self, identity: str) -> str | None:
        """The mob ``identity`` belongs to, if any."""
        ...

    def may_propose(self, realm: str, identity: str, mob: str) -> bool:
        """Whether ``identity`` may propose records for ``mob`` (``mob.memory.propose``)."""
        ...


class OwnScopeOnly:
    """No shared scope, no mob: what a runtime wired without a roster or access rules reads."""

    reads_operator_scope = False

    def shared_scopes(self, realm: str, identity: str, operator_keys: Sequence[str]) -> list[Scope]:
        return []

    def mob_of(self, identity: str) -> str | None:
        return None

    def may_propose(self, realm: str, identity: str, mob: str) -> bool:
        return False


def reading_scopes(
    own: Scope, shared: Sequence[Scope], kinds: Collection[str] | None = None
) -> tuple[Scope, ...]:
    """The scopes one read covers: ``own`` first, then ``shared``, narrowed to ``kinds`` when
    given (a recall's ``scopes`` filter)."""
    every = (own, *shared)
    if kinds is None:
        return every
    return tuple(scope for scope in every if scope.kind.value in kinds)
