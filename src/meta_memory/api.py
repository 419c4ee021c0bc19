"""The typed Python API, once, for every way of reaching a runtime.

Each operation (:mod:`~meta_memory.operations`) is a function that builds a
:class:`~meta_memory.operations.Call`: the wire method, its params, whether it is an idempotent
read, and how to read the result back into a typed value (:mod:`~meta_memory.results`).
:class:`MetaApi` binds every operation as a method over one abstract ``_invoke``; the in-process
handle (:class:`~meta_memory.sdk.MetaHandle`) and the clients (:class:`~meta_memory.client.MetaClient`,
over HTTP or a child's stdio) implement it, and :class:`AsyncMetaApi` binds the same operations as
coroutines (:class:`~meta_memory.client.AsyncMetaClient`). So the names, arguments, results and
errors are the same whichever way a program reaches the gateway. A method's docstring is its
operation's; its keywords also answer to their camelCase spellings (:mod:`~meta_memory.keywords`).

This module imports nothing of the runtime: a client process loads only it, the errors and httpx.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

from . import operations as ops
from .keywords import Keywords, accepts_aliases, accepts_aliases_async
from .operations import (
    CONSOLE_SURFACE,
    NO_EXPIRY,
    Call,
    agent_memory_history,
    capabilities,
    console_decide,
    console_decide_proposal,
    console_proposal,
    console_proposals,
    console_quarantine,
    console_record,
    console_resolve_audit_verdict,
    discover,
    forget_agent_memory,
    gating_audit,
    gating_decide,
    gating_evaluate,
    gating_pending,
    get_agent_memory,
    list_agent_memory,
    memory_index,
    memory_query,
    memory_stores,
    memory_tool_definitions,
    propose_agent_memory,
    purge_agent_memory,
    recall_agent_memory,
    remember_agent_memory,
    report_tool_result,
    status,
    steward_dream,
    storage_doctor,
    timeline_query,
    update_agent_memory,
)
from .results import (
    AgentMemoryEntry,
    AgentMemoryForgetResult,
    AgentMemoryHistory,
    AgentMemoryLookup,
    AgentMemoryPage,
    AgentMemoryPurged,
    AgentMemoryPurgeReceipt,
    AgentMemoryRecord,
    AgentMemoryUpdateResult,
    AgentMemoryVersion,
    MemoryIndexResult,
    MemoryQueryResult,
    MemoryStoreInfo,
    MemoryToolResult,
)

# Beside the classes: the operations, for code that builds a Call and invokes it itself (an adapter
# planning its calls).
__all__ = [
    "CONSOLE_SURFACE",
    "NO_EXPIRY",
    "AgentMemoryEntry",
    "AgentMemoryForgetResult",
    "AgentMemoryHistory",
    "AgentMemoryLookup",
    "AgentMemoryPage",
    "AgentMemoryPurgeReceipt",
    "AgentMemoryPurged",
    "AgentMemoryRecord",
    "AgentMemoryUpdateResult",
    "AgentMemoryVersion",
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
    "agent_memory_history",
    "capabilities",
    "console_decide",
    "console_decide_proposal",
    "console_proposal",
    "console_proposals",
    "console_quarantine",
    "console_record",
    "console_resolve_audit_verdict",
    "discover",
    "forget_agent_memory",
    "gating_audit",
    "gating_decide",
    "gating_evaluate",
    "gating_pending",
    "get_agent_memory",
    "list_agent_memory",
    "memory_index",
    "memory_query",
    "memory_stores",
    "memory_tool_definitions",
    "propose_agent_memory",
    "purge_agent_memory",
    "recall_agent_memory",
    "remember_agent_memory",
    "status",
    "steward_dream",
    "storage_doctor",
    "timeline_query",
    "update_agent_memory",
]

P = ParamSpec("P")
R = TypeVar("R")
F = TypeVar("F", bound=Callable[..., Any])


# -- binding the operations ---------------------------------------------------------------------


class _Invoker(Protocol):
    def _invoke(self, call: Call[R]) -> R: ...


class _AsyncInvoker(Protocol):
    async def _invoke(self, call: Call[R]) -> R: ...


def _as_method(method: Callable[..., Any], op: Callable[..., Any], name: str | None) -> None:
    """Give a bound operation the method's face: its name, and ``op``'s signature with ``self``
    first and the result the ``Call`` carries as its return (what ``help()`` and ``inspect`` show)."""
    signature = inspect.signature(op)
    returns = signature.return_annotation
    if isinstance(returns, str) and returns.startswith("Call[") and returns.endswith("]"):
        returns = returns[len("Call[") : -1]
    this = inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)
    method.__name__ = method.__qualname__ = name or op.__name__
    # inspect.signature reads a function's own __signature__ before following __wrapped__.
    method.__dict__["__signature__"] = signature.replace(
        parameters=[this, *signature.parameters.values()], return_annotation=returns
    )


def _sync(op: Callable[P, Call[R]], name: str | None = None) -> Callable[Concatenate[_Invoker, P], R]:
    keywords = Keywords.of(op, name or op.__name__)
    build: Callable[..., Call[R]] = op

    @functools.wraps(op)
    def method(self: _Invoker, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return self._invoke(build(*args, **keywords.canonical(kwargs)))

    _as_method(method, op, name)
    return method


def _async(
    op: Callable[P, Call[R]], name: str | None = None
) -> Callable[Concatenate[_AsyncInvoker, P], Coroutine[Any, Any, R]]:
    keywords = Keywords.of(op, name or op.__name__)
    build: Callable[..., Call[R]] = op

    @functools.wraps(op)
    async def method(self: _AsyncInvoker, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return await self._invoke(build(*args, **keywords.canonical(kwargs)))

    _as_method(method, op, name)
    return method


def _doc_of(sync: Callable[..., Any]) -> Callable[[F], F]:
    """The coroutine twin of ``sync`` carries its docstring (one text, not two to keep in step)."""

    def apply(fn: F) -> F:
        fn.__doc__ = sync.__doc__
        return fn

    return apply


class MetaApi:
    """Everything a program does with the gateway, as typed methods: the assertion ledger, agent
    memory, host sessions, gating, the timeline and the runtime's own reports.

    Every method takes its keywords in snake_case (``query_text=``) or as the camelCase alias the
    spec's examples use (``queryText=``); giving both spellings of one keyword, or a keyword the
    method does not take, raises ``TypeError`` naming them.

    Errors are :class:`~meta_memory.errors.MetaError` subclasses carrying the wire ``code`` (and
    ``data``) whichever way the call travelled. Beyond what each method names, any call may raise
    :class:`~meta_memory.errors.AccessDenied` (an application key confined to some realms reached
    another), :class:`~meta_memory.errors.InternalError` (an unexpected fault; the details are in
    the runtime's log), and, on a client, :class:`~meta_memory.client.MetaConnectionError`,
    :class:`~meta_memory.client.MetaTimeoutError` and
    :class:`~meta_memory.client.MetaAuthenticationError`.
    """

    def _invoke(self, call: Call[R]) -> R:
        raise NotImplementedError

    @accepts_aliases
    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Call any application-surface method by name, with its wire params.

        Args:
            method: the JSON-RPC method (``meta/agent_memory/recall``).
            params: its params by name, as on the wire.

        Returns:
            The method's wire result, as decoded JSON.

        Raises:
            MethodNotFound: no such method on the application surface.
            InvalidParams: a param broke a rule, or the method does not take it.
        """
        return self._invoke(Call(method, params, ops.as_is))

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
    agent_memory_history = _sync(agent_memory_history)
    propose_agent_memory = _sync(propose_agent_memory)
    purge_agent_memory = _sync(purge_agent_memory)
    # host sessions
    memory_tool_definitions = _sync(memory_tool_definitions)
    report_tool_result = _sync(report_tool_result)

    @accepts_aliases
    def open_session(self, identity: str, *, realm: str | None = None, mob: str | None = None) -> Session:
        """Open a host session for ``identity``: a fresh, clean context for one conversation.

        Args:
            identity: whose memory the session reads and writes.
            realm: the realm (default: the configured ``[agent_memory] realm``).
            mob: the mob the session acts in (for mob-scoped proposals).

        Returns:
            The session, bound to its key.

        Raises:
            InvalidParams: a parameter broke a rule (the message names it).
            CapabilityUnavailable: agent memory is not enabled.
        """
        return Session(self, *self._invoke(ops.open_session(identity, realm=realm, mob=mob)))

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
    """:class:`MetaApi`'s methods as coroutines, with the same arguments, results and errors."""

    async def _invoke(self, call: Call[R]) -> R:
        raise NotImplementedError

    @accepts_aliases_async
    @_doc_of(MetaApi.call)
    async def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        return await self._invoke(Call(method, params, ops.as_is))

    memory_index = _async(memory_index)
    memory_query = _async(memory_query)
    memory_stores = _async(memory_stores)
    remember_agent_memory = _async(remember_agent_memory)
    recall_agent_memory = _async(recall_agent_memory)
    update_agent_memory = _async(update_agent_memory)
    forget_agent_memory = _async(forget_agent_memory)
    list_agent_memory = _async(list_agent_memory)
    get_agent_memory = _async(get_agent_memory)
    agent_memory_history = _async(agent_memory_history)
    propose_agent_memory = _async(propose_agent_memory)
    purge_agent_memory = _async(purge_agent_memory)
    memory_tool_definitions = _async(memory_tool_definitions)
    report_tool_result = _async(report_tool_result)

    @accepts_aliases_async
    @_doc_of(MetaApi.open_session)
    async def open_session(
        self, identity: str, *, realm: str | None = None, mob: str | None = None
    ) -> AsyncSession:
        return AsyncSession(self, *await self._invoke(ops.open_session(identity, realm=realm, mob=mob)))

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


class Session:
    """A host session: the ``meta/session/*`` calls bound to one session key. Open one with
    :meth:`MetaApi.open_session`.

    A session is kept by the runtime's store, not by this object or by one gateway: its key keeps
    working across a gateway restart and on every gateway of a PostgreSQL deployment. Each call
    raises :class:`~meta_memory.errors.SessionRefused` (an ``InvalidParams``) once the key names
    no open session: ``closed``, ``reset`` away, or ``expired`` after
    ``agent_memory.session_idle_timeout_s`` without a call, besides the errors :class:`MetaApi`
    names.

    Attributes:
        key: the session key (:meth:`reset` moves it to the new session's).
        identity: whose memory the session reads and writes.
        realm: the realm it lives in.
    """

    def __init__(self, api: MetaApi, key: str, identity: str, realm: str) -> None:
        self._api = api
        self.key = key
        self.identity = identity
        self.realm = realm

    def build_context(self) -> tuple[str | None, list[str]]:
        """The memory block for the next prompt's system part: quoted, defanged observations
        recalled for the identity within the session's budget.

        Returns:
            The block's text (``None``: nothing to inject) and the ids of the records injected.

        Raises:
            InvalidParams: the session is not open.
        """
        return self._api._invoke(ops.session_build_context(self.key))

    @accepts_aliases
    def turn(self, message: str) -> tuple[str, list[str]]:
        """A user turn: the message, defanged, after the memory block recalled for it.

        Args:
            message: the user's message.

        Returns:
            The text to send the LLM as the user turn, and the ids of the records injected.

        Raises:
            InvalidParams: the session is not open.
        """
        return self._api._invoke(ops.session_turn(self.key, message))

    @accepts_aliases
    def tool_result(
        self,
        tool_name: str,
        *,
        provenance: dict[str, Any] | None = None,
        server_tool: bool = False,
        is_error: bool = False,
    ) -> dict[str, bool]:
        """Report a tool result before the LLM request that consumes it. An untrusted result
        taints the session until :meth:`reset`: every memory the LLM writes from it is quarantined.

        Args:
            tool_name: the tool whose result this is (``web_fetch``, ``mcp__<server>__<tool>``).
            provenance: where the tool's output came from (classified by the config's trust rules).
            server_tool: a tool the LLM provider ran itself (always untrusted).
            is_error: the tool failed (an untrusted tool's error is still untrusted content).

        Returns:
            ``trusted`` (the verdict on this result) and ``tainted`` (the session's state after it).

        Raises:
            InvalidParams: the session is not open, or a parameter broke a rule.
        """
        call = ops.session_tool_result(
            self.key, tool_name, provenance=provenance, server_tool=server_tool, is_error=is_error
        )
        return self._api._invoke(call)

    @accepts_aliases
    def memory_tool(self, arguments: dict[str, Any] | str) -> MemoryToolResult:
        """Run the LLM's ``memory`` tool call. Bad arguments and refused writes come back as an
        ``is_error`` result for the LLM, not as an exception.

        Args:
            arguments: the tool call's arguments: an object, or its JSON text.

        Returns:
            The tool result to hand back to the LLM, with what was written (``outcome``).

        Raises:
            InvalidParams: the session is not open.
            CapabilityUnavailable: the recorder tool is off (``recorder_tool = false``).
        """
        return self._api._invoke(ops.session_memory_tool(self.key, arguments))

    @accepts_aliases
    def peer_message(self, sender_session_key: str) -> dict[str, bool]:
        """Report that the host delivered a message from another agent's session into this one,
        before the LLM request that reads it. A message from a tainted session taints this one,
        and so does one from a session the runtime cannot vouch for (unknown, or another
        caller's): peer messages are no way around the firewall.

        Args:
            sender_session_key: the key of the sending agent's session.

        Returns:
            ``tainted``: this session's state after the message.

        Raises:
            SessionRefused: this session is not open.
        """
        return self._api._invoke(ops.session_peer_message(self.key, sender_session_key))

    def reset(self) -> str:
        """Start over clean: a new session for the same identity (taint cleared); this object
        moves to its key, and the old key is closed.

        Returns:
            The new session key.

        Raises:
            InvalidParams: the session is not open.
        """
        self.key = self._api._invoke(ops.session_reset(self.key))
        return self.key

    def compact(self) -> None:
        """Tell the runtime the host compacted its context: records injected before may be gone,
        so the injection budget and de-duplication start over (taint stays).

        Raises:
            InvalidParams: the session is not open.
        """
        self._api._invoke(ops.session_compact(self.key))

    @accepts_aliases
    def close(self, *, cause: str | None = None) -> str | None:
        """Close the session; its key names nothing afterwards.

        Args:
            cause: why the session ends for good, when it does: ``"retired"`` (the identity
                leaves the fleet) or ``"respawned"`` (it goes on as a fresh instance). With the
                steward on, an exit-interview harvest of the identity's memory is queued for the
                steward's next dream (``meta/memory/panel/harvests`` lists it).

        Returns:
            ``"queued"`` (a harvest was queued), ``"steward_disabled"`` (a cause was given, but the
            steward is off: nothing was queued), or ``None`` without a cause.

        Raises:
            InvalidParams: the session is not open, or ``cause`` is not a retirement cause.
        """
        return self._api._invoke(ops.session_close(self.key, cause=cause))


class AsyncSession:
    """:class:`Session` for :class:`AsyncMetaApi`: the same calls as coroutines.

    Attributes:
        key: the session key (:meth:`reset` moves it to the new session's).
        identity: whose memory the session reads and writes.
        realm: the realm it lives in.
    """

    def __init__(self, api: AsyncMetaApi, key: str, identity: str, realm: str) -> None:
        self._api = api
        self.key = key
        self.identity = identity
        self.realm = realm

    @_doc_of(Session.build_context)
    async def build_context(self) -> tuple[str | None, list[str]]:
        return await self._api._invoke(ops.session_build_context(self.key))

    @accepts_aliases_async
    @_doc_of(Session.turn)
    async def turn(self, message: str) -> tuple[str, list[str]]:
        return await self._api._invoke(ops.session_turn(self.key, message))

    @accepts_aliases_async
    @_doc_of(Session.tool_result)
    async def tool_result(
        self,
        tool_name: str,
        *,
        provenance: dict[str, Any] | None = None,
        server_tool: bool = False,
        is_error: bool = False,
    ) -> dict[str, bool]:
        call = ops.session_tool_result(
            self.key, tool_name, provenance=provenance, server_tool=server_tool, is_error=is_error
        )
        return await self._api._invoke(call)

    @accepts_aliases_async
    @_doc_of(Session.memory_tool)
    async def memory_tool(self, arguments: dict[str, Any] | str) -> MemoryToolResult:
        return await self._api._invoke(ops.session_memory_tool(self.key, arguments))

    @accepts_aliases_async
    @_doc_of(Session.peer_message)
    async def peer_message(self, sender_session_key: str) -> dict[str, bool]:
        return await self._api._invoke(ops.session_peer_message(self.key, sender_session_key))

    @_doc_of(Session.reset)
    async def reset(self) -> str:
        self.key = await self._api._invoke(ops.session_reset(self.key))
        return self.key

    @_doc_of(Session.compact)
    async def compact(self) -> None:
        await self._api._invoke(ops.session_compact(self.key))

    @accepts_aliases_async
    @_doc_of(Session.close)
    async def close(self, *, cause: str | None = None) -> str | None:
        return await self._api._invoke(ops.session_close(self.key, cause=cause))


class Console:
    """The console surface: quarantine review, decisions on proposals and the memory panel's reads (``POST /console/rpc``;
    in process: the operator's own channel). Reach it as ``meta.console`` (or, in process,
    ``meta.console_as(subject)``); its methods take camelCase aliases as :class:`MetaApi`'s do."""

    def __init__(self, api: MetaApi) -> None:
        self._api = api

    @accepts_aliases
    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Call any console-surface method by name, with its wire params.

        Args:
            method: the JSON-RPC method (``meta/memory/panel/records``).
            params: its params by name, as on the wire.

        Returns:
            The method's wire result, as decoded JSON.

        Raises:
            MethodNotFound: no such method on the console surface.
            InvalidParams: a param broke a rule, or the method does not take it.
            AccessDenied: the console's access rules refuse the caller.
        """
        return self._api._invoke(Call(method, params, ops.as_is, surface=CONSOLE_SURFACE))

    quarantine = _sync(console_quarantine, "quarantine")
    record = _sync(console_record, "record")
    decide = _sync(console_decide, "decide")
    proposals = _sync(console_proposals, "proposals")
    proposal = _sync(console_proposal, "proposal")
    decide_proposal = _sync(console_decide_proposal, "decide_proposal")
    resolve_audit_verdict = _sync(console_resolve_audit_verdict, "resolve_audit_verdict")

    def _invoke(self, call: Call[R]) -> R:
        return self._api._invoke(call)


class AsyncConsole:
    """:class:`Console` for :class:`AsyncMetaApi`: the same calls as coroutines."""

    def __init__(self, api: AsyncMetaApi) -> None:
        self._api = api

    @accepts_aliases_async
    @_doc_of(Console.call)
    async def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        return await self._api._invoke(Call(method, params, ops.as_is, surface=CONSOLE_SURFACE))

    quarantine = _async(console_quarantine, "quarantine")
    record = _async(console_record, "record")
    decide = _async(console_decide, "decide")
    proposals = _async(console_proposals, "proposals")
    proposal = _async(console_proposal, "proposal")
    decide_proposal = _async(console_decide_proposal, "decide_proposal")
    resolve_audit_verdict = _async(console_resolve_audit_verdict, "resolve_audit_verdict")

    async def _invoke(self, call: Call[R]) -> R:
        return await self._api._invoke(call)
