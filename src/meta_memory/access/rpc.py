"""Which console JSON-RPC method needs which actions, as data, and the one check that applies it.

:data:`RPC_ACCESS` is REFERENCE 6's mapping (remember → ``agent.memory.write``; forget →
``agent.memory.delete``; recall and manifest → ``agent.memory.read`` and ``agent.view``; doctor →
``runtime.admin``; a quarantine decision → review + view + read, plus write to release or delete
to tombstone) extended to every console method, each with how its actions are checked (its
*gate*) and whether it mutates, since a read-only console refuses mutating methods with -32010.
A decision on a gated memory promotion also needs an unscoped ``memory.quarantine.review``
(:func:`require_promotion_reviewer`), which the gating handler checks on the entry it decides;
a decision on a proposal is judged on the proposal's scope once it is read
(:func:`require_proposal_decider`).
A console method missing from the table needs ``runtime.admin``, so a new method is closed until
it is mapped. The stdio and ``POST /rpc`` surfaces are the trusted SDK channel and are not checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from ..errors import AccessDenied, ReadOnly
from .actions import (
    AGENT_MEMORY_ADMIN,
    AGENT_MEMORY_DELETE,
    AGENT_MEMORY_READ,
    AGENT_MEMORY_WRITE,
    AGENT_VIEW,
    CONSOLE_READ,
    GATING_DECIDE,
    GATING_VIEW,
    MEMORY_QUARANTINE_REVIEW,
    MOB_MEMORY_COMMIT,
    MOB_MEMORY_READ,
    OPERATOR_MEMORY_READ,
    RUNTIME_ADMIN,
    TIMELINE_READ,
)
from .engine import AccessEngine, Resource
from .principal import Principal

__all__ = [
    "AUDIT_VERDICT_RESOLVE",
    "PROPOSALS_DECIDE",
    "QUARANTINE_DECIDE",
    "RPC_ACCESS",
    "UNMAPPED_METHOD",
    "Gate",
    "MethodAccess",
    "authorize_method",
    "authorize_scope_write",
    "decide_actions",
    "may_review_promotions",
    "method_access",
    "require_promotion_reviewer",
    "require_proposal_decider",
    "require_verdict_resolver",
]

Gate = Literal["identity", "unscoped", "any", "rows"]
"""How a method's actions are checked.

``identity``: on the identity named by the params; ``unscoped``: resource-less (only unscoped
grants); ``any``: the caller may hold the action on some resource (the subsystem then filters
what it returns); ``rows``: no entry check, the subsystem checks each row or record itself.
"""

QUARANTINE_DECIDE = "meta/memory/quarantine/decide"
PROPOSALS_DECIDE = "meta/memory/proposals/decide"
AUDIT_VERDICT_RESOLVE = "meta/memory/audit_verdicts/resolve"


@dataclass(frozen=True, slots=True)
class MethodAccess:
    """What a console method needs: ``actions`` (all of them, in order) checked per ``gate``."""

    actions: tuple[str, ...]
    gate: Gate
    mutating: bool = False


_READ_VIEW = (AGENT_MEMORY_READ, AGENT_VIEW)
_UNSCOPED_READ = MethodAccess((AGENT_MEMORY_READ,), "unscoped")

RPC_ACCESS: Mapping[str, MethodAccess] = MappingProxyType(
    {
        "meta/status": MethodAccess((CONSOLE_READ,), "unscoped"),
        # Capabilities are always answerable; the list itself is filtered per caller.
        "meta/capabilities": MethodAccess((), "rows"),
        # Like capabilities: it describes the methods this caller could use, and nothing else.
        "rpc.discover": MethodAccess((), "rows"),
        "meta/agent_memory/remember": MethodAccess((AGENT_MEMORY_WRITE,), "identity", mutating=True),
        "meta/agent_memory/update": MethodAccess((AGENT_MEMORY_WRITE,), "identity", mutating=True),
        "meta/agent_memory/forget": MethodAccess((AGENT_MEMORY_DELETE,), "identity", mutating=True),
        # Erasure for real: the reserved admin action, on the identity (REFERENCE 6).
        "meta/agent_memory/purge": MethodAccess((AGENT_MEMORY_ADMIN,), "identity", mutating=True),
        "meta/agent_memory/recall": MethodAccess(_READ_VIEW, "identity"),
        # As the panel's records and record: the caller's grants judge the identity named and each
        # record (panel.Viewer), read and view, plus review for quarantined content.
        "meta/agent_memory/list": MethodAccess((), "rows"),
        "meta/agent_memory/get": MethodAccess((), "rows"),
        "meta/agent_memory/history": MethodAccess((), "rows"),
        "meta/agent_memory/manifest": MethodAccess(_READ_VIEW, "identity"),
        # Plus agent.memory.write (release) or agent.memory.delete (tombstone): see decide_actions.
        QUARANTINE_DECIDE: MethodAccess((MEMORY_QUARANTINE_REVIEW, *_READ_VIEW), "identity", mutating=True),
        "meta/memory/panel/records": MethodAccess((), "rows"),
        "meta/memory/panel/record": MethodAccess((), "rows"),
        "meta/memory/panel/quarantine": MethodAccess((MEMORY_QUARANTINE_REVIEW,), "any"),
        # A dream reviews every identity's quarantine in the realm: an unscoped review grant.
        "meta/memory/steward/dream": MethodAccess((MEMORY_QUARANTINE_REVIEW,), "unscoped", mutating=True),
        "meta/memory/panel/dreams": _UNSCOPED_READ,
        "meta/memory/panel/dream_runs": _UNSCOPED_READ,
        "meta/memory/panel/audit_verdicts": _UNSCOPED_READ,
        # The entry gate only: the record's own grants decide once it is read
        # (require_verdict_resolver).
        AUDIT_VERDICT_RESOLVE: MethodAccess((AGENT_MEMORY_READ,), "any", mutating=True),
        "meta/memory/panel/overview": _UNSCOPED_READ,
        "meta/memory/panel/proposals": _UNSCOPED_READ,
        # As records and record: the proposal's scope decides (read it, and for a decision the
        # scope's write grant: require_proposal_decider), once the proposal is read.
        "meta/memory/panel/proposal": MethodAccess((), "rows"),
        PROPOSALS_DECIDE: MethodAccess((), "rows", mutating=True),
        "meta/memory/panel/injections": _UNSCOPED_READ,
        "meta/memory/panel/harvests": _UNSCOPED_READ,
        "meta/storage/doctor": MethodAccess((RUNTIME_ADMIN,), "unscoped"),
        "meta/gating/pending": MethodAccess((GATING_VIEW,), "unscoped"),
        "meta/gating/audit": MethodAccess((GATING_VIEW,), "unscoped"),
        # Plus an unscoped memory.quarantine.review on a gated memory promotion's entry: see
        # require_promotion_reviewer.
        "meta/gating/decide": MethodAccess((GATING_DECIDE,), "unscoped", mutating=True),
        "meta/gating/evaluate": MethodAccess((RUNTIME_ADMIN,), "unscoped", mutating=True),
        "meta/timeline/query": MethodAccess((TIMELINE_READ,), "any"),
    }
)

UNMAPPED_METHOD = MethodAccess((RUNTIME_ADMIN,), "unscoped", mutating=True)
"""What a console method absent from :data:`RPC_ACCESS` needs: closed until it is mapped."""


def method_access(method: str) -> MethodAccess:
    return RPC_ACCESS.get(method, UNMAPPED_METHOD)


def decide_actions(verdict: str) -> tuple[str, ...]:
    """Every action a quarantine decision needs, in the order denials are reported.

    Raises:
        ValueError: ``verdict`` is neither ``release`` nor ``tombstone`` (parse params first).
    """
    extra = {"release": AGENT_MEMORY_WRITE, "tombstone": AGENT_MEMORY_DELETE}.get(verdict)
    if extra is None:
        raise ValueError(f"verdict must be 'release' or 'tombstone' (got {verdict!r})")
    return (*RPC_ACCESS[QUARANTINE_DECIDE].actions, extra)


def authorize_method(
    engine: AccessEngine,
    principal: Principal,
    method: str,
    *,
    read_only: bool = False,
    identity: str | None = None,
    mob: str | None = None,
    record_id: str | None = None,
    verdict: str | None = None,
) -> None:
    """Refuse a console call its caller may not make; call it after the params parsed.

    Args:
        read_only: the console is ``[console] read_only``; mutating methods are refused first.
        identity: the identity the params name (``identity`` gate).
        mob: the identity's mob as the record knows it (console name on a shared console).
        record_id: the record a quarantine decision is about; the denial names it.
        verdict: the decision's verdict (required for :data:`QUARANTINE_DECIDE`).

    Raises:
        ReadOnly: -32010, a mutating method on a read-only console.
        AccessDenied: -32030 naming the first action denied.
        ValueError: an ``identity``-gated method without ``identity``, or a decision without a
            valid ``verdict`` (caller bugs).
    """
    access = method_access(method)
    if read_only and access.mutating:
        raise ReadOnly()
    actions = decide_actions(verdict or "") if method == QUARANTINE_DECIDE else access.actions
    if access.gate == "identity":
        if not identity:
            raise ValueError(f"{method} is checked on an identity; pass identity=")
        if record_id is not None:
            resource = Resource.for_record(record_id, identity=identity, mob=mob)
        else:
            resource = Resource.for_identity(identity, mob=mob)
        engine.require_all(principal, actions, resource)
    elif access.gate == "unscoped":
        engine.require_all(principal, actions, None)
    elif access.gate == "any":
        for action in actions:
            if not engine.may_ever(principal, action):
                raise AccessDenied(action, None)


def may_review_promotions(engine: AccessEngine | None, principal: Principal) -> bool:
    """Whether a console caller may decide (and so see) gated memory promotions: an unscoped
    ``memory.quarantine.review`` grant, as a dream needs. An approval moves an identity's
    quarantined content, or a proposal, into a mob's shared memory, across every identity's
    boundary, so a grant scoped to some identities does not reach it."""
    return engine is None or engine.allows(principal, MEMORY_QUARANTINE_REVIEW, None)


def require_promotion_reviewer(engine: AccessEngine | None, principal: Principal, pending_id: str) -> None:
    """Refuse a console decision on a gated memory promotion its caller may not review.

    Raises:
        AccessDenied: -32030 naming ``memory.quarantine.review`` and the pending id.
    """
    if not may_review_promotions(engine, principal):
        raise AccessDenied(MEMORY_QUARANTINE_REVIEW, pending_id)


# What a console caller needs to write, update or forget memory of a shared scope.
_SCOPE_WRITE_ACTION = {"mob": MOB_MEMORY_COMMIT, "operator": AGENT_MEMORY_ADMIN, "realm": AGENT_MEMORY_ADMIN}


def authorize_scope_write(
    engine: AccessEngine, principal: Principal, scope_kind: str, scope_key: str
) -> None:
    """Refuse a console write (``remember``, ``update``, ``forget``) to a shared scope its caller
    may not make: ``mob.memory.commit`` on the mob, ``agent.memory.admin`` for an operator or the
    realm scope (an identity scope's writes are checked on the identity, as before).

    Raises:
        AccessDenied: -32030 naming the action.
        ValueError: an identity or unknown scope kind (a caller bug).
    """
    action = _SCOPE_WRITE_ACTION.get(scope_kind)
    if action is None:
        raise ValueError(f"not a shared scope kind: {scope_kind!r}")
    engine.require(principal, action, engine.scope_resource(scope_kind, scope_key))


# What reading a record of each scope needs (as the panel's rows), before a decision about it.
_SCOPE_READS = {
    "identity": (AGENT_MEMORY_READ, AGENT_VIEW),
    "mob": (MOB_MEMORY_READ,),
    "operator": (OPERATOR_MEMORY_READ,),
    "realm": (AGENT_MEMORY_READ,),
}
_VERDICT_ACTIONS = {"acknowledge": AGENT_MEMORY_WRITE, "tombstone": AGENT_MEMORY_DELETE}


def require_verdict_resolver(
    engine: AccessEngine | None,
    principal: Principal,
    action: str,
    *,
    record_id: str,
    scope: tuple[str, str] | None,
    needs_review: bool = False,
) -> None:
    """Refuse a console caller the resolution of a usage-audit verdict on ``record_id``.

    As the console's other record decisions: the caller must read the record (its scope's read
    grants, plus ``memory.quarantine.review`` for quarantined content), then hold the write grant
    of its scope: on an identity's record ``agent.memory.write`` to ``acknowledge`` (a decision
    about that memory) or ``agent.memory.delete`` to ``tombstone``; on a shared scope's, that
    scope's write grant for either (``mob.memory.commit``, or ``agent.memory.admin`` for operator
    and realm scope). A record that is gone (``scope`` ``None``) cannot be judged by its scope: only
    unscoped grants of both actions cover it.

    Raises:
        AccessDenied: -32030 naming the first action denied, with the record id.
        ValueError: an unknown ``action`` or scope kind (a caller bug).
    """
    if action not in _VERDICT_ACTIONS:
        raise ValueError(f"action must be 'acknowledge' or 'tombstone' (got {action!r})")
    if engine is None or not engine.enabled:
        return
    if scope is None:
        for needed in (AGENT_MEMORY_READ, _VERDICT_ACTIONS[action]):
            if not engine.allows(principal, needed, None):
                raise AccessDenied(needed, record_id)
        return
    kind, key = scope
    reads = _SCOPE_READS.get(kind)
    if reads is None:
        raise ValueError(f"unknown scope kind {kind!r}")
    write = _VERDICT_ACTIONS[action] if kind == "identity" else _SCOPE_WRITE_ACTION[kind]
    resource = Resource.for_record(
        record_id,
        identity=key if kind == "identity" else None,
        mob=key if kind == "mob" else None,
        operator=key if kind == "operator" else None,
    )
    review = (MEMORY_QUARANTINE_REVIEW,) if needs_review else ()
    engine.require_all(principal, (*reads, *review, write), resource)


def require_proposal_decider(
    engine: AccessEngine | None, principal: Principal, *, proposal_id: str, scope_kind: str, scope_key: str
) -> None:
    """Refuse a console caller the decision on a proposal: it needs the write grant of the
    proposal's scope (``mob.memory.commit`` on the mob, ``agent.memory.admin`` for operator
    scope), then that scope's read grant (``mob.memory.read``, ``operator.memory.read``): an
    accept writes into the scope, and a reviewer decides only what it may read. A proposal of
    any other scope (a damaged row) needs an unscoped ``agent.memory.admin``.

    Raises:
        AccessDenied: -32030 naming the first action denied, with the proposal id.
    """
    if engine is None or not engine.enabled:
        return
    if scope_kind not in ("mob", "operator"):
        if not engine.allows(principal, AGENT_MEMORY_ADMIN, None):
            raise AccessDenied(AGENT_MEMORY_ADMIN, proposal_id)
        return
    resource = engine.scope_resource(scope_kind, scope_key)
    for action in (_SCOPE_WRITE_ACTION[scope_kind], *_SCOPE_READS[scope_kind]):
        if not engine.allows(principal, action, resource):
            raise AccessDenied(action, proposal_id)
