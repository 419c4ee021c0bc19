"""Host sessions: the ``meta/session/*`` calls (``manager``), their typed requests (``params``)
and session keys (``keys``). Sessions are rows of the realm store, not objects of a gateway."""

from __future__ import annotations

from .keys import new_session_key, realm_of_key
from .manager import TRUSTED, Caller, HostSession, SessionClosed, SessionManager, ToolOutcome, unknown_session
from .params import (
    MAX_SESSION_KEY_BYTES,
    RETIREMENT_CAUSES,
    CloseParams,
    MemoryToolParams,
    OpenSessionParams,
    PeerMessageParams,
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
)

__all__ = [
    "MAX_SESSION_KEY_BYTES",
    "RETIREMENT_CAUSES",
    "TRUSTED",
    "Caller",
    "CloseParams",
    "HostSession",
    "MemoryToolParams",
    "OpenSessionParams",
    "PeerMessageParams",
    "SessionClosed",
    "SessionManager",
    "SessionRef",
    "ToolOutcome",
    "ToolResultParams",
    "TurnParams",
    "new_session_key",
    "parse_close",
    "parse_memory_tool",
    "parse_open",
    "parse_peer_message",
    "parse_session_ref",
    "parse_tool_result",
    "parse_turn",
    "realm_of_key",
    "unknown_session",
]
