"""Principals and bearer-token authentication for both HTTP surfaces.

A :class:`Principal` is who calls: an authenticated subject with its groups (and, for an
application key, the realms it is confined to), or :data:`ANONYMOUS`. A
:class:`BearerAuthenticator` resolves an ``Authorization`` header value against one surface's
tokens (``[[console.auth.tokens]]`` or ``[[rpc.auth.tokens]]``), which config stores only as
SHA-256 hex digests: a matching ``Bearer <token>`` is that token's principal; anything else
presented (another scheme, a malformed value, a token no entry holds) raises
:class:`AuthenticationFailed`, and so does no header at all once tokens are configured, unless
the surface allows anonymous callers explicitly. A presented credential that does not check
out never degrades to anonymous, because anonymous may hold grants of its own; the HTTP
transport answers a failure with status 401 (400 for a malformed header) before any dispatch.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..config import ConsoleConfig, RpcConfig
from ..errors import ConfigError, MetaError

__all__ = [
    "ANONYMOUS",
    "AuthenticationFailed",
    "BearerAuthenticator",
    "Principal",
    "hash_token",
]

# RFC 6750 b64token: the characters a bearer token may hold on the wire.
_B64TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
_BEARER = re.compile(r"[Bb][Ee][Aa][Rr][Ee][Rr] +(\S+) *")


@dataclass(frozen=True, slots=True)
class Principal:
    """A caller: ``subject`` (``None`` when anonymous), the groups it belongs to, and ``realms``:
    the only realms it may use (``None``: every realm; application keys only)."""

    subject: str | None
    groups: frozenset[str] = field(default_factory=frozenset)
    realms: frozenset[str] | None = None

    def __post_init__(self) -> None:
        if self.subject is None and (self.groups or self.realms is not None):
            raise ValueError("an anonymous principal belongs to no group and is confined to no realm")
        if self.subject is not None and not self.subject.strip():
            raise ValueError("a principal's subject must be a non-empty string")

    @property
    def is_anonymous(self) -> bool:
        return self.subject is None

    def may_use_realm(self, realm: str) -> bool:
        return self.realms is None or realm in self.realms


ANONYMOUS = Principal(None)


class AuthenticationFailed(MetaError):
    """A request did not authenticate.

    ``reason``: ``missing_token`` (no credential where one is required), or the RFC 6750 error
    code ``invalid_request`` (not a well-formed ``Bearer`` credential) or ``invalid_token``
    (well formed, held by no configured token). The HTTP layer answers it with
    :attr:`http_status` and :attr:`www_authenticate`; should it ever reach the JSON-RPC boundary
    instead, it is a -32030 denial with ``data.kind = "unauthenticated"``.
    """

    code = -32030

    def __init__(self, reason: str, *, realm: str = "meta-console", detail: str | None = None) -> None:
        message = "authentication required" if reason == "missing_token" else "authentication failed"
        data: dict[str, Any] = {"kind": "unauthenticated", "reason": reason}
        if detail is not None:
            message, data["detail"] = f"{message}: {detail}", detail
        super().__init__(message, data=data)
        self.reason = reason
        self.realm = realm

    @property
    def http_status(self) -> int:
        return 400 if self.reason == "invalid_request" else 401

    @property
    def www_authenticate(self) -> str:
        # RFC 6750 3.1: a request that carried no credential gets no error code.
        if self.reason == "missing_token":
            return f'Bearer realm="{self.realm}"'
        return f'Bearer realm="{self.realm}", error="{self.reason}"'


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


class BearerAuthenticator:
    """Resolves one surface's ``Authorization`` header values to principals by token hash."""

    def __init__(
        self,
        tokens: Iterable[tuple[str, Principal]],
        *,
        realm: str = "meta-console",
        allow_anonymous: bool | None = None,
        section: str = "console.auth.tokens",
    ) -> None:
        """Build from ``(token_sha256, principal)`` pairs. ``realm`` names the surface in
        ``WWW-Authenticate``; ``allow_anonymous`` (default: only while no token is configured)
        says whether a request without a credential is the anonymous principal.

        Raises:
            ConfigError: two entries hold the same token hash (which principal would it be?).
        """
        entries: list[_Entry] = []
        seen: set[str] = set()
        for digest, principal in tokens:
            if digest in seen:
                raise ConfigError(
                    f"{section}: two entries hold the same token_sha256; each token must be unique"
                )
            seen.add(digest)
            entries.append(_Entry(digest.encode("ascii"), principal))
        self._entries = tuple(entries)
        self.realm = realm
        self.allows_anonymous = allow_anonymous if allow_anonymous is not None else not entries

    @property
    def tokenless(self) -> bool:
        """No token is configured and a call without one is let in: there is nothing to sign in with."""
        return not self._entries and self.allows_anonymous

    @classmethod
    def for_console(cls, console: ConsoleConfig) -> BearerAuthenticator:
        return cls(
            ((t.token_sha256, Principal(t.subject, frozenset(t.groups))) for t in console.auth.tokens),
            realm="meta-console",
            allow_anonymous=console.auth.anonymous_allowed,
        )

    @classmethod
    def for_rpc(cls, rpc: RpcConfig) -> BearerAuthenticator:
        return cls(
            (
                (
                    t.token_sha256,
                    Principal(t.subject, realms=None if t.realms is None else frozenset(t.realms)),
                )
                for t in rpc.auth.tokens
            ),
            realm="meta-rpc",
            section="rpc.auth.tokens",
        )

    @property
    def configured(self) -> bool:
        """Whether any token is configured."""
        return bool(self._entries)

    def authenticate(self, authorization: str | None) -> Principal:
        """The principal for an ``Authorization`` header value (``None``: header absent).

        Raises:
            AuthenticationFailed: no credential where one is required, or one that does not
                check out.
        """
        if authorization is None:
            if self.allows_anonymous:
                return ANONYMOUS
            raise AuthenticationFailed("missing_token", realm=self.realm)
        match = _BEARER.fullmatch(authorization)
        if match is None or not _B64TOKEN.fullmatch(match.group(1)):
            raise AuthenticationFailed("invalid_request", realm=self.realm)
        presented = hashlib.sha256(match.group(1).encode("ascii")).hexdigest().encode("ascii")
        found: Principal | None = None
        # Compare against every entry, without stopping early, so timing says nothing of which matched.
        for entry in self._entries:
            if hmac.compare_digest(presented, entry.digest):
                found = entry.principal
        if found is None:
            # A token sent where none is configured: say so (it is refused all the same, as a
            # client that means to authenticate must learn that it does not).
            detail = (
                "this surface has no tokens configured; send the request without one"
                if not self._entries
                else None
            )
            raise AuthenticationFailed("invalid_token", realm=self.realm, detail=detail)
        return found
