"""The ledger backend's optional HTTP health check (REFERENCE §2.7): endpoint URL rules, and one
``GET <prefix>/v1/health`` over a raw TCP socket with 2 s timeouts, where only a 2xx status line is
healthy. Raw sockets rather than an HTTP client keep the probe's failure modes (resolve, connect,
write, read, parse, status) distinct and their messages identical to upstream's.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from typing import NoReturn

from ..errors import ConfigError, MemoryBackendUnavailable
from .model import parse_unsigned, split_whitespace, trim

__all__ = ["HEALTHCHECK_TIMEOUT_S", "HealthCheck", "HealthEndpoint", "os_error_text", "parse_health_endpoint"]

HEALTHCHECK_TIMEOUT_S = 2.0
HEALTH_PATH = "/v1/health"
# Upstream reads the status line with no bound; a hostile endpoint must not make us buffer forever.
_MAX_STATUS_LINE = 64 * 1024
_U16_MAX = 0xFFFF


def os_error_text(exc: BaseException) -> str:
    """An OS error the way upstream (Rust ``io::Error``) prints it: ``<reason> (os error <n>)``."""
    if isinstance(exc, OSError) and exc.strerror:
        text = exc.strerror if exc.errno is None else f"{exc.strerror} (os error {exc.errno})"
        return text if exc.filename is None else f"{text}: {exc.filename}"
    return str(exc) or type(exc).__name__


@dataclass(frozen=True, slots=True)
class HealthEndpoint:
    """A parsed health URL: ``url`` is what messages quote; ``host`` goes in the ``Host`` header."""

    url: str
    host: str
    port: int
    path: str


def parse_health_endpoint(endpoint: str) -> HealthEndpoint:
    """Turn a configured base URL into the health URL it probes.

    Trailing ``/`` are removed and ``/v1/health`` appended; the scheme must be ``http://``; the host
    must be non-empty; a numeric ``:port`` is optional (default 80); a path prefix is kept. As
    upstream does, messages quote the derived health URL.

    Raises:
        ConfigError: ``memory backend endpoint must start with http:// (got '<url>')``,
            ``memory backend endpoint host must not be empty`` or
            ``memory backend endpoint port is invalid in '<url>'``.
    """
    url = trim(endpoint).rstrip("/") + HEALTH_PATH
    if not url.startswith("http://"):
        raise ConfigError(f"memory backend endpoint must start with http:// (got '{url}')")
    authority, slash, rest = url[len("http://") :].partition("/")
    path = slash + rest if slash else "/"
    if not authority:
        raise ConfigError("memory backend endpoint host must not be empty")
    host, colon, raw_port = authority.rpartition(":")
    # Only "host:<digits>" is a port; anything else (e.g. a bare IPv6 literal) is all host.
    if colon and host and all(c in "0123456789" for c in raw_port):
        port = parse_unsigned(raw_port, _U16_MAX)
        if port is None:
            raise ConfigError(f"memory backend endpoint port is invalid in '{url}'")
    else:
        host, port = authority, 80
    return HealthEndpoint(url=url, host=host, port=port, path=path)


class HealthCheck:
    """One probe of a configured endpoint; :meth:`check` raises unless it answers 2xx."""

    def __init__(self, endpoint: str, *, timeout_s: float = HEALTHCHECK_TIMEOUT_S) -> None:
        """Raises ``ConfigError`` for an unusable endpoint URL, before any boot work is done."""
        self.endpoint = parse_health_endpoint(endpoint)
        self._timeout_s = timeout_s

    def check(self) -> None:
        """Probe the endpoint once.

        Raises:
            MemoryBackendUnavailable: ``detail`` is upstream's ``healthcheck <step> failed for
                '<url>': <reason>`` message.
        """
        status_line = self._fetch_status_line()
        fields = split_whitespace(status_line)
        code = parse_unsigned(fields[1], _U16_MAX) if len(fields) > 1 else None
        if code is None:
            self._fail("parse", f"invalid status line '{trim(status_line)}'")
        elif not 200 <= code < 300:
            self._fail("status", f"HTTP {code}")

    def _fail(self, step: str, reason: str) -> NoReturn:
        raise MemoryBackendUnavailable(f"healthcheck {step} failed for '{self.endpoint.url}': {reason}")

    def _fetch_status_line(self) -> str:
        endpoint = self.endpoint
        # getaddrinfo wants an IPv6 literal without brackets; the Host header keeps them.
        lookup_host = endpoint.host[1:-1] if endpoint.host.startswith("[") else endpoint.host
        try:
            addresses = socket.getaddrinfo(lookup_host, endpoint.port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            self._fail("resolve", os_error_text(exc))
        if not addresses:
            self._fail("resolve", "no socket addresses")
        family, kind, proto, _, address = addresses[0]
        with socket.socket(family, kind, proto) as sock:
            try:
                sock.settimeout(self._timeout_s)
            except OSError as exc:
                self._fail("timeout setup", os_error_text(exc))
            try:
                sock.connect(address)
            except OSError as exc:
                self._fail("connect", os_error_text(exc))
            request = f"GET {endpoint.path} HTTP/1.1\r\nHost: {endpoint.host}\r\nConnection: close\r\n\r\n"
            try:
                sock.sendall(request.encode("utf-8"))
            except OSError as exc:
                self._fail("write", os_error_text(exc))
            line = self._read_line(sock)
        if not line:
            self._fail("read", "empty response")
        try:
            return line.decode("utf-8")
        except UnicodeDecodeError:
            self._fail("read", "stream did not contain valid UTF-8")

    def _read_line(self, sock: socket.socket) -> bytes:
        buffer = bytearray()
        while b"\n" not in buffer and len(buffer) < _MAX_STATUS_LINE:
            try:
                chunk = sock.recv(4096)
            except OSError as exc:
                self._fail("read", os_error_text(exc))
            if not chunk:
                break
            buffer += chunk
        end = buffer.find(b"\n")
        return bytes(buffer if end < 0 else buffer[: end + 1])
