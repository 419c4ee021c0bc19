"""The operations of the typed API: one function per JSON-RPC method, building the :class:`Call`
(the wire method, its params, whether it is an idempotent read, and how its wire result reads back
as a typed value). :mod:`meta_memory.api` binds each as a method of every way in; an operation's
docstring is its methods' docstring.

This module imports nothing of the runtime: only the result types.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Generic, TypeVar

from .results import (
    AgentMemoryForgetResult,
    AgentMemoryHistory,
    AgentMemoryLookup,
    AgentMemoryPage,
    AgentMemoryPurgeReceipt,
    AgentMemoryRecord,
    AgentMemoryUpdateResult,
    MemoryIndexResult,
    MemoryQueryResult,
    MemoryStoreInfo,
    MemoryToolResult,
)

__all__ = [
    "CONSOLE_SURFACE",
    "NO_EXPIRY",
    "Call",
    "NoExpiry",
    "as_is",
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
    "open_session",
    "propose_agent_memory",
    "recall_agent_memory",
    "remember_agent_memory",
    "report_tool_result",
    "session_build_context",
    "session_close",
    "session_compact",
    "session_memory_tool",
    "session_peer_message",
    "session_reset",
    "session_tool_result",
    "session_turn",
    "status",
    "steward_dream",
    "storage_doctor",
    "timeline_query",
    "update_agent_memory",
]

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


def as_is(result: Any) -> Any:
    return result


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
    """Record a fact, a conflict signal (``conflict=True``), or both in the assertion ledger, and
    persist the ledger.

    Args:
        entity: the key's entity (trimmed, lowercased, whitespace runs as ``_``).
        topic: the key's topic (normalized the same way).
        store: one of the ledger's stores (:meth:`memory_stores` lists them).
        fact: the fact; required unless ``conflict`` is true.
        metadata: a JSON object of the caller's, kept as given.
        conflict: record a conflict signal for the key (gating then turns r2/r3 actions touching
            it into ``safe_draft``).
        conflict_reason: why the key is in conflict.

    Returns:
        The normalized key, the store, the new assertion's id and whether a conflict is active.

    Raises:
        InvalidParams: a parameter broke a rule (the message names it).
        MemoryBackendUnavailable: the ledger could not persist, or its health check failed; the
            ledger is as it was before the call.
    """
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
    """The ledger's assertions and conflict signals, filtered; no filter: all of them.

    Args:
        query: a substring of entity, topic or fact to keep; or the whole wire params, as a dict.
        entity: keep this entity only.
        topic: keep this topic only.
        store: keep this store only.

    Returns:
        The matching assertions and conflict signals.

    Raises:
        InvalidParams: a filter is not a string.
    """
    params = dict(query) if isinstance(query, dict) else _drop_none(query=query)
    params.update(_drop_none(entity=entity, topic=topic, store=store))
    return Call("meta/memory/query", params, lambda r: MemoryQueryResult(**r), idempotent=True)


def memory_stores() -> Call[list[MemoryStoreInfo]]:
    """The ledger's stores and how many assertions each holds.

    Returns:
        One entry per store, in the ledger's order.
    """
    return Call(
        "meta/memory/stores", None, lambda r: [MemoryStoreInfo(**s) for s in r["stores"]], idempotent=True
    )


def remember_agent_memory(
    identity: str | None = None,
    *,
    title: str,
    body: str,
    tags: list[str] | None = None,
    realm: str | None = None,
    scope: dict[str, str] | None = None,
    expires_at_ms: int | None = None,
    ttl_ms: int | None = None,
) -> Call[AgentMemoryRecord]:
    """Write a memory for ``identity``, or into a shared scope (an application write: never
    quarantined). Writing a record exactly like an active one returns that one.

    Args:
        identity: whose memory it is (``lead:main``); leave it out when ``scope`` names a
            shared scope.
        title: one line, at most 200 bytes (whitespace runs become one space).
        body: the memory itself, at most 64 KiB.
        tags: tags (trimmed, lowercased, deduplicated and sorted).
        realm: the realm (default: the configured ``[agent_memory] realm``).
        scope: a shared scope to write instead, read by every identity that shares it:
            ``{"kind": "mob", "key": "crew"}``, ``{"kind": "operator", "key": "ops"}`` (with
            ``operator_scope`` on), or ``{"kind": "realm"}``.
        expires_at_ms: when it expires (Unix ms, in the future): from then on it is never
            recalled or injected, lists as ``expired``, and the upkeep deletes it.
        ttl_ms: or: expire this many milliseconds after the write.

    Returns:
        The record as stored (a record exactly like an active one that never expires is that one).

    Raises:
        InvalidParams: a field broke a rule (the message names it).
        WriteRefused: the store validator refused it (a secret, a cap); ``rule`` says which.
        CapabilityUnavailable: agent memory is not enabled.
        StorageRefused: the realm's store cannot be served (``StoreUnavailable``: its database
            failed the call; nothing was written).
    """
    params = _drop_none(
        identity=identity,
        title=title,
        body=body,
        tags=tags,
        realm=realm,
        scope=scope,
        expires_at_ms=expires_at_ms,
        ttl_ms=ttl_ms,
    )
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
    scopes: list[str] | None = None,
    wait_for_vectors: bool | None = None,
    min_score: float | None = None,
) -> Call[list[AgentMemoryRecord]]:
    """Recall ``identity``'s active memories, by context or the newest: its own, and those of the
    scopes it shares (its mob, the operator scopes with ``operator_scope`` on, the realm scope, as
    far as the access rules let it read them), ranked together. Each record names its scope.

    Args:
        identity: whose memory to recall.
        realm: the realm (default: the configured ``[agent_memory] realm``).
        selection: ``"contextual"`` ranks records against the query; ``"always"`` returns the
            newest (default: the configured ``selection``).
        query_text: what to recall by (the turn's text, a question).
        query_terms: extra query terms.
        max_entries: how many records at most, 1..64 (default: the configured ``max_entries``).
        tags: keep only records carrying every one of these tags, before the ``max_entries`` cut.
        scopes: only these kinds of the identity's scopes (``identity``, ``mob``, ``operator``,
            ``realm``).
        wait_for_vectors: with ``recall = "hybrid"``, first wait (at most ``recall_timeout_ms``)
            until the vectors cover every record acknowledged before the call: read-your-writes by
            meaning. (The wire result's ``vectors_behind`` says whether they did.)
        min_score: only records scoring at least this, 0 to 1 (contextual recall only).

    Returns:
        The records, best first, each with its ``score`` (contextual recall: 0 to 1, never rising
        down the list; ``None`` for ``always``).

    Raises:
        InvalidParams: a parameter broke a rule (the message names it).
        CapabilityUnavailable: agent memory is not enabled, or ``recall = "hybrid"`` and the
            embedding model cannot run (in process: its subclass ``EmbedderUnavailable``).
        StorageRefused: the realm's store cannot be served.
    """
    params = _drop_none(
        identity=identity,
        realm=realm,
        selection=selection,
        query_text=query_text,
        query_terms=query_terms,
        max_entries=max_entries,
        tags=tags,
        scopes=scopes,
        wait_for_vectors=wait_for_vectors,
        min_score=min_score,
    )
    return Call(
        "meta/agent_memory/recall",
        params,
        lambda r: [AgentMemoryRecord.from_wire(x) for x in r["records"]],
        idempotent=True,
    )


class NoExpiry:
    """The type of :data:`NO_EXPIRY`."""

    def __repr__(self) -> str:
        return "NO_EXPIRY"


NO_EXPIRY: Final = NoExpiry()
"""``update_agent_memory(..., expires_at_ms=NO_EXPIRY)``: the new version never expires (the
wire's ``expires_at_ms: null``), whatever the version it replaces did."""


def update_agent_memory(
    identity: str | None,
    memory_id: str,
    *,
    title: str,
    body: str,
    tags: list[str] | None = None,
    realm: str | None = None,
    scope: dict[str, str] | None = None,
    expires_at_ms: int | NoExpiry | None = None,
    ttl_ms: int | None = None,
) -> Call[AgentMemoryUpdateResult]:
    """Replace a memory: a new record supersedes ``memory_id`` within its own scope's lineage.

    Args:
        identity: whose memory it is (``None`` with a shared ``scope``).
        scope: the shared scope the record lives in (as :func:`remember_agent_memory` takes it).
        memory_id: the active record to replace.
        title: the new title (one line, at most 200 bytes).
        body: the new body (at most 64 KiB).
        tags: the new record's tags.
        realm: the realm (default: the configured ``[agent_memory] realm``).
        expires_at_ms: when the new version expires (Unix ms); :data:`NO_EXPIRY`: never, whatever
            the replaced version did; without it (and ``ttl_ms``), it keeps the replaced
            version's expiry.
        ttl_ms: or: expire this many milliseconds after the update.

    Returns:
        The new record's id and the id it supersedes.

    Raises:
        InvalidParams: a field broke a rule (the message names it).
        WriteRefused: the validator refused it (``unknown-record``, ``supersede-inactive``,
            ``outside-own-scope``, a secret, ...); ``rule`` says which.
        CapabilityUnavailable: agent memory is not enabled.
        StorageRefused: the realm's store cannot be served.
    """
    params = _drop_none(
        identity=identity,
        memory_id=memory_id,
        title=title,
        body=body,
        tags=tags,
        realm=realm,
        scope=scope,
        expires_at_ms=expires_at_ms,
        ttl_ms=ttl_ms,
    )
    if expires_at_ms is NO_EXPIRY:
        params["expires_at_ms"] = None  # given as null: no expiry (absent would keep the prior's)
    return Call("meta/agent_memory/update", params, lambda r: AgentMemoryUpdateResult(**r))


def forget_agent_memory(
    identity: str | None, memory_id: str, *, realm: str | None = None, scope: dict[str, str] | None = None
) -> Call[AgentMemoryForgetResult]:
    """Forget a memory: it is tombstoned and never recalled or injected again (text already in a
    model's context stays there).

    Args:
        identity: whose memory it is (``None`` with a shared ``scope``).
        scope: the shared scope the record lives in (as :func:`remember_agent_memory` takes it).
        memory_id: the record to forget.
        realm: the realm (default: the configured ``[agent_memory] realm``).

    Returns:
        The id, and ``deleted``: false when the record was absent, already forgotten or another
        identity's.

    Raises:
        InvalidParams: a parameter broke a rule (the message names it).
        CapabilityUnavailable: agent memory is not enabled.
        StorageRefused: the realm's store cannot be served.
    """
    params = _drop_none(identity=identity, memory_id=memory_id, realm=realm, scope=scope)
    return Call("meta/agent_memory/forget", params, lambda r: AgentMemoryForgetResult(**r))


def purge_agent_memory(
    identity: str,
    memory_id: str | None = None,
    *,
    memory_ids: list[str] | None = None,
    all: bool = False,
    realm: str | None = None,
) -> Call[AgentMemoryPurgeReceipt]:
    """Erase for real: ``memory_id``'s whole lineage (its versions, released successors,
    quarantined originals, promoted copies), or with ``all=True`` everything of ``identity`` in
    the realm. No file or table keeps the text afterwards; the receipt keeps ids and content
    hashes. Needs ``agent.memory.admin`` on the console; an application key purges only within
    its realms.

    Args:
        identity: whose memory it is.
        memory_id: the record whose lineage to purge.
        memory_ids: several records (at most 1,000), purged together.
        all: purge everything of the identity. Exactly one of the three.
        realm: the realm (default: the configured ``[agent_memory] realm``).

    Returns:
        The receipt.

    Raises:
        UnknownRecord: ``memory_id`` is not a record of the identity's scope.
        InvalidParams: not exactly one of ``memory_id``, ``memory_ids`` and ``all`` (the
            message names them).
        AccessDenied: the caller may not purge this identity's memory.
        StorageRefused: the realm's store cannot be served, or the purge could not finish
            rewriting its files (``purge_incomplete``: the rewrite is owed, and the upkeep does it).
    """
    params = _drop_none(
        identity=identity, memory_id=memory_id, memory_ids=memory_ids, realm=realm, all=all or None
    )
    return Call("meta/agent_memory/purge", params, AgentMemoryPurgeReceipt.from_wire)


def propose_agent_memory(
    scope: dict[str, str],
    *,
    title: str,
    body: str,
    description: str | None = None,
    tags: list[str] | None = None,
    kind: str | None = None,
    realm: str | None = None,
) -> Call[dict[str, Any]]:
    """Queue a proposal for a mob's or an operator's shared memory, for an operator to accept or
    reject on the console (an application proposal: authored ``application``, never tainted).

    Args:
        scope: the scope an accept commits into, as on the wire: ``{"kind": "mob", "key":
            "crew"}``, or ``{"kind": "operator", "key": ...}`` (only with ``[agent_memory]
            operator_scope = "provisional"``).
        title: one line, at most 200 bytes (whitespace runs become one space).
        body: the proposed memory, at most 64 KiB.
        description: a one-line summary, at most 400 bytes.
        tags: tags (trimmed, lowercased, deduplicated and sorted).
        kind: the record kind an accept gives it (default ``fact``).
        realm: the realm (default: the configured ``[agent_memory] realm``).

    Returns:
        ``proposal_id``, ``realm``, ``scope_kind``, ``scope_key``, ``status`` (``pending``),
        ``tainted`` (false) and the ``content_hash`` a decision binds to.

    Raises:
        InvalidParams: a field broke a rule, or an operator scope while ``operator_scope`` is off
            (the message names it).
        WriteRefused: a text holds a secret, or breaks a cap; ``rule`` says which.
        CapabilityUnavailable: agent memory is not enabled.
    """
    params = _drop_none(
        scope=scope,
        title=title,
        body=body,
        description=description,
        tags=tags,
        kind=kind,
        realm=realm,
    )
    return Call("meta/agent_memory/propose", params, dict)


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
    """One page of ``identity``'s records by filter, newest updated first. The time bounds are
    half-open: "after" is inclusive, "before" exclusive.

    Args:
        identity: whose records; on the console, leave it out for the realm's records as far as
            the caller's grants reach.
        realm: the realm (default: the configured ``[agent_memory] realm``).
        status: ``active`` (default), ``quarantined``, ``superseded``, ``tombstoned``, or ``any``.
        kind: keep this record kind only (``fact``, ``preference``, ...).
        tags_any: keep records carrying at least one of these tags.
        tags_all: keep records carrying every one of these tags.
        created_after_ms: keep records created at or after this Unix ms.
        created_before_ms: keep records created before this Unix ms.
        updated_after_ms: keep records updated at or after this Unix ms.
        updated_before_ms: keep records updated before this Unix ms.
        limit: records per page, 1..200 (default 50).
        cursor: the previous page's ``next_cursor``.

    Returns:
        The page; its ``next_cursor`` is ``None`` on the last one.

    Raises:
        InvalidParams: a filter broke a rule, or the cursor is not one this method gave.
        CapabilityUnavailable: agent memory is not enabled.
        AccessDenied: on the console, the caller may not read those records.
    """
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
    """One record by id, whatever its status, with the id of its current successor.

    Args:
        identity: whose record it is.
        memory_id: the record's id.
        realm: the realm (default: the configured ``[agent_memory] realm``).

    Returns:
        The record, and ``successor``: the id that replaced it (after an update, or a release).

    Raises:
        UnknownRecord: no record in the identity's scope has the id.
        InvalidParams: a parameter broke a rule (the message names it).
        CapabilityUnavailable: agent memory is not enabled.
    """
    params = _drop_none(identity=identity, memory_id=memory_id, realm=realm)
    return Call("meta/agent_memory/get", params, AgentMemoryLookup.from_wire, idempotent=True)


def agent_memory_history(
    identity: str, memory_id: str, *, realm: str | None = None
) -> Call[AgentMemoryHistory]:
    """A record's lineage, oldest first: every version (updates, the quarantined record a release
    came from, the release), each with the reason it ended.

    Args:
        identity: whose record it is.
        memory_id: the id of any version in the lineage.
        realm: the realm (default: the configured ``[agent_memory] realm``).

    Returns:
        The history: ``versions`` oldest first, the current one last.

    Raises:
        UnknownRecord: no record in the identity's scope has the id.
        InvalidParams: a parameter broke a rule (the message names it).
        CapabilityUnavailable: agent memory is not enabled.
    """
    params = _drop_none(identity=identity, memory_id=memory_id, realm=realm)
    return Call("meta/agent_memory/history", params, AgentMemoryHistory.from_wire, idempotent=True)


def memory_tool_definitions(format: str = "json_schema") -> Call[list[dict[str, Any]]]:
    """The ``memory`` tool's definition, to offer the LLM beside the host's own tools.

    Args:
        format: ``json_schema`` (the MCP shape), ``openai``, ``openai_responses`` or ``anthropic``.

    Returns:
        The tool definitions in that format: one, or none when the recorder tool is off.

    Raises:
        InvalidParams: an unknown format.
    """
    return Call(
        "meta/session/tool_definitions", {"format": format}, lambda r: list(r["tools"]), idempotent=True
    )


def report_tool_result(
    identity: str,
    tool_name: str,
    *,
    realm: str | None = None,
    provenance: dict[str, Any] | None = None,
    server_tool: bool = False,
    is_error: bool = False,
) -> Call[dict[str, bool]]:
    """Report a tool result the host is about to hand to ``identity``'s LLM before it has opened
    a session for it (with a session, use :meth:`~meta_memory.api.Session.tool_result`). An
    untrusted result taints every session the identity has open in the realm, or, when none is
    open, is held as pending taint that its next session takes.

    Args:
        identity: whose LLM reads the result.
        tool_name: the tool whose result this is.
        realm: the realm of the identity's sessions (default: the configured ``[agent_memory] realm``).
        provenance: where the tool's output came from (classified by the config's trust rules).
        server_tool: a tool the LLM provider ran itself (always untrusted).
        is_error: the tool failed (an untrusted tool's error is still untrusted content).

    Returns:
        ``trusted`` (the verdict on this result) and ``tainted``.

    Raises:
        InvalidParams: a parameter broke a rule.
    """
    params = {
        "identity": identity,
        "tool_name": tool_name,
        "server_tool": server_tool,
        "is_error": is_error,
        **_drop_none(realm=realm, provenance=provenance),
    }
    return Call("meta/session/tool_result", params, dict)


def status() -> Call[dict[str, Any]]:
    """The runtime's status.

    Returns:
        ``contract_version``, ``version``, ``state_dir``, ``features`` and ``storage`` (the census).
    """
    return Call("meta/status", None, dict, idempotent=True)


def capabilities() -> Call[dict[str, Any]]:
    """What this surface offers this caller.

    Returns:
        ``contract_version``, ``methods`` (the names this caller may call here) and ``storage``.
    """
    return Call("meta/capabilities", None, dict, idempotent=True)


def discover() -> Call[dict[str, Any]]:
    """This surface's OpenRPC document.

    Returns:
        The OpenRPC 1.3 document: every method's params and result as JSON Schema.
    """
    return Call("rpc.discover", None, dict, idempotent=True)


def timeline_query(*, after: str | None = None, limit: int | None = None) -> Call[dict[str, Any]]:
    """Stored timeline events, oldest first.

    Args:
        after: return the events after this ``event_id`` (a previous result's ``next_after``).
        limit: how many events at most, 1..500 (default 100).

    Returns:
        ``events`` (envelopes) and ``next_after``, the ``after`` of the next page.

    Raises:
        InvalidParams: a parameter broke a rule.
        CapabilityUnavailable: this runtime has no persisted timeline.
    """
    return Call("meta/timeline/query", _drop_none(after=after, limit=limit), dict, idempotent=True)


def storage_doctor(state_dir: str, *, identity: str | None = None) -> Call[dict[str, Any]]:
    """The storage doctor's read-only report on a state directory.

    Args:
        state_dir: the directory to diagnose (over HTTP: the gateway's own only).
        identity: also count this identity's records.

    Returns:
        The report: ``findings``, errors first, and the realm inventory.

    Raises:
        InvalidParams: over HTTP, ``state_dir`` is not the gateway's own.
    """
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
    """Ask the gate whether ``action`` may run, or must wait for approval. An active ledger
    conflict on (``entity``, ``topic``) turns an r2/r3 action into ``safe_draft``.

    Args:
        action: what the actor wants to do.
        actor_id: who wants to do it.
        risk_tier: ``r0`` to ``r3`` (case-insensitive).
        rationale: why the actor wants to.
        requested_approver: whom the actor asks to approve.
        approval_recipient: where the approval request goes.
        approval_channel: the channel it goes through.
        approval_timeout_ms: how long the approval may take (clamped into the configured bounds).
        entity: the ledger key's entity the action touches.
        topic: the ledger key's topic the action touches.

    Returns:
        The verdict: ``action_id``, ``outcome``, ``pending_id`` (when it waits), ``deadline_at_ms``
        and ``audit_id``.

    Raises:
        InvalidParams: a parameter broke a rule (the message names it).
    """
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
    """Approve, reject or escalate a pending action.

    A gated memory promotion (the steward's ``memory.quarantine_promote`` and
    ``memory.proposal_promote`` entries) is decided only by a quarantine reviewer on the console,
    never through this application surface.

    Args:
        pending_id: the ``pending_id`` :meth:`gating_evaluate` returned.
        approver_id: who decides; with a token, the token's subject.
        decision: ``approve``, ``reject`` or ``escalate`` (case-insensitive).
        reason: why.

    Returns:
        The decision as recorded: ``pending_id``, ``outcome`` and ``audit_id``.

    Raises:
        InvalidParams: a parameter broke a rule, or the decision was refused: ``data.reason`` is
            ``approver_not_caller`` (not the token's subject), ``self_approval``,
            ``approver_mismatch``, ``unknown_pending``, ``expired_pending`` or
            ``resolved_pending`` (in process: its subclass ``GatingDecisionRefused``).
        AccessDenied: the entry is a gated memory promotion (``data.action`` is
            ``memory.quarantine.review``).
    """
    params = _drop_none(pending_id=pending_id, approver_id=approver_id, decision=decision, reason=reason)
    return Call("meta/gating/decide", params, dict)


def gating_pending() -> Call[list[dict[str, Any]]]:
    """The actions waiting for approval (on this application surface, without the gated memory
    promotions only a console reviewer decides).

    Returns:
        One object per pending action.
    """
    return Call("meta/gating/pending", None, lambda r: list(r["pending"]), idempotent=True)


def gating_audit(*, limit: int | None = None) -> Call[list[dict[str, Any]]]:
    """The gating audit trail, newest first.

    Args:
        limit: how many entries at most, 1..500 (default 50).

    Returns:
        The audit entries.

    Raises:
        InvalidParams: ``limit`` is out of range.
    """
    return Call("meta/gating/audit", _drop_none(limit=limit), lambda r: list(r["entries"]), idempotent=True)


def steward_dream(*, realm: str | None = None, mob: str | None = None) -> Call[dict[str, Any]]:
    """Run the memory steward over a realm now.

    Args:
        realm: the realm (default: the configured ``[agent_memory] realm``).
        mob: dream over this mob's records only.

    Returns:
        The dream run's report: ``run_id``, ``status`` and ``items``.

    Raises:
        CapabilityUnavailable: agent memory (and with it the steward) is not enabled.
    """
    return Call("meta/memory/steward/dream", _drop_none(realm=realm, mob=mob), dict)


# -- host sessions (:class:`~meta_memory.api.Session` documents these as its methods) ------------


def open_session(
    identity: str, *, realm: str | None = None, mob: str | None = None
) -> Call[tuple[str, str, str]]:
    """``meta/session/open``: the new session's key, identity and realm."""
    params = _drop_none(identity=identity, realm=realm, mob=mob)
    return Call(
        "meta/session/open", params, lambda r: (str(r["session_key"]), str(r["identity"]), str(r["realm"]))
    )


def _session(verb: str, key: str, read: Callable[[Any], R], **params: Any) -> Call[R]:
    return Call(f"meta/session/{verb}", {"session_key": key, **params}, read)


def _text_and_injected(r: Any) -> tuple[Any, list[str]]:
    return r["text"], list(r["injected"])


def _nothing(r: Any) -> None:
    return None


def session_build_context(key: str) -> Call[tuple[str | None, list[str]]]:
    """``meta/session/build_context``: the memory block's text (or ``None``) and the injected ids."""
    return _session("build_context", key, _text_and_injected)


def session_turn(key: str, message: str) -> Call[tuple[str, list[str]]]:
    """``meta/session/turn``: the turn's text and the injected ids."""
    return _session("turn", key, _text_and_injected, message=message)


def session_tool_result(
    key: str, tool_name: str, *, provenance: dict[str, Any] | None, server_tool: bool, is_error: bool
) -> Call[dict[str, bool]]:
    """``meta/session/tool_result``: ``{trusted, tainted}``."""
    params = {"server_tool": server_tool, "is_error": is_error, **_drop_none(provenance=provenance)}
    return _session("tool_result", key, dict, tool_name=tool_name, **params)


def session_memory_tool(key: str, arguments: dict[str, Any] | str) -> Call[MemoryToolResult]:
    """``meta/session/memory_tool``: the tool result for the LLM."""
    return _session("memory_tool", key, lambda r: MemoryToolResult(**r), arguments=arguments)


def session_peer_message(key: str, sender_session_key: str) -> Call[dict[str, bool]]:
    """``meta/session/peer_message``: ``{tainted}``."""
    return _session("peer_message", key, dict, sender_session_key=sender_session_key)


def session_reset(key: str) -> Call[str]:
    """``meta/session/reset``: the new session's key."""
    return _session("reset", key, lambda r: str(r["session_key"]))


def session_compact(key: str) -> Call[None]:
    """``meta/session/compact``."""
    return _session("compact", key, _nothing)


def session_close(key: str, *, cause: str | None = None) -> Call[str | None]:
    """``meta/session/close``: the exit-interview harvest it queued (``"queued"``), or
    ``"steward_disabled"``, or ``None`` without a ``cause``."""
    return _session("close", key, lambda r: r.get("harvest"), **_drop_none(cause=cause))


# -- the console surface ------------------------------------------------------------------------

CONSOLE_SURFACE = "console"


def _console(method: str, params: dict[str, Any] | None, *, idempotent: bool = True) -> Call[dict[str, Any]]:
    return Call(method, params, dict, idempotent=idempotent, surface=CONSOLE_SURFACE)


def console_quarantine(*, realm: str | None = None, limit: int | None = None) -> Call[dict[str, Any]]:
    """The quarantine queue, as far as the console's access rules let the caller see it.

    Args:
        realm: the realm (default: the configured ``[agent_memory] realm``).
        limit: how many records at most (clamped into 1..200; default 50).

    Returns:
        ``records`` (the quarantined records, each with its ``content_hash``) and ``realms``.

    Raises:
        AccessDenied: the caller may not review that realm.
        MethodNotFound: agent memory is not enabled, so there is no memory panel.
    """
    return _console("meta/memory/panel/quarantine", _drop_none(realm=realm, limit=limit))


def console_record(memory_id: str, *, realm: str | None = None) -> Call[dict[str, Any]]:
    """One record in full, as a reviewer reads it before a decision.

    Args:
        memory_id: the record's id.
        realm: the realm (default: the configured ``[agent_memory] realm``).

    Returns:
        ``realm``, ``record`` (with its body and ``content_hash``), ``chain`` (its supersede
        chain) and ``injections`` (where it was injected).

    Raises:
        UnknownRecord: no record the caller may read has the id.
        AccessDenied: the caller may not read it.
        MethodNotFound: agent memory is not enabled, so there is no memory panel.
    """
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
    """Release or discard a quarantined record, bound to the content hash of the version reviewed;
    the caller's console subject is recorded as the reviewer.

    Args:
        identity: whose record it is.
        memory_id: the quarantined record.
        verdict: ``"release"`` (it becomes recallable) or ``"tombstone"`` (discarded).
        expected_content_hash: the ``content_hash`` of the record as reviewed (64 lowercase hex).
        realm: the realm (default: the configured ``[agent_memory] realm``).
        rationale: why.

    Returns:
        What the decision did: ``outcome`` (``released``, ``tombstoned``, or ``already_...`` for a
        replay), ``origin`` and ``successor`` (the released record, or None) as they stand now,
        and the ``decision`` as audited.

    Raises:
        QuarantineReviewRefused: the record changed since it was read, is not quarantined, or was
            decided already; ``reason`` says which (``content_mismatch``, ``gate_pending``, ...).
        AccessDenied: the caller may not review it.
        ReadOnly: the console is read-only.
        CapabilityUnavailable: agent memory is not enabled.
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


def console_resolve_audit_verdict(
    run_id: str,
    record_id: str,
    action: str,
    *,
    expected_content_hash: str | None = None,
    realm: str | None = None,
    rationale: str | None = None,
) -> Call[dict[str, Any]]:
    """Resolve one of the steward's usage-audit verdicts (``meta/memory/panel/audit_verdicts``
    lists the open ones); the caller's console subject is recorded as the reviewer.

    Args:
        run_id: the dream run that gave the verdict.
        record_id: the record it judges.
        action: ``"acknowledge"`` (the verdict closes, the record stays as it is) or
            ``"tombstone"`` (only for a ``dead_weight`` verdict: the record is tombstoned, and
            every open verdict on it closes).
        expected_content_hash: the ``content_hash`` of the record as read (64 lowercase hex);
            required to tombstone.
        realm: the realm (default: the configured ``[agent_memory] realm``).
        rationale: why.

    Returns:
        What the resolution did: ``outcome`` (``acknowledged``, ``tombstoned``, or
        ``already_...`` for a replay), the ``verdict`` and the ``record`` as they stand now, and
        the ``decision`` as audited.

    Raises:
        AuditVerdictRefused: nothing changed; ``reason`` says why (``unknown_verdict``,
            ``already_resolved``, ``content_mismatch``, ``not_dead_weight``, ``not_active``).
        AccessDenied: the caller may not read the record, or not write (acknowledge) or delete
            (tombstone) its memory.
        ReadOnly: the console is read-only.
        CapabilityUnavailable: agent memory is not enabled.
    """
    params = _drop_none(
        run_id=run_id,
        record_id=record_id,
        action=action,
        expected_content_hash=expected_content_hash,
        realm=realm,
        rationale=rationale,
    )
    return _console("meta/memory/audit_verdicts/resolve", params, idempotent=False)


def console_proposals(*, realm: str | None = None, limit: int | None = None) -> Call[dict[str, Any]]:
    """The open proposals (pending, or held by a dream), newest first, as far as the console's
    access rules let the caller see them; bodies are withheld.

    Args:
        realm: one realm (default: every realm).
        limit: how many at most (clamped into 1..200; default 50).

    Returns:
        ``proposals`` (each with its ``status``, ``tainted`` and ``content_hash``) and ``realms``.

    Raises:
        AccessDenied: the caller may not list proposals (an unscoped ``agent.memory.read``).
        MethodNotFound: agent memory is not enabled, so there is no memory panel.
    """
    return _console("meta/memory/panel/proposals", _drop_none(realm=realm, limit=limit))


def console_proposal(proposal_id: str, *, realm: str | None = None) -> Call[dict[str, Any]]:
    """One proposal in full, as a reviewer reads it before deciding.

    Args:
        proposal_id: the proposal's id.
        realm: its realm (default: the first realm holding the id).

    Returns:
        ``realm`` and ``proposal`` (with its ``body`` and ``content_hash``).

    Raises:
        UnknownRecord: no proposal has the id.
        AccessDenied: the caller may not read the proposal's scope.
        MethodNotFound: agent memory is not enabled, so there is no memory panel.
    """
    return _console("meta/memory/panel/proposal", _drop_none(proposal_id=proposal_id, realm=realm))


def console_decide_proposal(
    proposal_id: str,
    verdict: str,
    *,
    expected_content_hash: str,
    realm: str | None = None,
    rationale: str | None = None,
) -> Call[dict[str, Any]]:
    """Accept or reject a proposal, bound to the content hash of the version read; the caller's
    console subject is recorded as the reviewer.

    Args:
        proposal_id: the proposal.
        verdict: ``"accept"`` (committed into its mob or operator scope; a tainted proposal
            waits on a gated promotion instead) or ``"reject"``.
        expected_content_hash: the ``content_hash`` of the proposal as read (64 lowercase hex).
        realm: the realm (default: the configured ``[agent_memory] realm``).
        rationale: why.

    Returns:
        What the decision did: ``outcome`` (``accepted``, ``rejected``, ``gated``, or
        ``already_...`` for a replay), the ``proposal``, the ``record`` committed and the
        ``pending_id`` of a gated promotion as they stand now, and the ``decision`` as audited.

    Raises:
        ProposalReviewRefused: nothing was written; ``reason`` says why (``content_mismatch``,
            ``already_decided``, ``gate_pending``, ``operator_scope_off``).
        UnknownRecord: no such proposal.
        AccessDenied: the caller may not read the proposal's scope or commit into it.
        ReadOnly: the console is read-only.
        CapabilityUnavailable: agent memory is not enabled.
    """
    params = _drop_none(
        proposal_id=proposal_id,
        verdict=verdict,
        expected_content_hash=expected_content_hash,
        realm=realm,
        rationale=rationale,
    )
    return _console("meta/memory/proposals/decide", params, idempotent=False)
