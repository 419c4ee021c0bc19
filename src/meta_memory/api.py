"""The typed Python API, once, for every way of reaching a runtime.

Each operation is a function that builds a :class:`Call` (the wire method, its params, whether it
is an idempotent read, and how to read the result back into a typed value). :class:`MetaApi` binds
every operation as a method over one abstract ``_invoke``; the in-process handle
(:class:`~meta_memory.sdk.MetaHandle`) and the clients (:class:`~meta_memory.client.MetaClient`,
over HTTP or a child's stdio) implement it, and :class:`AsyncMetaApi` binds the same operations as
coroutines (:class:`~meta_memory.client.AsyncMetaClient`). So the names, arguments, results and
errors are the same whichever way a program reaches the gateway.

This module imports nothing of the runtime: a client process loads only it, the errors and httpx.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar

__all__ = [
    "AgentMemoryEntry",
    "AgentMemoryForgetResult",
    "AgentMemoryLookup",
    "AgentMemoryPage",
    "AgentMemoryRecord",
    "AgentMemoryUpdateResult",
    "AsyncConsole",
    "AsyncMetaApi",
    "AsyncSession",
    "Call",
    "Console",
    "MemoryIndexResult",
    "MemoryQueryResult",
    "MemoryStoreInfo",
    "MemoryToolResult",
    "MetaApi",
    "Session",
]

P = ParamSpec("P")
R = TypeVar("R")


@dataclass(frozen=True)
class Call(Generic[R]):
    """One JSON-RPC call: ``read`` turns its wire result into the typed value. ``idempotent``
    calls may be retried once after a connection error; writes never are."""

    method: str
    params: dict[str, Any] | None
    read: Callable[[Any], R]
    idempotent: bool = False
    surface: str = "sdk"


def _drop_none(**params: Any) -> dict[str, Any]:
    return {k: v for k, v in params.items() if v is not None}


def _as_is(result: Any) -> Any:
    return result


# -- results ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AgentMemoryRecord:
    memory_id: str
    title: str
    body: str
    tags: tuple[str, ...]
    created_at_ms: int
    updated_at_ms: int

    @classmethod
    def from_wire(cls, w: dict[str, Any]) -> AgentMemoryRecord:
        return cls(
            w["memory_id"], w["title"], w["body"], tuple(w["tags"]), w["created_at_ms"], w["updated_at_ms"]
        )


@dataclass(frozen=True)
class AgentMemoryEntry(AgentMemoryRecord):
    """A record as ``list`` and ``get`` show it: the record plus its place, lifecycle and lineage."""

    realm: str
    scope_kind: str
    scope_key: str | None
    kind: str
    description: str | None
    status: str
    quarantine_reason: str | None
    trust: str
    author: dict[str, Any]
    supersedes: str | None
    superseded_by: str | None
    derived_from: tuple[str, ...]
    ever_quarantined: bool
    content_hash: str

    @classmethod
    def from_wire(cls, w: dict[str, Any]) -> AgentMemoryEntry:
        return cls(
            w["memory_id"],
            w["title"],
            w["body"],
            tuple(w["tags"]),
            w["created_at_ms"],
            w["updated_at_ms"],
            w["realm"],
            w["scope_kind"],
            w.get("scope_key"),
            w["kind"],
            w.get("description"),
            w["status"],
            w.get("quarantine_reason"),
            w["trust"],
            dict(w["author"]),
            w.get("supersedes"),
            w.get("superseded_by"),
            tuple(w.get("derived_from") or ()),
            bool(w.get("ever_quarantined")),
            w["content_hash"],
        )


@dataclass(frozen=True)
class AgentMemoryPage:
    """One page of ``list``: pass ``next_cursor`` back as ``cursor`` for the next (``None``: done)."""

    realm: str
    records: tuple[AgentMemoryEntry, ...]
    next_cursor: str | None

    @classmethod
    def from_wire(cls, w: dict[str, Any]) -> AgentMemoryPage:
        return cls(w["realm"], tuple(AgentMemoryEntry.from_wire(r) for r in w["records"]), w["next_cursor"])


@dataclass(frozen=True)
class AgentMemoryLookup:
    """``get``: the record, and the id of its current successor when it was replaced or released."""

    realm: str
    record: AgentMemoryEntry
    successor: str | None

    @classmethod
    def from_wire(cls, w: dict[str, Any]) -> AgentMemoryLookup:
        return cls(w["realm"], AgentMemoryEntry.from_wire(w["record"]), w.get("successor"))


@dataclass(frozen=True)
class AgentMemoryForgetResult:
    memory_id: str
    deleted: bool


@dataclass(frozen=True)
class AgentMemoryUpdateResult:
    memory_id: str
    supersedes: str


@dataclass(frozen=True)
class MemoryIndexResult:
    entity: str
    topic: str
    store: str
    assertion_id: str | None
    conflict_active: bool


@dataclass(frozen=True)
class MemoryQueryResult:
    assertions: list[dict[str, Any]]
    conflicts: list[dict[str, Any]]


@dataclass(frozen=True)
class MemoryStoreInfo:
    store: str
    record_count: int


@dataclass(frozen=True)
class MemoryToolResult:
    content: str
    is_error: bool
    outcome: str  # "stored" | "quarantined" | "none"


# -- the operations (one builder per method; every surface binds these) ---------------------------


def memory_index(
    entity: str,
    topic: str,
    *,
    store: str | None = None,
    fact: str | None = None,
    metadata: dict[str, Any] | None = None,
    conflict: bool | None = None,
    conflict_reason: str | None = None,
) -> Call[MemoryIndexResult]:
    """Record a fact (or, with ``conflict=True``, a conflict signal) in the assertion ledger."""
    params = _drop_none(
        entity=entity,
        topic=topic,
        store=store,
        fact=fact,
        metadata=metadata,
        conflict=conflict,
        conflict_reason=conflict_reason,
    )
    return Call("meta/memory/index", params, lambda r: MemoryIndexResult(**r))


def memory_query(
    query: str | dict[str, Any] | None = None,
    *,
    entity: str | None = None,
    topic: str | None = None,
    store: str | None = None,
) -> Call[MemoryQueryResult]:
    """The ledger's assertions and conflict signals, filtered by ``query`` (substring) and keys."""
    params = dict(query) if isinstance(query, dict) else _drop_none(query=query)
    params.update(_drop_none(entity=entity, topic=topic, store=store))
    return Call("meta/memory/query", params, lambda r: MemoryQueryResult(**r), idempotent=True)


def memory_stores() -> Call[list[MemoryStoreInfo]]:
    """The ledger's stores and how many assertions each holds."""
    return Call(
        "meta/memory/stores", None, lambda r: [MemoryStoreInfo(**s) for s in r["stores"]], idempotent=True
    )


def remember_agent_memory(
    identity: str, *, title: str, body: str, tags: list[str] | None = None, realm: str | None = None
) -> Call[AgentMemoryRecord]:
    """Write a memory for ``identity`` (an application write: never quarantined).

    Raises:
        InvalidParams: a field broke a rule (the message names it).
        WriteRefused: the store validator refused it (a secret, a cap); ``rule`` says which.
    """
    params = _drop_none(identity=identity, title=title, body=body, tags=tags, realm=realm)
    return Call("meta/agent_memory/remember", params, AgentMemoryRecord.from_wire)


def recall_agent_memory(
    identity: str,
    *,
    realm: str | None = None,
    selection: str | None = None,
    query_text: str | None = None,
    query_terms: list[str] | None = None,
    max_entries: int | None = None,
    tags: list[str] | None = None,
) -> Call[list[AgentMemoryRecord]]:
    """Recall ``identity``'s memories: by context (``selection="contextual"``, ranked by the query)
    or the newest (``"always"``); ``tags`` keeps only records carrying every one of them."""
    params = _drop_none(
        identity=identity,
        realm=realm,
        selection=selection,
        query_text=query_text,
        query_terms=query_terms,
        max_entries=max_entries,
        tags=tags,
    )
    return Call(
        "meta/agent_memory/recall",
        params,
        lambda r: [AgentMemoryRecord.from_wire(x) for x in r["records"]],
        idempotent=True,
    )


def update_agent_memory(
    identity: str,
    memory_id: str,
    *,
    title: str,
    body: str,
    tags: list[str] | None = None,
    realm: str | None = None,
) -> Call[AgentMemoryUpdateResult]:
    """Replace a memory: a new record supersedes ``memory_id`` (its id is in the result)."""
    params = _drop_none(
        identity=identity, memory_id=memory_id, title=title, body=body, tags=tags, realm=realm
    )
    return Call("meta/agent_memory/update", params, lambda r: AgentMemoryUpdateResult(**r))


def forget_agent_memory(
    identity: str, memory_id: str, *, realm: str | None = None
) -> Call[AgentMemoryForgetResult]:
    """Forget a memory (tombstoned: never recalled again); ``deleted`` is false when it was not active."""
    params = _drop_none(identity=identity, memory_id=memory_id, realm=realm)
    return Call("meta/agent_memory/forget", params, lambda r: AgentMemoryForgetResult(**r))


def list_agent_memory(
    identity: str | None = None,
    *,
    realm: str | None = None,
    status: str | None = None,
    kind: str | None = None,
    tags_any: list[str] | None = None,
    tags_all: list[str] | None = None,
    created_after_ms: int | None = None,
    created_before_ms: int | None = None,
    updated_after_ms: int | None = None,
    updated_before_ms: int | None = None,
    limit: int | None = None,
    cursor: str | None = None,
) -> Call[AgentMemoryPage]:
    """One page of ``identity``'s records (on the console, without ``identity``: a realm's), newest
    first, by filter; pass the page's ``next_cursor`` as ``cursor`` for the next."""
    params = _drop_none(
        identity=identity,
        realm=realm,
        status=status,
        kind=kind,
        tags_any=tags_any,
        tags_all=tags_all,
        created_after_ms=created_after_ms,
        created_before_ms=created_before_ms,
        updated_after_ms=updated_after_ms,
        updated_before_ms=updated_before_ms,
        limit=limit,
        cursor=cursor,
    )
    return Call("meta/agent_memory/list", params, AgentMemoryPage.from_wire, idempotent=True)


def get_agent_memory(identity: str, memory_id: str, *, realm: str | None = None) -> Call[AgentMemoryLookup]:
    """One record by id, with ``successor``: the id that replaced it (after an update, or a release).

    Raises:
        UnknownRecord: -32001, no record of that identity has the id.
    """
    params = _drop_none(identity=identity, memory_id=memory_id, realm=realm)
    return Call("meta/agent_memory/get", params, AgentMemoryLookup.from_wire, idempotent=True)


def memory_tool_definitions(format: str = "json_schema") -> Call[list[dict[str, Any]]]:
    """The ``memory`` tool for the LLM: ``json_schema`` (MCP shape), ``openai``,
    ``openai_responses`` or ``anthropic``; empty when the recorder tool is off."""
    return Call(
        "meta/session/tool_definitions", {"format": format}, lambda r: list(r["tools"]), idempotent=True
    )


def status() -> Call[dict[str, Any]]:
    """The runtime's contract version, version, state dir, features and storage."""
    return Call("meta/status", None, dict, idempotent=True)


def capabilities() -> Call[dict[str, Any]]:
    """The methods this surface offers this caller (``methods``), and the storage census."""
    return Call("meta/capabilities", None, dict, idempotent=True)


def discover() -> Call[dict[str, Any]]:
    """This surface's OpenRPC document."""
    return Call("rpc.discover", None, dict, idempotent=True)


def timeline_query(*, after: str | None = None, limit: int | None = None) -> Call[dict[str, Any]]:
    """Stored timeline events after ``after`` (an ``event_id``), oldest first: ``{events, next_after}``."""
    return Call("meta/timeline/query", _drop_none(after=after, limit=limit), dict, idempotent=True)


def storage_doctor(state_dir: str, *, identity: str | None = None) -> Call[dict[str, Any]]:
    """The storage doctor's report on ``state_dir`` (over HTTP: the gateway's own only)."""
    return Call(
        "meta/storage/doctor", _drop_none(state_dir=state_dir, identity=identity), dict, idempotent=True
    )


def gating_evaluate(
    action: str,
    actor_id: str,
    risk_tier: str,
    *,
    rationale: str | None = None,
    requested_approver: str | None = None,
    approval_recipient: str | None = None,
    approval_channel: str | None = None,
    approval_timeout_ms: int | None = None,
    entity: str | None = None,
    topic: str | None = None,
) -> Call[dict[str, Any]]:
    """Ask the gate whether ``action`` may run (``outcome``), or waits for approval (``pending_id``)."""
    params = _drop_none(
        action=action,
        actor_id=actor_id,
        risk_tier=risk_tier,
        rationale=rationale,
        requested_approver=requested_approver,
        approval_recipient=approval_recipient,
        approval_channel=approval_channel,
        approval_timeout_ms=approval_timeout_ms,
        entity=entity,
        topic=topic,
    )
    return Call("meta/gating/evaluate", params, dict)


def gating_decide(
    pending_id: str, approver_id: str, decision: str, *, reason: str | None = None
) -> Call[dict[str, Any]]:
    """Approve, reject or escalate a pending action."""
    params = _drop_none(pending_id=pending_id, approver_id=approver_id, decision=decision, reason=reason)
    return Call("meta/gating/decide", params, dict)


def gating_pending() -> Call[list[dict[str, Any]]]:
    """The actions waiting for approval."""
    return Call("meta/gating/pending", None, lambda r: list(r["pending"]), idempotent=True)


def gating_audit(*, limit: int | None = None) -> Call[list[dict[str, Any]]]:
    """The gating audit trail, newest first."""
    return Call("meta/gating/audit", _drop_none(limit=limit), lambda r: list(r["entries"]), idempotent=True)


def steward_dream(*, realm: str | None = None, mob: str | None = None) -> Call[dict[str, Any]]:
    """Run the memory steward over ``realm`` now; its report."""
    return Call("meta/memory/steward/dream", _drop_none(realm=realm, mob=mob), dict)


def _open_session(
    identity: str, *, realm: str | None = None, mob: str | None = None
) -> Call[tuple[str, str, str]]:
    params = _drop_none(identity=identity, realm=realm, mob=mob)
    return Call(
        "meta/session/open", params, lambda r: (str(r["session_key"]), str(r["identity"]), str(r["realm"]))
    )


# -- binding the operations ---------------------------------------------------------------------


def _sync(op: Callable[P, Call[R]]) -> Callable[Concatenate[Any, P], R]:
    @functools.wraps(op)
    def method(self: Any, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return self._invoke(op(*args, **kwargs))  # type: ignore[no-any-return]

    return method


def _async(op: Callable[P, Call[R]]) -> Callable[Concatenate[Any, P], Awaitable[R]]:
    @functools.wraps(op)
    async def method(self: Any, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return await self._invoke(op(*args, **kwargs))  # type: ignore[no-any-return]

    return method


class MetaApi:
    """Everything a program does with the gateway, as typed methods.

    Errors are :class:`~meta_memory.errors.MetaError` subclasses carrying the wire ``code`` (and
    ``data``) whichever way the call travelled; a client adds
    :class:`~meta_memory.client.MetaConnectionError` and :class:`~meta_memory.client.MetaTimeoutError`.
    """

    def _invoke(self, call: Call[R]) -> R:
        raise NotImplementedError

    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Call any application-surface method by name with wire params; its wire result."""
        return self._invoke(Call(method, params, _as_is))

    # the assertion ledger
    memory_index = _sync(memory_index)
    memory_query = _sync(memory_query)
    memory_stores = _sync(memory_stores)
    # agent memory
    remember_agent_memory = _sync(remember_agent_memory)
    recall_agent_memory = _sync(recall_agent_memory)
    update_agent_memory = _sync(update_agent_memory)
    forget_agent_memory = _sync(forget_agent_memory)
    list_agent_memory = _sync(list_agent_memory)
    get_agent_memory = _sync(get_agent_memory)
    # host sessions
    memory_tool_definitions = _sync(memory_tool_definitions)

    def open_session(self, identity: str, *, realm: str | None = None, mob: str | None = None) -> Session:
        """Open a host session for ``identity`` (a fresh, clean context)."""
        return Session(self, *self._invoke(_open_session(identity, realm=realm, mob=mob)))

    # gating, the timeline, the runtime
    gating_evaluate = _sync(gating_evaluate)
    gating_decide = _sync(gating_decide)
    gating_pending = _sync(gating_pending)
    gating_audit = _sync(gating_audit)
    steward_dream = _sync(steward_dream)
    timeline_query = _sync(timeline_query)
    storage_doctor = _sync(storage_doctor)
    status = _sync(status)
    capabilities = _sync(capabilities)
    discover = _sync(discover)


class AsyncMetaApi:
    """:class:`MetaApi`'s methods as coroutines."""

    async def _invoke(self, call: Call[R]) -> R:
        raise NotImplementedError

    async def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Call any application-surface method by name with wire params; its wire result."""
        return await self._invoke(Call(method, params, _as_is))

    memory_index = _async(memory_index)
    memory_query = _async(memory_query)
    memory_stores = _async(memory_stores)
    remember_agent_memory = _async(remember_agent_memory)
    recall_agent_memory = _async(recall_agent_memory)
    update_agent_memory = _async(update_agent_memory)
    forget_agent_memory = _async(forget_agent_memory)
    list_agent_memory = _async(list_agent_memory)
    get_agent_memory = _async(get_agent_memory)
    memory_tool_definitions = _async(memory_tool_definitions)

    async def open_session(
        self, identity: str, *, realm: str | None = None, mob: str | None = None
    ) -> AsyncSession:
        """Open a host session for ``identity`` (a fresh, clean context)."""
        return AsyncSession(self, *await self._invoke(_open_session(identity, realm=realm, mob=mob)))

    gating_evaluate = _async(gating_evaluate)
    gating_decide = _async(gating_decide)
    gating_pending = _async(gating_pending)
    gating_audit = _async(gating_audit)
    steward_dream = _async(steward_dream)
    timeline_query = _async(timeline_query)
    storage_doctor = _async(storage_doctor)
    status = _async(status)
    capabilities = _async(capabilities)
    discover = _async(discover)


# -- host sessions ------------------------------------------------------------------------------


def _session(verb: str, key: str, read: Callable[[Any], R], **params: Any) -> Call[R]:
    return Call(f"meta/session/{verb}", {"session_key": key, **params}, read)


def _context(r: Any) -> tuple[str | None, list[str]]:
    return r["text"], list(r["injected"])


def _turn(r: Any) -> tuple[str, list[str]]:
    return r["text"], list(r["injected"])


def _tool_result_params(
    provenance: dict[str, Any] | None, server_tool: bool, is_error: bool
) -> dict[str, Any]:
    return {"server_tool": server_tool, "is_error": is_error, **_drop_none(provenance=provenance)}


class Session:
    """A host session: the ``meta/session/*`` calls bound to one session key.

    :meth:`reset` moves this object to the new, clean session key.
    """

    def __init__(self, api: MetaApi, key: str, identity: str, realm: str) -> None:
        self._api = api
        self.key = key
        self.identity = identity
        self.realm = realm

    def build_context(self) -> tuple[str | None, list[str]]:
        """The memory header for the next prompt (``None``: nothing to inject) and the injected ids."""
        return self._api._invoke(_session("build_context", self.key, _context))

    def turn(self, message: str) -> tuple[str, list[str]]:
        """A user turn: the message with its memory context, and the injected ids."""
        return self._api._invoke(_session("turn", self.key, _turn, message=message))

    def tool_result(
        self,
        tool_name: str,
        *,
        provenance: dict[str, Any] | None = None,
        server_tool: bool = False,
        is_error: bool = False,
    ) -> dict[str, bool]:
        """Report a tool result before the LLM request that consumes it; returns {trusted, tainted}."""
        params = _tool_result_params(provenance, server_tool, is_error)
        return self._api._invoke(_session("tool_result", self.key, dict, tool_name=tool_name, **params))

    def memory_tool(self, arguments: dict[str, Any] | str) -> MemoryToolResult:
        """Run the LLM's ``memory`` tool call; bad arguments come back as ``is_error`` text."""
        read: Callable[[Any], MemoryToolResult] = lambda r: MemoryToolResult(**r)  # noqa: E731
        return self._api._invoke(_session("memory_tool", self.key, read, arguments=arguments))

    def reset(self) -> str:
        """Start over clean: this object moves to the new session key."""
        self.key = self._api._invoke(_session("reset", self.key, lambda r: str(r["session_key"])))
        return self.key

    def compact(self) -> None:
        self._api._invoke(_session("compact", self.key, _as_is))

    def close(self) -> None:
        self._api._invoke(_session("close", self.key, _as_is))


class AsyncSession:
    """:class:`Session` for :class:`AsyncMetaApi`."""

    def __init__(self, api: AsyncMetaApi, key: str, identity: str, realm: str) -> None:
        self._api = api
        self.key = key
        self.identity = identity
        self.realm = realm

    async def build_context(self) -> tuple[str | None, list[str]]:
        return await self._api._invoke(_session("build_context", self.key, _context))

    async def turn(self, message: str) -> tuple[str, list[str]]:
        return await self._api._invoke(_session("turn", self.key, _turn, message=message))

    async def tool_result(
        self,
        tool_name: str,
        *,
        provenance: dict[str, Any] | None = None,
        server_tool: bool = False,
        is_error: bool = False,
    ) -> dict[str, bool]:
        params = _tool_result_params(provenance, server_tool, is_error)
        return await self._api._invoke(_session("tool_result", self.key, dict, tool_name=tool_name, **params))

    async def memory_tool(self, arguments: dict[str, Any] | str) -> MemoryToolResult:
        read: Callable[[Any], MemoryToolResult] = lambda r: MemoryToolResult(**r)  # noqa: E731
        return await self._api._invoke(_session("memory_tool", self.key, read, arguments=arguments))

    async def reset(self) -> str:
        self.key = await self._api._invoke(_session("reset", self.key, lambda r: str(r["session_key"])))
        return self.key

    async def compact(self) -> None:
        await self._api._invoke(_session("compact", self.key, _as_is))

    async def close(self) -> None:
        await self._api._invoke(_session("close", self.key, _as_is))


# -- the console surface ------------------------------------------------------------------------

CONSOLE_SURFACE = "console"


def _console(method: str, params: dict[str, Any] | None, *, idempotent: bool = True) -> Call[dict[str, Any]]:
    return Call(method, params, dict, idempotent=idempotent, surface=CONSOLE_SURFACE)


def console_quarantine(*, realm: str | None = None, limit: int | None = None) -> Call[dict[str, Any]]:
    """The quarantine queue (``{records, realms}``), as the console's access rules let the caller see it."""
    return _console("meta/memory/panel/quarantine", _drop_none(realm=realm, limit=limit))


def console_record(memory_id: str, *, realm: str | None = None) -> Call[dict[str, Any]]:
    """One record in full (``{realm, record, chain, injections}``): its body and ``content_hash``."""
    return _console("meta/memory/panel/record", _drop_none(memory_id=memory_id, realm=realm))


def console_decide(
    identity: str,
    memory_id: str,
    verdict: str,
    *,
    expected_content_hash: str,
    realm: str | None = None,
    rationale: str | None = None,
) -> Call[dict[str, Any]]:
    """Release (``verdict="release"``) or discard (``"tombstone"``) a quarantined record, bound to
    the content hash of the version reviewed.

    Raises:
        QuarantineReviewRefused: -32043, the record changed, is not quarantined, or was decided.
    """
    params = _drop_none(
        identity=identity,
        memory_id=memory_id,
        verdict=verdict,
        expected_content_hash=expected_content_hash,
        realm=realm,
        rationale=rationale,
    )
    return _console("meta/memory/quarantine/decide", params, idempotent=False)


class Console:
    """The console surface (``POST /console/rpc``; in process: the operator's own channel)."""

    def __init__(self, api: MetaApi) -> None:
        self._api = api

    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        return self._api._invoke(Call(method, params, _as_is, surface=CONSOLE_SURFACE))

    quarantine = _sync(console_quarantine)
    record = _sync(console_record)
    decide = _sync(console_decide)

    def _invoke(self, call: Call[R]) -> R:
        return self._api._invoke(call)


class AsyncConsole:
    """:class:`Console` for :class:`AsyncMetaApi`."""

    def __init__(self, api: AsyncMetaApi) -> None:
        self._api = api

    async def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        return await self._api._invoke(Call(method, params, _as_is, surface=CONSOLE_SURFACE))

    quarantine = _async(console_quarantine)
    record = _async(console_record)
    decide = _async(console_decide)

    async def _invoke(self, call: Call[R]) -> R:
        return await self._api._invoke(call)
