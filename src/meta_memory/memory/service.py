"""Agent memory, the subsystem: realm stores, the remember/update/forget/recall and list/get API,
injection assembly.

:class:`AgentMemory` is what the runtime wires and what every surface calls. It opens a
realm's store on first access (importing that realm's legacy markdown then), turns
validated parameters into write batches for the one store validator, and asks the recall
provider for records. Automatic (build/turn) injection is time-bounded and follows the
configured failure policy; explicit recall always reports provider errors.

An application write (``remember``, ``update``, ``forget``: the application surface, the console's
shared-scope writes) that changed the store is announced on the timeline as
``memory.record.remembered`` / ``.updated`` / ``.forgotten`` with the record's id and scope and
the ``application`` author, never its title or body. An agent's write leaves its own events (the
write gate's ``memory.write.quarantined``).
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable, Collection
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from ..clock import Clock
from ..config import AgentMemoryConfig
from ..errors import InvalidParams, MetaError, UnknownRecord, WriteRefused
from ..events import SYSTEM_IDENTITY, EventSink
from ..names import realm_problem
from ..storage.layout import StateLayout
from . import manage
from .expiry import ExpirySweep
from .injection import InjectableRecord, SessionInjectionBudget, defang_inbound, new_nonce, render_manifest
from .legacy_import import ImportReport, ProgressFn, import_legacy_realm
from .manage import RecordGate, RecordHistory, RecordListing, RecordLookup
from .params import (
    MAX_ENTRIES_LIMIT,
    ForgetParams,
    GetParams,
    ListParams,
    PurgeParams,
    RecallParams,
    RememberParams,
    UpdateParams,
)
from .purge import PurgeReceipt, PurgeTarget
from .recall.provider import (
    LexicalRecallProvider,
    RecallProvider,
    RecallQuery,
    Scored,
    recall_reporting,
    recall_scored,
)
from .records import (
    APPLICATION,
    Author,
    Evidence,
    Provenance,
    Record,
    RecordKind,
    Scope,
    ScopeKind,
    Status,
    Trust,
    VerificationClaim,
    content_hash,
    new_memory_id,
)
from .rows import InjectionRow
from .scopes import SCOPE_WEIGHTS, OwnScopeOnly, SharedScopes, reading_scopes
from .store import RealmStore, RealmStoreFactory
from .validator import CreateOp, WriteBatch, validate_fields, validate_provenance

T = TypeVar("T")

__all__ = [
    "PURGED_EVENT",
    "RECORD_FORGOTTEN_EVENT",
    "RECORD_REMEMBERED_EVENT",
    "RECORD_UPDATED_EVENT",
    "AgentDraft",
    "AgentMemory",
    "InjectionResult",
]

log = logging.getLogger("meta_memory.agent_memory")

RECORD_REMEMBERED_EVENT = "memory.record.remembered"
RECORD_UPDATED_EVENT = "memory.record.updated"
RECORD_FORGOTTEN_EVENT = "memory.record.forgotten"
PURGED_EVENT = "memory.purged"

# The least time a turn gives the store to record what it injected before leaving it to finish.
_MIN_RECORDING_S = 0.05
# The build-time manifest lists at most this many records of each scope (its bytes bind first).
MANIFEST_PER_SCOPE = 64


@dataclass(frozen=True)
class AgentDraft:
    """What an agent asked to write, already parsed and normalized."""

    identity: str
    realm: str
    title: str
    body: str
    tags: tuple[str, ...] = ()
    description: str = ""
    kind: RecordKind = RecordKind.FACT
    verification: VerificationClaim | None = None
    evidence: tuple[Evidence, ...] = ()


@dataclass(frozen=True)
class Recalled:
    """An explicit recall's records, best first, each with its score (``None`` for ``always``
    recall), and whether the vectors it ranked by missed records acknowledged before it (``None``:
    lexical recall, no vectors involved)."""

    scored: list[Scored]
    vectors_behind: bool | None

    @property
    def records(self) -> list[Record]:
        return [record for record, _ in self.scored]

    def to_wire(self) -> dict[str, Any]:
        return {
            "records": [{**r.to_api(), "score": s} for r, s in self.scored],
            "vectors_behind": self.vectors_behind,
        }


@dataclass(frozen=True)
class InjectionResult:
    text: str | None
    injected: tuple[str, ...]


class AgentMemory:
    """Identity-scoped long-term memory over per-realm stores."""

    def __init__(
        self,
        layout: StateLayout,
        root: Path,
        config: AgentMemoryConfig,
        *,
        stores: RealmStoreFactory,
        clock: Clock,
        events: EventSink,
        provider: RecallProvider | None = None,
        shared: SharedScopes | None = None,
    ) -> None:
        """``stores``: the backend's factory of realm stores (chosen by ``agent_memory.store``);
        ``root``: the agent-memory root of the state dir, where legacy markdown is imported from;
        ``shared``: which shared scopes an identity reads beside its own (scopes.py)."""
        self.layout = layout
        self.root = root
        self.config = config
        self.stores = stores
        self.clock = clock
        self.events = events
        self.provider: RecallProvider = provider or LexicalRecallProvider()
        self.shared: SharedScopes = shared or OwnScopeOnly()
        self._stores: dict[str, RealmStore] = {}
        self.import_reports: dict[str, ImportReport] = {}
        self._open_lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="meta-recall")
        self.expiry = ExpirySweep(self)
        self.expiry.start()

    # -- realms --------------------------------------------------------------------

    def store(self, realm: str, *, progress: ProgressFn | None = None) -> RealmStore:
        """The realm's store, opened (and its legacy markdown imported) on first access.

        Raises:
            InvalidParams: ``realm`` breaks the realm rule (names.py).
            StoreCorrupt: the realm's storage is damaged; other realms are unaffected.
        """
        store = self._stores.get(realm)
        if store is not None:
            return store
        problem = realm_problem(realm)
        if problem is not None or realm != realm.strip():
            raise InvalidParams(f"realm {problem or 'must not begin or end with whitespace'}")
        with self._open_lock:
            store = self._stores.get(realm)
            if store is None:
                store = self.stores.open_realm(realm)
                legacy_dir = self.layout.realm_legacy_markdown_dir(realm, self.root)
                if legacy_dir.is_dir():
                    self.import_reports[realm] = import_legacy_realm(
                        store, legacy_dir, clock=self.clock, progress=progress
                    )
                self._stores[realm] = store
        return store

    def realms(self) -> list[str]:
        """Every realm that has a store, sorted (nothing is created)."""
        return self.stores.realms()

    def has_realm(self, realm: str) -> bool:
        return self.stores.has_realm(realm)

    def open_stores(self) -> list[tuple[str, RealmStore]]:
        """The realms whose stores this process has opened, with them."""
        with self._open_lock:
            return list(self._stores.items())

    def close(self) -> None:
        self.expiry.close()
        self._pool.shutdown(wait=True, cancel_futures=True)
        with self._open_lock:
            self._stores.clear()
            self.stores.close()  # closes the stores it opened, in the order its backend needs
        closing = getattr(self.provider, "close", None)  # a provider may hold threads of its own
        if callable(closing):
            closing()

    # -- the API (typed requests, parsed at the dispatcher boundary by memory/params.py) ---

    def remember(self, p: RememberParams) -> Record:
        self._writable(p.scope)
        record = self._new_record(p.scope, p.title, p.body, p.tags, APPLICATION)
        expires = p.expiry.resolve(record.created_at_ms) if p.expiry is not None else None
        if expires is not None:
            record = replace(record, expires_at_ms=expires)
        batch = WriteBatch(p.realm, APPLICATION, (CreateOp(record),))
        # An identical active record without an expiry is returned instead; never one that expires.
        result = self.store(p.realm).commit(batch, dedup=expires is None)
        if not result.deduplicated:  # an identical active record was returned: nothing was written
            self._announce(RECORD_REMEMBERED_EVENT, p.scope, result.records[0].id)
        return result.records[0]

    def _announce(self, event_type: str, scope: Scope, memory_id: str, **extra: str) -> None:
        """Put an application write on the timeline: ids and scope only, never the record's text."""
        data: dict[str, Any] = {
            "realm": scope.realm,
            "record_id": memory_id,
            "scope_kind": scope.kind.value,
            "scope_key": scope.key,
            "author": APPLICATION.to_wire(),
            **extra,
        }
        identity = scope.key if scope.kind is ScopeKind.IDENTITY else SYSTEM_IDENTITY
        self.events.emit(event_type, data, identity=identity)

    def _writable(self, scope: Scope) -> None:
        """Refuse an application write to operator scope while operator scopes are not read.

        Raises:
            InvalidParams: naming ``operator_scope``.
        """
        if scope.kind is ScopeKind.OPERATOR and self.config.operator_scope == "off":
            raise InvalidParams(
                "scope.kind 'operator' needs [agent_memory] operator_scope = \"provisional\" "
                "(operator scopes are read only then)"
            )

    def update(self, p: UpdateParams) -> tuple[Record, str]:
        self._writable(p.scope)
        store = self.store(p.realm)
        scope = p.scope
        prior = store.get(p.memory_id)
        if prior is None or prior.scope != scope or prior.status in (Status.TOMBSTONED, Status.QUARANTINED):
            raise InvalidParams(f"record '{p.memory_id}' does not belong to the requested scope")
        tags = p.tags if p.tags is not None else prior.tags
        record = self._new_record(scope, p.title, p.body, tags, APPLICATION, supersedes=prior.id)
        expires = p.expiry.resolve(record.created_at_ms) if p.expiry is not None else prior.expires_at_ms
        if expires is not None:
            record = replace(record, expires_at_ms=expires)
        result = store.commit(WriteBatch(p.realm, APPLICATION, (CreateOp(record),)))
        self._announce(RECORD_UPDATED_EVENT, scope, result.records[0].id, supersedes=prior.id)
        return result.records[0], prior.id

    def forget(self, p: ForgetParams) -> tuple[str, bool]:
        deleted = self.store(p.realm).forget(p.scope, p.memory_id, APPLICATION)
        if deleted:
            self._announce(RECORD_FORGOTTEN_EVENT, p.scope, p.memory_id)
        return p.memory_id, deleted

    def purge(self, p: PurgeParams, *, by: dict[str, Any]) -> PurgeReceipt:
        """Erase a record's lineage, or everything of an identity, in the realm (memory/purge.py).
        ``by``: who asked (kept in the receipt). The timeline gets the receipt's id and count,
        never an id of what was purged.

        Raises:
            UnknownRecord: one of ``p.memory_ids`` is not a record of the identity's scope.
            PurgeIncomplete: the rows are gone but a copy the backend keeps is not yet.
        """
        store = self.existing_store(p.realm)
        if store is None:  # a purge never creates a realm: nothing of anyone's is there
            if p.memory_ids is not None:
                raise UnknownRecord(p.memory_ids[0])
            return PurgeReceipt(None, p.realm, p.identity, None, self.clock.now_ms(), dict(by), ())
        receipt = store.purge(PurgeTarget(p.identity, p.memory_ids), by)
        self.events.emit(
            PURGED_EVENT,
            {"realm": p.realm, "receipt_id": receipt.receipt_id, "records": len(receipt.records)},
            identity=SYSTEM_IDENTITY,
        )
        return receipt

    def scopes_of(
        self,
        store: RealmStore,
        identity: str,
        *,
        kinds: Collection[str] | None = None,
        visible: Callable[[Scope], bool] | None = None,
    ) -> tuple[Scope, ...]:
        """The scopes ``identity`` reads in ``store``'s realm: its own, then the shared ones it may
        read (scopes.py), narrowed to ``kinds``, and to what ``visible`` lets a console caller
        see."""
        realm = store.realm
        operator_keys = store.scope_keys(ScopeKind.OPERATOR) if self.shared.reads_operator_scope else ()
        shared = self.shared.shared_scopes(realm, identity, operator_keys)
        scopes = reading_scopes(Scope.identity(realm, identity), shared, kinds)
        return scopes if visible is None else tuple(s for s in scopes if visible(s))

    def recall(self, p: RecallParams, *, visible: Callable[[Scope], bool] | None = None) -> Recalled:
        """Explicit recall over the identity's scopes: provider errors reach the caller.
        ``visible``: the scopes a console caller may read (the access rules)."""
        store = self.store(p.realm)
        query = RecallQuery(
            scopes=self.scopes_of(store, p.identity, kinds=p.scope_kinds, visible=visible),
            selection=p.selection,
            query_text=p.query_text,
            query_terms=p.query_terms,
            max_entries=p.max_entries,
            tags=p.tags,
            now_ms=self.clock.now_ms(),
        )
        if not query.scopes:
            return Recalled([], None)
        if p.wait_for_vectors and p.selection == "contextual":
            behind = self._vectors_behind(store, True)
            scored = recall_scored(self.provider, store, query)
        else:  # whether the vectors were behind, read with them
            scored, behind = recall_reporting(self.provider, store, query)
        if p.min_score is not None:
            # Scores never rise down the list: the first below the bound ends it.
            bound = p.min_score
            scored = list(itertools.takewhile(lambda hit: (hit[1] or 0.0) >= bound, scored))
        store.mark_recalled((r.id for r, _ in scored), self.clock.now_ms())
        return Recalled(scored, behind)

    def _vectors_behind(self, store: RealmStore, wait: bool) -> bool | None:
        """Whether the provider's vectors miss records acknowledged before now (``None``: it ranks
        without vectors); ``wait`` first gives them up to ``recall_timeout_ms`` to catch up."""
        probe = getattr(self.provider, "vectors_behind", None)
        if probe is None:
            return None
        wait_s = self.config.recall_timeout_ms / 1000 if wait else 0.0
        behind: bool | None = probe(store, wait_s)
        return behind

    def list_records(self, p: ListParams, *, gate: RecordGate | None = None) -> RecordListing:
        """One keyset page of records by filter, newest updated first. ``gate``: what the caller
        may read (the console); a realm without a store lists nothing (none is created).

        Raises:
            AccessDenied: ``gate`` refuses the identity ``p`` names.
        """
        now = self.clock.now_ms()
        return manage.list_page(
            self.existing_store(p.realm), replace(p, where=replace(p.where, now_ms=now)), gate, now
        )

    def get_record(self, p: GetParams, *, gate: RecordGate | None = None) -> RecordLookup:
        """One record by id, with the id of its current successor.

        Raises:
            UnknownRecord: no such record (in the identity's scope, when ``p`` names one).
            AccessDenied: ``gate`` may not read it.
        """
        return manage.get(self.existing_store(p.realm), p, gate, self.clock.now_ms())

    def record_history(self, p: GetParams, *, gate: RecordGate | None = None) -> RecordHistory:
        """A record's lineage, oldest first, each version with the reason it ended.

        Raises:
            UnknownRecord: no such record (in the identity's scope, when ``p`` names one).
            AccessDenied: ``gate`` may not read the record's scope.
        """
        return manage.history(self.existing_store(p.realm), p, gate, self.clock.now_ms())

    def existing_store(self, realm: str) -> RealmStore | None:
        """The realm's store when it has one; a read never creates a realm."""
        if realm in self._stores or self.has_realm(realm):
            return self.store(realm)
        return None

    # -- LLM-authored writes (the recorder tool) -------------------------------------------
    #
    # The caller (a host session) has already asked the write gate: ``quarantine_reason`` is
    # its verdict. Authorship is the agent itself, the scope its own identity, the tier
    # ``agent_observed`` at most; the store validator enforces all three again.

    def agent_remember(self, draft: AgentDraft, *, quarantine_reason: str | None) -> tuple[Record, bool]:
        """Store an agent's own observation. Returns (record, deduplicated)."""
        author = Author("agent", identity=draft.identity)
        record = self._draft_record(
            draft, Scope.identity(draft.realm, draft.identity), author, quarantine_reason
        )
        result = self.store(draft.realm).commit(
            WriteBatch(draft.realm, author, (CreateOp(record),)), dedup=True
        )
        return result.records[0], result.deduplicated

    def agent_update(self, draft: AgentDraft, memory_id: str, *, quarantine_reason: str | None) -> Record:
        """Supersede ``memory_id`` within the agent's own lineage. A quarantined update leaves
        the prior version active until review."""
        author = Author("agent", identity=draft.identity)
        store = self.store(draft.realm)
        scope = Scope.identity(draft.realm, draft.identity)
        prior = store.get(memory_id)
        if prior is None or prior.scope != scope:
            raise WriteRefused(
                "unknown-record", f"record '{memory_id}' does not belong to the requested scope"
            )
        record = self._draft_record(draft, scope, author, quarantine_reason, supersedes=memory_id)
        return store.commit(WriteBatch(draft.realm, author, (CreateOp(record),))).records[0]

    def _draft_record(
        self,
        draft: AgentDraft,
        scope: Scope,
        author: Author,
        quarantine_reason: str | None,
        *,
        supersedes: str | None = None,
    ) -> Record:
        """The record an agent's draft becomes: quarantined when the write gate gave a reason."""
        return self._new_record(
            scope,
            draft.title,
            draft.body,
            draft.tags,
            author,
            supersedes=supersedes,
            kind=draft.kind,
            description=draft.description,
            verification=draft.verification,
            evidence=draft.evidence,
            status=Status.QUARANTINED if quarantine_reason else Status.ACTIVE,
            quarantine_reason=quarantine_reason,
        )

    def agent_forget(self, identity: str, realm: str, memory_id: str) -> bool:
        return self.store(realm).forget(
            Scope.identity(realm, identity), memory_id, Author("agent", identity=identity)
        )

    def recall_for(
        self, identity: str, realm: str, query_text: str | None, max_entries: int
    ) -> list[tuple[Record, float | None]]:
        """Explicit recall on behalf of an agent over its scopes (contextual with text, newest
        without), each record with its score (``None`` for the newest)."""
        store = self.store(realm)
        query = RecallQuery(
            scopes=self.scopes_of(store, identity),
            selection="contextual" if query_text else "always",
            query_text=query_text,
            query_terms=(),
            max_entries=max(1, min(max_entries, MAX_ENTRIES_LIMIT)),
            now_ms=self.clock.now_ms(),
        )
        scored = recall_scored(self.provider, store, query)
        store.mark_recalled((r.id for r, _ in scored), self.clock.now_ms())
        return scored

    def propose(self, draft: AgentDraft, mob: str, *, tainted: bool) -> str:
        """Queue a proposal for mob scope; a steward or operator commits it later."""
        validate_fields(draft.title, draft.description, draft.body, draft.tags)
        # The proposal row keeps no provenance, but a secret in the claim is refused all the same.
        validate_provenance(
            Provenance(Author("agent", identity=draft.identity), verification=draft.verification)
        )
        now = self.clock.now_ms()
        # Unique per process like a memory id: two agents (or one retrying) may propose the same
        # content within one millisecond, and each proposal is its own pending row.
        proposal_id = "prop-" + new_memory_id(content_hash(draft.title, draft.body), now).removeprefix("mem-")
        self.store(draft.realm).create_proposal(
            proposal_id=proposal_id,
            scope=Scope(ScopeKind.MOB, draft.realm, mob),
            kind=draft.kind.value,
            title=draft.title,
            description=draft.description,
            body=draft.body,
            tags=draft.tags,
            author=Author("agent", identity=draft.identity),
            tainted=tainted,
        )
        return proposal_id

    def _new_record(
        self,
        scope: Scope,
        title: str,
        body: str,
        tags: tuple[str, ...],
        author: Author,
        *,
        supersedes: str | None = None,
        kind: RecordKind = RecordKind.FACT,
        description: str = "",
        status: Status = Status.ACTIVE,
        quarantine_reason: str | None = None,
        verification: VerificationClaim | None = None,
        evidence: tuple[Evidence, ...] = (),
    ) -> Record:
        now = self.clock.now_ms()
        digest = content_hash(title, body)
        return Record(
            id=new_memory_id(digest, now),
            scope=scope,
            kind=kind,
            title=title,
            description=description,
            body=body,
            tags=tags,
            provenance=Provenance(author=author, evidence=evidence, verification=verification),
            trust=Trust.AGENT_OBSERVED,
            status=status,
            quarantine_reason=quarantine_reason,
            created_at_ms=now,
            updated_at_ms=now,
            content_hash=digest,
            supersedes=supersedes,
        )

    # -- injection ---------------------------------------------------------------------

    def assemble(
        self,
        *,
        identity: str,
        realm: str | None,
        budget: SessionInjectionBudget,
        nonce: str,
        surface: str,
        session_key: str | None,
        query_text: str | None,
        query_terms: tuple[str, ...] = (),
        selection: str | None = None,
        started: float | None = None,
    ) -> InjectionResult:
        """Automatic injection for a build or a turn, bounded by ``recall_timeout_ms``.

        With ``recall_failure_policy = "skip"`` a slow or failing provider yields no block
        (and a logged warning); with ``"fail"`` the error propagates. Recording what was
        injected gets what is left of the budget (at least a few milliseconds) and otherwise
        finishes in the background: a store that has become slow never holds the turn.
        """
        realm = realm or self.config.realm
        query = RecallQuery(
            scopes=(),  # the identity's scopes, found on the pool's thread (they read the store)
            selection=selection or self.config.selection,
            query_text=query_text,
            query_terms=query_terms,
            max_entries=self.config.max_entries,
            lexical_fallback=True,
            now_ms=self.clock.now_ms(),
        )
        budget_s = self.config.recall_timeout_ms / 1000
        # ``started``: when the caller's turn began (time.monotonic()), if finding its session
        # already spent some of the budget.
        started = time.monotonic() if started is None else started
        budget_s = max(0.0, budget_s - (time.monotonic() - started))
        try:
            future = self._pool.submit(self._recall_in, realm, identity, query, surface == "build")
            store, records, manifest = future.result(timeout=budget_s)
        except (FutureTimeout, MetaError, OSError) as exc:
            if self.config.recall_failure_policy == "fail":
                if isinstance(exc, FutureTimeout):
                    raise MetaError(
                        f"agent memory recall timed out after {self.config.recall_timeout_ms} ms"
                    ) from None
                raise
            log.warning("agent memory recall skipped for %s (%s): %s", identity, surface, exc or "timeout")
            return InjectionResult(None, ())
        rendered = budget.assemble(
            [_injectable(r) for r in records],
            identity=identity,
            realm=realm,
            header=self.config.instruction_header,
            nonce=nonce,
            now_ms=self.clock.now_ms(),
            labels=self.config.defang_inbound,
        )
        if rendered is None:
            return InjectionResult(None, ())
        text = rendered.text
        if manifest:
            listed = render_manifest(
                manifest,
                header=self.config.instruction_header,
                now_ms=self.clock.now_ms(),
                weights=SCOPE_WEIGHTS,
                skip_ids=budget.injected_ids,
            )
            budget.charge(len(listed.encode("utf-8")))
            text += listed
        now = self.clock.now_ms()
        rows = [InjectionRow(i, identity, session_key, surface, now) for i in rendered.injected_ids]
        left_s = max(_MIN_RECORDING_S, budget_s - (time.monotonic() - started))
        recording = self._pool.submit(_record_injections, store, rows)
        try:
            recording.result(timeout=left_s)
        except FutureTimeout:
            log.info("recording %d injection(s) for %s continues in the background", len(rows), identity)
        return InjectionResult(text, tuple(rendered.injected_ids))

    def within_budget(self, call: Callable[[], T], timeout_s: float | None = None) -> T:
        """``call()`` on the recall pool, waited for at most ``timeout_s`` (default:
        ``recall_timeout_ms``, as automatic recall is).

        Raises:
            concurrent.futures.TimeoutError: it did not finish in time (it goes on in the
                background); whatever ``call`` raised, otherwise.
        """
        timeout = self.config.recall_timeout_ms / 1000 if timeout_s is None else timeout_s
        return self._pool.submit(call).result(timeout=timeout)

    def _recall_in(
        self, realm: str, identity: str, query: RecallQuery, manifest: bool
    ) -> tuple[RealmStore, list[Record], dict[str, list[InjectableRecord]]]:
        """The injection's reads: the identity's scopes, the ranking over them, and for a build the
        manifest's candidates (each scope's newest records, by scope kind)."""
        store = self.store(realm)  # opening a realm may itself wait on the store
        scopes = self.scopes_of(store, identity)
        records = self.provider.recall(store, replace(query, scopes=scopes))
        listed: dict[str, list[InjectableRecord]] = {}
        if manifest:
            for scope in scopes:
                newest = store.newest_active([scope], MANIFEST_PER_SCOPE)
                listed.setdefault(scope.kind.value, []).extend(
                    _injectable(r) for r in newest if query.live(r)
                )
        return store, records, listed

    def defang(self, text: str) -> str:
        if not self.config.defang_inbound:
            return text
        return defang_inbound(text, self.config.instruction_header)

    @staticmethod
    def new_nonce() -> str:
        return new_nonce()


def _record_injections(store: RealmStore, rows: list[InjectionRow]) -> None:
    """Statistics of what the agent saw: a failure is logged, never raised into a turn."""
    try:
        store.record_injections(rows)
    except (MetaError, OSError) as exc:
        log.warning("recording %d injection(s) failed: %s", len(rows), exc)


def _injectable(record: Record) -> InjectableRecord:
    return InjectableRecord(
        memory_id=record.id,
        title=record.title,
        body=record.body,
        scope_kind=record.scope.kind.value,
        scope_key=record.scope.key,
        trust=record.trust.value,
        updated_at_ms=record.updated_at_ms,
        created_at_ms=record.created_at_ms,
    )
