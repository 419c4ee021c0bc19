"""Access control: the action vocabulary, principals and bearer-token authentication (both HTTP
surfaces), the roster of identity attributes, the rule engine of REFERENCE 6, and the table
of which console method needs which actions."""

from __future__ import annotations

from .actions import ACTIONS, UnknownAction, is_known_action, pattern_matches, validate_pattern
from .engine import AccessEngine, Decision, Resource, requires_quarantine_review
from .principal import ANONYMOUS, AuthenticationFailed, BearerAuthenticator, Principal, hash_token
from .roster import IdentityAttributes, Roster, RosterProvider
from .rpc import RPC_ACCESS, MethodAccess, authorize_method, decide_actions, method_access

__all__ = [
    "ACTIONS",
    "ANONYMOUS",
    "RPC_ACCESS",
    "AccessEngine",
    "AuthenticationFailed",
    "BearerAuthenticator",
    "Decision",
    "IdentityAttributes",
    "MethodAccess",
    "Principal",
    "Resource",
    "Roster",
    "RosterProvider",
    "UnknownAction",
    "authorize_method",
    "decide_actions",
    "hash_token",
    "is_known_action",
    "method_access",
    "pattern_matches",
    "requires_quarantine_review",
    "validate_pattern",
]
