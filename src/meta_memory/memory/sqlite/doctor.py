"""The SQLite backend's part of the storage doctor: its realm files, their recall-index files and
the event log, each read strictly read-only (how is told at :func:`_read_sqlite`).

:class:`SqliteDoctor` is the :class:`~meta_memory.storage.doctor.StoreDoctor` of the embedded
default: an inventory entry per realm file (schema version, records per status, size, the recall
index's backlog and fresh tier), and the findings of damage SQLite reports, never its own text.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from ...storage.doctor import (
    EVENT_LOG_UNREADABLE,
    REALM_DAMAGED,
    REALM_NAME_UNDECODABLE,
    REALM_OK,
    REALM_READ_IMMUTABLE,
    REALM_UNREADABLE,
    REALM_VECTORS,
    RECALL_INDEX_UNREADABLE,
    SCHEMA_NEWER_THAN_SUPPORTED,
    SCHEMA_UPGRADE_PENDING,
    Diagnosis,
    RealmInventory,
)
from ...storage.layout import REALM_DB_SUFFIX, StateLayout
from ..records import ScopeKind, Status
from .migrations import SCHEMA_VERSION, applied_versions
from .recall_index import backlog_size, connect_readonly, read_fresh_size, read_marks

__all__ = ["SqliteDoctor"]

T = TypeVar("T")
_STATUSES = tuple(s.value for s in Status)


class SqliteDoctor:
    """The checks of the embedded backend."""

    def check_state_dir(self, layout: StateLayout, identity: str | None, out: Diagnosis) -> None:
        _check_event_log(layout, out)

    def check_memory_root(
        self, root: Path, entries: list[Path], identity: str | None, out: Diagnosis
    ) -> None:
        for path in entries:
            if path.is_dir():
                continue
            name = path.name
            if name.endswith(REALM_DB_SUFFIX):
                realm = StateLayout.realm_from_db_name(name)
                if realm is None:
                    out.add(
                        "warning",
                        REALM_NAME_UNDECODABLE,
                        f"{name!r} is not the encoded name of any realm, so the runtime never opens it",
                        path=path,
                    )
                else:
                    out.inventory.append(_inspect_realm(path, realm, identity, out))
            elif (main := StateLayout.sqlite_main_of_wal(path)) is not None and not main.exists():
                realm = StateLayout.realm_from_db_name(main.name)
                if realm is not None:
                    out.add(
                        "error",
                        REALM_DAMAGED,
                        f"realm {realm!r}: its file {main.name} is missing while its WAL {name} is present; "
                        "the runtime refuses this realm until the file is restored or the WAL moved away",
                        path=path,
                        realm=realm,
                    )


# -- read-only SQLite ------------------------------------------------------------------------------


class _Unreadable(Exception):
    """A file SQLite cannot read; the message is ours (SQLite's text never reaches the wire)."""


_SQLITE_MAGIC = b"SQLite format 3\x00"
_ERROR_MEANINGS = (
    ("SQLITE_NOTADB", "it is not an SQLite database"),
    ("SQLITE_CORRUPT", "the database image is corrupt"),
    ("SQLITE_CANTOPEN", "it cannot be opened"),
    ("SQLITE_READONLY", "it cannot be opened read-only"),
    ("SQLITE_PERM", "permission denied"),
    ("SQLITE_IOERR", "reading it failed (I/O error)"),
    ("SQLITE_BUSY", "it is locked (a writer is recovering it); run the doctor again"),
    ("SQLITE_FULL", "the disk is full"),
)
_FALLBACK_ERRORS = ("SQLITE_CANTOPEN", "SQLITE_READONLY", "SQLITE_PERM")


def _error_name(exc: sqlite3.Error) -> str:
    name = getattr(exc, "sqlite_errorname", None)
    return name if isinstance(name, str) else "SQLITE_ERROR"


def _is(name: str, families: tuple[str, ...]) -> bool:
    return any(name == f or name.startswith(f + "_") for f in families)


def _describe(exc: sqlite3.Error) -> str:
    name = _error_name(exc)
    meaning = next((m for f, m in _ERROR_MEANINGS if _is(name, (f,))), "SQLite could not read it")
    return f"{meaning} ({name})"


@dataclass(frozen=True)
class _Read(Generic[T]):
    value: T
    fallback_note: str | None = None


def _header(path: Path) -> bytes:
    try:
        with path.open("rb") as f:
            header = f.read(100)
    except OSError as exc:
        raise _Unreadable(f"it cannot be read ({exc.strerror or exc})") from exc
    if header and (len(header) < 100 or not header.startswith(_SQLITE_MAGIC)):
        raise _Unreadable("it is not an SQLite database (no SQLite header)")
    return header


def _run(path: Path, read: Callable[[sqlite3.Connection], T], *, immutable: bool) -> T:
    db = connect_readonly(path, "immutable=1" if immutable else "readonly_shm=1")
    try:
        db.execute("PRAGMA query_only = 1")
        return read(db)
    finally:
        db.close()


def _read_sqlite(path: Path, read: Callable[[sqlite3.Connection], T]) -> _Read[T]:
    """Run ``read`` on a read-only view of the SQLite file ``path``; creates and writes nothing.

    The file is opened ``mode=ro&readonly_shm=1``: a reader in another process then does not even
    set its reader mark in a live ``-shm``. (Inside the gateway's own process SQLite shares that
    ``-shm`` with the runtime's connections, and the mark it sets there is the one every reader of
    the runtime sets; the ``-shm`` is shared memory rebuilt from the WAL, never data.) Two cases
    use ``immutable=1`` instead. A WAL-mode file with no ``-wal``: a read-only open of a closed WAL
    database would create its ``-wal`` and ``-shm`` and leave them, while without a ``-wal`` every
    committed page is in the main file, so nothing is missed (a writer that appears meanwhile
    makes us read again, through its WAL). And, only as a fallback whose note the caller reports,
    since rows still in the WAL are then not seen: a ``-wal`` without its ``-shm``, or a read-only
    open SQLite refuses.

    Raises:
        _Unreadable: the file is not SQLite, is corrupt, or cannot be opened at all.
    """
    wal, shm = StateLayout.sqlite_sidecars(path)
    for _ in range(3):
        wal_mode = _header(path)[18:20] == b"\x02\x02"
        if wal_mode and not wal.exists():
            try:
                value = _run(path, read, immutable=True)
            except sqlite3.Error as exc:
                if wal.exists():
                    continue  # a writer opened it while we read: read again through its WAL
                raise _Unreadable(_describe(exc)) from exc
            if wal.exists():
                continue
            return _Read(value)
        if wal_mode and not shm.exists():
            note = (
                f"{wal.name} exists without {shm.name} and a read-only open would have to create it, so "
                "the file was read with immutable=1: rows still in the WAL are not counted"
            )
            return _Read(_run_or_unreadable(path, read), note)
        try:
            return _Read(_run(path, read, immutable=False))
        except sqlite3.Error as exc:
            name = _error_name(exc)
            if not _is(name, _FALLBACK_ERRORS):
                raise _Unreadable(_describe(exc)) from exc
            note = (
                f"a read-only open failed ({name}), so the file was read with immutable=1: "
                "rows still in the WAL are not counted"
            )
            return _Read(_run_or_unreadable(path, read), note)
    raise _Unreadable("it kept changing while being read (a writer was busy); run the doctor again")


def _run_or_unreadable(path: Path, read: Callable[[sqlite3.Connection], T]) -> T:
    try:
        return _run(path, read, immutable=True)
    except sqlite3.Error as exc:
        raise _Unreadable(_describe(exc)) from exc


# -- realm files -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _RealmView:
    problems: int
    versions: list[int]
    records: dict[str, int] | None
    identity_records: dict[str, int] | None
    pending_index: int | None


def _counts(rows: list[tuple[str, int]]) -> dict[str, int]:
    counts = dict.fromkeys(_STATUSES, 0)
    for status, n in rows:
        if status in counts:
            counts[status] = n
    return counts


def _optional(query: Callable[[], T]) -> T | None:
    # A schema newer than ours may have renamed what we count: unknown then, not unreadable.
    try:
        return query()
    except sqlite3.OperationalError:
        return None


def _read_index(index: sqlite3.Connection) -> tuple[tuple[int, int], int]:
    index.execute("BEGIN")  # the marks and the fresh tier as of one commit
    try:
        return read_marks(index), read_fresh_size(index)
    finally:
        index.execute("COMMIT")


def _index_state(realm_path: Path, realm: str, out: Diagnosis) -> tuple[tuple[int, int], int | None]:
    """The realm's recall-index watermarks and fresh-tier size, read like any other file here;
    ((0, 0), 0) when it has no index file, ((0, 0), None) when it has an unreadable one (the
    runtime rebuilds it: everything is backlog)."""
    index_path = StateLayout.recall_index_path(realm_path)
    if not index_path.exists():
        return (0, 0), 0
    try:
        return _read_sqlite(index_path, _read_index).value
    except _Unreadable as exc:
        out.add(
            "warning",
            RECALL_INDEX_UNREADABLE,
            f"realm {realm!r}: its recall index cannot be read: {exc}; it is derived data, so the "
            "runtime rebuilds it from the realm file when it next opens the realm (the first recall "
            "waits for that: minutes for a million records)",
            path=index_path,
            realm=realm,
        )
        return (0, 0), None


def _realm_reader(identity: str | None, marks: tuple[int, int]) -> Callable[[sqlite3.Connection], _RealmView]:
    def read(db: sqlite3.Connection) -> _RealmView:
        db.execute("BEGIN")  # one snapshot for every count
        try:
            problems = [row[0] for row in db.execute("PRAGMA quick_check")]
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            versions = applied_versions(db)
            records = identity_records = pending = None
            if "records" in tables:
                records = _optional(
                    lambda: _counts(
                        db.execute("SELECT status, count(*) FROM records GROUP BY status").fetchall()
                    )
                )
                if identity is not None and "scopes" in tables:
                    identity_records = _optional(
                        lambda: _counts(
                            db.execute(
                                "SELECT r.status, count(*) FROM records r JOIN scopes s ON s.scope_id = r.scope_id "
                                "WHERE s.kind = ? AND s.key = ? GROUP BY r.status",
                                (ScopeKind.IDENTITY.value, identity),
                            ).fetchall()
                        )
                    )
            if {"index_queue", "store_meta", "records"} <= tables:
                pending = _optional(lambda: backlog_size(db, *marks))
        finally:
            db.execute("COMMIT")
        return _RealmView(
            0 if problems == ["ok"] else len(problems), versions, records, identity_records, pending
        )

    return read


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _inspect_realm(path: Path, realm: str, identity: str | None, out: Diagnosis) -> RealmInventory:
    index = StateLayout.recall_index_path(path)
    size = sum(
        _size(p)
        for p in (path, index, StateLayout.sqlite_sidecars(path)[0], StateLayout.sqlite_sidecars(index)[0])
    )
    unknown = RealmInventory(realm, path, None, None, size, None, None, identity, None)
    marks, unmerged = _index_state(path, realm, out)
    try:
        read = _read_sqlite(path, _realm_reader(identity, marks))
    except _Unreadable as exc:
        out.add(
            "error",
            REALM_UNREADABLE,
            f"realm {realm!r} cannot be read: {exc}; the runtime cannot serve this realm "
            "(restore the file from a backup, or move it away to start the realm empty)",
            path=path,
            realm=realm,
        )
        return unknown
    view = read.value
    if not view.versions and not view.problems:
        # A realm file is born with its schema (memory/sqlite/files.py): one without was
        # truncated or replaced, and the runtime refuses the realm rather than start it empty.
        what = "is empty (0 bytes)" if _size(path) == 0 else "holds no realm schema"
        out.add(
            "error",
            REALM_DAMAGED,
            f"realm {realm!r}: its file {what}, so it was truncated or replaced; the runtime refuses "
            "this realm (other realms are served) until the file is restored from a backup or moved away",
            path=path,
            realm=realm,
        )
        return unknown
    if read.fallback_note is not None:
        out.add("warning", REALM_READ_IMMUTABLE, read.fallback_note, path=path, realm=realm)
    if view.problems:
        out.add(
            "error",
            REALM_UNREADABLE,
            f"realm {realm!r} is corrupt: SQLite's integrity check found {view.problems} problem(s); "
            "restore the file from a backup (run PRAGMA integrity_check on a copy for details)",
            path=path,
            realm=realm,
        )
    version = max(view.versions, default=0)
    newer = version > SCHEMA_VERSION
    if newer:
        out.add(
            "error",
            SCHEMA_NEWER_THAN_SUPPORTED,
            f"realm {realm!r} is at schema version {version}, newer than this release supports "
            f"({SCHEMA_VERSION}); the runtime refuses to open it: run a newer meta-memory",
            path=path,
            realm=realm,
        )
    elif read.fallback_note is None and set(range(1, SCHEMA_VERSION + 1)) - set(view.versions):
        # (Read without its WAL, the main file may lag behind migrations the WAL holds.)
        out.add(
            "info",
            SCHEMA_UPGRADE_PENDING,
            f"realm {realm!r} is at schema version {version}; the runtime upgrades it in place to "
            f"{SCHEMA_VERSION} the next time it opens the realm",
            path=path,
            realm=realm,
        )
    if not view.problems and not newer:
        counts = ", ".join(f"{n} {status}" for status, n in (view.records or {}).items())
        out.add(
            "info",
            REALM_OK,
            f"realm {realm!r}: schema version {version}"
            + (f", records: {counts}" if counts else "")
            + (" (main file only: its WAL was not read)" if read.fallback_note else ""),
            path=path,
            realm=realm,
        )
    return RealmInventory(
        realm,
        path,
        version,
        view.records,
        size,
        view.pending_index,
        unmerged,
        identity,
        view.identity_records,
        _vector_state(path, realm, out),
    )


def _vector_state(realm_path: Path, realm: str, out: Diagnosis) -> dict[str, Any] | None:
    """How far the realm's embedding vectors have come (``recall = "hybrid"``), read-only."""
    vectors = StateLayout.vector_path(realm_path)
    if not vectors.exists():
        return None
    try:
        meta = _read_sqlite(
            vectors, lambda db: dict(db.execute("SELECT key, value FROM meta").fetchall())
        ).value
        upto = int(meta.get("embedded_upto", "0"))
        active, embedded = _read_sqlite(
            realm_path,
            lambda db: db.execute(
                "SELECT count(*), count(*) FILTER (WHERE doc <= ?) FROM records WHERE status = 'active'",
                (upto,),
            ).fetchone(),
        ).value
    except (_Unreadable, sqlite3.Error, ValueError) as exc:
        out.add(
            "warning",
            REALM_VECTORS,
            f"realm {realm!r}: its embedding vectors cannot be read ({exc}); they are derived data, "
            "rebuilt by the runtime, and recall is lexical for what they lack meanwhile",
            path=vectors,
            realm=realm,
        )
        return None
    return out.vectors(realm, meta.get("model_id", "?"), int(embedded), int(active), path=vectors)


def _check_event_log(layout: StateLayout, out: Diagnosis) -> None:
    path = layout.event_log_path
    if not path.is_file():
        return
    try:
        problems = _read_sqlite(path, lambda db: [row[0] for row in db.execute("PRAGMA quick_check")]).value
    except _Unreadable as exc:
        reason = str(exc)
    else:
        if problems == ["ok"]:
            return
        reason = f"SQLite's integrity check found {len(problems)} problem(s)"
    out.add(
        "error",
        EVENT_LOG_UNREADABLE,
        f"the event log cannot be read: {reason}; the runtime refuses to start on it "
        "(move it away to start a new timeline)",
        path=path,
    )
