"""The access-control engine: may this principal perform this action on this resource (REFERENCE 6).

Disabled access allows everything; an admin subject is allowed everything. Otherwise each rule
matches on four dimensions, AND across them, OR within each list, an empty one unconstrained:
the principal (``subjects``, where ``"*"`` is any authenticated subject, and ``groups``), the
action (exact, ``prefix.*``, ``*``) and the resource (``agents`` by console name, ``roles``,
``match_labels``). A matching deny wins, else a matching allow, else the check denies. An
anonymous principal matches only rules with neither subjects nor groups. A check without an
identity-bearing resource (a resource-less check, or a mob, operator or realm resource) matches
only rules with no resource selector: an unscoped grant. For an identity the roster does not
know, role and label selectors fail closed (an allow never matches by them, a deny always
does), as does an agent selector whose console name cannot be told; and every agent-scoped deny
covering ``agent.memory.read`` or ``agent.view`` withholds it. Spawn lineage (a rule for an
ancestor applying to its descendants) is out of scope: this runtime has no spawn tree.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from ..config import AccessConfig, AccessRule
from ..errors import AccessDenied, ConfigError
from .actions import (
    AGENT_MEMORY_READ,
    AGENT_VIEW,
    MEMORY_QUARANTINE_REVIEW,
    MOB_MEMORY_READ,
    OPERATOR_MEMORY_READ,
    UnknownAction,
    pattern_matches,
    require_known_action,
    validate_patterns,
)
from .principal import Principal
from .roster import IdentityAttributes, Roster

__all__ = [
    "AccessEngine",
    "Decision",
    "DecisionReason",
    "Resource",
    "ResourceKind",
    "requires_quarantine_review",
]

ResourceKind = Literal["identity", "mob", "operator", "realm", "record"]
DecisionReason = Literal["access_disabled", "admin", "rule_allowed", "rule_denied", "no_rule"]

# Actions for which an agent-scoped deny withholds an identity the roster does not know (REFERENCE 6).
_WITHHELD_WHEN_UNKNOWN = frozenset({AGENT_MEMORY_READ, AGENT_VIEW})
# The read action of each non-identity scope; realm scope is judged resource-less (unscoped grant).
_SCOPE_READ = {"mob": MOB_MEMORY_READ, "operator": OPERATOR_MEMORY_READ, "realm": AGENT_MEMORY_READ}


@dataclass(frozen=True, slots=True)
class Resource:
    """What a check is about, carrying what the selectors need.

    ``identity`` makes a resource identity-bearing (an identity, or a record in identity scope);
    with it, ``mob`` is that identity's mob as the record knows it (used for the console name on a
    shared console when the roster does not say). Without it, ``mob`` / ``operator`` name the
    scope. ``realm`` is informational.
    """

    kind: ResourceKind
    identity: str | None = None
    mob: str | None = None
    operator: str | None = None
    realm: str | None = None
    record_id: str | None = None

    def __post_init__(self) -> None:
        required = {"identity": self.identity, "mob": self.mob, "operator": self.operator}
        if self.kind in required and not required[self.kind]:
            raise ValueError(f"a {self.kind} resource needs its {self.kind}")
        if self.kind == "record" and not self.record_id:
            raise ValueError("a record resource needs its record_id")

    @classmethod
    def for_identity(cls, identity: str, *, mob: str | None = None, realm: str | None = None) -> Resource:
        return cls("identity", identity=identity, mob=mob, realm=realm)

    @classmethod
    def for_mob(cls, mob: str, *, realm: str | None = None) -> Resource:
        return cls("mob", mob=mob, realm=realm)

    @classmethod
    def for_operator(cls, operator: str, *, realm: str | None = None) -> Resource:
        return cls("operator", operator=operator, realm=realm)

    @classmethod
    def for_realm(cls, realm: str) -> Resource:
        return cls("realm", realm=realm)

    @classmethod
    def for_record(
        cls,
        record_id: str,
        *,
        identity: str | None = None,
        mob: str | None = None,
        operator: str | None = None,
        realm: str | None = None,
    ) -> Resource:
        return cls("record", identity=identity, mob=mob, operator=operator, realm=realm, record_id=record_id)

    @property
    def wire_id(self) -> str | None:
        """The ``resource`` of an access-denied error: the record id, else what the resource names."""
        if self.kind == "record":
            return self.record_id
        return {"identity": self.identity, "mob": self.mob, "operator": self.operator}.get(
            self.kind, self.realm
        )


@dataclass(frozen=True, slots=True)
class Decision:
    """The answer to one check, with the rule that decided it (``None`` when no rule did)."""

    allowed: bool
    action: str
    reason: DecisionReason
    rule_id: str | None = None


def requires_quarantine_review(status: str, *, ever_quarantined: bool) -> bool:
    """Whether reading a record also needs ``memory.quarantine.review``.

    Quarantined rows do, and so does a tombstoned row that was ever quarantined (a released or
    discarded original, a quarantined write removed by forget). A live released successor is
    ordinary memory even though it carries ``ever_quarantined``.
    """
    return status == "quarantined" or (status == "tombstoned" and ever_quarantined)


@dataclass(frozen=True, slots=True)
class _Target:
    identity: str | None
    name: str | None
    attrs: IdentityAttributes | None


@dataclass(frozen=True, slots=True)
class _Rule:
    id: str
    deny: bool
    subjects: frozenset[str]
    groups: frozenset[str]
    actions: tuple[str, ...]
    agents: frozenset[str]
    roles: frozenset[str]
    labels: tuple[tuple[str, str], ...]

    @classmethod
    def compile(cls, rule: AccessRule) -> _Rule:
        try:
            actions = validate_patterns(rule.actions)
        except UnknownAction as exc:
            raise ConfigError(f"access rule {rule.id!r}: {exc}") from None
        return cls(
            id=rule.id,
            deny=rule.effect == "deny",
            subjects=frozenset(rule.subjects),
            groups=frozenset(rule.groups),
            actions=actions,
            agents=frozenset(rule.agents),
            roles=frozenset(rule.roles),
            labels=tuple(sorted(rule.match_labels.items())),
        )

    @property
    def scoped(self) -> bool:
        """Whether the rule selects resources; an unscoped rule is a grant over everything."""
        return bool(self.agents or self.roles or self.labels)

    def covers(self, principal: Principal, action: str) -> bool:
        if self.subjects or self.groups:
            if principal.subject is None:
                return False
            if self.subjects and "*" not in self.subjects and principal.subject not in self.subjects:
                return False
            if self.groups and not self.groups & principal.groups:
                return False
        return any(pattern_matches(p, action) for p in self.actions)

    def applies_to(self, target: _Target, action: str) -> bool:
        if not self.scoped:
            return True
        if target.identity is None:
            return False
        # Each selector answers True / False, or None when the console cannot tell; an unknown
        # answer fails closed: it never lets an allow match and always lets a deny match.
        answers = (self._agents(target, action), self._roles(target), self._labels(target))
        return all(a is True or (a is None and self.deny) for a in answers)

    def _agents(self, target: _Target, action: str) -> bool | None:
        if not self.agents:
            return True
        if target.name is None:
            return None
        if target.attrs is None and self.deny and action in _WITHHELD_WHEN_UNKNOWN:
            return None
        return target.name in self.agents

    def _roles(self, target: _Target) -> bool | None:
        if not self.roles:
            return True
        if target.attrs is None:
            return None
        return target.attrs.role is not None and target.attrs.role in self.roles

    def _labels(self, target: _Target) -> bool | None:
        if not self.labels:
            return True
        if target.attrs is None:
            return None
        return all(target.attrs.labels.get(key) == value for key, value in self.labels)


class AccessEngine:
    """Evaluates access checks against one ``[access]`` config and a roster."""

    def __init__(self, config: AccessConfig, roster: Roster | None = None) -> None:
        """
        Raises:
            ConfigError: a rule names an unknown action (config loading refuses this already;
                this guards configs built without validation).
        """
        self.config = config
        self.roster = roster if roster is not None else Roster()
        self._admins = frozenset(config.admins)
        self._rules = tuple(_Rule.compile(r) for r in config.rules)

    @property
    def enabled(self) -> bool:
        return self.config.enabled

    # -- the check ---------------------------------------------------------------------------

    def check(self, principal: Principal, action: str, resource: Resource | None = None) -> Decision:
        """Decide one action on one resource (``None``: a resource-less check).

        Raises:
            UnknownAction: ``action`` is not in the vocabulary (a caller bug, never a denial).
        """
        require_known_action(action)
        if not self.config.enabled:
            return Decision(True, action, "access_disabled")
        if principal.subject is not None and principal.subject in self._admins:
            return Decision(True, action, "admin")
        target = self._target(resource)
        allowed_by: str | None = None
        for rule in self._rules:
            if not rule.covers(principal, action) or not rule.applies_to(target, action):
                continue
            if rule.deny:
                return Decision(False, action, "rule_denied", rule.id)
            if allowed_by is None:
                allowed_by = rule.id
        if allowed_by is not None:
            return Decision(True, action, "rule_allowed", allowed_by)
        return Decision(False, action, "no_rule")

    def allows(self, principal: Principal, action: str, resource: Resource | None = None) -> bool:
        return self.check(principal, action, resource).allowed

    def require(self, principal: Principal, action: str, resource: Resource | None = None) -> None:
        """Raises:
        AccessDenied: -32030 naming ``action`` and the resource's :attr:`Resource.wire_id`.
        """
        if not self.check(principal, action, resource).allowed:
            raise AccessDenied(action, resource.wire_id if resource is not None else None)

    def require_all(
        self, principal: Principal, actions: Iterable[str], resource: Resource | None = None
    ) -> None:
        """Require every action in order; the error names the first one denied (the governing action)."""
        for action in actions:
            self.require(principal, action, resource)

    def may_ever(self, principal: Principal, action: str) -> bool:
        """Whether some resource exists on which ``action`` could be allowed to ``principal``.

        For capability advertisement and entry gates: true when disabled, for an admin, or when
        an allow rule covers the principal and action and no unscoped deny does.
        """
        require_known_action(action)
        if not self.config.enabled or (principal.subject is not None and principal.subject in self._admins):
            return True
        covering = [r for r in self._rules if r.covers(principal, action)]
        if any(r.deny and not r.scoped for r in covering):
            return False
        return any(not r.deny for r in covering)

    # -- helpers for the panel, review and timeline ------------------------------------------

    def can_read_identity_memory(
        self, principal: Principal, identity: str, *, mob: str | None = None
    ) -> bool:
        """``agent.memory.read`` and ``agent.view`` on the identity."""
        resource = Resource.for_identity(identity, mob=mob)
        return self.allows(principal, AGENT_MEMORY_READ, resource) and self.allows(
            principal, AGENT_VIEW, resource
        )

    def can_read_scope(
        self, principal: Principal, scope_kind: str, scope_key: str, *, mob: str | None = None
    ) -> bool:
        """Whether memory of one scope is visible (REFERENCE 6 panel row visibility).

        identity: read + view on the identity; mob: ``mob.memory.read``; operator:
        ``operator.memory.read`` (never implied by ``agent.memory.read``); realm: an unscoped
        ``agent.memory.read`` grant.

        Raises:
            ValueError: an unknown scope kind.
        """
        if scope_kind == "identity":
            return self.can_read_identity_memory(principal, scope_key, mob=mob)
        action = _SCOPE_READ.get(scope_kind)
        if action is None:
            raise ValueError(f"unknown scope kind {scope_kind!r}")
        return self.allows(principal, action, self.scope_resource(scope_kind, scope_key))

    def can_read_record(
        self,
        principal: Principal,
        *,
        scope_kind: str,
        scope_key: str,
        status: str,
        ever_quarantined: bool,
        mob: str | None = None,
    ) -> bool:
        """Scope visibility, plus ``memory.quarantine.review`` for quarantine-only content."""
        if not self.can_read_scope(principal, scope_kind, scope_key, mob=mob):
            return False
        if not requires_quarantine_review(status, ever_quarantined=ever_quarantined):
            return True
        return self.allows(
            principal, MEMORY_QUARANTINE_REVIEW, self.scope_resource(scope_kind, scope_key, mob=mob)
        )

    @staticmethod
    def scope_resource(scope_kind: str, scope_key: str, *, mob: str | None = None) -> Resource | None:
        """The resource a scope is judged as (``None`` for realm scope: a resource-less check).

        Raises:
            ValueError: an unknown scope kind.
        """
        if scope_kind == "identity":
            return Resource.for_identity(scope_key, mob=mob)
        if scope_kind == "mob":
            return Resource.for_mob(scope_key)
        if scope_kind == "operator":
            return Resource.for_operator(scope_key)
        if scope_kind == "realm":
            return None
        raise ValueError(f"unknown scope kind {scope_kind!r}")

    def _target(self, resource: Resource | None) -> _Target:
        if resource is None or resource.identity is None:
            return _Target(None, None, None)
        attrs, name = self.roster.resolve(resource.identity, mob=resource.mob)
        return _Target(resource.identity, name, attrs)
