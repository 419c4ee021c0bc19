"""Host sessions: one small object per identity-first session of a host's own agent loop.

A host (raw OpenAI / Anthropic tool calling, LangGraph, PydanticAI, ... in any language over
JSON-RPC) opens a session for an identity, asks for the build-time memory block, wraps each
user message, reports every tool result before the LLM request that consumes it, and hands
the LLM's ``memory`` tool calls to :meth:`SessionManager.memory_tool`. Reporting a result
marks taint synchronously, so a write issued right after the first untrusted ingestion
already sees it: the gate reads the same tracker the report wrote.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from .config import AgentMemoryConfig
from .errors import CapabilityUnavailable, InvalidParams, MetaError
from .events import EventSink
from .memory.injection import SessionInjectionBudget, turn_text
from .memory.params import parse_identity, parse_optional_name, parse_realm
from .memory.records import Author, Evidence, VerificationClaim
from .memory.service import AgentDraft, AgentMemory, InjectionResult
from .recorder import ToolArgumentError, ToolCall, parse_memory_tool_arguments
from .trust import ContentTrustPolicy, TaintTracker, ToolProvenance, WriteGate, classify, emit_quarantined

__all__ = [
    "HostSession",
    "MemoryToolParams",
    "OpenSessionParams",
    "SessionManager",
    "SessionRef",
    "ToolOutcome",
    "ToolResultParams",
    "TurnParams",
    "parse_memory_tool",
    "parse_open",
    "parse_session_ref",
    "parse_tool_result",
    "parse_turn",
    "unknown_session",
]

log = logging.getLogger("meta_memory.sessions")

_MAX_OPEN_SESSIONS = 4096


@dataclass
class HostSession:
    key: str
    identity: str
    realm: str
    mob: str | None
    nonce: str
    # The authenticated subject that opened it over HTTP (None on the trusted channels): only
    # that subject may drive it.
    owner: str | None = None
    budget: SessionInjectionBudget = field(default_factory=SessionInjectionBudget)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)


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


@dataclass(frozen=True)
class OpenSessionParams:
    identity: str
    realm: str
    mob: str | None


@dataclass(frozen=True)
class SessionRef:
    """A call naming one open session (``build_context``, ``reset``, ``compact``, ``close``)."""

    session_key: str


@dataclass(frozen=True)
class TurnParams:
    session_key: str
    message: str


@dataclass(frozen=True)
class ToolResultParams:
    """A tool result to classify: for ``session_key``'s session, or, before the host has one,
    for ``identity`` (held as pending taint)."""

    tool_name: str
    provenance: ToolProvenance | None
    server_tool: bool
    is_error: bool
    session_key: str | None
    identity: str | None


@dataclass(frozen=True)
class MemoryToolParams:
    """The LLM's ``memory`` tool call: its ``arguments`` are the tool's to judge (a bad one is a
    tool error the LLM reads, not a JSON-RPC error)."""

    session_key: str
    arguments: Any


def _session_key(p: dict[str, Any]) -> str:
    key = p.get("session_key")
    if not isinstance(key, str) or not key:
        raise InvalidParams("session_key must be a non-empty string")
    return key


def parse_open(params: Any, *, default_realm: str) -> OpenSessionParams:
    p = _obj(params)
    return OpenSessionParams(
        parse_identity(p), parse_realm(p) or default_realm, parse_optional_name(p, "mob")
    )


def parse_session_ref(params: Any) -> SessionRef:
    return SessionRef(_session_key(_obj(params)))


def parse_turn(params: Any) -> TurnParams:
    p = _obj(params)
    key = _session_key(p)
    message = p.get("message")
    if not isinstance(message, str):
        raise InvalidParams("message must be a string")
    return TurnParams(key, message)


def parse_tool_result(params: Any) -> ToolResultParams:
    p = _obj(params)
    tool_name = p.get("tool_name")
    if not isinstance(tool_name, str) or not tool_name.strip():
        raise InvalidParams("tool_name must be a non-empty string")
    provenance = _provenance(p.get("provenance"))
    server_tool = _flag(p, "server_tool")
    is_error = _flag(p, "is_error")
    if "session_key" in p:
        return ToolResultParams(tool_name, provenance, server_tool, is_error, _session_key(p), None)
    # Ingestion before the host has a session: identity-level pending taint.
    return ToolResultParams(tool_name, provenance, server_tool, is_error, None, parse_identity(p))


def parse_memory_tool(params: Any) -> MemoryToolParams:
    p = _obj(params)
    return MemoryToolParams(_session_key(p), p.get("arguments"))


def unknown_session(key: str) -> InvalidParams:
    """The refusal for a key that names no session this caller may drive (the same whether it
    was never opened or is another caller's, so it tells nothing of other callers' sessions)."""
    return InvalidParams(f"unknown session_key '{key}' (closed, reset, or never opened)")


def _new_key() -> str:
    return f"sess-{secrets.token_hex(12)}"


class SessionManager:
    """Open host sessions of one runtime (thread-safe)."""

    def __init__(self, memory: AgentMemory, config: AgentMemoryConfig, events: EventSink) -> None:
        self.memory = memory
        self.config = config
        self.events = events
        self.policy = ContentTrustPolicy.from_config(config.content_trust)
        self.tracker = TaintTracker(events)
        self.gate = WriteGate(self.tracker, events, llm_writes=config.llm_writes)
        self._sessions: OrderedDict[str, HostSession] = OrderedDict()  # least recently used first
        self._lock = threading.Lock()

    # -- lifecycle ---------------------------------------------------------------------

    def open(self, p: OpenSessionParams, *, owner: str | None = None) -> HostSession:
        return self._start(p.identity, p.realm, p.mob, owner)

    def _start(self, identity: str, realm: str, mob: str | None, owner: str | None = None) -> HostSession:
        session = HostSession(_new_key(), identity, realm, mob, self.memory.new_nonce(), owner)
        self._admit(session)
        self.tracker.begin_session(identity, session.key)
        return session

    def _admit(self, session: HostSession) -> None:
        """Register ``session``; past the cap the least recently used one is closed.

        Hosts that never close sessions must not exhaust the runtime, and refusing new
        sessions would fail live agents instead of idle ones. Taint facts of an evicted
        session stay with the tracker (writes citing it as evidence still see them).
        """
        with self._lock:
            self._sessions[session.key] = session
            evicted = (
                self._sessions.popitem(last=False)[1] if len(self._sessions) > _MAX_OPEN_SESSIONS else None
            )
        if evicted is not None:
            log.info(
                "closed idle session %s of %s: more than %d open",
                evicted.key,
                evicted.identity,
                _MAX_OPEN_SESSIONS,
            )
            self.tracker.end_session(evicted.key)

    def peek(self, key: Any) -> HostSession | None:
        """The open session ``key`` names, without making it the most recently used."""
        if not isinstance(key, str):
            return None
        with self._lock:
            return self._sessions.get(key)

    def get(self, key: str) -> HostSession:
        """The open session ``key`` names (now the most recently used).

        Raises:
            InvalidParams: no such session is open.
        """
        with self._lock:
            session = self._sessions.get(key)
            if session is not None:
                self._sessions.move_to_end(key)
        if session is None:
            raise unknown_session(key)
        return session

    def reset(self, p: SessionRef) -> HostSession:
        """A fresh context: a new clean session; the old one becomes a reset boundary."""
        old = self.get(p.session_key)
        with self._lock:
            self._sessions.pop(old.key, None)
        new = HostSession(_new_key(), old.identity, old.realm, old.mob, self.memory.new_nonce(), old.owner)
        self._admit(new)
        self.tracker.reset(old.identity, old.key, new.key)
        return new

    def compact(self, p: SessionRef) -> HostSession:
        """The host compacted its context: injected bodies may be gone, so the budget and
        de-duplication restart. Taint does not clear."""
        session = self.get(p.session_key)
        with session.lock:
            session.budget.compact()
        return session

    def close(self, p: SessionRef) -> None:
        session = self.get(p.session_key)
        with self._lock:
            self._sessions.pop(session.key, None)
        self.tracker.end_session(session.key)

    # -- context -------------------------------------------------------------------------

    def build_context(self, p: SessionRef) -> InjectionResult:
        session = self.get(p.session_key)
        with session.lock:
            return self.memory.assemble(
                identity=session.identity,
                realm=session.realm,
                budget=session.budget,
                nonce=session.nonce,
                surface="build",
                session_key=None,
                query_text=None,
                # A new context has no message to match yet: it starts with the identity's
                # newest memory (the turn blocks that follow are contextual).
                selection="always",
            )

    def turn(self, p: TurnParams) -> tuple[str, InjectionResult]:
        session = self.get(p.session_key)
        message = p.message
        if self.config.per_turn_injection == "off":
            return turn_text(None, self.memory.defang(message)), InjectionResult(None, ())
        with session.lock:
            result = self.memory.assemble(
                identity=session.identity,
                realm=session.realm,
                budget=session.budget,
                nonce=session.nonce,
                surface="turn",
                session_key=session.key,
                query_text=message if message.strip() else None,
            )
        return turn_text(result.text, self.memory.defang(message)), result

    # -- tool results and the firewall ------------------------------------------------------

    def tool_result(self, p: ToolResultParams) -> dict[str, bool]:
        """Classify a tool result the host is about to hand to the LLM, and taint on untrusted.
        (``is_error`` changes nothing: an error from an untrusted tool is still untrusted content.)"""
        verdict = classify(self.policy, p.tool_name, p.provenance, server_tool=p.server_tool)
        if p.session_key is not None:
            session = self.get(p.session_key)
            identity, key = session.identity, session.key
        else:
            assert p.identity is not None
            identity, key = p.identity, None
        tainted = False
        if not verdict.trusted:
            tainted = self.tracker.mark_untrusted(identity, key, verdict.source)
        elif key is not None:
            tainted = self.tracker.taint_of(key) is not None
        return {"trusted": verdict.trusted, "tainted": tainted}

    def memory_tool(self, p: MemoryToolParams) -> ToolOutcome:
        """Run one ``memory`` tool call an LLM made. Bad arguments come back as a tool error."""
        if not self.config.recorder_tool:
            raise CapabilityUnavailable(
                "the memory recorder tool is disabled (agent_memory.recorder_tool = false)"
            )
        session = self.get(p.session_key)
        try:
            call = parse_memory_tool_arguments(p.arguments)
            return self._run(session, call)
        except ToolArgumentError as exc:
            return ToolOutcome(str(exc), True, "none")
        except MetaError as exc:
            if isinstance(exc, CapabilityUnavailable):
                raise
            return ToolOutcome(exc.message, True, "none")

    def _run(self, session: HostSession, call: ToolCall) -> ToolOutcome:
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
                }
                for r in records
            ]
            return ToolOutcome(json.dumps(payload, ensure_ascii=False), False, "none")
        if call.action == "forget":
            assert call.memory_id is not None
            # A forget cannot be quarantined like a write, and a planted "forget the deploy
            # policy" must not erase memory unreviewed: under the posture that would quarantine
            # a write from this session, the forget is refused instead.
            held = self.gate.quarantine_reason(
                author=Author("agent", identity=session.identity), session_key=session.key
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
            tainted = self.tracker.taint_of(session.key) is not None
            proposal_id = self.memory.propose(draft, session.mob, tainted=tainted)
            return ToolOutcome(
                f"Proposed to mob {session.mob} as {proposal_id}; a steward or operator must commit it.",
                False,
                "none",
            )
        author = Author("agent", identity=session.identity)
        # The verdict is taken before the write; the event is emitted only once a quarantined
        # record really landed (not for a refused write, nor for a de-duplicated one).
        reason = self.gate.quarantine_reason(author=author, session_key=session.key)
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

    def _draft(self, session: HostSession, call: ToolCall) -> AgentDraft:
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


def _obj(params: Any) -> dict[str, Any]:
    if not isinstance(params, dict):
        raise InvalidParams("params must be a JSON object")
    return params


def _flag(p: dict[str, Any], name: str) -> bool:
    value = p.get(name, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise InvalidParams(f"{name} must be a boolean when provided")
    return value


def _provenance(value: Any) -> ToolProvenance | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InvalidParams("provenance must be an object {kind, source_id} when provided")
    kind, source_id = value.get("kind"), value.get("source_id")
    if not isinstance(kind, str) or not kind.strip():
        raise InvalidParams("provenance.kind must be a non-empty string")
    if source_id is not None and not isinstance(source_id, str):
        raise InvalidParams("provenance.source_id must be a string when provided")
    unknown = sorted(set(value) - {"kind", "source_id"})
    if unknown:
        raise InvalidParams(f"unsupported provenance fields: {', '.join(unknown)}")
    return ToolProvenance(kind=kind, source_id=source_id)
