"""Who may read which panel row (REFERENCE 6), answered once per call and cached.

Identity-scoped memory needs ``agent.memory.read`` and ``agent.view`` on the identity (judged under
its console name by the engine), mob scope ``mob.memory.read``, operator scope
``operator.memory.read``, realm scope an unscoped ``agent.memory.read``; quarantined content (a
quarantined record, or a tombstoned one that was ever quarantined) also needs
``memory.quarantine.review``. A denial names the governing action: the first of those the caller
lacks, in that order. With access disabled (or no engine) everything is visible.
"""

from __future__ import annotations

from ..access import AccessEngine, Principal, requires_quarantine_review
from ..access.actions import (
    AGENT_MEMORY_READ,
    AGENT_VIEW,
    MEMORY_QUARANTINE_REVIEW,
    MOB_MEMORY_READ,
    OPERATOR_MEMORY_READ,
)
from ..errors import AccessDenied
from ..memory.records import Record
from ..memory.rows import RecordAccess, RecordRow

__all__ = ["Viewer"]

_SCOPE_ACTIONS: dict[str, tuple[str, ...]] = {
    "identity": (AGENT_MEMORY_READ, AGENT_VIEW),
    "mob": (MOB_MEMORY_READ,),
    "operator": (OPERATOR_MEMORY_READ,),
    "realm": (AGENT_MEMORY_READ,),
}


class Viewer:
    """One caller's visibility over the panel's rows."""

    def __init__(self, engine: AccessEngine | None, principal: Principal) -> None:
        self._engine = engine if engine is not None and engine.enabled else None
        self.principal = principal
        self._denials: dict[tuple[str, str, bool], str | None] = {}

    @property
    def unrestricted(self) -> bool:
        """Access is off: every row is visible."""
        return self._engine is None

    def denial(self, kind: str, key: str, *, needs_review: bool = False) -> str | None:
        """The first action the caller lacks to read ``kind``/``key`` memory, or ``None``.

        An unknown scope kind (a hand-edited row) is denied as unreadable by any grant.
        """
        if self._engine is None:
            return None
        cache_key = (kind, key, needs_review)
        if cache_key not in self._denials:
            self._denials[cache_key] = self._first_denied(kind, key, needs_review)
        return self._denials[cache_key]

    def _first_denied(self, kind: str, key: str, needs_review: bool) -> str | None:
        assert self._engine is not None
        actions = _SCOPE_ACTIONS.get(kind)
        if actions is None:
            return AGENT_MEMORY_READ
        resource = AccessEngine.scope_resource(kind, key)
        for action in (*actions, MEMORY_QUARANTINE_REVIEW) if needs_review else actions:
            if not self._engine.allows(self.principal, action, resource):
                return action
        return None

    def scope(self, kind: str, key: str) -> bool:
        return self.denial(kind, key) is None

    def identity(self, identity: str) -> bool:
        return self.scope("identity", identity)

    def review(self, kind: str, key: str) -> bool:
        """``memory.quarantine.review`` (with read) on one scope."""
        return self.denial(kind, key, needs_review=True) is None

    def access(self, a: RecordAccess) -> bool:
        needs = requires_quarantine_review(a.status, ever_quarantined=a.ever_quarantined)
        return self.denial(a.scope_kind, a.scope_key, needs_review=needs) is None

    def row(self, row: RecordRow) -> bool:
        return self.access(RecordAccess(row.scope_kind, row.scope_key, row.status, row.ever_quarantined))

    def record(self, record: Record) -> bool:
        return self.access(_access_of(record))

    def require_record(self, record: Record) -> None:
        """Raises:
        AccessDenied: -32030 naming the governing action, with the record id as resource.
        """
        a = _access_of(record)
        needs = requires_quarantine_review(a.status, ever_quarantined=a.ever_quarantined)
        action = self.denial(a.scope_kind, a.scope_key, needs_review=needs)
        if action is not None:
            raise AccessDenied(action, record.id)

    def require_scope(self, record: Record) -> None:
        """Raises:
        AccessDenied: -32030 naming the governing action for ``record``'s scope (quarantined
        content aside), with the record id as resource.
        """
        action = self.denial(record.scope.kind.value, record.scope.key)
        if action is not None:
            raise AccessDenied(action, record.id)

    def require_identity(self, identity: str) -> None:
        """Raises:
        AccessDenied: -32030 naming ``agent.memory.read`` or ``agent.view``, with the identity.
        """
        action = self.denial("identity", identity)
        if action is not None:
            raise AccessDenied(action, identity)


def _access_of(record: Record) -> RecordAccess:
    return RecordAccess(
        record.scope.kind.value, record.scope.key, record.status.value, record.ever_quarantined
    )
