"""The panel's store seam: what one realm must answer (:class:`PanelStore`) and where realms come
from (:class:`PanelSource`).

The bundled source lists the realms that have a store file under the agent-memory root (never
creating one) and hands out :class:`SqlitePanelStore` views of the realm stores agent memory opens. Another backend implements the same two protocols.
A store's ``records_page`` must return rows strictly past the cursor it is given, and a
``next_cursor`` past that cursor too: the record listing refuses a store whose cursor does not move.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from ..memory.records import Record
from ..memory.service import AgentMemory
from ..memory.sqlite import panel as sql
from ..memory.sqlite.panel import (
    ChainLinks,
    DreamRunRow,
    DreamSummaryRow,
    HarvestRow,
    InjectionEntry,
    PromotionEntry,
    ProposalRow,
    RecordAccess,
    RecordFilter,
    RecordKey,
    RecordRow,
    RecordsPage,
    ScopeCounts,
    VerdictRow,
)
from ..memory.sqlite.store import SqliteRealmStore
from ..storage.layout import StateLayout

__all__ = ["AgentMemorySource", "PanelSource", "PanelStore", "SqlitePanelStore", "stores_for"]


class PanelStore(Protocol):
    """One realm, as the panel reads it. Every list is newest first and at most ``limit`` long."""

    realm: str

    def records_page(self, where: RecordFilter, after: RecordKey | None, limit: int) -> RecordsPage: ...

    def record(self, memory_id: str) -> Record | None: ...

    def record_access(self, memory_ids: Iterable[str]) -> dict[str, RecordAccess]: ...

    def supersede_chain(self, memory_id: str, max_hops: int) -> ChainLinks: ...

    def record_injections(
        self, memory_id: str, before: tuple[int, int] | None, limit: int
    ) -> list[InjectionEntry]: ...

    def quarantined(self, limit: int) -> list[RecordRow]: ...

    def pending_promotions(self, limit: int) -> list[PromotionEntry]: ...

    def proposal_scopes(self, proposal_ids: Iterable[str]) -> dict[str, tuple[str, str]]:
        """The scope of each proposal a gated promotion was made from."""
        ...

    def proposals(self, limit: int) -> list[ProposalRow]: ...

    def injections(self, limit: int) -> list[InjectionEntry]: ...

    def harvests(self, limit: int) -> list[HarvestRow]: ...

    def audit_verdicts(self, limit: int) -> list[VerdictRow]: ...

    def scope_overview(self) -> list[ScopeCounts]: ...

    def dream_summaries(self, limit: int) -> list[DreamSummaryRow]: ...

    def dream_runs(self, limit: int) -> list[DreamRunRow]: ...

    def holds_quarantine_evidence(self) -> bool:
        """Whether the realm holds content that was ever quarantined (the dream-history rule)."""
        ...

    def realm_scopes(self) -> set[tuple[str, str]]:
        """Every memory scope the realm names (records, proposals, gated promotions, harvests)."""
        ...


class PanelSource(Protocol):
    def realms(self) -> list[str]:
        """Every realm with a store, sorted."""
        ...

    def store(self, realm: str) -> PanelStore | None:
        """The realm's store; ``None`` when the realm has none (nothing is created)."""
        ...


class SqlitePanelStore:
    """The bundled store's answers: :mod:`meta_memory.memory.sqlite.panel` bound to one realm store."""

    def __init__(self, store: SqliteRealmStore) -> None:
        self._store = store
        self.realm = store.realm

    def records_page(self, where: RecordFilter, after: RecordKey | None, limit: int) -> RecordsPage:
        return sql.records_page(self._store, where, after, limit)

    def record(self, memory_id: str) -> Record | None:
        return self._store.get(memory_id)

    def record_access(self, memory_ids: Iterable[str]) -> dict[str, RecordAccess]:
        return sql.record_access(self._store, memory_ids)

    def supersede_chain(self, memory_id: str, max_hops: int) -> ChainLinks:
        return sql.supersede_chain(self._store, memory_id, max_hops)

    def record_injections(
        self, memory_id: str, before: tuple[int, int] | None, limit: int
    ) -> list[InjectionEntry]:
        return sql.record_injections(self._store, memory_id, before, limit)

    def quarantined(self, limit: int) -> list[RecordRow]:
        return sql.quarantined(self._store, limit)

    def pending_promotions(self, limit: int) -> list[PromotionEntry]:
        return sql.pending_promotions(self._store, limit)

    def proposal_scopes(self, proposal_ids: Iterable[str]) -> dict[str, tuple[str, str]]:
        return sql.proposal_scopes(self._store, proposal_ids)

    def proposals(self, limit: int) -> list[ProposalRow]:
        return sql.pending_proposals(self._store, limit)

    def injections(self, limit: int) -> list[InjectionEntry]:
        return sql.injections(self._store, limit)

    def harvests(self, limit: int) -> list[HarvestRow]:
        return sql.pending_harvests(self._store, limit)

    def audit_verdicts(self, limit: int) -> list[VerdictRow]:
        return sql.open_verdicts(self._store, limit)

    def scope_overview(self) -> list[ScopeCounts]:
        return sql.scope_counts(self._store)

    def dream_summaries(self, limit: int) -> list[DreamSummaryRow]:
        return sql.dream_summaries(self._store, limit)

    def dream_runs(self, limit: int) -> list[DreamRunRow]:
        return sql.dream_runs(self._store, limit)

    def holds_quarantine_evidence(self) -> bool:
        return sql.holds_quarantine_evidence(self._store)

    def realm_scopes(self) -> set[tuple[str, str]]:
        return sql.realm_scopes(self._store)


class AgentMemorySource:
    """Realms of the bundled SQLite agent memory: one ``<enc(realm)>.sqlite3`` file each."""

    def __init__(self, memory: AgentMemory) -> None:
        self._memory = memory

    def realms(self) -> list[str]:
        root = self._memory.root
        if not root.is_dir():
            return []
        names = (StateLayout.realm_from_db_name(p.name) for p in root.iterdir() if p.is_file())
        return sorted(name for name in names if name is not None)

    def store(self, realm: str) -> PanelStore | None:
        if not self._memory.layout.realm_db_path(realm, self._memory.root).is_file():
            return None
        return SqlitePanelStore(self._memory.store(realm))


def stores_for(source: PanelSource, realm: str | None) -> list[PanelStore]:
    """The stores a call covers: the named realm's (none if it has no store), else every realm's."""
    names = [realm] if realm is not None else source.realms()
    return [store for store in (source.store(name) for name in names) if store is not None]
