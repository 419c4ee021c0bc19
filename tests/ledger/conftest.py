"""Ledger test fixtures: a manual clock, a real state directory, ledger factories, and tiny local
HTTP/TCP servers the health check can probe."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from meta_memory.clock import ManualClock
from meta_memory.ledger import IndexResult, Ledger, LocalJsonBackend, parse_index_params
from meta_memory.storage.layout import StateLayout


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(start_ms=1_000)


@pytest.fixture
def layout(tmp_path: Path) -> StateLayout:
    return StateLayout.at(tmp_path / "state")


@pytest.fixture
def ledger(clock: ManualClock) -> Ledger:
    """An in-memory ledger (no backend)."""
    return Ledger(clock=clock)


@pytest.fixture
def open_ledger(layout: StateLayout, clock: ManualClock) -> Callable[..., Ledger]:
    """Open (load) a ledger persisted under ``layout``, optionally health-checked."""

    def _open(endpoint: str | None = None, *, timeout_s: float = 2.0) -> Ledger:
        backend = LocalJsonBackend.for_layout(
            layout, health_check_endpoint=endpoint, health_timeout_s=timeout_s
        )
        return Ledger.open(backend, clock=clock)

    return _open


@pytest.fixture
def index() -> Callable[..., IndexResult]:
    """``index(ledger, **params)``: index through the one validator, as the JSON-RPC method does."""

    def _index(ledger: Ledger, **params: Any) -> IndexResult:
        return ledger.index(parse_index_params(params))

    return _index


@dataclass
class HealthServer:
    url: str
    status: int
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)


@pytest.fixture
def health_server() -> Iterator[Callable[[int], HealthServer]]:
    """Start a real threaded HTTP server on 127.0.0.1 answering every GET with ``status``."""
    servers: list[ThreadingHTTPServer] = []
    threads: list[threading.Thread] = []

    def _start(status: int) -> HealthServer:
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                record.requests.append((self.requestline, dict(self.headers.items())))
                self.send_response(record.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        record = HealthServer(url=f"http://127.0.0.1:{server.server_address[1]}", status=status)
        # A short poll interval lets shutdown() return promptly at teardown.
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        thread.start()
        servers.append(server)
        threads.append(thread)
        return record

    yield _start
    for server in servers:
        server.shutdown()
        server.server_close()
    for thread in threads:
        thread.join(timeout=5)


@pytest.fixture
def raw_server() -> Iterator[Callable[[bytes | None], str]]:
    """A one-connection TCP server that reads the request, then sends ``reply`` and closes, or
    (``None``) stays silent until the client gives up. Returns the base URL."""
    listeners: list[socket.socket] = []
    threads: list[threading.Thread] = []

    def _start(reply: bytes | None) -> str:
        listener = socket.create_server(("127.0.0.1", 0))
        listener.settimeout(10)

        def serve() -> None:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(10)
                try:
                    conn.recv(4096)
                    if reply is not None:
                        conn.sendall(reply)
                    else:
                        while conn.recv(4096):  # silent until the client hangs up
                            pass
                except OSError:
                    pass

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        listeners.append(listener)
        threads.append(thread)
        return f"http://127.0.0.1:{listener.getsockname()[1]}"

    yield _start
    for thread in threads:
        thread.join(timeout=15)
    for listener in listeners:
        listener.close()


@pytest.fixture
def closed_port_url() -> str:
    """A URL on a port that was just free: nothing is listening there."""
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"
