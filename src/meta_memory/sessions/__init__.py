"""Host sessions: the ``meta/session/*`` calls (``manager``), their typed requests (``params``)
and session keys (``keys``). Sessions are rows of the realm store, not objects of a gateway."""

from __future__ import annotations

from .keys import new_session_key, realm_of_key
from .manager import TRUSTED, Caller, HostSession, SessionManager, ToolOutcome, unknown_session
from .params import (
    MAX_SESSION_KEY_BYTES,
    MemoryToolParams,
    OpenSessionParams,
    PeerMessageParams,
    SessionRef,
    ToolResultParams,
    TurnParams,
    parse_memory_tool,
    parse_open,
    parse_peer_message,
    parse_session_ref,
    parse_tool_result,
    parse_turn,
)

__all__ = [
    "MAX_SESSION_KEY_BYTES",
    "TRUSTED",
    "Caller",
    "HostSession",
    "MemoryToolParams",
    "OpenSessionParams",
    "PeerMessageParams",
    "SessionManager",
    "SessionRef",
    "ToolOutcome",
    "ToolResultParams",
    "TurnParams",
    "new_session_key",
    "parse_memory_tool",
    "parse_open",
    "parse_peer_message",
    "parse_session_ref",
    "parse_tool_result",
    "parse_turn",
    "realm_of_key",
    "unknown_session",
]
