"""The realm-store seam: everything the domain needs from storage, and nothing of how it is kept.

One :class:`RealmStore` holds one realm. Writes go through a unit of work,
:meth:`RealmStore.transaction`: a :class:`RealmTxn` gives every write a subsystem makes (apply a
batch through the one validator with its audit rows, savepoints, the review evidence, proposals,
harvests, dream runs, usage verdicts, gated promotions) inside one transaction that commits or
rolls back whole. Host sessions (their taint, boundaries and budgets) and identities' pending taint
are rows of the realm store too, changed through a :class:`SessionTxn`
(:meth:`RealmStore.session_txn`), so every gateway of a deployment sees the same sessions and a
restart forgets none. Reads come as three protocols: recall's and agent memory's listing
(:class:`RealmStore` itself), the panel's (:class:`PanelReads`) and the steward's
(:class:`StewardReads`), every row in the domain's own types (rows.py). A
:class:`RealmStoreFactory` opens realms for agent memory.

The bundled backends are the SQLite realm files (:mod:`meta_memory.memory.sqlite`, the embedded
default) and PostgreSQL (:mod:`meta_memory.memory.postgres`, for several gateways on one
database). No SQL, and no driver, appears outside a backend.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from .purge import PurgeReceipt, PurgeTarget
from .recall.index import TermIndex
from .records import Author, Record, Scope, ScopeKind, Status
from .rows import (
    ChainLinks,
    CommitResult,
    DreamRunRow,
    DreamSummaryRow,
    FullRecordsPage,
    HarvestRow,
    InjectionEntry,
    InjectionRow,
    PromotionEntry,
    PromotionRow,
    ProposalItem,
    ProposalRow,
    ProposalState,
    QueueLimits,
    QueueRows,
    RecordAccess,
    RecordFilter,
    RecordKey,
    RecordRow,
    RecordsPage,
    ScopeCounts,
    SessionRow,
    VerdictRow,
)
from .validator import WriteBatch

__all__ = [
    "PanelReads",
    "RealmStore",
    "RealmStoreFactory",
    "RealmTxn",
    "SessionReads",
    "SessionTxn",
    "StewardReads",
]


class RealmTxn(Protocol):
    """One write transaction of one realm: every write the domain makes, committed together.

    Obtained from :meth:`RealmStore.transaction`; it commits when the ``with`` block ends and
    rolls back whole when it raises. Reads through it see the transaction's own writes.
    """

    realm: str

    def now_ms(self) -> int:
        """The store's clock."""
        ...

    def get(self, memory_id: str) -> Record | None: ...

    def apply(self, batch: WriteBatch, *, review: dict[str, Any] | None = None) -> CommitResult:
        """Validate ``batch`` (the one validator, against this transaction's view) and apply it,
        with one audit row per op; ``review``: the quarantine review it carries out, held by
        each audit row as the evidence a replay is recognized by.

        Raises:
            WriteRefused: the validator refused the batch (nothing of it was applied).
        """
        ...

    def validate(self, batch: WriteBatch) -> None:
        """Run the validator on ``batch`` without applying it (staged promotions).

        Raises:
            WriteRefused: the rule it breaks.
        """
        ...

    def savepoint(self) -> AbstractContextManager[None]:
        """A savepoint: an exception in the block undoes only the block's writes, then propagates."""
        ...

    def restore(self, record: Record, *, author: Author, rationale: str | None) -> None:
        """Write ``record`` as an export holds it (``meta_gateway import``): its status, lineage
        and timestamps kept, its usage counters at zero, after
        :func:`~meta_memory.memory.validator.validate_restore`, with one ``import`` audit row by
        ``author``. No other record changes.

        Raises:
            WriteRefused: the rule it breaks (nothing was written).
        """
        ...

    def note_import_skipped(self, record_id: str | None, author: Author, detail: dict[str, Any]) -> None:
        """An ``import_skipped`` audit row: an import refused ``record_id`` (nothing else is written)."""
        ...

    def active_duplicate(self, record: Record) -> Record | None:
        """The active record of ``record``'s scope with the same content hash, if any."""
        ...

    def prior_review(self, memory_id: str) -> dict[str, Any] | None:
        """The last quarantine review of ``memory_id`` as its audit evidence holds it
        (``{audit_token, decided_at_ms, review}``), or ``None``: only a review's own audit row
        counts, never a plain forget. An operator's decision on a proposal is read the same way,
        by the proposal's id (:meth:`note_proposal_decision` writes its row)."""
        ...

    # -- proposals, harvests, dream runs, usage verdicts ----------------------------------------

    def proposal(self, proposal_id: str) -> ProposalState | None: ...

    def proposal_item(self, proposal_id: str) -> ProposalItem | None:
        """The whole proposal (its text too), whatever its status, or ``None``."""
        ...

    def set_proposal_status(self, proposal_id: str, status: str, now_ms: int) -> None: ...

    def note_proposal_decision(self, proposal_id: str, author: Author, review: dict[str, Any]) -> int:
        """A ``proposal_decision`` audit row keyed by ``proposal_id``, whose ``detail.review`` is
        ``review`` (its ``origin`` the proposal id): the evidence :meth:`prior_review` reads back.
        Returns the row's sequence."""
        ...

    def complete_harvest(self, identity: str, session_key: str) -> None: ...

    def start_run(self, run_id: str, partition: str, now_ms: int) -> None: ...

    def finish_run(self, run_id: str, now_ms: int, ops_committed: int, detail: dict[str, Any]) -> None: ...

    def add_audit_verdicts(
        self, run_id: str, verdicts: Sequence[tuple[str, str, str | None]], now_ms: int
    ) -> None:
        """``(record_id, verdict, rationale)`` rows awaiting an operator."""
        ...

    def audit_verdicts_of(self, record_id: str) -> list[tuple[VerdictRow, str]]:
        """Every usage-audit verdict on ``record_id`` with its status (``open``, or how an
        operator resolved it), oldest first."""
        ...

    def close_audit_verdicts(self, record_id: str, run_ids: Sequence[str], status: str) -> None:
        """Resolve the open verdicts on ``record_id`` of the runs ``run_ids`` as ``status``."""
        ...

    def note_verdict_resolution(self, record_id: str, author: Author, detail: dict[str, Any]) -> str:
        """An ``audit_verdict`` audit row holding ``detail`` (its ``resolution``); returns the
        row's audit token."""
        ...

    def verdict_resolutions(self, record_id: str) -> list[dict[str, Any]]:
        """The resolutions of ``record_id``'s verdicts as their audit rows hold them
        (``{audit_token, decided_at_ms, resolution}``), newest first."""
        ...

    # -- gated promotions ------------------------------------------------------------------------

    def pending_promotions_of(self, record_id: str) -> list[PromotionRow]:
        """The pending promotions whose source is ``record_id``, oldest first."""
        ...

    def insert_promotion(self, row: PromotionRow, staged: dict[str, Any]) -> None:
        """A mapping row and its staged batch (kept by ``row.stage_token``)."""
        ...

    def promotion(self, pending_id: str) -> PromotionRow | None: ...

    def staged_batch(self, stage_token: str) -> dict[str, Any] | None: ...

    def resolve_promotion(self, row: PromotionRow, status: str, now_ms: int) -> None:
        """Leave ``pending`` for ``committed | denied | expired``; the staged batch is discarded."""
        ...

    def rekey_promotion(self, pending_id: str, next_pending_id: str) -> bool:
        """Move a pending promotion to a new pending id; False when it is no longer pending."""
        ...

    def overdue_promotions(self, created_before_ms: int) -> list[PromotionRow]: ...

    def collect_stale_stages(self, now_ms: int) -> int:
        """Drop staged batches older than a day that no pending promotion references."""
        ...


class SessionTxn(Protocol):
    """One transaction over a realm's host sessions and pending taint (obtained from
    :meth:`RealmStore.session_txn`). Session transactions of one realm serialize, on every gateway
    of a deployment; what one commits is durable before the call that made it returns."""

    def now_ms(self) -> int:
        """The store's clock."""
        ...

    def session(self, key: str) -> SessionRow | None:
        """The session ``key`` names, open or ended, or ``None``."""
        ...

    def put_session(self, row: SessionRow) -> None:
        """Insert ``row``, or replace the row of its key."""
        ...

    def open_sessions_of(self, identity: str) -> list[SessionRow]:
        """``identity``'s open sessions, oldest first."""
        ...

    def take_pending(self, identity: str) -> str | None:
        """Remove and return ``identity``'s pending taint (its source), if it holds any."""
        ...

    def hold_pending(self, identity: str, source: str) -> bool:
        """Hold ``source`` as ``identity``'s pending taint; ``False`` (nothing changed) when the
        identity already holds some (the first source is kept)."""
        ...

    def idle_sessions(self, seen_before_ms: int, limit: int) -> list[SessionRow]:
        """Up to ``limit`` open sessions last seen before ``seen_before_ms``, least recent first."""
        ...

    def drop_ended(self, ended_before_ms: int, limit: int) -> int:
        """Delete up to ``limit`` sessions that ended before ``ended_before_ms``; how many went."""
        ...

    def add_harvest(self, identity: str, session_key: str, cause: str, retired_at_ms: int) -> bool:
        """Queue an exit interview of ``identity``'s session ``session_key`` (with the session's
        end, in one transaction); ``False`` when that session has one already (nothing changed)."""
        ...


class SessionReads(Protocol):
    """Host-session reads outside a session transaction (each sees every committed change)."""

    def session(self, key: str) -> SessionRow | None:
        """The session ``key`` names, open or ended (with its identity's pending taint read in
        the same statement, as ``pending``), or ``None``."""
        ...

    def pending_taint(self, identity: str) -> str | None:
        """The source of ``identity``'s pending taint, if it holds any."""
        ...

    def session_txn(self) -> AbstractContextManager[SessionTxn]:
        """One session transaction (committed when the block ends, rolled back if it raises)."""
        ...

    def touch_session(self, key: str, seen_at_ms: int) -> None:
        """Move an open session's last-seen time forward to ``seen_at_ms`` (never back)."""
        ...


class PanelReads(Protocol):
    """One realm as the console's panel reads it. Every list is newest first, at most ``limit``.
    ``records_page`` returns rows strictly past the cursor it is given, and a ``next_cursor``
    past that cursor too (the listing refuses a store whose cursor does not move)."""

    realm: str

    def records_page(self, where: RecordFilter, after: RecordKey | None, limit: int) -> RecordsPage: ...

    def get(self, memory_id: str) -> Record | None: ...

    def record_access(self, memory_ids: Iterable[str]) -> dict[str, RecordAccess]: ...

    def supersede_chain(self, memory_id: str, max_hops: int) -> ChainLinks: ...

    def record_injections_of(
        self, memory_id: str, before: tuple[int, int] | None, limit: int
    ) -> list[InjectionEntry]:
        """One record's injection-ledger rows, newest first, strictly before ``(at_ms, seq)``."""
        ...

    def quarantined(self, limit: int) -> list[RecordRow]: ...

    def pending_promotions(self, limit: int) -> list[PromotionEntry]: ...

    def proposal_scopes(self, proposal_ids: Iterable[str]) -> dict[str, tuple[str, str]]:
        """The scope of each proposal a gated promotion was made from."""
        ...

    def pending_proposals(self, limit: int) -> list[ProposalRow]:
        """The open proposals (``pending`` or ``held``), newest first, without their bodies."""
        ...

    def proposal_detail(self, proposal_id: str) -> ProposalItem | None:
        """One proposal with its text, whatever its status, or ``None``."""
        ...

    def injections(self, limit: int) -> list[InjectionEntry]: ...

    def pending_harvests(self, limit: int) -> list[HarvestRow]: ...

    def open_verdicts(self, limit: int) -> list[VerdictRow]: ...

    def scope_counts(self) -> list[ScopeCounts]: ...

    def dream_summaries(self, limit: int) -> list[DreamSummaryRow]: ...

    def dream_runs(self, limit: int) -> list[DreamRunRow]: ...

    def holds_quarantine_evidence(self) -> bool:
        """Whether the realm holds content that was ever quarantined (the dream-history rule)."""
        ...

    def realm_scopes(self) -> set[tuple[str, str]]:
        """Every memory scope the realm names (records, proposals, gated promotions, harvests)."""
        ...


class StewardReads(Protocol):
    """What the memory steward reads of one realm outside its write transactions."""

    def gather(
        self,
        *,
        identities: Collection[str] | None,
        mob: str | None,
        limits: QueueLimits,
        unaffiliated: bool = False,
    ) -> QueueRows:
        """What waits for a dream, oldest first, within ``limits``; ``identities`` restricts
        quarantined records and harvests (a mob partition), ``mob`` proposals to that mob's, and
        ``unaffiliated`` to those of no mob. Sources waiting on a pending gate are left out."""
        ...

    def identity_keys(self) -> list[str]:
        """Every identity the realm holds a scope or a harvest for."""
        ...

    def signal_count(
        self, *, identities: Collection[str] | None, mob: str | None, unaffiliated: bool = False
    ) -> int:
        """Quarantined identity records, open proposals and pending exit-interview harvests
        waiting for a dream (filtered as :meth:`gather` filters them)."""
        ...

    def run_stats(self, partition: str, since_ms: int) -> tuple[int, int | None]:
        """(runs started at or after ``since_ms``, the latest start) for one partition."""
        ...


class RealmStore(PanelReads, StewardReads, SessionReads, Protocol):
    """One realm's storage: the unit of work for writes, host sessions, and the reads of recall,
    the panel and the steward."""

    realm: str

    def transaction(self) -> AbstractContextManager[RealmTxn]:
        """One write transaction (the realm's writes serialize on it)."""
        ...

    def commit(self, batch: WriteBatch, *, dedup: bool = False) -> CommitResult:
        """:meth:`RealmTxn.apply` in a transaction of its own. With ``dedup``, a single create
        whose content hash matches an active record of its scope returns that record instead
        (``deduplicated``) and writes nothing."""
        ...

    def forget(self, scope: Scope, memory_id: str, author: Author) -> bool:
        """Tombstone ``memory_id`` if it is live in ``scope``; ``False`` if missing, already
        tombstoned or in another scope (nothing written then)."""
        ...

    def expire_due(self, now_ms: int) -> PurgeReceipt | None:
        """Delete up to ``EXPIRY_BATCH`` active records whose ``expires_at_ms`` has come by
        ``now_ms``, each with its lineage and derived data, as a purge deletes them (SQLite does not
        rewrite its files for it); the receipt (``by`` kind ``expiry``), or ``None`` when none was due."""
        ...

    def purge(self, target: PurgeTarget, by: dict[str, Any]) -> PurgeReceipt:
        """Erase ``target`` and its lineage for real (memory/purge.py): the records, every row
        that holds their text or names them, and their derived data, in one write transaction;
        then whatever the backend keeps of deleted rows. Returns the receipt, also kept as the
        realm's ``purge`` audit row.

        Raises:
            UnknownRecord: one of ``target.memory_ids`` is not a record of the identity's scope.
            PurgeIncomplete: the rows are gone but not yet every copy the backend keeps.
        """
        ...

    def create_proposal(
        self,
        *,
        proposal_id: str,
        scope: Scope,
        kind: str,
        title: str,
        description: str,
        body: str,
        tags: Sequence[str],
        author: Author,
        tainted: bool,
    ) -> None:
        """Queue a pending proposal for mob or operator scope, with one audit row."""
        ...

    def add_harvest(self, identity: str, session_key: str, cause: str, retired_at_ms: int) -> None:
        """Queue an exit interview of a retired identity's session (idempotent per session)."""
        ...

    def import_records(
        self,
        file_name: str,
        author: Author,
        records: Sequence[Record],
        malformed: Sequence[tuple[str | None, str]],
    ) -> tuple[int, int]:
        """Import one legacy file's records in one transaction; safe to run again. Returns
        (imported, skipped)."""
        ...

    def record_injections(self, rows: Sequence[InjectionRow]) -> None:
        """Append injection-ledger rows and count the usage, in one transaction."""
        ...

    def newest_active(self, scopes: Sequence[Scope], limit: int, tags: Sequence[str] = ()) -> list[Record]:
        """Active records of ``scopes`` carrying every one of ``tags``, updated desc, created desc,
        id desc."""
        ...

    def tagged_docs(self, scopes: Sequence[Scope], tags: Sequence[str]) -> set[int]:
        """The recall documents (``doc``) of the active records of ``scopes`` that carry every one
        of ``tags`` (at least one tag)."""
        ...

    def full_records_page(self, where: RecordFilter, after: RecordKey | None, limit: int) -> FullRecordsPage:
        """Up to ``limit`` whole records matching ``where`` (every filter in the store's query),
        strictly past ``after`` in the listing order (updated desc, id desc); ``next_cursor`` is the
        last one's key when more match, else ``None``."""
        ...

    def reading_index(self, scopes: Sequence[Scope]) -> AbstractContextManager[TermIndex]:
        """The recall index of the active records of ``scopes``, as one collection (their
        statistics summed, each record's neighbours within its own scope), caught up with every
        write so far, as one consistent read view until the block ends."""
        ...

    def records_by_doc(self, docs: Sequence[int]) -> dict[int, Record]: ...

    def scope_keys(self, kind: ScopeKind) -> list[str]:
        """The keys of the realm's scopes of ``kind`` that have held a record, sorted."""
        ...

    def exporting(
        self, *, statuses: Collection[Status], scope: Scope | None = None
    ) -> AbstractContextManager[Iterator[Record]]:
        """Every record whose status is one of ``statuses`` (of ``scope`` only, when given), by
        ``created_at_ms`` and then id (bytewise), as one consistent read view until the block
        ends (``meta_gateway export``)."""
        ...

    def mark_recalled(self, memory_ids: Iterable[str], at_ms: int) -> None:
        """Count an explicit recall of each record (statistics: a crash may lose the last few)."""
        ...

    def audit_rows(self, record_id: str | None = None) -> list[dict[str, Any]]:
        """Every audit row (of one record), oldest first."""
        ...

    def close(self) -> None: ...


class RealmStoreFactory(Protocol):
    """Where agent memory's realm stores come from: one backend, chosen by config."""

    def open_realm(self, realm: str) -> RealmStore:
        """The realm's store, created if it has none yet.

        Raises:
            StoreCorrupt: the realm's storage exists but cannot be served.
        """
        ...

    def realms(self) -> list[str]:
        """Every realm that has a store, sorted (nothing is created)."""
        ...

    def has_realm(self, realm: str) -> bool:
        """Whether ``realm`` has a store (nothing is created)."""
        ...

    def close(self) -> None:
        """Release what the factory holds (connections, helper processes); stores are closed by
        their owner first."""
        ...
