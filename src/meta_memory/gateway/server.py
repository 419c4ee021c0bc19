"""Running the HTTP app: uvicorn, with a deadline on each request's arrival and its logs on stderr.

uvicorn waits for a request's headers and body for as long as the client likes: a client that
sends half a request and stalls holds its connection (and a file descriptor) forever, and a few
hundred such clients lock everyone out. So each connection here runs
:class:`DeadlineH11Protocol`, uvicorn's h11 protocol with one addition: from a request's first
byte (or from the connection's opening) its headers and whole body must arrive within
``[http] request_timeout_s``, else the request is answered ``408`` and the connection closed.
The clock stops once the request has fully arrived, so a slow handler or a long-lived response
(the timeline's event stream) is never cut; between requests uvicorn's keep-alive timeout
applies as usual. A request cut off so is counted too (``on_timeout``: the app's metrics).
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Callable
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from ..logs import uvicorn_log_config

__all__ = ["DeadlineH11Protocol", "serve_http"]

log = logging.getLogger("meta_memory.gateway.http")

_ARRIVED = (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.ERROR)
_TIMED_OUT = b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"


class DeadlineH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request does not arrive in time."""

    request_timeout_s: float = 30.0
    on_timeout: Callable[[], None] | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._deadline: asyncio.TimerHandle | None = None
        super().connection_made(transport)
        self._arm()  # a connection that never sends a byte is a request that never arrives

    def data_received(self, data: bytes) -> None:
        if self._deadline is None and self.conn.their_state is h11.IDLE:
            self._arm()  # the first bytes of the next request on a kept-alive connection
        super().data_received(data)
        if self.conn.their_state in _ARRIVED:
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # A pipelined request already (partly) buffered starts its own clock.
        waiting = self.conn.their_state is not h11.IDLE or bool(self.conn.trailing_data[0])
        if self._deadline is None and waiting and self.conn.their_state not in _ARRIVED:
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.request_timeout_s, self._timed_out)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _timed_out(self) -> None:
        self._deadline = None
        if self.conn.their_state in _ARRIVED or self.transport.is_closing():
            return
        if self.on_timeout is not None:
            self.on_timeout()
        client = f"{self.client[0]}:{self.client[1]}" if self.client else "a client"
        log.info(
            "%s did not send its whole request within %g s: connection closed", client, self.request_timeout_s
        )
        if self.conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):  # nothing of a response sent yet
            self.transport.write(_TIMED_OUT)
        self.transport.close()


def listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host``:``port`` and listening, as uvicorn would make it.

    Raises:
        OSError: the address cannot be resolved or bound (in use, not this machine's, no permission).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    family, kind, proto, _, address = socket.getaddrinfo(host, port, family, socket.SOCK_STREAM)[0]
    # proto must say TCP: asyncio turns Nagle's algorithm off only on connections of a socket
    # that does (a socket made with proto 0 answered a keep-alive client 40 ms late, every time).
    sock = socket.socket(family, kind, proto or socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
        sock.set_inheritable(True)
    except OSError:
        sock.close()
        raise
    return sock


def serve_http(
    app: Any,
    *,
    sock: socket.socket | None = None,
    host: str,
    port: int,
    log_level: str,
    request_timeout_s: float,
    log_format: str = "text",
    on_timeout: Callable[[], None] | None = None,
) -> None:
    """Serve ``app`` until SIGINT/SIGTERM (uvicorn's graceful shutdown), logging to stderr in
    ``log_format`` (logs.py; in JSON uvicorn's access lines give way to the app's own); on
    ``sock`` (:func:`listening_socket`) when given, else on a socket uvicorn binds."""
    # A staticmethod: stored on the class, a plain function would be bound to each connection.
    hook = staticmethod(on_timeout) if on_timeout is not None else None
    protocol = type(
        "DeadlineH11Protocol",
        (DeadlineH11Protocol,),
        {"request_timeout_s": float(request_timeout_s), "on_timeout": hook},
    )
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        lifespan="on",
        log_config=uvicorn_log_config(log_format),
        access_log=log_format != "json",
        http=protocol,
        timeout_graceful_shutdown=5,  # open SSE streams must not hold a shutdown forever
    )
    server = uvicorn.Server(config)
    server.run(sockets=None if sock is None else [sock])
    if not server.started:  # the app's startup failed (logged): as uvicorn.run exits
        raise SystemExit(3)
