"""The storage doctor: a strictly read-only diagnosis of one state directory, safe beside a live
gateway. :func:`diagnose` lists and reads; it never creates, writes or renames a file, takes no
lock (not the runtime's, not SQLite's write lock) and runs no migration (how SQLite files are read
without side effects is told at :func:`_read_sqlite`). It returns findings with stable kebab-case
codes (:data:`FINDING_CODES`), an inventory of every realm file (schema version, records per
status, size, queued index work) and, when a runtime diagnoses its own directory, the live
storage census. :func:`parse_doctor_params` is the parser of ``meta/storage/doctor`` params.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

from ..errors import CapabilityUnavailable, InvalidParams, StorageRefused
from ..ledger.local_json import LocalJsonBackend
from ..memory.legacy_import import pending_legacy_files
from ..memory.records import ScopeKind, Status
from ..memory.sqlite.migrations import SCHEMA_VERSION, applied_versions
from ..memory.sqlite.recall_index import backlog_size, connect_readonly, read_fresh_size, read_marks
from .census import StorageCensus
from .layout import (
    AGENT_MEMORY_DIR,
    IMPORT_FAILED_SUFFIX,
    REALM_DB_SUFFIX,
    STAGE_SUFFIX,
    STORE_FAMILIES,
    StateLayout,
)

__all__ = [
    "FINDING_CODES",
    "Diagnosis",
    "DoctorParams",
    "Finding",
    "RealmInventory",
    "Severity",
    "diagnose",
    "parse_doctor_params",
    "same_directory",
]

Severity = Literal["info", "warning", "error"]
T = TypeVar("T")

# Stable finding codes: never renamed (consumers match on them and tolerate unknown ones).
STATE_DIR_MISSING = "state-dir-missing"
DIRECTORY_UNREADABLE = "directory-unreadable"
DURABILITY_CENSUS = "durability-census"
DURABILITY_CENSUS_UNAVAILABLE = "durability-census-unavailable"
FILE_NAME_TWINS = "file-name-twins"
LEGACY_AGENT_MEMORY_ROOT = "legacy-agent-memory-root"
PREDECESSOR_LEDGER = "predecessor-ledger"
LEDGER_MALFORMED = "ledger-malformed"
LEFTOVER_STAGE = "leftover-stage"
EVENT_LOG_UNREADABLE = "event-log-unreadable"
IMPORT_FAILED_FILE = "import-failed-file"
LEGACY_MARKDOWN_PENDING = "legacy-markdown-pending"
REALM_NAME_UNDECODABLE = "realm-name-undecodable"
REALM_UNREADABLE = "realm-unreadable"
REALM_DAMAGED = "realm-damaged"
REALM_READ_IMMUTABLE = "realm-read-immutable"
RECALL_INDEX_UNREADABLE = "recall-index-unreadable"
SCHEMA_NEWER_THAN_SUPPORTED = "schema-newer-than-supported"
SCHEMA_UPGRADE_PENDING = "schema-upgrade-pending"
REALM_OK = "realm-ok"

FINDING_CODES: tuple[str, ...] = (
    STATE_DIR_MISSING,
    DIRECTORY_UNREADABLE,
    DURABILITY_CENSUS,
    DURABILITY_CENSUS_UNAVAILABLE,
    FILE_NAME_TWINS,
    LEGACY_AGENT_MEMORY_ROOT,
    PREDECESSOR_LEDGER,
    LEDGER_MALFORMED,
    LEFTOVER_STAGE,
    EVENT_LOG_UNREADABLE,
    IMPORT_FAILED_FILE,
    LEGACY_MARKDOWN_PENDING,
    REALM_NAME_UNDECODABLE,
    REALM_UNREADABLE,
    REALM_DAMAGED,
    REALM_READ_IMMUTABLE,
    RECALL_INDEX_UNREADABLE,
    SCHEMA_NEWER_THAN_SUPPORTED,
    SCHEMA_UPGRADE_PENDING,
    REALM_OK,
)

_SEVERITY_ORDER: dict[str, int] = {"error": 0, "warning": 1, "info": 2}
_STATUSES = tuple(s.value for s in Status)


# -- the result -------------------------------------------------------------------------------


def _text(value: object) -> str:
    """``value`` as wire text: a file name that is not UTF-8 (Python keeps its bytes as lone
    surrogates) would make the reply unencodable, so those bytes become U+FFFD."""
    return str(value).encode("utf-8", "surrogateescape").decode("utf-8", "replace")


@dataclass(frozen=True)
class Finding:
    severity: Severity
    code: str
    message: str
    path: Path | None = None
    realm: str | None = None

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"severity": self.severity, "code": self.code, "message": _text(self.message)}
        if self.path is not None:
            wire["path"] = _text(self.path)
        if self.realm is not None:
            wire["realm"] = self.realm
        return wire


@dataclass(frozen=True)
class RealmInventory:
    """One realm file. ``None`` fields could not be read (the findings say why); ``bytes`` is the
    file plus its ``-wal``, and its recall-index file plus that file's ``-wal``; ``pending_index``
    is the work that index file is behind by, ``unmerged_index`` the records waiting in its fresh
    tier (a recall scans them one by one until a merge); ``identity_records`` is counted only
    when an identity was asked for."""

    realm: str
    path: Path
    schema_version: int | None
    records: dict[str, int] | None
    bytes: int
    pending_index: int | None
    unmerged_index: int | None
    identity: str | None = None
    identity_records: dict[str, int] | None = None

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {
            "realm": self.realm,
            "path": _text(self.path),
            "schema_version": self.schema_version,
            "records": self.records,
            "bytes": self.bytes,
            "pending_index": self.pending_index,
            "unmerged_index": self.unmerged_index,
        }
        if self.identity is not None:
            wire["identity"] = self.identity
            wire["identity_records"] = self.identity_records
        return wire


@dataclass
class Diagnosis:
    state_dir: Path
    findings: list[Finding] = field(default_factory=list)
    inventory: list[RealmInventory] = field(default_factory=list)
    storage: StorageCensus | None = None

    @property
    def has_errors(self) -> bool:
        return any(f.severity == "error" for f in self.findings)

    def codes(self) -> list[str]:
        return [f.code for f in self.findings]

    def add(
        self,
        severity: Severity,
        code: str,
        message: str,
        *,
        path: Path | None = None,
        realm: str | None = None,
    ) -> None:
        self.findings.append(Finding(severity, code, message, path, realm))

    def to_wire(self) -> dict[str, Any]:
        return {
            "state_dir": _text(self.state_dir),
            "diagnosis": {
                "findings": [f.to_wire() for f in self.findings],
                "inventory": [entry.to_wire() for entry in self.inventory],
            },
            "storage": self.storage.to_wire() if self.storage is not None else None,
        }


# -- params (meta/storage/doctor) --------------------------------------------------------------


@dataclass(frozen=True)
class DoctorParams:
    state_dir: Path
    identity: str | None = None


def parse_doctor_params(params: Any) -> DoctorParams:
    """Parse ``{state_dir, identity?}``.

    ``state_dir`` is required on every surface of this gateway. A missing one is -32004, as
    REFERENCE 8 has it for runtime-backed surfaces: both of ours (stdio/``/rpc`` and the console)
    are runtime-backed; -32602 is the module-only answer and we have no module-only surface.

    Raises:
        CapabilityUnavailable: -32004, ``state_dir`` absent or null.
        InvalidParams: -32602, params not an object, or a param of the wrong type.
    """
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise InvalidParams("params must be a JSON object")
    state_dir = params.get("state_dir")
    if state_dir is None:
        raise CapabilityUnavailable(
            "storage doctor requires params.state_dir: name the state directory to diagnose"
        )
    if not isinstance(state_dir, str) or not state_dir.strip() or "\x00" in state_dir:
        raise InvalidParams("state_dir must be a non-empty string (a directory path)")
    identity = params.get("identity")
    if identity is not None and (not isinstance(identity, str) or not identity.strip()):
        raise InvalidParams("identity must be a non-empty string when provided")
    return DoctorParams(Path(state_dir), identity)


def same_directory(a: Path, b: Path) -> bool:
    """Whether two paths name one existing directory (symlinks and spellings resolved)."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


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
    )


# -- the sweep ---------------------------------------------------------------------------------


def _list(directory: Path, out: Diagnosis) -> list[Path]:
    try:
        return sorted(directory.iterdir())
    except OSError as exc:
        out.add(
            "error",
            DIRECTORY_UNREADABLE,
            f"cannot list {directory}: {exc.strerror or exc}",
            path=directory,
        )
        return []


def _check_twins(layout: StateLayout, out: Diagnosis) -> None:
    for family in STORE_FAMILIES:
        present = [p for p in layout.family_paths(family) if p.exists()]
        if len(present) < 2:
            continue
        names = " and ".join(str(p) for p in present)
        if family.domain == "agent_memory":
            out.add(
                "error",
                FILE_NAME_TWINS,
                f"both spellings of the agent-memory root exist: {names}; the runtime refuses to start "
                "(-32014) until one is gone: keep the one holding your realms (see the inventory) "
                "and move the other out of the state dir",
                path=present[0],
            )
        else:
            out.add(
                "warning",
                FILE_NAME_TWINS,
                f"{len(present)} spellings of the {family.domain} store exist: {names}; this runtime "
                "does not use that store, but a gateway that does refuses to start on this directory",
                path=present[0],
            )


def _check_ledgers(layout: StateLayout, out: Diagnosis) -> None:
    predecessor = layout.predecessor_ledger_path
    if predecessor.exists():
        beside = (
            f"; adoption refuses while {layout.ledger_path.name} also exists: keep one ledger first"
            if layout.ledger_path.exists()
            else ""
        )
        out.add(
            "error",
            PREDECESSOR_LEDGER,
            f"a predecessor (pre-0.9) ledger {predecessor.name} is in {layout.root}; the runtime refuses "
            "to start until it is adopted: stop every gateway on this directory and run "
            f"`meta_gateway storage-adopt-predecessor --state-dir {layout.root} --apply`{beside}",
            path=predecessor,
        )
    if layout.ledger_path.exists():
        try:
            # The boot-time loader itself: it only reads, and it is what decides whether boot refuses.
            LocalJsonBackend(layout.ledger_path, layout.ledger_stage_path).load()
        except StorageRefused as exc:
            detail = exc.message.removeprefix("storage refused: ")
            out.add(
                "error",
                LEDGER_MALFORMED,
                f"{detail}; a runtime with the ledger configured ([memory]) refuses to start on it "
                "(fix or move the file; without it the ledger starts empty)",
                path=layout.ledger_path,
            )


def _check_stages(entries: list[Path], layout: StateLayout, out: Diagnosis, realm: str | None = None) -> None:
    for path in entries:
        if not path.name.endswith(STAGE_SUFFIX) or path.is_dir():
            continue
        if path == layout.predecessor_stage_path:
            out.add(
                "error",
                LEFTOVER_STAGE,
                f"{path.name} is a leftover stage of an interrupted predecessor write; the runtime refuses "
                "to start and adoption refuses to run beside it: inspect it, then remove it by hand",
                path=path,
            )
        elif path == layout.ledger_stage_path:
            out.add(
                "warning",
                LEFTOVER_STAGE,
                f"{path.name} is the stage of a ledger write: left over from an interrupted write (or "
                f"one in progress right now); {layout.ledger_path.name} is authoritative, and the next "
                "write replaces the stage",
                path=path,
            )
        else:
            out.add(
                "warning",
                LEFTOVER_STAGE,
                f"{path.name} looks like a leftover stage of an interrupted write; nothing reads it",
                path=path,
                realm=realm,
            )


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


def _sweep_realm_dir(directory: Path, realm: str, layout: StateLayout, out: Diagnosis) -> None:
    entries = _list(directory, out)
    pending = pending_legacy_files(directory)
    if pending:
        out.add(
            "info",
            LEGACY_MARKDOWN_PENDING,
            f"{len(pending)} legacy markdown file(s) of realm {realm!r} are not imported yet; the runtime "
            f"imports them when it first opens the realm (or now: `meta_gateway import-legacy --realm {realm}`)",
            path=directory,
            realm=realm,
        )
    for path in entries:
        if path.name.endswith(IMPORT_FAILED_SUFFIX):
            out.add(
                "warning",
                IMPORT_FAILED_FILE,
                f"{path.name} is a legacy markdown file the import refused (its name is not an encoded "
                "identity, or it could not be read); it is kept for inspection and never read again",
                path=path,
                realm=realm,
            )
    _check_stages(entries, layout, out, realm)


def _sweep_memory_root(root: Path, identity: str | None, layout: StateLayout, out: Diagnosis) -> None:
    entries = _list(root, out)
    for path in entries:
        name = path.name
        if path.is_dir():
            realm = StateLayout.realm_from_dir_name(name)
            if realm is None:
                out.add(
                    "warning",
                    REALM_NAME_UNDECODABLE,
                    f"directory {name!r} is not the encoded name of any realm, so the runtime never reads "
                    "it (nor imports markdown from it)",
                    path=path,
                )
            else:
                _sweep_realm_dir(path, realm, layout, out)
        elif name.endswith(REALM_DB_SUFFIX):
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
    _check_stages(entries, layout, out)


def diagnose(
    state_dir: str | os.PathLike[str], identity: str | None = None, *, census: StorageCensus | None = None
) -> Diagnosis:
    """Diagnose ``state_dir`` read-only (see the module docstring for what that guarantees).

    Args:
        identity: also count this identity's records per status in each realm.
        census: the live storage census, when the runtime serving ``state_dir`` asks; without
            it the result says ``durability-census-unavailable`` (a cold directory).

    Returns:
        The findings, errors first, and the realm inventory. Never raises for what it finds.
    """
    layout = StateLayout.at(state_dir)
    out = Diagnosis(layout.root, storage=census)
    if census is None:
        out.add(
            "info",
            DURABILITY_CENSUS_UNAVAILABLE,
            "no storage census: this is a cold-directory diagnosis; ask the gateway serving this "
            "directory (meta/storage/doctor) for what each storage slot resolved to",
        )
    else:
        out.add("info", DURABILITY_CENSUS, f"storage census of the live runtime: {census.summary()}")
    if not layout.root.is_dir():
        what = "is not a directory" if layout.root.exists() else "does not exist"
        out.add("error", STATE_DIR_MISSING, f"state dir {layout.root} {what}", path=layout.root)
        return _ordered(out)
    top = _list(layout.root, out)
    _check_twins(layout, out)
    _check_ledgers(layout, out)
    _check_stages(top, layout, out)
    _check_event_log(layout, out)
    canonical, legacy = layout.agent_memory_canonical, layout.agent_memory_legacy
    if legacy.is_dir() and not canonical.exists():
        out.add(
            "info",
            LEGACY_AGENT_MEMORY_ROOT,
            f"agent memory lives under the legacy spelling {legacy.name}/; the runtime uses it in place "
            f"(canonical-first probing) and never creates {AGENT_MEMORY_DIR}/ beside it",
            path=legacy,
        )
    for root in (canonical, legacy):
        if root.is_dir():
            _sweep_memory_root(root, identity, layout, out)
    return _ordered(out)


def _ordered(out: Diagnosis) -> Diagnosis:
    out.findings.sort(key=lambda f: _SEVERITY_ORDER[f.severity])
    return out
