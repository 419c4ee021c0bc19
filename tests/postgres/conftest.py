"""PostgreSQL-only fixtures: a schema of the test's own (``pg``), an admin connection into it, real
gateway processes configured onto it, and a TCP relay between a gateway and the server that a test
can cut and restore (the server itself is shared by the whole suite and never stopped).

The suites that run on both backends live beside the subsystem they test; these are the checks
only a shared database has: boot against a server, several gateways at once, outages.
"""

from __future__ import annotations

import contextlib
import select
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from ..conftest import Backend, make_backend
from ..gateway.conftest import (  # noqa: F401  (fixtures shared with the gateway suite)
    launch_stdio,
    run_gateway,
    stdio_gateway,
    wire_json,
    write_config,
)
from ..security.conftest import serve  # noqa: F401  (real `meta_gateway serve` processes)


@pytest.fixture
def pg(request: pytest.FixtureRequest) -> Iterator[Backend]:
    """The PostgreSQL backend on a schema of this test's own (dropped after it)."""
    yield from make_backend("postgres", request)


@pytest.fixture
def admin(pg: Backend) -> Iterator[psycopg.Connection]:
    """An autocommit connection of the test's own into ``pg``'s schema."""
    assert pg.dsn is not None
    with psycopg.connect(pg.dsn, autocommit=True) as conn:
        yield conn


def toml_for(dsn: str, extra: str = "", **postgres: Any) -> str:
    """A gateway config with agent memory on ``dsn`` (``extra`` appended, TOML)."""
    keys = "".join(f"{k} = {v!r}\n".replace("'", '"') for k, v in postgres.items())
    return f'[agent_memory]\nstore = "postgres"\n{extra}\n[agent_memory.postgres]\ndsn = "{dsn}"\n{keys}'


def dsn_through(dsn: str, port: int) -> str:
    """``dsn`` (a URL DSN) with its host and port replaced by 127.0.0.1:``port``."""
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    info = conninfo_to_dict(dsn)
    info.update(host="127.0.0.1", port=str(port))
    return make_conninfo(**info)


class Relay:
    """A TCP relay from a local port to the PostgreSQL server. ``cut()`` drops every relayed
    connection and refuses new ones (the server, as the gateway sees it, is gone); ``restore()``
    accepts again. The relay's own port stays reserved throughout."""

    def __init__(self, target: tuple[str, int]) -> None:
        self._target = target
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._up = threading.Event()
        self._up.set()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        self._listener.settimeout(0.1)
        while not self._stop.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            if not self._up.is_set():
                client.close()  # refused, as a stopped server's port refuses
                continue
            try:
                upstream = socket.create_connection(self._target, timeout=5)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._pairs.append((client, upstream))
            threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()

    def _pump(self, a: socket.socket, b: socket.socket) -> None:
        try:
            while True:
                ready, _, _ = select.select([a, b], [], [], 0.2)
                for sock in ready:
                    data = sock.recv(65536)
                    if not data:
                        return
                    (b if sock is a else a).sendall(data)
        except (OSError, ValueError):  # cut: the sockets were closed under select()
            return
        finally:
            for sock in (a, b):
                with contextlib.suppress(OSError):
                    sock.close()

    def cut(self) -> None:
        self._up.clear()
        with self._lock:
            pairs, self._pairs = self._pairs, []
        for a, b in pairs:
            for sock in (a, b):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                with contextlib.suppress(OSError):
                    sock.close()

    def restore(self) -> None:
        self._up.set()

    def close(self) -> None:
        self._stop.set()
        self.cut()
        self._listener.close()
        self._thread.join(timeout=5)


@pytest.fixture
def relay(pg: Backend) -> Iterator[Callable[[], Relay]]:
    """``relay()``: a :class:`Relay` to the test server (closed at teardown)."""
    from psycopg.conninfo import conninfo_to_dict

    assert pg.dsn is not None
    info = conninfo_to_dict(pg.dsn)
    target = (str(info.get("host") or "127.0.0.1"), int(info.get("port") or 5432))
    made: list[Relay] = []

    def start() -> Relay:
        made.append(Relay(target))
        return made[-1]

    yield start
    for r in made:
        r.close()
