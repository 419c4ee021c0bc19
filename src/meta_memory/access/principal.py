"""Console principals and bearer-token authentication.

A :class:`Principal` is who calls the console: an authenticated subject with its groups, or
:data:`ANONYMOUS`. :class:`ConsoleAuthenticator` resolves an ``Authorization`` header value
against the ``[console.auth]`` tokens, which config stores only as SHA-256 hex digests: no
header is anonymous, a matching ``Bearer <token>`` is that token's principal, and anything else
(another scheme, a malformed value, a token no entry holds) raises :class:`AuthenticationFailed`.
A presented credential that does not check out never degrades to anonymous, because anonymous
may hold grants of its own; the HTTP transport answers it with status 401 before any dispatch.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..config import ConsoleConfig
from ..errors import ConfigError, MetaError

__all__ = [
    "ANONYMOUS",
    "AuthenticationFailed",
    "ConsoleAuthenticator",
    "Principal",
    "hash_token",
]

# RFC 6750 b64token: the characters a bearer token may hold on the wire.
_B64TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
_BEARER = re.compile(r"[Bb][Ee][Aa][Rr][Ee][Rr] +(\S+) *")


@dataclass(frozen=True, slots=True)
class Principal:
    """A console caller: ``subject`` (``None`` when anonymous) and the groups it belongs to."""

    subject: str | None
    groups: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        if self.subject is None and self.groups:
            raise ValueError("an anonymous principal belongs to no group")
        if self.subject is not None and not self.subject.strip():
            raise ValueError("a principal's subject must be a non-empty string")

    @property
    def is_anonymous(self) -> bool:
        return self.subject is None


ANONYMOUS = Principal(None)


class AuthenticationFailed(MetaError):
    """A console credential was presented and did not authenticate.

    ``reason`` is the RFC 6750 error code: ``invalid_request`` (not a well-formed ``Bearer``
    credential) or ``invalid_token`` (well formed, held by no configured token). The HTTP layer
    answers it with :attr:`http_status` and :attr:`www_authenticate`; should it ever reach the
    JSON-RPC boundary instead, it is a -32030 denial with ``data.kind = "unauthenticated"``.
    """

    code = -32030

    def __init__(self, reason: str) -> None:
        super().__init__("authentication failed", data={"kind": "unauthenticated", "reason": reason})
        self.reason = reason

    @property
    def http_status(self) -> int:
        return 400 if self.reason == "invalid_request" else 401

    @property
    def www_authenticate(self) -> str:
        return f'Bearer realm="meta-console", error="{self.reason}"'


def hash_token(token: str) -> str:
    """The lowercase SHA-256 hex of a bearer token, as ``[console.auth]`` stores it.

    Raises:
        ValueError: the token is not RFC 6750 ``b64token`` text, so no client could present it.
    """
    if not _B64TOKEN.fullmatch(token):
        raise ValueError(
            "a console token must be non-empty and use only letters, digits and - . _ ~ + / "
            "(with optional trailing =)"
        )
    return hashlib.sha256(token.encode("ascii")).hexdigest()


@dataclass(frozen=True, slots=True)
class _Entry:
    digest: bytes
    principal: Principal


class ConsoleAuthenticator:
    """Resolves ``Authorization`` header values to principals by token hash."""

    def __init__(self, tokens: Iterable[tuple[str, Principal]]) -> None:
        """Build from ``(token_sha256, principal)`` pairs.

        Raises:
            ConfigError: two entries hold the same token hash (which principal would it be?).
        """
        entries: list[_Entry] = []
        seen: set[str] = set()
        for digest, principal in tokens:
            if digest in seen:
                raise ConfigError(
                    "console.auth.tokens: two entries hold the same token_sha256; each token must be unique"
                )
            seen.add(digest)
            entries.append(_Entry(digest.encode("ascii"), principal))
        self._entries = tuple(entries)

    @classmethod
    def from_config(cls, console: ConsoleConfig) -> ConsoleAuthenticator:
        return cls((t.token_sha256, Principal(t.subject, frozenset(t.groups))) for t in console.auth.tokens)

    @property
    def configured(self) -> bool:
        """Whether any token is configured (without one, every caller is anonymous)."""
        return bool(self._entries)

    def authenticate(self, authorization: str | None) -> Principal:
        """The principal for an ``Authorization`` header value (``None``: header absent).

        Raises:
            AuthenticationFailed: a credential was presented and does not check out.
        """
        if authorization is None:
            return ANONYMOUS
        match = _BEARER.fullmatch(authorization)
        if match is None or not _B64TOKEN.fullmatch(match.group(1)):
            raise AuthenticationFailed("invalid_request")
        presented = hashlib.sha256(match.group(1).encode("ascii")).hexdigest().encode("ascii")
        found: Principal | None = None
        # Compare against every entry, without stopping early, so timing says nothing of which matched.
        for entry in self._entries:
            if hmac.compare_digest(presented, entry.digest):
                found = entry.principal
        if found is None:
            raise AuthenticationFailed("invalid_token")
        return found
