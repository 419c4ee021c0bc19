"""Connecting to PostgreSQL: the pool every realm store of a gateway shares, what a refusal says,
and how a lost connection is answered.

A gateway opens one :class:`psycopg_pool.ConnectionPool` (connections checked before they are
handed out, so the pool recovers when the server comes back) and, at boot, proves the server
reachable and migrates the schema. Errors name the server by host, port and database only: the
DSN's password, and psycopg's own text, never reach a caller (the log has the detail).

A connection lost in the middle of a call is retried once for a read (:func:`retrying_read`);
for a write it becomes :class:`~meta_memory.errors.StoreUnavailable`, with nothing applied (the
server rolled the transaction back when the connection went).
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
import weakref
from collections.abc import Callable
from typing import TypeVar

import psycopg
import psycopg_pool
from psycopg.conninfo import conninfo_to_dict

from ...errors import StorageRefused, StoreUnavailable

__all__ = ["APPLICATION_NAME", "describe", "lock_key", "open_pool", "retrying_read", "unavailable"]

log = logging.getLogger("meta_memory.postgres")

T = TypeVar("T")

# How long the doctor waits for the server (a gateway's wait is ``[agent_memory.postgres] timeout_s``).
CONNECT_TIMEOUT_S = 10

# A pooled connection idle longer than this is checked before it is handed out.
IDLE_CHECK_S = 1.0

# What the gateway's connections call themselves in pg_stat_activity.
APPLICATION_NAME = "meta_gateway"


def lock_key(schema: str, kind: str, name: str = "") -> int:
    """An advisory-lock key (a signed 64-bit hash) for ``kind``/``name`` in ``schema``: two
    deployments sharing a database in schemas of their own never wait on each other's locks."""
    text = "\x00".join(("meta-memory", schema, kind, name)).encode("utf-8")
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big", signed=True)


def describe(dsn: str) -> str:
    """``host:port/database`` of a DSN (never its password)."""
    try:
        info = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return "an unparseable DSN"
    host = str(info.get("host") or info.get("hostaddr") or "localhost")
    port = str(info.get("port") or "5432")
    database = str(info.get("dbname") or info.get("user") or "")
    return f"{host}:{port}/{database}"


def open_pool(dsn: str, *, min_size: int, max_size: int, timeout_s: float) -> psycopg_pool.ConnectionPool:
    """A pool of autocommit connections to ``dsn``, its first connection proven at once. A call
    waits at most ``timeout_s`` for a connection (and a connection attempt as long).

    Raises:
        StorageRefused: the server cannot be reached, or refuses us (the message names host,
            port and database).
    """
    where = describe(dsn)
    try:
        conninfo_to_dict(dsn)
    except psycopg.ProgrammingError as exc:
        raise StorageRefused(f"agent_memory.postgres.dsn is not a valid PostgreSQL DSN ({where})") from exc

    # A server that answers with a refusal no retry changes (no such database, a wrong password,
    # a host name that does not resolve) fails the boot at once, in one line; the pool below
    # retries only what may pass (a server still starting, a network blip).
    reason, permanent = _probe(dsn, timeout_s)
    if permanent:
        raise StorageRefused(f"cannot connect to PostgreSQL at {where}: {reason}")

    # A connection handed out after a quiet spell is checked first (one round trip), so that one
    # the server dropped meanwhile (a restart, an idle timeout) is replaced, not used; one in
    # steady use is not, which would cost every call a round trip. One lost under load fails its
    # call: a read is retried, a write refused (retrying_read, StoreUnavailable).
    last_used: weakref.WeakKeyDictionary[psycopg.Connection, float] = weakref.WeakKeyDictionary()

    def configure(conn: psycopg.Connection) -> None:
        conn.autocommit = True
        last_used[conn] = time.monotonic()

    def check(conn: psycopg.Connection) -> None:
        if time.monotonic() - last_used.get(conn, 0.0) > IDLE_CHECK_S:
            psycopg_pool.ConnectionPool.check_connection(conn)

    def returned(conn: psycopg.Connection) -> None:
        last_used[conn] = time.monotonic()

    pool = psycopg_pool.ConnectionPool(
        dsn,
        min_size=min_size,
        max_size=max_size,
        kwargs={"connect_timeout": max(1, math.ceil(timeout_s)), "application_name": APPLICATION_NAME},
        configure=configure,
        check=check,
        reset=returned,
        timeout=timeout_s,
        # psycopg_pool backs off between reconnection attempts (1 s, doubling) until this much time
        # has passed, then gives up until a call asks again: short, so that a server that comes back
        # is used within about a second, not after a backoff that grew through a long outage.
        reconnect_timeout=float(timeout_s),
        open=False,
        name="meta-memory",
    )
    try:
        pool.open(wait=True, timeout=timeout_s + 5)
    except psycopg_pool.PoolTimeout as exc:
        pool.close()
        reason, _ = _probe(dsn, timeout_s)
        raise StorageRefused(
            f"cannot connect to PostgreSQL at {where}: {reason or 'the pool could not open its connections in time'}"
        ) from exc
    return pool


def _probe(dsn: str, timeout_s: float) -> tuple[str | None, bool]:
    """Why a direct connection fails, in our words (logged in full), and whether retrying cannot
    help; ``(None, False)`` when it connects."""
    try:
        psycopg.connect(dsn, connect_timeout=max(1, math.ceil(timeout_s))).close()
    except psycopg.OperationalError as exc:
        log.warning("connecting to PostgreSQL failed: %s", exc)
        text = str(exc).lower()
        if exc.sqlstate == "3D000" or ("does not exist" in text and "database" in text):
            return "the database does not exist", True
        if (exc.sqlstate or "").startswith("28") or "password" in text or "authentication" in text:
            return "authentication failed", True
        if "could not translate host name" in text or "name or service not known" in text:
            return "the host name does not resolve", True
        if "refused" in text:
            return "connection refused (is the server running?)", False
        if "timeout" in text or "timed out" in text:
            return "the connection timed out", False
        return "the server refused the connection (see the gateway log)", False
    return None, False


def unavailable(exc: BaseException, what: str) -> StoreUnavailable:
    """The refusal for a call the database could not serve (the detail goes to the log)."""
    log.warning("PostgreSQL %s failed: %s", what, exc)
    return StoreUnavailable(f"the realm store is unavailable: PostgreSQL {what} failed (see the gateway log)")


_LOST = (psycopg.OperationalError, psycopg_pool.PoolTimeout)


def retrying_read(read: Callable[[], T], what: str) -> T:
    """Run a read; a lost connection is retried once on a fresh one, then refused.

    Raises:
        StoreUnavailable: the read failed twice.
    """
    try:
        return read()
    except _LOST as first:
        log.info("PostgreSQL %s lost its connection (%s); retrying once", what, first)
    try:
        return read()
    except _LOST as exc:
        raise unavailable(exc, what) from exc
