"""Which console JSON-RPC method needs which actions, as data, and the one check that applies it.

:data:`RPC_ACCESS` is REFERENCE 6's mapping (remember → ``agent.memory.write``; forget →
``agent.memory.delete``; recall and manifest → ``agent.memory.read`` and ``agent.view``; doctor →
``runtime.admin``; a quarantine decision → review + view + read, plus write to release or delete
to tombstone) extended to every console method, each with how its actions are checked (its
*gate*) and whether it mutates, since a read-only console refuses mutating methods with -32010.
A decision on a gated memory promotion also needs an unscoped ``memory.quarantine.review``
(:func:`require_promotion_reviewer`), which the gating handler checks on the entry it decides.
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
    AGENT_MEMORY_DELETE,
    AGENT_MEMORY_READ,
    AGENT_MEMORY_WRITE,
    AGENT_VIEW,
    CONSOLE_READ,
    GATING_DECIDE,
    GATING_VIEW,
    MEMORY_QUARANTINE_REVIEW,
    RUNTIME_ADMIN,
    TIMELINE_READ,
)
from .engine import AccessEngine, Resource
from .principal import Principal

__all__ = [
    "QUARANTINE_DECIDE",
    "RPC_ACCESS",
    "UNMAPPED_METHOD",
    "Gate",
    "MethodAccess",
    "authorize_method",
    "decide_actions",
    "may_review_promotions",
    "method_access",
    "require_promotion_reviewer",
]

Gate = Literal["identity", "unscoped", "any", "rows"]
"""How a method's actions are checked.

``identity``: on the identity named by the params; ``unscoped``: resource-less (only unscoped
grants); ``any``: the caller may hold the action on some resource (the subsystem then filters
what it returns); ``rows``: no entry check, the subsystem checks each row or record itself.
"""

QUARANTINE_DECIDE = "meta/memory/quarantine/decide"


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
        "meta/agent_memory/recall": MethodAccess(_READ_VIEW, "identity"),
        # As the panel's records and record: the caller's grants judge the identity named and each
        # record (panel.Viewer), read and view, plus review for quarantined content.
        "meta/agent_memory/list": MethodAccess((), "rows"),
        "meta/agent_memory/get": MethodAccess((), "rows"),
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
        "meta/memory/panel/overview": _UNSCOPED_READ,
        "meta/memory/panel/proposals": _UNSCOPED_READ,
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
