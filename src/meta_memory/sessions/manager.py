"""Host sessions: the ``meta/session/*`` calls of a host's own agent loop, over sessions the realm
store keeps.

A host (raw OpenAI / Anthropic tool calling, LangGraph, PydanticAI, ... in any language over
JSON-RPC) opens a session for an identity, asks for the build-time memory block, wraps each user
message, reports every tool result before the LLM request that consumes it, delivers peer messages,
and hands the LLM's ``memory`` tool calls to :meth:`SessionManager.memory_tool`. A session is a
row of its realm's store (:class:`~meta_memory.memory.rows.SessionRow`), read on every call and
changed in a session transaction, so it survives a restart or a crash and every gateway of a
PostgreSQL deployment serves it; a gateway keeps no session of its own. Reporting a result marks
taint durably before the call returns, so a write issued right after the first untrusted ingestion,
on any gateway, already sees it.

A session ends when the host closes or resets it, or when it has had no call for
``agent_memory.session_idle_timeout_s``; a call on an ended or unknown key is refused
(:class:`~meta_memory.errors.SessionRefused`), never served as a clean session. Ended sessions are
deleted a while later; their taint does not depend on it (an expired tainted session's taint is
held for the identity's next session, and an LLM write citing a session the store no longer
knows quarantines).
"""

from __future__ import annotations

import json
import logging
import time
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, replace
from typing import Any

from ..clock import Clock
from ..config import AgentMemoryConfig
from ..errors import CapabilityUnavailable, InvalidParams, MetaError, SessionRefused, StorageRefused
from ..events import EventSink
from ..memory.injection import SessionInjectionBudget, turn_text
from ..memory.records import Author, Evidence, VerificationClaim
from ..memory.rows import SessionRow
from ..memory.service import AgentDraft, AgentMemory, InjectionResult
from ..memory.store import RealmStore
from ..recorder import ToolArgumentError, ToolCall, parse_memory_tool_arguments
from ..trust import ContentTrustPolicy, SessionTaint, TaintChange, WriteGate, classify, emit_quarantined
from .keys import new_session_key, realm_of_key
from .params import (
    CloseParams,
    MemoryToolParams,
    OpenSessionParams,
    PeerMessageParams,
    SessionRef,
    ToolResultParams,
    TurnParams,
)

__all__ = [
    "TRUSTED",
    "Caller",
    "HostSession",
    "SessionClosed",
    "SessionManager",
    "ToolOutcome",
    "unknown_session",
]

log = logging.getLogger("meta_memory.sessions")

# A session's last-seen time is written back at most this often (and at most an eighth of the
# idle timeout apart), so most calls only read their session.
_TOUCH_GAP_MS = 60_000
# Ended sessions are kept at least this long (a call on one is told why it ended), then deleted.
_ENDED_RETENTION_MS = 7 * 24 * 3600 * 1000
# How many idle or long-ended sessions one sweep ends or deletes, at most, and how often a
# gateway sweeps a realm (at the first open after the gap): a sweep is upkeep, not a guard, since
# every call checks its own session's expiry.
_SWEEP_BATCH = 64
_SWEEP_GAP_MS = 60_000
# A turn waits at least this long for its injection budget to be charged.
_MIN_CHARGE_WAIT_S = 0.05


@dataclass(frozen=True)
class Caller:
    """Who drives a session: over HTTP the authenticated subject (``None``: anonymous), which
    must be the one that opened it; the trusted channels (stdio, in process) drive any session."""

    remote: bool
    subject: str | None = None

    def may_drive(self, row: SessionRow) -> bool:
        return not self.remote or row.owner == self.subject


TRUSTED = Caller(remote=False)


@dataclass(frozen=True)
class HostSession:
    """An open session as a call found it: its realm and its row."""

    realm: str
    row: SessionRow

    @property
    def key(self) -> str:
        return self.row.key

    @property
    def identity(self) -> str:
        return self.row.identity


@dataclass(frozen=True)
class _Writer:
    """What a ``memory`` tool call needs of its session: who writes, where, and the taint the
    write carries (the session's own, or its identity's pending taint)."""

    key: str
    identity: str
    realm: str
    mob: str | None
    write_taint: str | None


@dataclass(frozen=True)
class SessionClosed:
    """What closing a session did beyond ending it. ``harvest``: ``None`` (no retirement cause),
    ``queued`` (an exit interview waits for the steward's next dream) or ``steward_disabled``
    (nothing was queued: the steward is off)."""

    harvest: str | None = None

    def to_wire(self) -> dict[str, Any]:
        return {"closed": True, "harvest": self.harvest}


@dataclass(frozen=True)
class ToolOutcome:
    """What a ``memory`` tool call returns to the LLM. ``outcome``: stored | quarantined | none.

    Tool results are an indexing-excluded message class: hosts must not feed them (confirmations
    or recalled records) back into any memory or semantic index.
    """

    content: str
    is_error: bool
    outcome: str

    def to_wire(self) -> dict[str, Any]:
        return {"content": self.content, "is_error": self.is_error, "outcome": self.outcome}


def unknown_session(key: str) -> SessionRefused:
    """The refusal for a key that names no session this caller may drive (the same whether it
    was never opened or is another caller's, so it tells nothing of other callers' sessions)."""
    return SessionRefused("unknown", f"unknown session_key '{key}' (never opened, or not this caller's)")


def _ended(row: SessionRow, timeout_s: int) -> SessionRefused:
    if row.ended == "reset":
        return SessionRefused(
            "reset", f"session_key '{row.key}' was reset: use the key meta/session/reset returned"
        )
    if row.ended == "expired":
        return SessionRefused(
            "expired",
            f"session_key '{row.key}' expired after more than {timeout_s} s without a call "
            "(agent_memory.session_idle_timeout_s): open a new session",
        )
    return SessionRefused("closed", f"session_key '{row.key}' was closed: open a new session")


class SessionManager:
    """The host-session calls of one runtime (thread-safe: every state change is a store
    transaction)."""

    def __init__(
        self, memory: AgentMemory, config: AgentMemoryConfig, events: EventSink, clock: Clock
    ) -> None:
        self.memory = memory
        self.config = config
        self.events = events
        self.clock = clock
        self.policy = ContentTrustPolicy.from_config(config.content_trust)
        self.taint = SessionTaint(events)
        self.gate = WriteGate(events, llm_writes=config.llm_writes)
        self._timeout_s = config.session_idle_timeout_s
        self._timeout_ms = config.session_idle_timeout_s * 1000
        self._touch_gap_ms = min(_TOUCH_GAP_MS, self._timeout_ms // 8)
        self._retention_ms = max(_ENDED_RETENTION_MS, self._timeout_ms)
        self._swept: dict[str, int] = {}  # realm -> when this gateway last swept it

    # -- finding a session -------------------------------------------------------------------

    def _find(self, key: str, caller: Caller) -> tuple[str, RealmStore, SessionRow]:
        """The session ``key`` names, whatever its state (the realm, its store and the row).

        Raises:
            SessionRefused: no such session, or not ``caller``'s (``unknown``).
        """
        realm = realm_of_key(key)
        store = self.memory.existing_store(realm) if realm is not None else None
        row = store.session(key) if store is not None else None
        if realm is None or store is None or row is None or not caller.may_drive(row):
            raise unknown_session(key)
        return realm, store, row

    def _live(self, key: str, caller: Caller) -> tuple[str, RealmStore, SessionRow]:
        """The open session ``key`` names, its last-seen time moved on.

        Raises:
            SessionRefused: unknown, not ``caller``'s, ended, or idle past the timeout (which
                ends it now).
        """
        realm, store, row = self._find(key, caller)
        if row.ended is not None:
            raise _ended(row, self._timeout_s)
        now = self.clock.now_ms()
        if now - row.seen_at_ms >= self._timeout_ms:
            with self.taint.changing(store) as change:
                current = change.session(key)
                if current is not None and current.is_open and now - current.seen_at_ms >= self._timeout_ms:
                    change.end(key, "expired")
                    current = change.session(key)
            if current is None or not current.is_open:
                raise _ended(current or replace(row, ended="expired"), self._timeout_s)
            row = current
        elif now - row.seen_at_ms >= self._touch_gap_ms:
            store.touch_session(key, now)
            row = replace(row, seen_at_ms=now)
        return realm, store, row

    def _sweep(self, change: TaintChange) -> None:
        """End sessions idle past the timeout, and delete sessions ended long ago (a few per
        open, so the store is bounded by how many sessions are live, not by how many ever were)."""
        now = self.clock.now_ms()
        # "Before" is strict: a session seen exactly the timeout ago has expired (as in _live).
        for row in change.txn.idle_sessions(now - self._timeout_ms + 1, _SWEEP_BATCH):
            change.end(row.key, "expired")
        change.txn.drop_ended(now - self._retention_ms + 1, _SWEEP_BATCH)

    # -- lifecycle ---------------------------------------------------------------------

    def open(self, p: OpenSessionParams, caller: Caller = TRUSTED) -> HostSession:
        """A fresh session for ``p.identity`` in ``p.realm``: clean, unless the identity holds
        pending taint (which it takes).

        Raises:
            InvalidParams: ``p.mob`` is not the mob the roster puts the identity in.
        """
        if p.mob is not None:
            member_of = self.memory.shared.mob_of(p.identity)
            if member_of != p.mob:
                where = f"in mob '{member_of}'" if member_of is not None else "in no mob"
                raise InvalidParams(
                    f"mob '{p.mob}': identity '{p.identity}' is not a member (the roster puts it {where})"
                )
        store = self.memory.store(p.realm)
        now = self.clock.now_ms()
        row = SessionRow(
            key=new_session_key(p.realm),
            identity=p.identity,
            mob=p.mob,
            owner=caller.subject if caller.remote else None,
            nonce=self.memory.new_nonce(),
            opened_at_ms=now,
            seen_at_ms=now,
        )
        with self.taint.changing(store) as change:
            if now - self._swept.get(p.realm, -_SWEEP_GAP_MS) >= _SWEEP_GAP_MS:
                self._swept[p.realm] = now
                self._sweep(change)
            row = change.begin(row)
        return HostSession(p.realm, row)

    def reset(self, p: SessionRef, caller: Caller = TRUSTED) -> HostSession:
        """A fresh context: a new clean session; the old one ends as a reset boundary."""
        realm, store, old = self._live(p.session_key, caller)
        now = self.clock.now_ms()
        new = replace(
            old,
            key=new_session_key(realm),
            nonce=self.memory.new_nonce(),
            opened_at_ms=now,
            seen_at_ms=now,
            taint=None,
            boundary=False,
            used_bytes=0,
            injected=(),
            epoch=0,
        )
        with self.taint.changing(store) as change:
            current = change.session(old.key)
            if current is None or not current.is_open:  # another call ended it meanwhile
                raise _ended(current or old, self._timeout_s)
            change.reset(current, new)
        return HostSession(realm, new)

    def compact(self, p: SessionRef, caller: Caller = TRUSTED) -> HostSession:
        """The host compacted its context: injected bodies may be gone, so the budget and
        de-duplication restart. Taint does not clear."""
        realm, store, row = self._live(p.session_key, caller)
        with store.session_txn() as txn:
            current = txn.session(row.key)
            if current is not None and current.is_open:
                row = replace(current, used_bytes=0, injected=(), epoch=current.epoch + 1)
                txn.put_session(row)
        return HostSession(realm, row)

    def close(self, p: SessionRef, caller: Caller = TRUSTED) -> SessionClosed:
        """End the session. With a retirement cause (:class:`CloseParams`) and the steward on
        (``[agent_memory.steward] enabled``), the end also queues an exit-interview harvest of the
        identity for the next dream, in the same transaction (one per session: the session ends
        once)."""
        _, store, row = self._live(p.session_key, caller)
        cause = p.cause if isinstance(p, CloseParams) else None
        harvest = None if cause is None else ("queued" if self.config.steward.enabled else "steward_disabled")
        with self.taint.changing(store) as change:
            if change.end(row.key, "closed") is None:  # another call ended it meanwhile
                raise _ended(change.session(row.key) or row, self._timeout_s)
            if harvest == "queued":
                assert cause is not None
                change.txn.add_harvest(row.identity, row.key, cause, self.clock.now_ms())
        return SessionClosed(harvest)

    # -- context -------------------------------------------------------------------------

    def build_context(self, p: SessionRef, caller: Caller = TRUSTED) -> InjectionResult:
        started = time.monotonic()
        found = self._live_in_time(p.session_key, caller)
        if found is None:
            return InjectionResult(None, ())
        # A new context has no message to match yet: it starts with the identity's newest
        # memory (the turn blocks that follow are contextual).
        return self._inject(*found, surface="build", query_text=None, selection="always", started=started)

    def turn(self, p: TurnParams, caller: Caller = TRUSTED) -> tuple[str, InjectionResult]:
        started = time.monotonic()
        message = p.message
        found = self._live_in_time(p.session_key, caller)
        if found is None or self.config.per_turn_injection == "off":
            return turn_text(None, self.memory.defang(message)), InjectionResult(None, ())
        query = message if message.strip() else None
        result = self._inject(*found, surface="turn", query_text=query, selection=None, started=started)
        return turn_text(result.text, self.memory.defang(message)), result

    def _live_in_time(self, key: str, caller: Caller) -> tuple[str, RealmStore, SessionRow] | None:
        """:meth:`_live` for an injection, within the turn's time budget (``recall_timeout_ms``):
        a store that cannot answer in time, or at all, costs the turn its memory block under
        ``recall_failure_policy = "skip"`` (a turn changes nothing, so serving it without the
        session's facts gives nothing away), and fails it under ``"fail"``. A key that names no
        session the caller may drive is refused either way.

        Raises:
            SessionRefused: the key names no open session of the caller's.
            StorageRefused, MetaError: the store failed, or was too slow, under ``"fail"``.
        """
        try:
            return self.memory.within_budget(lambda: self._live(key, caller))
        except SessionRefused:
            raise
        except (FutureTimeout, StorageRefused, OSError) as exc:
            if self.config.recall_failure_policy == "fail":
                if isinstance(exc, FutureTimeout):
                    raise MetaError(
                        f"finding the session timed out after {self.config.recall_timeout_ms} ms"
                    ) from None
                raise
            log.warning(
                "a session's memory block was skipped: its store did not answer (%s)", exc or "timeout"
            )
            return None

    def _inject(
        self,
        realm: str,
        store: RealmStore,
        row: SessionRow,
        *,
        surface: str,
        query_text: str | None,
        selection: str | None,
        started: float,
    ) -> InjectionResult:
        budget = SessionInjectionBudget.restored(row.injected, row.used_bytes)
        result = self.memory.assemble(
            identity=row.identity,
            realm=realm,
            budget=budget,
            nonce=row.nonce,
            surface=surface,
            session_key=row.key if surface == "turn" else None,
            query_text=query_text,
            selection=selection,
            started=started,
        )
        if result.injected:
            # Like the injection ledger's rows: what is left of the turn's budget (at least a few
            # milliseconds), then the charge finishes in the background.
            left_s = max(
                _MIN_CHARGE_WAIT_S, self.config.recall_timeout_ms / 1000 - (time.monotonic() - started)
            )
            used = budget.used_bytes - row.used_bytes
            try:
                self.memory.within_budget(lambda: self._charge(store, row, used, result.injected), left_s)
            except FutureTimeout:
                log.info("charging a session's injection budget continues in the background")
        return result

    def _charge(self, store: RealmStore, row: SessionRow, used: int, injected: tuple[str, ...]) -> None:
        """Add one assembly to the session's budget. Charges add up (two gateways assembling for
        one session at once both count); one made before a compaction is dropped. A failure is
        logged: the budget is accounting, never a reason to fail a turn."""
        try:
            with store.session_txn() as txn:
                current = txn.session(row.key)
                if current is None or not current.is_open or current.epoch != row.epoch:
                    return
                txn.put_session(
                    replace(
                        current,
                        used_bytes=current.used_bytes + used,
                        injected=tuple(dict.fromkeys((*current.injected, *injected))),
                    )
                )
        except (MetaError, OSError) as exc:
            log.warning("charging the injection budget of a session failed: %s", exc)

    # -- tool results, peer messages and the firewall ---------------------------------------

    def tool_result(self, p: ToolResultParams, caller: Caller = TRUSTED) -> dict[str, bool]:
        """Classify a tool result the host is about to hand to the LLM, and taint on untrusted.
        (``is_error`` changes nothing: an error from an untrusted tool is still untrusted content.)"""
        verdict = classify(self.policy, p.tool_name, p.provenance, server_tool=p.server_tool)
        if p.session_key is not None:
            _, store, row = self._live(p.session_key, caller)
            if verdict.trusted or row.taint is not None:  # taint is sticky: nothing to change
                return {"trusted": verdict.trusted, "tainted": row.taint is not None}
            with self.taint.changing(store) as change:
                tainted = change.mark_untrusted(row.identity, row.key, verdict.source)
            return {"trusted": False, "tainted": tainted}
        assert p.identity is not None and p.realm is not None
        if verdict.trusted:
            return {"trusted": True, "tainted": False}
        with self.taint.changing(self.memory.store(p.realm)) as change:
            tainted = change.mark_untrusted(p.identity, None, verdict.source)
        return {"trusted": False, "tainted": tainted}

    def peer_message(self, p: PeerMessageParams, caller: Caller = TRUSTED) -> dict[str, bool]:
        """The host delivered a message from another session into this one: a tainted sender
        taints the receiver, and so does a sender the store cannot vouch for (unknown, ended long
        ago, or not this caller's)."""
        _, store, row = self._live(p.session_key, caller)
        try:
            _, _, sender = self._find(p.sender_session_key, caller)
        except SessionRefused:
            sender = None
        with self.taint.changing(store) as change:
            tainted = change.mark_peer(row.key, p.sender_session_key, sender)
        return {"tainted": tainted}

    def memory_tool(self, p: MemoryToolParams, caller: Caller = TRUSTED) -> ToolOutcome:
        """Run one ``memory`` tool call an LLM made. Bad arguments come back as a tool error."""
        if not self.config.recorder_tool:
            raise CapabilityUnavailable(
                "the memory recorder tool is disabled (agent_memory.recorder_tool = false)"
            )
        realm, _, row = self._live(p.session_key, caller)
        try:
            call = parse_memory_tool_arguments(p.arguments)
            writer = _Writer(row.key, row.identity, realm, row.mob, SessionTaint.taint_for_write(row))
            return self._run(writer, call)
        except ToolArgumentError as exc:
            return ToolOutcome(str(exc), True, "none")
        except MetaError as exc:
            if isinstance(exc, CapabilityUnavailable | SessionRefused):
                raise
            return ToolOutcome(exc.message, True, "none")

    def _run(self, session: _Writer, call: ToolCall) -> ToolOutcome:
        if call.action == "recall":
            records = self.memory.recall_for(
                session.identity, session.realm, call.query_text, call.max_entries or self.config.max_entries
            )
            if not records:
                return ToolOutcome("No matching memory records.", False, "none")
            payload = [
                {
                    "memory_id": r.id,
                    "title": r.title,
                    "body": r.body,
                    "tags": list(r.tags),
                    "updated_at_ms": r.updated_at_ms,
                    "scope": r.scope.kind.value,  # the identity's own, or a scope it shares
                    "score": score,  # how well it matched the query, 0 to 1 (null: newest, no query)
                }
                for r, score in records
            ]
            return ToolOutcome(json.dumps(payload, ensure_ascii=False), False, "none")
        if call.action == "forget":
            assert call.memory_id is not None
            # A forget cannot be quarantined like a write, and a planted "forget the deploy
            # policy" must not erase memory unreviewed: under the posture that would quarantine
            # a write from this session, the forget is refused instead.
            held = self.gate.quarantine_reason(
                author=Author("agent", identity=session.identity), taint=session.write_taint
            )
            if held is not None:
                return ToolOutcome(
                    f"memory {call.memory_id} was not forgotten: {held}; deletions from this session need an "
                    "operator or the application (meta/agent_memory/forget)",
                    True,
                    "none",
                )
            if not self.memory.agent_forget(session.identity, session.realm, call.memory_id):
                return ToolOutcome(f"memory {call.memory_id} was not found in your scope", True, "none")
            return ToolOutcome(f"Forgot memory {call.memory_id}.", False, "none")
        draft = self._draft(session, call)
        if call.action == "propose_to_mob":
            if session.mob is None:
                return ToolOutcome(
                    "propose_to_mob needs a mob context; this session has no mob", True, "none"
                )
            if not self.memory.shared.may_propose(session.realm, session.identity, session.mob):
                return ToolOutcome(
                    f"access denied: mob.memory.propose: {session.identity} may not propose to mob {session.mob}",
                    True,
                    "none",
                )
            tainted = session.write_taint is not None
            proposal_id = self.memory.propose(draft, session.mob, tainted=tainted)
            return ToolOutcome(
                f"Proposed to mob {session.mob} as {proposal_id}; a steward or operator must commit it.",
                False,
                "none",
            )
        author = Author("agent", identity=session.identity)
        # The verdict is taken before the write; the event is emitted only once a quarantined
        # record really landed (not for a refused write, nor for a de-duplicated one).
        reason = self.gate.quarantine_reason(author=author, taint=session.write_taint)
        if call.action == "update":
            assert call.memory_id is not None
            record = self.memory.agent_update(draft, call.memory_id, quarantine_reason=reason)
            verb = f"Updated memory {call.memory_id} as {record.id}"
        else:
            record, deduplicated = self.memory.agent_remember(draft, quarantine_reason=reason)
            if deduplicated:
                return ToolOutcome(
                    f"Already remembered as {record.id}; nothing new was stored.", False, "stored"
                )
            verb = f"Stored memory {record.id}"
        if reason is not None:
            emit_quarantined(self.events, realm=session.realm, author=author, reason=reason)
            return ToolOutcome(
                f"{verb}, but it is QUARANTINED pending review ({reason}): it will not be recalled or "
                "injected until a reviewer releases it.",
                False,
                "quarantined",
            )
        return ToolOutcome(f"{verb}.", False, "stored")

    def _draft(self, session: _Writer, call: ToolCall) -> AgentDraft:
        assert call.title is not None and call.body is not None
        verification = None
        if call.epistemic == "verified_claim":
            verification = VerificationClaim(checked="agent", evidence=call.verification_evidence)
        return AgentDraft(
            identity=session.identity,
            realm=session.realm,
            title=call.title,
            body=call.body,
            tags=call.tags,
            description=call.description,
            kind=call.kind,
            verification=verification,
            evidence=(Evidence(session.key),),
        )
