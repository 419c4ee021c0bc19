"""The rule for a realm name, shared by every surface that accepts one.

A realm names a file under the state dir (one SQLite file per realm) and appears in rendered
memory headers and in the console, so it is held to the same discipline as an identity: text
that is not blank, at most :data:`REALM_MAX_BYTES` bytes of UTF-8, and no control characters
(a newline in a realm would otherwise start a forged line in a prompt's memory header). The
JSON-RPC parameters, the config file, the Python builder, the MCP server's ``--realm`` and the
CLI all apply :func:`realm_problem`, each wording the refusal for its own surface.
"""

from __future__ import annotations

import re

__all__ = ["REALM_MAX_BYTES", "realm_problem"]

REALM_MAX_BYTES = 64
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def realm_problem(value: object) -> str | None:
    """What is wrong with ``value`` as a realm name (to follow ``realm``), or ``None`` if nothing.

    The name is judged as given; callers trim surrounding whitespace before storing it.
    """
    if not isinstance(value, str) or not value.strip():
        return "must be a non-empty string"
    if "\x00" in value:  # said as the boundary says it for every string param
        return "must not contain NUL (U+0000) characters"
    if _CONTROL.search(value):
        return "must not contain control characters"
    try:
        size = len(value.strip().encode("utf-8"))
    except UnicodeEncodeError:  # a lone surrogate: not text any file name could hold
        return "must be valid Unicode text"
    if size > REALM_MAX_BYTES:
        return f"must be at most {REALM_MAX_BYTES} bytes"
    return None
