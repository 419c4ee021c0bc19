"""The timeline's event log in PostgreSQL, shared by every gateway on the database.

Appends serialize on an advisory lock, so sequence order is commit order and a reader paging by
``seq`` misses nothing that commits late. Each append notifies the schema's channel (delivered at
commit, in commit order); every gateway listens on a connection of its own and, on each
notification, hands its timeline's live subscribers (the console's SSE streams) every event other
gateways appended since the last it delivered, so each console sees the whole fleet's events, and
a listener that lost its connection catches up when it reconnects. Events are statistics of what
happened, not acknowledged writes: their commits do not wait for the WAL flush
(``synchronous_commit = off``), which a gateway's crash cannot lose, only the server's.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
from collections.abc import Callable
from typing import Any

import psycopg
import psycopg_pool

from ...events import envelope
from .connect import APPLICATION_NAME, lock_key, unavailable

__all__ = ["COPIED_ORIGIN_PREFIX", "PostgresEventLog"]

log = logging.getLogger("meta_memory.postgres")

_RECONNECT_S = 1.0
# The origin of events ``meta_gateway storage-copy`` wrote (postgres/copy.py).
COPIED_ORIGIN_PREFIX = "copy:"
_CATCH_UP_BATCH = 500


class PostgresEventLog:
    """An :class:`~meta_memory.timeline.EventLog` in the ``events`` table."""

    def __init__(self, pool: psycopg_pool.ConnectionPool, dsn: str, schema: str = "public") -> None:
        self._pool = pool
        self._dsn = dsn
        self._lock_key = lock_key(schema, "events")
        # LISTEN/NOTIFY channels are database-wide: one per schema (an identifier, whatever the name).
        self._channel = f"meta_events_{self._lock_key & 0xFFFFFFFFFFFF:012x}"
        self._origin = secrets.token_hex(8)  # this gateway, in the rows it appends
        self._delivered = 0  # the last seq the listener handed on
        self._deliver: Callable[[dict[str, Any]], None] | None = None
        self._stop = threading.Event()
        self._listener: threading.Thread | None = None

    def append(
        self, event_type: str, data: dict[str, Any], identity: str, timestamp_ms: int
    ) -> dict[str, Any]:
        try:
            with self._pool.connection() as conn, conn.transaction():
                conn.execute("SET LOCAL synchronous_commit TO OFF")
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (self._lock_key,))
                row = conn.execute(
                    "INSERT INTO events (identity, event_type, timestamp_ms, data, origin) "
                    "VALUES (%s, %s, %s, %s, %s) RETURNING seq",
                    (
                        identity,
                        event_type,
                        timestamp_ms,
                        json.dumps(data, separators=(",", ":")),
                        self._origin,
                    ),
                ).fetchone()
                assert row is not None
                conn.execute("SELECT pg_notify(%s, '')", (self._channel,))
        except (psycopg.OperationalError, psycopg_pool.PoolTimeout) as exc:
            raise unavailable(exc, "event append") from exc
        return envelope(int(row[0]), event_type, data, identity, timestamp_ms)

    def after(self, seq: int, limit: int) -> list[dict[str, Any]]:
        with self._pool.connection() as conn:
            rows = conn.execute(
                "SELECT seq, identity, event_type, timestamp_ms, data FROM events WHERE seq > %s ORDER BY seq LIMIT %s",
                (seq, limit),
            ).fetchall()
        return [
            envelope(int(s), kind, json.loads(data), identity, ts) for s, identity, kind, ts, data in rows
        ]

    def prune(self, keep: int) -> None:
        with self._pool.connection() as conn:
            conn.execute("DELETE FROM events WHERE seq <= (SELECT max(seq) FROM events) - %s", (keep,))

    def forget_identity(self, identity: str, realm: str) -> int:
        with self._pool.connection() as conn:
            return conn.execute(
                "DELETE FROM events WHERE identity = %s AND coalesce(data::jsonb ->> 'realm', %s) = %s",
                (identity, realm, realm),
            ).rowcount

    def watch(self, deliver: Callable[[dict[str, Any]], None]) -> None:
        """Hand every event another gateway appends to ``deliver``, from now on."""
        self._deliver = deliver
        with self._pool.connection() as conn:
            row = conn.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()
        self._delivered = int(row[0]) if row is not None else 0
        self._listener = threading.Thread(target=self._listen, name="meta-events-listen", daemon=True)
        self._listener.start()

    def _listen(self) -> None:
        while not self._stop.is_set():
            try:
                with psycopg.connect(
                    self._dsn, autocommit=True, connect_timeout=10, application_name=APPLICATION_NAME
                ) as conn:
                    conn.execute(f"LISTEN {self._channel}")
                    self._catch_up()  # whatever committed while this listener was not connected
                    while not self._stop.is_set():
                        if any(True for _ in conn.notifies(timeout=0.5, stop_after=64)):
                            self._catch_up()
            except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
                if self._stop.is_set():
                    return
                log.warning("listening for other gateways' events failed (%s); reconnecting", exc)
                self._stop.wait(_RECONNECT_S)

    def _catch_up(self) -> None:
        """Deliver, in order, every event other gateways committed after the last delivered."""
        while self._deliver is not None:
            with self._pool.connection() as conn:
                rows = conn.execute(
                    "SELECT seq, identity, event_type, timestamp_ms, data, origin FROM events "
                    "WHERE seq > %s ORDER BY seq LIMIT %s",
                    (self._delivered, _CATCH_UP_BATCH),
                ).fetchall()
            for s, identity, kind, ts, data, origin in rows:
                self._delivered = int(s)
                if origin == self._origin or origin.startswith(COPIED_ORIGIN_PREFIX):
                    continue  # its own, or history a storage-copy brought (not news to a live stream)
                try:
                    self._deliver(envelope(int(s), kind, json.loads(data), identity, ts))
                except Exception:  # a subscriber's failure must not stop the listener
                    log.exception("delivering event %s to the timeline's subscribers failed", s)
            if len(rows) < _CATCH_UP_BATCH:
                return

    def close(self) -> None:
        self._stop.set()
        if self._listener is None:
            return
        try:  # wake the listener from its wait, so that it sees the stop at once
            with self._pool.connection(timeout=1) as conn:
                conn.execute("SELECT pg_notify(%s, '')", (self._channel,))
        except (psycopg.Error, psycopg_pool.PoolTimeout):
            pass  # the server is gone: the listener's wait ends on its own
        self._listener.join(timeout=5)
