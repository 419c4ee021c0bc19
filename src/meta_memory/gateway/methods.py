"""The method table: every JSON-RPC method name, its surfaces, and the runtime call behind it.

Handlers are thin: they hand ``params`` to the subsystem's own parser (the one validator
shared with the Python API) and shape the result for the wire.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, TypeVar

from .. import backends
from ..access import ANONYMOUS, Principal, authorize_method, method_access, requires_quarantine_review
from ..access.actions import TIMELINE_READ
from ..access.keys import key_scope, refuse_outside_realms
from ..access.rpc import (
    AUDIT_VERDICT_RESOLVE,
    PROPOSALS_DECIDE,
    QUARANTINE_DECIDE,
    authorize_scope_write,
    may_review_promotions,
    require_promotion_reviewer,
    require_proposal_decider,
    require_verdict_resolver,
)
from ..errors import CapabilityUnavailable, InvalidParams, MethodNotFound
from ..events import SYSTEM_IDENTITY
from ..gating import (
    AuditRequest,
    EvaluateRequest,
    PendingRequest,
    parse_audit_params,
    parse_evaluate_params,
    parse_pending_params,
)
from ..gating import DecideRequest as GatingDecideRequest
from ..gating import parse_decide_params as parse_gating_decide_params
from ..ledger.model import (
    IndexRequest,
    QueryRequest,
    parse_index_params,
    parse_query_params,
    parse_stores_params,
)
from ..memory.params import (
    ForgetParams,
    GetParams,
    ListParams,
    PurgeParams,
    RecallParams,
    RememberParams,
    UpdateParams,
    parse_forget,
    parse_get,
    parse_list,
    parse_purge,
    parse_recall,
    parse_remember,
    parse_update,
    require_identity,
)
from ..memory.records import Record, Scope, ScopeKind
from ..memory.rows import ProposalItem
from ..memory.service import AgentMemory
from ..panel import PANEL_METHODS, AgentMemorySource, MemoryPanel, Viewer
from ..recorder import anthropic_tool, mcp_tool_definition, openai_responses_tool, openai_tool
from ..review import (
    DecideParams,
    ProposalDecideParams,
    ProposalReview,
    ProposeParams,
    parse_decide_params,
    parse_proposal_decide_params,
    parse_propose_params,
)
from ..runtime import MetaRuntime
from ..sessions import (
    TRUSTED,
    Caller,
    CloseParams,
    MemoryToolParams,
    OpenSessionParams,
    PeerMessageParams,
    SessionManager,
    SessionRef,
    ToolResultParams,
    TurnParams,
    parse_close,
    parse_memory_tool,
    parse_open,
    parse_peer_message,
    parse_session_ref,
    parse_tool_result,
    parse_turn,
    realm_of_key,
)
from ..steward import DreamParams, ResolveParams, parse_dream_params, parse_resolve_params
from ..storage.census import AGENT_MEMORY_DISABLED, CALLER_EVENT_SINK, StorageCensus, runtime_census
from ..storage.doctor import DoctorParams, diagnose, parse_doctor_params, same_directory
from ..timeline import TimelineQuery, parse_timeline_query
from .dispatch import CONSOLE, SDK, CallContext, CallObserver, Dispatcher, Method
from .openrpc import openrpc_document
from .signatures import SIGNATURES

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


def _ledger(parse: Callable[[Any], T]) -> Callable[[Any], T]:
    """Ledger methods prefix their -32602 messages, as upstream does (REFERENCE 1.2)."""

    def parse_ledger(params: Any) -> T:
        try:
            return parse(params)
        except InvalidParams as exc:
            raise InvalidParams(LEDGER_PARAMS_PREFIX + exc.message) from None

    return parse_ledger


def _no_params(params: Any) -> None:
    if params is not None and not isinstance(params, dict):
        raise InvalidParams("params must be a JSON object")


TOOL_SHAPES: dict[str, Callable[[], dict[str, Any]]] = {
    "json_schema": mcp_tool_definition,
    "openai": openai_tool,
    "openai_responses": openai_responses_tool,
    "anthropic": anthropic_tool,
}


def _tool_format(params: Any) -> str:
    _no_params(params)
    fmt = (params or {}).get("format", "json_schema")
    if not isinstance(fmt, str) or fmt not in TOOL_SHAPES:  # a list or an object is not hashable
        raise InvalidParams(f"format must be one of {', '.join(sorted(TOOL_SHAPES))} (got {fmt!r})")
    return fmt


def build_dispatcher(runtime: MetaRuntime, *, observer: CallObserver | None = None) -> Dispatcher:
    """The dispatcher every surface of one runtime uses (stdio, HTTP, in process); ``observer``
    hears of every call it answers (telemetry.py)."""
    return Dispatcher(
        build_methods(runtime),
        console_read_only=runtime.config.console.read_only,
        authorize=_authorizer(runtime),
        observer=observer,
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


def _authorize_application(runtime: MetaRuntime, method: Method, request: Any, ctx: CallContext) -> None:
    principal = principal_of(ctx)
    scope = key_scope(method.name)
    realm: str | None = None
    if scope == "realm":
        realm = request.realm
    elif scope == "session":
        key = request.session_key
        if key is None:  # a tool result for an identity before it has a session
            realm = request.realm
        else:
            # The key names its realm; the handler checks that the session is the caller's own.
            realm = realm_of_key(key)
            if realm is None:
                return  # names no session: the handler refuses it (-32602)
    refuse_outside_realms(principal, method.name, realm)


def _confined(ctx: CallContext) -> bool:
    """An application key confined to some realms (a tenant's), over HTTP."""
    return ctx.surface == SDK and ctx.remote and principal_of(ctx).realms is not None


def caller_of(ctx: CallContext) -> Caller:
    """Who drives a host session: over HTTP the authenticated subject, else a trusted channel."""
    return Caller(remote=True, subject=principal_of(ctx).subject) if ctx.remote else TRUSTED


def principal_of(ctx: CallContext) -> Principal:
    return principal_of_value(ctx.principal)


def principal_of_value(value: Any) -> Principal:
    """The authenticated principal, or anonymous when none was established."""
    return value if isinstance(value, Principal) else ANONYMOUS


def _console_authorizer(runtime: MetaRuntime) -> Callable[[Method, Any, CallContext], None] | None:
    engine = runtime.access
    if engine is None:
        return None

    def authorize(method: Method, request: Any, ctx: CallContext) -> None:
        scope = getattr(request, "scope", None)
        if isinstance(scope, Scope) and scope.kind is not ScopeKind.IDENTITY:
            # A write to a shared scope (remember, update, forget with `scope`): that scope's grants.
            authorize_scope_write(engine, principal_of(ctx), scope.kind.value, scope.key)
            return
        decision = method.name == QUARANTINE_DECIDE
        identity = (
            getattr(request, "identity", None) if method_access(method.name).gate == "identity" else None
        )
        authorize_method(
            engine,
            principal_of(ctx),
            method.name,
            identity=identity,
            record_id=request.memory_id if decision else None,
            verdict=request.verdict if decision else None,
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
    storage = runtime.storage
    memory = runtime.agent_memory
    return runtime_census(
        agent_memory=(
            storage.agent_memory_slot(memory.stores)
            if storage is not None and memory is not None
            else AGENT_MEMORY_DISABLED
        ),
        # Without a timeline the runtime was handed a sink of the caller's instead.
        event_log=storage.event_log_slot()
        if storage is not None and runtime.timeline is not None
        else CALLER_EVENT_SINK,
    )


def build_methods(runtime: MetaRuntime) -> dict[str, Method]:
    """The whole method table for one runtime."""

    def agent_memory() -> AgentMemory:
        if runtime.agent_memory is None:
            raise CapabilityUnavailable("agent memory is not enabled (configure [agent_memory])")
        return runtime.agent_memory

    am = runtime.config.agent_memory
    doctor = backends.store_doctor(runtime.config)

    def status(_: None, ctx: CallContext) -> dict[str, Any]:
        result = {**runtime.status(), "storage": census_for(ctx)}
        if _confined(ctx):  # where the server keeps its state is the operator's, not a tenant's
            del result["state_dir"]
        return result

    def census_for(ctx: CallContext) -> dict[str, Any]:
        census = storage_census(runtime).to_wire()
        if _confined(ctx):  # a slot's detail names a path under the state dir, or a database server
            census["slots"] = [{k: v for k, v in slot.items() if k != "detail"} for slot in census["slots"]]
        return census

    def capabilities(_: None, ctx: CallContext) -> dict[str, Any]:
        result: dict[str, Any] = {
            "contract_version": runtime.status()["contract_version"],
            "methods": [
                name
                for name, m in sorted(table.items())
                if ctx.surface in m.surfaces
                and (m.available is None or m.available())
                and not (m.mutating and ctx.surface == CONSOLE and runtime.config.console.read_only)
                and (ctx.surface != CONSOLE or _could_use(runtime, name, principal_of(ctx)))
                and (not _confined(ctx) or key_scope(name) is not None)
            ],
        }
        # The census names paths under the state dir: a console caller sees it only where it
        # could read meta/status, which carries it too.
        if ctx.surface != CONSOLE or _could_use(runtime, "meta/status", principal_of(ctx)):
            result["storage"] = census_for(ctx)
        return result

    def memory_index(p: IndexRequest, ctx: CallContext) -> dict[str, Any]:
        return runtime.ledger.index(p).to_wire()

    def memory_query(p: QueryRequest, ctx: CallContext) -> dict[str, Any]:
        return runtime.ledger.query(p).to_wire()

    def memory_stores(_: None, ctx: CallContext) -> dict[str, Any]:
        return runtime.ledger.stores().to_wire()

    def remember(p: RememberParams, ctx: CallContext) -> dict[str, Any]:
        return agent_memory().remember(p).to_api()

    def recall(p: RecallParams, ctx: CallContext) -> dict[str, Any]:
        visible = None
        if ctx.surface == CONSOLE and runtime.access is not None:
            # A console caller reads an identity's shared scopes as far as its own grants reach.
            engine, principal = runtime.access, principal_of(ctx)
            visible = lambda s: engine.can_read_scope(principal, s.kind.value, s.key)  # noqa: E731
        recalled = agent_memory().recall(p, visible=visible)
        return recalled.to_wire()

    def forget(p: ForgetParams, ctx: CallContext) -> dict[str, Any]:
        memory_id, deleted = agent_memory().forget(p)
        return {"memory_id": memory_id, "deleted": deleted}

    def purge(p: PurgeParams, ctx: CallContext) -> dict[str, Any]:
        # Who purged is who authenticated (or the local channel), never a name from the params.
        kind = "console" if ctx.surface == CONSOLE else "application"
        subject = principal_of(ctx).subject if ctx.remote or ctx.surface == CONSOLE else None
        receipt = agent_memory().purge(p, by={"kind": kind, "principal": subject})
        if p.memory_ids is None and runtime.timeline is not None:
            receipt.counts.events = runtime.timeline.forget_identity(p.identity, p.realm)
        return receipt.to_wire()

    def update(p: UpdateParams, ctx: CallContext) -> dict[str, Any]:
        record, supersedes = agent_memory().update(p)
        return {"memory_id": record.id, "supersedes": supersedes}

    def record_gate(ctx: CallContext, identity: str | None) -> Viewer | None:
        """The console reads as far as the caller's grants reach (as the panel does); the
        application surface names the identity whose records it reads."""
        if ctx.surface != CONSOLE:
            require_identity(identity)
            return None
        viewer = Viewer(runtime.access, principal_of(ctx))
        return None if viewer.unrestricted else viewer

    def agent_list(p: ListParams, ctx: CallContext) -> dict[str, Any]:
        return agent_memory().list_records(p, gate=record_gate(ctx, p.identity)).to_wire()

    def agent_get(p: GetParams, ctx: CallContext) -> dict[str, Any]:
        return agent_memory().get_record(p, gate=record_gate(ctx, p.identity)).to_wire()

    def agent_history(p: GetParams, ctx: CallContext) -> dict[str, Any]:
        return agent_memory().record_history(p, gate=record_gate(ctx, p.identity)).to_wire()

    def sessions() -> SessionManager:
        if runtime.sessions is None:
            raise CapabilityUnavailable("host sessions need agent memory (configure [agent_memory])")
        return runtime.sessions

    def session_open(p: OpenSessionParams, ctx: CallContext) -> dict[str, Any]:
        session = sessions().open(p, caller_of(ctx))
        return {"session_key": session.key, "identity": session.identity, "realm": session.realm}

    def session_build_context(p: SessionRef, ctx: CallContext) -> dict[str, Any]:
        result = sessions().build_context(p, caller_of(ctx))
        return {"text": result.text, "injected": list(result.injected)}

    def session_turn(p: TurnParams, ctx: CallContext) -> dict[str, Any]:
        text, result = sessions().turn(p, caller_of(ctx))
        return {"text": text, "injected": list(result.injected)}

    def session_tool_result(p: ToolResultParams, ctx: CallContext) -> dict[str, Any]:
        return sessions().tool_result(p, caller_of(ctx))

    def session_peer_message(p: PeerMessageParams, ctx: CallContext) -> dict[str, Any]:
        return sessions().peer_message(p, caller_of(ctx))

    def session_memory_tool(p: MemoryToolParams, ctx: CallContext) -> dict[str, Any]:
        return sessions().memory_tool(p, caller_of(ctx)).to_wire()

    def session_reset(p: SessionRef, ctx: CallContext) -> dict[str, Any]:
        return {"session_key": sessions().reset(p, caller_of(ctx)).key}

    def session_compact(p: SessionRef, ctx: CallContext) -> dict[str, Any]:
        return {"session_key": sessions().compact(p, caller_of(ctx)).key}

    def session_close(p: CloseParams, ctx: CallContext) -> dict[str, Any]:
        return sessions().close(p, caller_of(ctx)).to_wire()

    def session_tool_definitions(fmt: str, ctx: CallContext) -> dict[str, Any]:
        if runtime.sessions is None or not am.recorder_tool:
            return {"tools": []}
        return {"tools": [TOOL_SHAPES[fmt]()]}

    def quarantine_decide(p: DecideParams, ctx: CallContext) -> dict[str, Any]:
        review = runtime.review
        if review is None:
            raise CapabilityUnavailable("quarantine review needs agent memory (configure [agent_memory])")
        # The reviewer is who authenticated, never a name from the params.
        subject = getattr(ctx.principal, "subject", None)
        return review.decide(p, reviewer={"kind": "console", "principal": subject}).to_wire()

    def proposal_review() -> ProposalReview:
        if runtime.agent_memory is None or runtime.steward is None:
            raise CapabilityUnavailable("proposals need agent memory (configure [agent_memory])")
        return ProposalReview(
            runtime.agent_memory,
            runtime.events,
            runtime.steward.promotions,
            operator_scope_active=am.operator_scope != "off",
        )

    def proposals_decide(p: ProposalDecideParams, ctx: CallContext) -> dict[str, Any]:
        principal = principal_of(ctx)

        def authorize(item: ProposalItem) -> None:  # on the proposal's scope, once it is read
            require_proposal_decider(
                runtime.access,
                principal,
                proposal_id=item.proposal_id,
                scope_kind=item.scope_kind,
                scope_key=item.scope_key,
            )

        # The reviewer is who authenticated, never a name from the params.
        reviewer = {"kind": "console", "principal": principal.subject}
        return proposal_review().decide(p, reviewer=reviewer, authorize=authorize).to_wire()

    def propose(p: ProposeParams, ctx: CallContext) -> dict[str, Any]:
        return proposal_review().propose(p)

    def audit_verdict_resolve(p: ResolveParams, ctx: CallContext) -> dict[str, Any]:
        if runtime.steward is None:
            raise CapabilityUnavailable("audit verdicts need agent memory (configure [agent_memory])")
        principal = principal_of(ctx)

        def authorize(record_id: str, record: Record | None, action: str) -> None:
            scope = (record.scope.kind.value, record.scope.key) if record is not None else None
            needs_review = record is not None and requires_quarantine_review(
                record.status.value, ever_quarantined=record.ever_quarantined
            )
            require_verdict_resolver(
                runtime.access, principal, action, record_id=record_id, scope=scope, needs_review=needs_review
            )

        # The reviewer is who authenticated, never a name from the params.
        reviewer = {"kind": "console", "principal": principal.subject}
        return runtime.steward.audit_verdicts.resolve(p, reviewer=reviewer, authorize=authorize).to_wire()

    def steward_dream(p: DreamParams, ctx: CallContext) -> dict[str, Any]:
        if runtime.steward is None:
            raise CapabilityUnavailable("the memory steward needs agent memory (configure [agent_memory])")
        return runtime.steward.dream(p.realm, mob=p.mob).to_wire()

    def storage_doctor(p: DoctorParams, ctx: CallContext) -> dict[str, Any]:
        own = same_directory(p.state_dir, runtime.layout.root)
        if ctx.remote and not own:
            # Over the network the doctor would otherwise describe any directory it is pointed at.
            raise InvalidParams(
                "state_dir must name this gateway's own state directory: over HTTP the doctor "
                "diagnoses no other (use `meta_gateway doctor` on the machine for that)"
            )
        # The live census describes this runtime's own directory only; any other is diagnosed cold.
        census = storage_census(runtime) if own else None
        return diagnose(p.state_dir, p.identity, backend=doctor, census=census).to_wire()

    def timeline_query(p: TimelineQuery, ctx: CallContext) -> dict[str, Any]:
        if runtime.timeline is None:
            raise CapabilityUnavailable("this runtime has no persisted timeline")
        if ctx.surface == CONSOLE:
            return runtime.timeline.query(p, visible=timeline_visibility(runtime, principal_of(ctx)))
        return runtime.timeline.query(p)

    def gating_evaluate(p: EvaluateRequest, ctx: CallContext) -> dict[str, Any]:
        return runtime.gating.evaluate(p).to_wire()

    def gating_decide(p: GatingDecideRequest, ctx: CallContext) -> dict[str, Any]:
        principal = principal_of(ctx)
        # Only the console vouches for a quarantine reviewer; the application surface (stdio,
        # POST /rpc, the in-process handle) is the agent host's, and decides no gated promotion.
        reviewer = (
            (lambda entry: require_promotion_reviewer(runtime.access, principal, entry.pending_id))
            if ctx.surface == CONSOLE
            else None
        )
        # An authenticated caller is the approver: approver_id must name it.
        return runtime.gating.decide(p, caller=principal.subject, reviewer=reviewer).to_wire()

    def gating_pending(p: PendingRequest, ctx: CallContext) -> dict[str, Any]:
        # Gated promotions are listed only to who may decide them.
        reviewer = ctx.surface == CONSOLE and may_review_promotions(runtime.access, principal_of(ctx))
        return runtime.gating.pending(p, include_reviewer_only=reviewer).to_wire()

    def gating_audit(p: AuditRequest, ctx: CallContext) -> dict[str, Any]:
        return runtime.gating.audit(p).to_wire()

    def panel_handler(
        call: Callable[[MemoryPanel, Any, Principal], dict[str, Any]],
    ) -> Callable[[Any, CallContext], dict[str, Any]]:
        def handler(p: Any, ctx: CallContext) -> dict[str, Any]:
            if runtime.agent_memory is None:
                raise MethodNotFound("memory panel is not configured")
            return call(
                MemoryPanel(AgentMemorySource(runtime.agent_memory), runtime.access), p, principal_of(ctx)
            )

        return handler

    # The parsers: each method's wire params become its typed request here, before anything else.
    def remember_params(params: Any) -> RememberParams:
        return parse_remember(params, default_realm=am.realm)

    def recall_params(params: Any) -> RecallParams:
        return parse_recall(
            params, default_realm=am.realm, default_selection=am.selection, default_max=am.max_entries
        )

    def forget_params(params: Any) -> ForgetParams:
        return parse_forget(params, default_realm=am.realm)

    def purge_params(params: Any) -> PurgeParams:
        return parse_purge(params, default_realm=am.realm)

    def update_params(params: Any) -> UpdateParams:
        return parse_update(params, default_realm=am.realm)

    def list_params(params: Any) -> ListParams:
        return parse_list(params, default_realm=am.realm)

    def get_params(params: Any) -> GetParams:
        return parse_get(params, default_realm=am.realm)

    def open_params(params: Any) -> OpenSessionParams:
        return parse_open(params, default_realm=am.realm)

    def tool_result_params(params: Any) -> ToolResultParams:
        return parse_tool_result(params, default_realm=am.realm)

    def decide_params(params: Any) -> DecideParams:
        return parse_decide_params(params, default_realm=am.realm)

    def dream_params(params: Any) -> DreamParams:
        return parse_dream_params(params, default_realm=am.realm)

    def resolve_params(params: Any) -> ResolveParams:
        return parse_resolve_params(params, default_realm=am.realm)

    def proposal_decide_params(params: Any) -> ProposalDecideParams:
        return parse_proposal_decide_params(params, default_realm=am.realm)

    def propose_params(params: Any) -> ProposeParams:
        return parse_propose_params(params, default_realm=am.realm)

    has_agent_memory = lambda: runtime.agent_memory is not None  # noqa: E731
    table: dict[str, Method] = {
        m.name: m
        for m in (
            Method("meta/status", status, _no_params),
            Method("meta/capabilities", capabilities, _no_params),
            Method(
                "meta/memory/index",
                memory_index,
                _ledger(parse_index_params),
                surfaces=SDK_ONLY,
                mutating=True,
            ),
            Method("meta/memory/query", memory_query, _ledger(parse_query_params), surfaces=SDK_ONLY),
            Method("meta/memory/stores", memory_stores, _ledger(parse_stores_params), surfaces=SDK_ONLY),
            Method(
                "meta/agent_memory/remember",
                remember,
                remember_params,
                mutating=True,
                available=has_agent_memory,
            ),
            Method("meta/agent_memory/recall", recall, recall_params, available=has_agent_memory),
            Method(
                "meta/agent_memory/forget", forget, forget_params, mutating=True, available=has_agent_memory
            ),
            Method(
                "meta/agent_memory/update", update, update_params, mutating=True, available=has_agent_memory
            ),
            Method("meta/agent_memory/purge", purge, purge_params, mutating=True, available=has_agent_memory),
            Method("meta/agent_memory/list", agent_list, list_params, available=has_agent_memory),
            Method("meta/agent_memory/get", agent_get, get_params, available=has_agent_memory),
            Method("meta/agent_memory/history", agent_history, get_params, available=has_agent_memory),
            Method(
                "meta/session/open", session_open, open_params, surfaces=SDK_ONLY, available=has_agent_memory
            ),
            Method(
                "meta/session/build_context",
                session_build_context,
                parse_session_ref,
                surfaces=SDK_ONLY,
                available=has_agent_memory,
            ),
            Method(
                "meta/session/turn", session_turn, parse_turn, surfaces=SDK_ONLY, available=has_agent_memory
            ),
            Method(
                "meta/session/tool_result",
                session_tool_result,
                tool_result_params,
                surfaces=SDK_ONLY,
                available=has_agent_memory,
            ),
            Method(
                "meta/session/peer_message",
                session_peer_message,
                parse_peer_message,
                surfaces=SDK_ONLY,
                available=has_agent_memory,
            ),
            Method(
                "meta/session/memory_tool",
                session_memory_tool,
                parse_memory_tool,
                surfaces=SDK_ONLY,
                mutating=True,
                available=lambda: runtime.sessions is not None and am.recorder_tool,
            ),
            Method(
                "meta/session/reset",
                session_reset,
                parse_session_ref,
                surfaces=SDK_ONLY,
                available=has_agent_memory,
            ),
            Method(
                "meta/session/compact",
                session_compact,
                parse_session_ref,
                surfaces=SDK_ONLY,
                available=has_agent_memory,
            ),
            Method(
                "meta/session/close",
                session_close,
                parse_close,
                surfaces=SDK_ONLY,
                available=has_agent_memory,
            ),
            Method(
                "meta/session/tool_definitions", session_tool_definitions, _tool_format, surfaces=SDK_ONLY
            ),
            Method(
                "meta/timeline/query",
                timeline_query,
                parse_timeline_query,
                available=lambda: runtime.timeline is not None,
            ),
            Method("meta/storage/doctor", storage_doctor, parse_doctor_params),
            Method(
                "meta/gating/evaluate",
                gating_evaluate,
                parse_evaluate_params,
                surfaces=SDK_ONLY,
                mutating=True,
            ),
            Method("meta/gating/decide", gating_decide, parse_gating_decide_params, mutating=True),
            Method("meta/gating/pending", gating_pending, parse_pending_params),
            Method("meta/gating/audit", gating_audit, parse_audit_params),
            Method(
                "meta/memory/steward/dream",
                steward_dream,
                dream_params,
                mutating=True,
                available=lambda: runtime.steward is not None,
            ),
            Method(
                QUARANTINE_DECIDE,
                quarantine_decide,
                decide_params,
                surfaces=CONSOLE_ONLY,
                mutating=True,
                available=has_agent_memory,
            ),
            Method(
                PROPOSALS_DECIDE,
                proposals_decide,
                proposal_decide_params,
                surfaces=CONSOLE_ONLY,
                mutating=True,
                available=has_agent_memory,
            ),
            Method(
                "meta/agent_memory/propose",
                propose,
                propose_params,
                surfaces=SDK_ONLY,
                mutating=True,
                available=has_agent_memory,
            ),
            Method(
                AUDIT_VERDICT_RESOLVE,
                audit_verdict_resolve,
                resolve_params,
                surfaces=CONSOLE_ONLY,
                mutating=True,
                available=has_agent_memory,
            ),
        )
    }
    for name, endpoint in PANEL_METHODS.items():
        table[name] = Method(
            name,
            panel_handler(endpoint.call),
            endpoint.parse,
            surfaces=CONSOLE_ONLY,
            available=has_agent_memory,
        )

    signed: dict[str, Method] = {}

    def discover(_: None, ctx: CallContext) -> dict[str, Any]:
        return openrpc_document((signed[name] for name in capabilities(None, ctx)["methods"]), ctx.surface)

    table["rpc.discover"] = Method("rpc.discover", discover, _no_params)
    signed.update(with_signatures(table))
    return signed


def with_signatures(table: Mapping[str, Method]) -> dict[str, Method]:
    """The table with each method's signature (params refused beyond it, the OpenRPC description)."""
    out = {}
    for name, method in table.items():
        signature = SIGNATURES.get(name)
        out[name] = (
            method
            if signature is None
            else replace(method, params=signature.params, result=signature.result, summary=signature.summary)
        )
    return out
