"""Reading a realm file and the event log out as backend-neutral tables (memory/dump.py), for
``meta_gateway storage-copy``. Each dump is one read transaction on a read-only connection, so
it is one consistent snapshot even if the file were written meanwhile (the copy holds the state
dir's lock, so nothing is)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

from ..dump import DUMP_COLUMNS, DUMP_ORDER, EVENT_COLUMNS, DumpTable

__all__ = ["dump_events", "dump_realm", "event_count", "realm_counts"]

_SCOPED = {"scope_kind": "s.kind", "scope_key": "s.key"}


def _select(table: str) -> str:
    if table == "records":
        columns = ", ".join(_SCOPED.get(c, f"r.{c}") for c in DUMP_COLUMNS[table])
        return f"SELECT {columns} FROM records r JOIN scopes s ON s.scope_id = r.scope_id ORDER BY r.doc"
    return f"SELECT {', '.join(DUMP_COLUMNS[table])} FROM {table} ORDER BY {DUMP_ORDER[table]}"


def _read_only(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)


def realm_counts(path: Path) -> dict[str, int]:
    with closing(_read_only(path)) as db:
        return {t: int(db.execute(f"SELECT count(*) FROM {t}").fetchone()[0]) for t in DUMP_COLUMNS}


def dump_realm(path: Path) -> Iterator[DumpTable]:
    """Every table of the realm file at ``path``, in one read transaction."""
    with closing(_read_only(path)) as db:
        db.execute("BEGIN")
        try:
            for table in DUMP_COLUMNS:
                yield DumpTable(table, db.execute(_select(table)))
        finally:
            db.execute("COMMIT")


def event_count(path: Path) -> int:
    with closing(_read_only(path)) as db:
        return int(db.execute("SELECT count(*) FROM events").fetchone()[0])


def dump_events(path: Path) -> Iterator[DumpTable]:
    """The event log's rows, oldest first."""
    with closing(_read_only(path)) as db:
        yield DumpTable("events", db.execute(f"SELECT {', '.join(EVENT_COLUMNS)} FROM events ORDER BY seq"))
