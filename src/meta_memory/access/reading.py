"""Which shared memory an identity reads, by the roster and the access rules.

The roster says which mob an identity belongs to; the access rules say whether the identity may
read each shared scope. For these checks the identity itself is the principal (it is the one
reading: its agent recalls, and its prompts are injected), so a rule grants an identity shared
memory by naming it among its ``subjects`` (or ``"*"``): ``mob.memory.read`` on its mob,
``operator.memory.read`` on an operator scope (never implied by another grant), an unscoped
``agent.memory.read`` for the realm scope; and ``mob.memory.propose`` lets its agent propose to
its mob. With access control off every one of them is allowed.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..memory.records import Scope, ScopeKind
from .actions import AGENT_MEMORY_READ, MOB_MEMORY_PROPOSE, MOB_MEMORY_READ, OPERATOR_MEMORY_READ
from .engine import AccessEngine, Resource
from .principal import Principal

__all__ = ["RosterScopes", "reader_principal"]


def reader_principal(identity: str) -> Principal:
    """The principal an identity's own reads are judged as."""
    return Principal(identity)


class RosterScopes:
    """:class:`~meta_memory.memory.scopes.SharedScopes` by the roster and the access rules.

    Args:
        engine: the access rules, with the roster.
        operator_scope: whether operator scopes are read (``[agent_memory] operator_scope`` on).
    """

    def __init__(self, engine: AccessEngine, *, operator_scope: bool) -> None:
        self._engine = engine
        self.reads_operator_scope = operator_scope

    def mob_of(self, identity: str) -> str | None:
        """The mob the roster puts ``identity`` in, if any."""
        attrs = self._engine.roster.attributes(identity)
        return attrs.mob if attrs is not None else None

    def may_propose(self, realm: str, identity: str, mob: str) -> bool:
        return self._engine.allows(
            reader_principal(identity), MOB_MEMORY_PROPOSE, Resource.for_mob(mob, realm=realm)
        )

    def shared_scopes(self, realm: str, identity: str, operator_keys: Sequence[str]) -> list[Scope]:
        reader = reader_principal(identity)
        allows = self._engine.allows
        out: list[Scope] = []
        mob = self.mob_of(identity)
        if mob is not None and allows(reader, MOB_MEMORY_READ, Resource.for_mob(mob, realm=realm)):
            out.append(Scope(ScopeKind.MOB, realm, mob))
        if self.reads_operator_scope:
            out.extend(
                Scope(ScopeKind.OPERATOR, realm, key)
                for key in operator_keys
                if allows(reader, OPERATOR_MEMORY_READ, Resource.for_operator(key, realm=realm))
            )
        if allows(reader, AGENT_MEMORY_READ, None):
            out.append(Scope(ScopeKind.REALM, realm))
        return out
