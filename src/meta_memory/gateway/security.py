"""The HTTP boundary's guards against other sites and other names: Host, Origin, Content-Type.

A web page the user visits can send requests to ``127.0.0.1``: a ``fetch(..., {mode: "no-cors"})``
with ``Content-Type: text/plain`` needs no preflight, so without these checks any page could
plant application memory (never quarantined, injected into the next prompt). And with DNS
rebinding a page can make its own name resolve to ``127.0.0.1`` and read the replies. So,
before anything else runs (the model is the MCP SDK's transport-security middleware):

- a ``Host`` that is not one of the server's names gets **421** (allowed: the loopback names,
  the host the server is bound to, and ``[http] allowed_hosts``; any port unless an entry names
  one);
- an ``Origin`` that is present and not the server's own (``http://127.0.0.1:<port>``,
  ``http://localhost:<port>``, ``http://[::1]:<port>``, the bound host's, ``[http]
  allowed_origins``) gets **403**, as does a request a browser marks ``Sec-Fetch-Site:
  cross-site`` (a plain navigation to the console page excepted);
- a ``POST`` to a JSON-RPC endpoint that is not ``Content-Type: application/json`` gets **415**:
  a cross-site page cannot send that type without a preflight, which this server never grants.

Every response also carries the usual defensive headers (``X-Content-Type-Options: nosniff``,
``X-Frame-Options: DENY``, ``Referrer-Policy: no-referrer``, ``Cross-Origin-Resource-Policy:
same-origin``, and ``Cache-Control: no-store`` and a restrictive ``Content-Security-Policy`` where
the route set none). A refusal is a JSON-RPC error object with ``data.kind = "http_refused"``.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..config import HttpConfig, normalize_origin

__all__ = ["BoundaryPolicy", "HttpBoundary", "is_loopback_host"]

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
JSON_RPC_PATHS = frozenset({"/rpc", "/console/rpc"})
CONSOLE_PAGE = "/console"

DEFENSIVE_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-resource-policy", b"same-origin"),
)
DEFAULT_CSP = b"default-src 'none'; frame-ancestors 'none'"


def is_loopback_host(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) can only be reached from this machine."""
    name = host.strip().lower().removeprefix("[").removesuffix("]")
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _is_wildcard(host: str) -> bool:
    return host.strip().removeprefix("[").removesuffix("]") in ("", "0.0.0.0", "::")


def _split_host(value: str) -> tuple[str, int | None] | None:
    """``host[:port]`` of a Host header (IPv6 in brackets), lowercased; ``None`` if malformed."""
    value = value.strip().lower()
    if not value or any(c.isspace() or c in "/@?#" for c in value):
        return None
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        host, rest = value[1:end], value[end + 1 :]
    else:
        host, _, port_text = value.partition(":")
        rest = f":{port_text}" if _ else ""
    if rest and (not rest.startswith(":") or not rest[1:].isdigit()):
        return None
    return host, int(rest[1:]) if rest else None


@dataclass(frozen=True)
class BoundaryPolicy:
    """Which Host and Origin values one server accepts."""

    hosts: frozenset[str]  # host names, any port (IPv6 without brackets)
    host_ports: frozenset[tuple[str, int]]  # host names with the one port they may name
    origins: frozenset[str]  # normalized origins (config.normalize_origin)

    @classmethod
    def build(cls, http: HttpConfig, *, bound_host: str, port: int) -> BoundaryPolicy:
        names = list(LOOPBACK_NAMES)
        if not _is_wildcard(bound_host):
            names.append(bound_host.strip().lower().removeprefix("[").removesuffix("]"))
        hosts, host_ports = set(names), set()
        for entry in http.allowed_hosts:
            split = _split_host(entry)
            if split is None:
                continue
            if split[1] is None:
                hosts.add(split[0])
            else:
                host_ports.add((split[0], split[1]))
        own = {normalize_origin("http", name, port) for name in names}
        return cls(frozenset(hosts), frozenset(host_ports), frozenset(own | set(http.allowed_origins)))

    def host_allowed(self, header: str | None) -> bool:
        split = _split_host(header) if header is not None else None
        if split is None:
            return False
        host, port = split
        return host in self.hosts or (port is not None and (host, port) in self.host_ports)

    def origin_allowed(self, header: str) -> bool:
        parsed = urlsplit(header.strip())
        try:
            port = parsed.port
        except ValueError:
            return False
        if parsed.scheme not in ("http", "https") or not parsed.hostname or parsed.path or parsed.query:
            return False
        return normalize_origin(parsed.scheme, parsed.hostname, port) in self.origins


def _is_json(content_type: str | None) -> bool:
    if content_type is None:
        return False
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json"


class HttpBoundary:
    """ASGI middleware applying a :class:`BoundaryPolicy` to every HTTP request. ``on_refusal``
    hears of each refusal with its reason (the request telemetry counts and logs it)."""

    def __init__(
        self, app: ASGIApp, policy: BoundaryPolicy, on_refusal: Callable[[Scope, str], None] | None = None
    ) -> None:
        self.app = app
        self.policy = policy
        self.on_refusal = on_refusal

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self._refusal(scope)
        if refusal is not None:
            if self.on_refusal is not None:
                self.on_refusal(scope, refusal[1])
            await _refuse(send, *refusal)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = _with_defensive_headers(message.get("headers", []), scope["path"])
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def _refusal(self, scope: Scope) -> tuple[int, str, str] | None:
        headers = Headers(scope=scope)
        if not self.policy.host_allowed(headers.get("host")):
            return (
                421,
                "host_not_allowed",
                "this server does not answer for that Host (see [http] allowed_hosts)",
            )
        origin = headers.get("origin")
        if origin is not None and not self.policy.origin_allowed(origin):
            return (
                403,
                "origin_not_allowed",
                "requests from that Origin are refused (see [http] allowed_origins)",
            )
        if headers.get("sec-fetch-site") == "cross-site" and not (
            scope["method"] == "GET"
            and scope["path"] == CONSOLE_PAGE
            and headers.get("sec-fetch-mode") == "navigate"
        ):
            return 403, "cross_site", "cross-site requests are refused"
        if (
            scope["method"] == "POST"
            and scope["path"] in JSON_RPC_PATHS
            and not _is_json(headers.get("content-type"))
        ):
            return (
                415,
                "unsupported_media_type",
                "JSON-RPC requests must be sent as Content-Type: application/json",
            )
        return None


def _with_defensive_headers(raw: Iterable[tuple[bytes, bytes]], path: str) -> list[tuple[bytes, bytes]]:
    headers = list(raw)
    present = {name.lower() for name, _ in headers}
    headers.extend(h for h in DEFENSIVE_HEADERS if h[0] not in present)
    if b"content-security-policy" not in present:
        headers.append((b"content-security-policy", DEFAULT_CSP))
    if b"cache-control" not in present and not path.startswith("/console/static/"):
        headers.append((b"cache-control", b"no-store"))
    return headers


async def _refuse(send: Send, status: int, reason: str, message: str) -> None:
    error: dict[str, Any] = {
        "code": -32600,
        "message": message,
        "data": {"kind": "http_refused", "reason": reason, "status": status},
    }
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
        *DEFENSIVE_HEADERS,
        (b"content-security-policy", DEFAULT_CSP),
        (b"cache-control", b"no-store"),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
