"""Host sessions and pending taint as rows: the ``host_sessions`` and ``pending_taint`` tables.

Both backends keep the same two tables (a realm file holds one realm's; PostgreSQL's carry a
``realm`` column), created by their own migrations. :class:`SessionTable` runs every statement the
session seam needs (:class:`~meta_memory.memory.store.SessionTxn` and the reads of
:class:`~meta_memory.memory.store.SessionReads`) on a connection the backend hands it, inside the
transaction the backend opened; it commits nothing itself.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..rows import SessionRow

__all__ = ["Dialect", "SessionTable"]

_COLUMNS = (
    "session_key, identity, mob, owner, nonce, opened_at_ms, seen_at_ms, taint, boundary, ended, "
    "ended_at_ms, used_bytes, injected, epoch"
)
_COUNT = len(_COLUMNS.split(","))


class _Cursor(Protocol):
    rowcount: int

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class _Connection(Protocol):
    def execute(self, sql: Any, args: Sequence[Any] = ...) -> Any: ...


@dataclass(frozen=True)
class Dialect:
    """How one backend spells a statement: its placeholder, and (PostgreSQL, where every realm
    shares the tables) the realm every row carries."""

    placeholder: str
    realm: str | None = None


def _row(values: Sequence[Any]) -> SessionRow:
    (
        key,
        identity,
        mob,
        owner,
        nonce,
        opened,
        seen,
        taint,
        boundary,
        ended,
        ended_at,
        used,
        injected,
        epoch,
    ) = values[:_COUNT]
    return SessionRow(
        key=key,
        identity=identity,
        mob=mob,
        owner=owner,
        nonce=nonce,
        opened_at_ms=int(opened),
        seen_at_ms=int(seen),
        taint=taint,
        boundary=bool(boundary),
        ended=ended,
        ended_at_ms=None if ended_at is None else int(ended_at),
        used_bytes=int(used),
        injected=tuple(json.loads(injected)),
        epoch=int(epoch),
        pending=values[_COUNT] if len(values) > _COUNT else None,
    )


def _values(row: SessionRow) -> tuple[Any, ...]:
    return (
        row.key,
        row.identity,
        row.mob,
        row.owner,
        row.nonce,
        row.opened_at_ms,
        row.seen_at_ms,
        row.taint,
        int(row.boundary),
        row.ended,
        row.ended_at_ms,
        row.used_bytes,
        json.dumps(list(row.injected), ensure_ascii=False),
        row.epoch,
    )


class SessionTable:
    """One realm's session rows on an open connection (the caller owns the transaction).

    Args:
        conn: a DB-API connection (``sqlite3`` or psycopg) inside the caller's transaction.
        dialect: the backend's spelling.
        now_ms: the store's clock.
    """

    def __init__(self, conn: _Connection, dialect: Dialect, now_ms: Callable[[], int]) -> None:
        self._conn = conn
        self._dialect = dialect
        self._now = now_ms

    def _run(self, sql: str, args: Sequence[Any] = ()) -> _Cursor:
        """Run ``sql``, written with ``?`` placeholders and three markers for the realm column of
        PostgreSQL's shared tables: ``{realm}`` where a row's realm is matched (``realm = ? AND``),
        ``{realm_col}`` and ``{realm_val}`` in an insert's column and value lists. In a realm file
        the markers vanish; the callers put the realm's value (:meth:`_realm`) where they stand."""
        if self._dialect.realm is None:
            sql = sql.replace("{realm}", "").replace("{realm_col}", "").replace("{realm_val}", "")
        else:
            sql = sql.replace("{realm}", "realm = ? AND ").replace("{realm_col}", "realm, ")
            sql = sql.replace("{realm_val}", "?, ")
        if self._dialect.placeholder != "?":
            sql = sql.replace("?", self._dialect.placeholder)
        cursor: _Cursor = self._conn.execute(sql, tuple(args))
        return cursor

    def _realm(self) -> tuple[Any, ...]:
        return () if self._dialect.realm is None else (self._dialect.realm,)

    def now_ms(self) -> int:
        return self._now()

    # -- sessions ----------------------------------------------------------------------------------

    def session(self, key: str) -> SessionRow | None:
        found = self._run(
            f"SELECT {_COLUMNS} FROM host_sessions WHERE {{realm}}session_key = ?", (*self._realm(), key)
        ).fetchone()
        return None if found is None else _row(found)

    def session_with_pending(self, key: str) -> SessionRow | None:
        """The session, with its identity's pending taint read in the same statement."""
        columns = ", ".join(f"s.{c.strip()}" for c in _COLUMNS.split(","))
        realm = self._dialect.realm is not None
        found = self._run(
            f"SELECT {columns}, p.source FROM host_sessions s LEFT JOIN pending_taint p ON p.identity = s.identity"
            + (" AND p.realm = s.realm" if realm else "")
            + " WHERE "
            + ("s.realm = ? AND " if realm else "")
            + "s.session_key = ?",
            (*self._realm(), key),
        ).fetchone()
        return None if found is None else _row(found)

    def put_session(self, row: SessionRow) -> None:
        columns = [c.strip() for c in _COLUMNS.split(",")]
        updates = ", ".join(f"{c} = excluded.{c}" for c in columns[1:])
        conflict = "realm, session_key" if self._dialect.realm is not None else "session_key"
        self._run(
            f"INSERT INTO host_sessions ({{realm_col}}{_COLUMNS}) VALUES ({{realm_val}}{', '.join(['?'] * _COUNT)}) "
            f"ON CONFLICT ({conflict}) DO UPDATE SET {updates}",
            (*self._realm(), *_values(row)),
        )

    def open_sessions_of(self, identity: str) -> list[SessionRow]:
        rows = self._run(
            f"SELECT {_COLUMNS} FROM host_sessions WHERE {{realm}}identity = ? AND ended IS NULL "
            "ORDER BY opened_at_ms, session_key",
            (*self._realm(), identity),
        ).fetchall()
        return [_row(r) for r in rows]

    def idle_sessions(self, seen_before_ms: int, limit: int) -> list[SessionRow]:
        rows = self._run(
            f"SELECT {_COLUMNS} FROM host_sessions WHERE {{realm}}ended IS NULL AND seen_at_ms < ? "
            "ORDER BY seen_at_ms, session_key LIMIT ?",
            (*self._realm(), seen_before_ms, limit),
        ).fetchall()
        return [_row(r) for r in rows]

    def drop_ended(self, ended_before_ms: int, limit: int) -> int:
        realm = self._realm()
        cursor = self._run(
            "DELETE FROM host_sessions WHERE {realm}session_key IN (SELECT session_key FROM host_sessions "
            "WHERE {realm}ended IS NOT NULL AND ended_at_ms < ? ORDER BY ended_at_ms LIMIT ?)",
            (*realm, *realm, ended_before_ms, limit),
        )
        return max(0, cursor.rowcount)

    def touch_session(self, key: str, seen_at_ms: int) -> None:
        self._run(
            "UPDATE host_sessions SET seen_at_ms = ? WHERE {realm}session_key = ? AND ended IS NULL "
            "AND seen_at_ms < ?",
            (seen_at_ms, *self._realm(), key, seen_at_ms),
        )

    def add_harvest(self, identity: str, session_key: str, cause: str, retired_at_ms: int) -> bool:
        # The steward's exit-interview queue, written here so a session's end and its harvest
        # commit together (harvests are the steward's rows: memory/*/steward_rows.py read them).
        conflict = (
            "realm, identity, session_key" if self._dialect.realm is not None else "identity, session_key"
        )
        cursor = self._run(
            "INSERT INTO harvests ({realm_col}identity, session_key, cause, retired_at_ms, status) "
            f"VALUES ({{realm_val}}?, ?, ?, ?, 'pending') ON CONFLICT ({conflict}) DO NOTHING",
            (*self._realm(), identity, session_key, cause, retired_at_ms),
        )
        return cursor.rowcount == 1

    # -- pending taint -----------------------------------------------------------------------------

    def pending_taint(self, identity: str) -> str | None:
        found = self._run(
            "SELECT source FROM pending_taint WHERE {realm}identity = ?", (*self._realm(), identity)
        ).fetchone()
        return None if found is None else str(found[0])

    def take_pending(self, identity: str) -> str | None:
        found = self._run(
            "DELETE FROM pending_taint WHERE {realm}identity = ? RETURNING source",
            (*self._realm(), identity),
        ).fetchone()
        return None if found is None else str(found[0])

    def hold_pending(self, identity: str, source: str) -> bool:
        conflict = "realm, identity" if self._dialect.realm is not None else "identity"
        cursor = self._run(
            "INSERT INTO pending_taint ({realm_col}identity, source, at_ms) VALUES ({realm_val}?, ?, ?) "
            f"ON CONFLICT ({conflict}) DO NOTHING",
            (*self._realm(), identity, source, self._now()),
        )
        return cursor.rowcount == 1
