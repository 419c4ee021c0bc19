"""The typed requests of the ``meta/session/*`` methods, parsed from wire params by one rule set
that every surface shares (the dispatcher hands each method's params to its parser here)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import InvalidParams
from ..memory.params import parse_identity, parse_optional_name, parse_realm
from ..trust import ToolProvenance

__all__ = [
    "MAX_SESSION_KEY_BYTES",
    "RETIREMENT_CAUSES",
    "CloseParams",
    "MemoryToolParams",
    "OpenSessionParams",
    "PeerMessageParams",
    "SessionRef",
    "ToolResultParams",
    "TurnParams",
    "parse_close",
    "parse_memory_tool",
    "parse_open",
    "parse_peer_message",
    "parse_session_ref",
    "parse_tool_result",
    "parse_turn",
]

MAX_SESSION_KEY_BYTES = 256
"""Longer than any key the gateway hands out (keys.py); a longer one names no session."""


@dataclass(frozen=True)
class OpenSessionParams:
    identity: str
    realm: str
    mob: str | None


@dataclass(frozen=True)
class SessionRef:
    """A call naming one open session (``build_context``, ``reset``, ``compact``, ``close``)."""

    session_key: str


RETIREMENT_CAUSES = ("retired", "respawned")
"""Why a session ends for good, as ``meta/session/close`` takes it: the identity left the fleet
(``retired``) or goes on as a fresh instance (``respawned``). Either queues an exit-interview
harvest of what the identity learned, for the steward's next dream."""


@dataclass(frozen=True)
class CloseParams(SessionRef):
    """``meta/session/close``: with a retirement ``cause``, the close queues an exit interview."""

    cause: str | None = None


@dataclass(frozen=True)
class TurnParams:
    session_key: str
    message: str


@dataclass(frozen=True)
class ToolResultParams:
    """A tool result to classify: for ``session_key``'s session, or, before the host has one,
    for ``identity`` in ``realm`` (its open sessions, else held as pending taint)."""

    tool_name: str
    provenance: ToolProvenance | None
    server_tool: bool
    is_error: bool
    session_key: str | None
    identity: str | None
    realm: str | None = None


@dataclass(frozen=True)
class PeerMessageParams:
    """The host delivered a message from the session ``sender_session_key`` (another agent's) into
    the session ``session_key``."""

    session_key: str
    sender_session_key: str


@dataclass(frozen=True)
class MemoryToolParams:
    """The LLM's ``memory`` tool call: its ``arguments`` are the tool's to judge (a bad one is a
    tool error the LLM reads, not a JSON-RPC error)."""

    session_key: str
    arguments: Any


def _obj(params: Any) -> dict[str, Any]:
    if not isinstance(params, dict):
        raise InvalidParams("params must be a JSON object")
    return params


def _key(p: dict[str, Any], name: str = "session_key") -> str:
    key = p.get(name)
    if not isinstance(key, str) or not key:
        raise InvalidParams(f"{name} must be a non-empty string")
    if len(key.encode("utf-8", "surrogatepass")) > MAX_SESSION_KEY_BYTES:
        raise InvalidParams(f"{name} must be at most {MAX_SESSION_KEY_BYTES} bytes")
    return key


def parse_open(params: Any, *, default_realm: str) -> OpenSessionParams:
    p = _obj(params)
    return OpenSessionParams(
        parse_identity(p), parse_realm(p) or default_realm, parse_optional_name(p, "mob")
    )


def parse_session_ref(params: Any) -> SessionRef:
    return SessionRef(_key(_obj(params)))


def parse_close(params: Any) -> CloseParams:
    p = _obj(params)
    key = _key(p)
    cause = p.get("cause")
    if cause is not None and (not isinstance(cause, str) or cause not in RETIREMENT_CAUSES):
        allowed = " or ".join(f"'{c}'" for c in RETIREMENT_CAUSES)
        raise InvalidParams(f"cause must be {allowed} when provided (got {cause!r})")
    return CloseParams(key, cause)


def parse_turn(params: Any) -> TurnParams:
    p = _obj(params)
    key = _key(p)
    message = p.get("message")
    if not isinstance(message, str):
        raise InvalidParams("message must be a string")
    return TurnParams(key, message)


def parse_tool_result(params: Any, *, default_realm: str) -> ToolResultParams:
    p = _obj(params)
    tool_name = p.get("tool_name")
    if not isinstance(tool_name, str) or not tool_name.strip():
        raise InvalidParams("tool_name must be a non-empty string")
    provenance = _provenance(p.get("provenance"))
    server_tool = _flag(p, "server_tool")
    is_error = _flag(p, "is_error")
    if "session_key" in p:
        if "identity" in p or "realm" in p:
            # The session names both: a second, possibly different, pair would be ignored.
            raise InvalidParams("give either session_key or identity (and realm), not both")
        return ToolResultParams(tool_name, provenance, server_tool, is_error, _key(p), None)
    # Ingestion before the host has a session: the identity's open sessions, or its pending taint.
    return ToolResultParams(
        tool_name, provenance, server_tool, is_error, None, parse_identity(p), parse_realm(p) or default_realm
    )


def parse_peer_message(params: Any) -> PeerMessageParams:
    p = _obj(params)
    return PeerMessageParams(_key(p), _key(p, "sender_session_key"))


def parse_memory_tool(params: Any) -> MemoryToolParams:
    p = _obj(params)
    return MemoryToolParams(_key(p), p.get("arguments"))


def _flag(p: dict[str, Any], name: str) -> bool:
    value = p.get(name, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise InvalidParams(f"{name} must be a boolean when provided")
    return value


def _provenance(value: Any) -> ToolProvenance | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InvalidParams("provenance must be an object {kind, source_id} when provided")
    kind, source_id = value.get("kind"), value.get("source_id")
    if not isinstance(kind, str) or not kind.strip():
        raise InvalidParams("provenance.kind must be a non-empty string")
    if source_id is not None and not isinstance(source_id, str):
        raise InvalidParams("provenance.source_id must be a string when provided")
    unknown = sorted(set(value) - {"kind", "source_id"})
    if unknown:
        raise InvalidParams(f"unsupported provenance fields: {', '.join(unknown)}")
    return ToolProvenance(kind=kind, source_id=source_id)
