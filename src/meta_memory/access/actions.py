"""The closed vocabulary of access-control actions and the action patterns rules may name.

An action is a dotted verb from :data:`ACTIONS` (REFERENCE 6: the memory actions plus the console
actions this runtime checks); nothing outside that table can be granted or checked. A rule names
actions with patterns: an exact action, ``prefix.*`` (every action under a dotted prefix, e.g.
``agent.memory.*``), or ``*`` (every action). A pattern that can match no known action, or uses a
wildcard anywhere else, is refused when the config loads, so a typo never silently grants or
withholds nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

__all__ = [
    "ACTIONS",
    "AGENT_MEMORY_ADMIN",
    "AGENT_MEMORY_DELETE",
    "AGENT_MEMORY_READ",
    "AGENT_MEMORY_WRITE",
    "AGENT_VIEW",
    "CONSOLE_READ",
    "GATING_DECIDE",
    "GATING_VIEW",
    "MEMORY_QUARANTINE_REVIEW",
    "MOB_MEMORY_COMMIT",
    "MOB_MEMORY_PROPOSE",
    "MOB_MEMORY_READ",
    "OPERATOR_MEMORY_READ",
    "RUNTIME_ADMIN",
    "TIMELINE_READ",
    "UnknownAction",
    "is_known_action",
    "pattern_matches",
    "require_known_action",
    "validate_pattern",
    "validate_patterns",
]

AGENT_VIEW = "agent.view"
AGENT_MEMORY_READ = "agent.memory.read"
AGENT_MEMORY_WRITE = "agent.memory.write"
AGENT_MEMORY_DELETE = "agent.memory.delete"
AGENT_MEMORY_ADMIN = "agent.memory.admin"
MOB_MEMORY_READ = "mob.memory.read"
MOB_MEMORY_PROPOSE = "mob.memory.propose"
MOB_MEMORY_COMMIT = "mob.memory.commit"
OPERATOR_MEMORY_READ = "operator.memory.read"
MEMORY_QUARANTINE_REVIEW = "memory.quarantine.review"
GATING_VIEW = "gating.view"
GATING_DECIDE = "gating.decide"
RUNTIME_ADMIN = "runtime.admin"
CONSOLE_READ = "console.read"
TIMELINE_READ = "timeline.read"

ACTIONS: Mapping[str, str] = MappingProxyType(
    {
        AGENT_VIEW: "See an identity on the console (roster rows, status, its timeline frames).",
        AGENT_MEMORY_READ: (
            "Read an identity's memory (recall, manifest, panel rows); an unscoped grant also "
            "covers realm-scoped memory and dream history."
        ),
        AGENT_MEMORY_WRITE: "Write an identity's memory (remember, update, a quarantine release).",
        AGENT_MEMORY_DELETE: "Tombstone an identity's memory (forget, a quarantine discard).",
        AGENT_MEMORY_ADMIN: (
            "Administrative operations on memory: writing, updating or forgetting operator- and "
            "realm-scoped memory (console)."
        ),
        MOB_MEMORY_READ: (
            "Read mob-scoped memory: on the console; and, granted to an identity (as the rule's "
            "subject), to have its mob's memory recalled and injected beside its own."
        ),
        MOB_MEMORY_PROPOSE: "Propose a record for mob scope (an identity's agent, as the rule's subject).",
        MOB_MEMORY_COMMIT: "Write, update or forget mob-scoped memory directly (console).",
        OPERATOR_MEMORY_READ: (
            "Read operator-scoped memory; granted only by a rule that matches it, never implied "
            "by agent.memory.read."
        ),
        MEMORY_QUARANTINE_REVIEW: "Read quarantined content and decide quarantined records.",
        GATING_VIEW: "Read gating queues and the gating audit.",
        GATING_DECIDE: "Decide pending gating approvals.",
        RUNTIME_ADMIN: "Operate the runtime: storage doctor and any console method without its own action.",
        CONSOLE_READ: "Read console-level state (runtime status).",
        TIMELINE_READ: "Read the console timeline (query and live stream), still filtered per event.",
    }
)


class UnknownAction(ValueError):
    """A pattern or action outside :data:`ACTIONS`; the message names it."""


def is_known_action(action: str) -> bool:
    return action in ACTIONS


def require_known_action(action: str) -> str:
    """Return ``action`` if it is in the vocabulary.

    Raises:
        UnknownAction: checking an unknown action is a bug in the caller, never a denial.
    """
    if action not in ACTIONS:
        raise UnknownAction(f"unknown action {action!r}")
    return action


def _prefix_of(pattern: str) -> str | None:
    """``"agent.memory"`` for ``"agent.memory.*"``; ``None`` when the pattern is not of that form."""
    if not pattern.endswith(".*"):
        return None
    prefix = pattern[:-2]
    segments = prefix.split(".")
    if not prefix or any(not s or "*" in s for s in segments):
        return None
    return prefix


def validate_pattern(pattern: str) -> str:
    """Return ``pattern`` if it is ``*``, a known action, or a ``prefix.*`` covering one.

    Raises:
        UnknownAction: message ``unknown action '<pattern>'``.
    """
    if pattern == "*" or pattern in ACTIONS:
        return pattern
    prefix = _prefix_of(pattern)
    if prefix is not None and any(a.startswith(prefix + ".") for a in ACTIONS):
        return pattern
    raise UnknownAction(f"unknown action {pattern!r}")


def validate_patterns(patterns: Iterable[str]) -> tuple[str, ...]:
    """Validate every pattern of a rule (at least one).

    Raises:
        UnknownAction: naming the first unknown pattern, or when there are none.
    """
    checked = tuple(validate_pattern(p) for p in patterns)
    if not checked:
        raise UnknownAction("actions must name at least one action")
    return checked


def pattern_matches(pattern: str, action: str) -> bool:
    """Whether one (validated) pattern covers ``action``: equal, ``*``, or under its ``prefix.*``."""
    if pattern == "*" or pattern == action:
        return True
    prefix = _prefix_of(pattern)
    return prefix is not None and action.startswith(prefix + ".")
