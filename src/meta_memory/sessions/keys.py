"""Session keys: ``sess-<24 hex>.<realm>``, the realm spelled as a realm file's name spells it.

A key carries the realm whose store keeps the session, so any gateway of a deployment (or this one
after a restart) finds the session from the key alone, without a directory of keys. The 96 random
bits are what make a key unguessable; the realm part is routing, not a secret: whoever holds a key
knows the realm it was opened in.
"""

from __future__ import annotations

import re
import secrets

from ..storage.layout import decode_component, encode_component

__all__ = ["new_session_key", "realm_of_key"]

_KEY = re.compile(r"sess-[0-9a-f]{24}\.([A-Za-z0-9_%-]+)")


def new_session_key(realm: str) -> str:
    """A fresh key for a session of ``realm``."""
    return f"sess-{secrets.token_hex(12)}.{encode_component(realm)}"


def realm_of_key(key: str) -> str | None:
    """The realm a key's session lives in, or ``None`` for a string no gateway hands out."""
    match = _KEY.fullmatch(key)
    if match is None:
        return None
    realm = decode_component(match.group(1))
    # Only the canonical spelling: two spellings of one realm would be two keys for one session.
    if realm is None or encode_component(realm) != match.group(1):
        return None
    return realm
