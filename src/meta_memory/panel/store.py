"""Where the panel's realms come from (:class:`PanelSource`), and what one realm must answer
(:class:`PanelStore`, the realm-store seam's ``PanelReads``).

The bundled source lists agent memory's realms, whatever its backend (never creating one), and
hands out their realm stores. A store's ``records_page`` must return rows strictly past the cursor
it is given, and a ``next_cursor`` past that cursor too: the record listing refuses a store whose
cursor does not move.
"""

from __future__ import annotations

from typing import Protocol

from ..memory.service import AgentMemory
from ..memory.store import PanelReads as PanelStore

__all__ = ["AgentMemorySource", "PanelSource", "PanelStore", "stores_for"]


class PanelSource(Protocol):
    def realms(self) -> list[str]:
        """Every realm with a store, sorted."""
        ...

    def store(self, realm: str) -> PanelStore | None:
        """The realm's store; ``None`` when the realm has none (nothing is created)."""
        ...


class AgentMemorySource:
    """The realms of agent memory, whatever its backend."""

    def __init__(self, memory: AgentMemory) -> None:
        self._memory = memory

    def realms(self) -> list[str]:
        return self._memory.realms()

    def store(self, realm: str) -> PanelStore | None:
        if not self._memory.has_realm(realm):
            return None
        return self._memory.store(realm)


def stores_for(source: PanelSource, realm: str | None) -> list[PanelStore]:
    """The stores a call covers: the named realm's (none if it has no store), else every realm's."""
    names = [realm] if realm is not None else source.realms()
    return [store for store in (source.store(name) for name in names) if store is not None]
