"""What an application key confined to some realms may call on ``POST /rpc``.

``[[rpc.auth.tokens]]`` entries may carry ``realms = [...]``: such a key is for a tenant, and may
touch only those realms' agent memory. :data:`APP_KEY_SCOPE` says, per application method, what
it touches: a realm named by its params (``realm``, else the configured default), the realm of
the host session it names, or nothing realm-specific. A method that is not in the table (the
ledger, gating, the timeline, the storage doctor: state shared by every realm) is refused to a
confined key, so a new method is closed to tenants until it is mapped here. Unconfined keys, and
the trusted channels (stdio, the in-process handle), are not limited by this table.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Literal

from ..errors import AccessDenied
from .principal import Principal

__all__ = ["APP_KEY_SCOPE", "KeyScope", "key_scope", "refuse_outside_realms"]

KeyScope = Literal["realm", "session", "open"]
"""``realm``: the realm the params name (or the default); ``session``: the realm of the session
``session_key`` names; ``open``: nothing realm-specific (any key may call it)."""

APP_KEY_SCOPE: Mapping[str, KeyScope] = MappingProxyType(
    {
        "meta/agent_memory/remember": "realm",
        "meta/agent_memory/recall": "realm",
        "meta/agent_memory/list": "realm",
        "meta/agent_memory/get": "realm",
        "meta/agent_memory/history": "realm",
        "meta/agent_memory/update": "realm",
        "meta/agent_memory/forget": "realm",
        "meta/agent_memory/purge": "realm",
        "meta/agent_memory/propose": "realm",
        "meta/memory/steward/dream": "realm",
        "meta/session/open": "realm",
        "meta/session/build_context": "session",
        "meta/session/turn": "session",
        "meta/session/tool_result": "session",
        "meta/session/memory_tool": "session",
        "meta/session/peer_message": "session",
        "meta/session/reset": "session",
        "meta/session/compact": "session",
        "meta/session/close": "session",
        "meta/session/tool_definitions": "open",
        "meta/status": "open",
        "meta/capabilities": "open",
        "rpc.discover": "open",  # the methods this key may call, as an OpenRPC document
    }
)


def key_scope(method: str) -> KeyScope | None:
    """What ``method`` touches, for a confined key (``None``: shared state, refused to one)."""
    return APP_KEY_SCOPE.get(method)


def refuse_outside_realms(principal: Principal, method: str, realm: str | None) -> None:
    """Raise unless ``principal`` may call ``method`` on ``realm`` (``None``: no realm applies).

    Raises:
        AccessDenied: -32030, the key is confined to other realms, or the method touches state
            every realm shares.
    """
    if principal.realms is None:
        return
    allowed = ", ".join(sorted(principal.realms))
    if key_scope(method) is None:
        raise AccessDenied(
            "rpc.unconfined",
            method,
            message=f"access denied: {method} reaches state every realm shares; this key is confined to "
            f"realm(s) {allowed}",
        )
    if realm is not None and realm not in principal.realms:
        raise AccessDenied(
            "rpc.realm",
            realm,
            message=f"access denied: realm {realm!r} is outside this key's realm(s) {allowed}",
        )
