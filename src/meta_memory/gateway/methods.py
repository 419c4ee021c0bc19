"""The method table: every JSON-RPC method name, its surfaces, and the runtime call behind it.

Handlers are thin: they hand ``params`` to the subsystem's own parser (the one validator
shared with the Python API) and shape the result for the wire.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ..access import ANONYMOUS, Principal, authorize_method, method_access
from ..access.actions import TIMELINE_READ
from ..access.keys import key_scope, refuse_outside_realms
from ..access.rpc import QUARANTINE_DECIDE
from ..errors import CapabilityUnavailable, InvalidParams, MethodNotFound
from ..events import SYSTEM_IDENTITY
from ..gating import parse_audit_params, parse_evaluate_params, parse_pending_params
from ..gating import parse_decide_params as parse_gating_decide_params
from ..ledger.model import parse_index_params, parse_query_params, parse_stores_params
from ..memory.params import parse_identity, parse_realm
from ..memory.service import AgentMemory
from ..panel import PANEL_METHODS, AgentMemorySource, MemoryPanel, PanelMethod
from ..recorder import anthropic_tool, mcp_tool_definition, openai_responses_tool, openai_tool
from ..review import parse_decide_params
from ..runtime import MetaRuntime
from ..sessions import SessionManager, unknown_session
from ..steward import parse_dream_params
from ..storage.census import StorageCensus, runtime_census
from ..storage.doctor import diagnose, parse_doctor_params, same_directory
from .dispatch import CONSOLE, SDK, CallContext, Dispatcher, Method

SDK_ONLY = frozenset({SDK})
CONSOLE_ONLY = frozenset({CONSOLE})
T = TypeVar("T")

__all__ = [
    "build_dispatcher",
    "build_methods",
    "principal_of",
    "principal_of_value",
    "storage_census",
    "timeline_visibility",
]


LEDGER_PARAMS_PREFIX = "Invalid params: "


def _ledger_params(parse: Callable[[Any], T], params: Any) -> T:
    """Ledger (and gating) methods prefix their -32602 messages, as upstream does (REFERENCE 1.2)."""
    try:
        return parse(params)
    except InvalidParams as exc:
        raise InvalidParams(LEDGER_PARAMS_PREFIX + exc.message) from None


def _no_params(params: Any) -> None:
    if params is not None and not isinstance(params, dict):
        raise InvalidParams("params must be a JSON object")


def build_dispatcher(runtime: MetaRuntime) -> Dispatcher:
    """The dispatcher every surface of one runtime uses (stdio, HTTP, in process)."""
    return Dispatcher(
        build_methods(runtime),
        console_read_only=runtime.config.console.read_only,
        authorize=_authorizer(runtime),
    )


def _authorizer(runtime: MetaRuntime) -> Callable[[Method, Any, CallContext], None]:
    """Console calls: the access rules. Application calls over HTTP: the key's realms, and the
    session's owner. (stdio and the in-process handle are the parent process's own channel.)"""
    console = _console_authorizer(runtime)

    def authorize(method: Method, params: Any, ctx: CallContext) -> None:
        if ctx.surface == CONSOLE:
            if console is not None:
                console(method, params, ctx)
        elif ctx.remote:
            _authorize_application(runtime, method, params, ctx)

    return authorize


def _authorize_application(runtime: MetaRuntime, method: Method, params: Any, ctx: CallContext) -> None:
    principal = principal_of(ctx)
    p = params if isinstance(params, dict) else {}
    scope = key_scope(method.name)
    realm: str | None = None
    if scope == "realm":
        try:
            realm = parse_realm(p) or runtime.config.agent_memory.realm
        except InvalidParams:
            return  # the handler refuses the realm itself (-32602)
    elif scope == "session":
        session = runtime.sessions.peek(p.get("session_key")) if runtime.sessions is not None else None
        if session is None:
            return  # the handler refuses the key (-32602)
        if session.owner != principal.subject:
            raise unknown_session(session.key)
        realm = session.realm
    refuse_outside_realms(principal, method.name, realm)


def principal_of(ctx: CallContext) -> Principal:
    return principal_of_value(ctx.principal)


def principal_of_value(value: Any) -> Principal:
    """The authenticated principal, or anonymous when none was established."""
    return value if isinstance(value, Principal) else ANONYMOUS


def _console_authorizer(runtime: MetaRuntime) -> Callable[[Method, Any, CallContext], None] | None:
    engine = runtime.access
    if engine is None:
        return None

    def authorize(method: Method, params: Any, ctx: CallContext) -> None:
        p = params if isinstance(params, dict) else {}
        # Only values the handler's own parser would accept name a resource; anything else is
        # left to the handler to refuse (-32602): there is no resource to judge.
        try:
            identity: str | None = parse_identity(p)
        except InvalidParams:
            identity = None
        verdict = p.get("verdict") if p.get("verdict") in ("release", "tombstone") else None
        raw_id = p.get("memory_id")
        memory_id = raw_id.strip() if isinstance(raw_id, str) and raw_id.strip() else None
        gate = method_access(method.name).gate
        if gate == "identity" and identity is None:
            return
        if method.name == QUARANTINE_DECIDE and (verdict is None or memory_id is None):
            return
        authorize_method(
            engine,
            principal_of(ctx),
            method.name,
            identity=identity,
            record_id=memory_id if method.name == QUARANTINE_DECIDE else None,
            verdict=verdict,
        )

    return authorize


def _could_use(runtime: MetaRuntime, name: str, principal: Principal) -> bool:
    """Whether a console caller could ever use ``name`` (capability advertisement)."""
    engine = runtime.access
    if engine is None:
        return True
    access = method_access(name)
    if access.gate == "unscoped":
        return all(engine.allows(principal, action, None) for action in access.actions)
    return all(engine.may_ever(principal, action) for action in access.actions)


def timeline_visibility(runtime: MetaRuntime, principal: Principal) -> Callable[[dict[str, Any]], bool]:
    """Which timeline events a console caller may see: an identity's events with read + view
    on that identity, system events with an unscoped ``timeline.read``."""
    engine = runtime.access

    def visible(event: dict[str, Any]) -> bool:
        if engine is None:
            return True
        identity = event.get("identity")
        if not isinstance(identity, str) or identity == SYSTEM_IDENTITY:
            return engine.allows(principal, TIMELINE_READ, None)
        return engine.can_read_identity_memory(principal, identity)

    return visible


def storage_census(runtime: MetaRuntime) -> StorageCensus:
    """The runtime's storage census (REFERENCE 8), as status, capabilities and the doctor report it."""
    return runtime_census(
        agent_memory_root=runtime.agent_memory.root if runtime.agent_memory is not None else None,
        # The runtime writes the timeline to the layout's event log; without a timeline it was
        # handed a sink of the caller's instead.
        event_log_path=runtime.layout.event_log_path if runtime.timeline is not None else None,
    )


def build_methods(runtime: MetaRuntime) -> dict[str, Method]:
    """The whole method table for one runtime."""

    def agent_memory() -> AgentMemory:
        if runtime.agent_memory is None:
            raise CapabilityUnavailable("agent memory is not enabled (configure [agent_memory])")
        return runtime.agent_memory

    def status(params: Any, ctx: CallContext) -> dict[str, Any]:
        _no_params(params)
        return {**runtime.status(), "storage": storage_census(runtime).to_wire()}

    def capabilities(params: Any, ctx: CallContext) -> dict[str, Any]:
        _no_params(params)
        result: dict[str, Any] = {
            "contract_version": runtime.status()["contract_version"],
            "methods": [
                name
                for name, m in sorted(table.items())
                if ctx.surface in m.surfaces
                and (m.available is None or m.available())
                and not (m.mutating and ctx.surface == CONSOLE and runtime.config.console.read_only)
                and (ctx.surface != CONSOLE or _could_use(runtime, name, principal_of(ctx)))
            ],
        }
        # The census names paths under the state dir: a console caller sees it only where it
        # could read meta/status, which carries it too.
        if ctx.surface != CONSOLE or _could_use(runtime, "meta/status", principal_of(ctx)):
            result["storage"] = storage_census(runtime).to_wire()
        return result

    def memory_index(params: Any, ctx: CallContext) -> dict[str, Any]:
        return runtime.ledger.index(_ledger_params(parse_index_params, params)).to_wire()

    def memory_query(params: Any, ctx: CallContext) -> dict[str, Any]:
        return runtime.ledger.query(_ledger_params(parse_query_params, params)).to_wire()

    def memory_stores(params: Any, ctx: CallContext) -> dict[str, Any]:
        _ledger_params(parse_stores_params, params)
        return runtime.ledger.stores().to_wire()

    def remember(params: Any, ctx: CallContext) -> dict[str, Any]:
        return agent_memory().remember(params).to_api()

    def recall(params: Any, ctx: CallContext) -> dict[str, Any]:
        return {"records": [r.to_api() for r in agent_memory().recall(params)]}

    def forget(params: Any, ctx: CallContext) -> dict[str, Any]:
        memory_id, deleted = agent_memory().forget(params)
        return {"memory_id": memory_id, "deleted": deleted}

    def update(params: Any, ctx: CallContext) -> dict[str, Any]:
        record, supersedes = agent_memory().update(params)
        return {"memory_id": record.id, "supersedes": supersedes}

    def sessions() -> SessionManager:
        if runtime.sessions is None:
            raise CapabilityUnavailable("host sessions need agent memory (configure [agent_memory])")
        return runtime.sessions

    def session_open(params: Any, ctx: CallContext) -> dict[str, Any]:
        owner = principal_of(ctx).subject if ctx.remote else None
        return {"session_key": sessions().open(params, owner=owner).key}

    def session_build_context(params: Any, ctx: CallContext) -> dict[str, Any]:
        result = sessions().build_context(params)
        return {"text": result.text, "injected": list(result.injected)}

    def session_turn(params: Any, ctx: CallContext) -> dict[str, Any]:
        text, result = sessions().turn(params)
        return {"text": text, "injected": list(result.injected)}

    def session_tool_result(params: Any, ctx: CallContext) -> dict[str, Any]:
        return sessions().tool_result(params)

    def session_memory_tool(params: Any, ctx: CallContext) -> dict[str, Any]:
        return sessions().memory_tool(params).to_wire()

    def session_reset(params: Any, ctx: CallContext) -> dict[str, Any]:
        return {"session_key": sessions().reset(params).key}

    def session_compact(params: Any, ctx: CallContext) -> dict[str, Any]:
        return {"session_key": sessions().compact(params).key}

    def session_close(params: Any, ctx: CallContext) -> dict[str, Any]:
        sessions().close(params)
        return {"closed": True}

    def session_tool_definitions(params: Any, ctx: CallContext) -> dict[str, Any]:
        _no_params(params)
        fmt = (params or {}).get("format", "json_schema")
        if runtime.sessions is None or not runtime.config.agent_memory.recorder_tool:
            return {"tools": []}
        shapes = {
            "json_schema": mcp_tool_definition,
            "openai": openai_tool,
            "openai_responses": openai_responses_tool,
            "anthropic": anthropic_tool,
        }
        if not isinstance(fmt, str) or fmt not in shapes:  # a list or an object is not hashable
            raise InvalidParams(f"format must be one of {', '.join(sorted(shapes))} (got {fmt!r})")
        return {"tools": [shapes[fmt]()]}

    def quarantine_decide(params: Any, ctx: CallContext) -> dict[str, Any]:
        review = runtime.review
        if review is None:
            raise CapabilityUnavailable("quarantine review needs agent memory (configure [agent_memory])")
        p = parse_decide_params(params, default_realm=runtime.config.agent_memory.realm)
        # The reviewer is who authenticated, never a name from the params.
        subject = getattr(ctx.principal, "subject", None)
        return review.decide(p, reviewer={"kind": "console", "principal": subject}).to_wire()

    def steward_dream(params: Any, ctx: CallContext) -> dict[str, Any]:
        if runtime.steward is None:
            raise CapabilityUnavailable("the memory steward needs agent memory (configure [agent_memory])")
        realm, mob = parse_dream_params(params, default_realm=runtime.config.agent_memory.realm)
        return runtime.steward.dream(realm, mob=mob).to_wire()

    def storage_doctor(params: Any, ctx: CallContext) -> dict[str, Any]:
        p = parse_doctor_params(params)
        own = same_directory(p.state_dir, runtime.layout.root)
        if ctx.remote and not own:
            # Over the network the doctor would otherwise describe any directory it is pointed at.
            raise InvalidParams(
                "state_dir must name this gateway's own state directory: over HTTP the doctor "
                "diagnoses no other (use `meta_gateway doctor` on the machine for that)"
            )
        # The live census describes this runtime's own directory only; any other is diagnosed cold.
        census = storage_census(runtime) if own else None
        return diagnose(p.state_dir, p.identity, census=census).to_wire()

    def timeline_query(params: Any, ctx: CallContext) -> dict[str, Any]:
        if runtime.timeline is None:
            raise CapabilityUnavailable("this runtime has no persisted timeline")
        if ctx.surface == CONSOLE:
            return runtime.timeline.query(params, visible=timeline_visibility(runtime, principal_of(ctx)))
        return runtime.timeline.query(params)

    def gating_evaluate(params: Any, ctx: CallContext) -> dict[str, Any]:
        return runtime.gating.evaluate(parse_evaluate_params(params)).to_wire()

    def gating_decide(params: Any, ctx: CallContext) -> dict[str, Any]:
        return runtime.gating.decide(parse_gating_decide_params(params)).to_wire()

    def gating_pending(params: Any, ctx: CallContext) -> dict[str, Any]:
        return runtime.gating.pending(parse_pending_params(params)).to_wire()

    def gating_audit(params: Any, ctx: CallContext) -> dict[str, Any]:
        return runtime.gating.audit(parse_audit_params(params)).to_wire()

    def panel_handler(call: PanelMethod) -> Callable[[Any, CallContext], dict[str, Any]]:
        def handler(params: Any, ctx: CallContext) -> dict[str, Any]:
            if runtime.agent_memory is None:
                raise MethodNotFound("memory panel is not configured")
            return call(
                MemoryPanel(AgentMemorySource(runtime.agent_memory), runtime.access),
                params,
                principal_of(ctx),
            )

        return handler

    has_agent_memory = lambda: runtime.agent_memory is not None  # noqa: E731
    table: dict[str, Method] = {
        m.name: m
        for m in (
            Method("meta/status", status),
            Method("meta/capabilities", capabilities),
            Method("meta/memory/index", memory_index, surfaces=frozenset({SDK}), mutating=True),
            Method("meta/memory/query", memory_query, surfaces=frozenset({SDK})),
            Method("meta/memory/stores", memory_stores, surfaces=frozenset({SDK})),
            Method("meta/agent_memory/remember", remember, mutating=True, available=has_agent_memory),
            Method("meta/agent_memory/recall", recall, available=has_agent_memory),
            Method("meta/agent_memory/forget", forget, mutating=True, available=has_agent_memory),
            Method("meta/agent_memory/update", update, mutating=True, available=has_agent_memory),
            Method("meta/session/open", session_open, surfaces=SDK_ONLY, available=has_agent_memory),
            Method(
                "meta/session/build_context",
                session_build_context,
                surfaces=SDK_ONLY,
                available=has_agent_memory,
            ),
            Method("meta/session/turn", session_turn, surfaces=SDK_ONLY, available=has_agent_memory),
            Method(
                "meta/session/tool_result", session_tool_result, surfaces=SDK_ONLY, available=has_agent_memory
            ),
            Method(
                "meta/session/memory_tool",
                session_memory_tool,
                surfaces=SDK_ONLY,
                mutating=True,
                available=lambda: runtime.sessions is not None and runtime.config.agent_memory.recorder_tool,
            ),
            Method("meta/session/reset", session_reset, surfaces=SDK_ONLY, available=has_agent_memory),
            Method("meta/session/compact", session_compact, surfaces=SDK_ONLY, available=has_agent_memory),
            Method("meta/session/close", session_close, surfaces=SDK_ONLY, available=has_agent_memory),
            Method("meta/session/tool_definitions", session_tool_definitions, surfaces=SDK_ONLY),
            Method("meta/timeline/query", timeline_query, available=lambda: runtime.timeline is not None),
            Method("meta/storage/doctor", storage_doctor),
            Method("meta/gating/evaluate", gating_evaluate, surfaces=SDK_ONLY, mutating=True),
            Method("meta/gating/decide", gating_decide, mutating=True),
            Method("meta/gating/pending", gating_pending),
            Method("meta/gating/audit", gating_audit),
            Method(
                "meta/memory/steward/dream",
                steward_dream,
                mutating=True,
                available=lambda: runtime.steward is not None,
            ),
            Method(
                "meta/memory/quarantine/decide",
                quarantine_decide,
                surfaces=CONSOLE_ONLY,
                mutating=True,
                available=has_agent_memory,
            ),
        )
    }
    for name, call in PANEL_METHODS.items():
        table[name] = Method(name, panel_handler(call), surfaces=CONSOLE_ONLY, available=has_agent_memory)
    return table
