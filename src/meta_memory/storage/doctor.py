"""The storage doctor: a strictly read-only diagnosis of one state directory, safe beside a live
gateway. :func:`diagnose` lists and reads; it never creates, writes or renames a file, takes no
lock and runs no migration. It checks what every state dir holds (file-name twins, the ledger,
stages, legacy markdown) and asks the storage backend (a :class:`StoreDoctor`) to check its own
files or server. It returns findings with stable kebab-case codes (:data:`FINDING_CODES`), an
inventory of every realm (schema version, records per status, size, queued index work) and, when a
runtime diagnoses its own directory, the live storage census. :func:`parse_doctor_params` is the
parser of ``meta/storage/doctor`` params.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from ..errors import CapabilityUnavailable, InvalidParams, StorageRefused
from ..ledger.local_json import LocalJsonBackend
from ..memory.legacy_import import pending_legacy_files
from .census import StorageCensus
from .layout import (
    AGENT_MEMORY_DIR,
    IMPORT_FAILED_SUFFIX,
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
    "StoreDoctor",
    "diagnose",
    "parse_doctor_params",
    "same_directory",
]

Severity = Literal["info", "warning", "error"]

# Stable finding codes: never renamed (consumers match on them and tolerate unknown ones).
STATE_DIR_MISSING = "state-dir-missing"
STATE_DIR_MAX_BYTES = 4096  # PATH_MAX on Linux: no longer path names a directory
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
REALM_VECTORS = "realm-vectors"
DATABASE_UNREACHABLE = "database-unreachable"
DATABASE_OK = "database-ok"
FILES_NOT_SERVED = "files-not-served"

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
    DATABASE_UNREACHABLE,
    DATABASE_OK,
    FILES_NOT_SERVED,
)

_SEVERITY_ORDER: dict[str, int] = {"error": 0, "warning": 1, "info": 2}


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
    path: Path | str  # the realm file, or the database it lives in
    schema_version: int | None
    records: dict[str, int] | None
    bytes: int
    pending_index: int | None
    unmerged_index: int | None
    identity: str | None = None
    identity_records: dict[str, int] | None = None
    # recall = "hybrid": {model_id, embedded, active}: how far the realm's vectors have come.
    vectors: dict[str, Any] | None = None

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
        if self.vectors is not None:
            wire["vectors"] = self.vectors
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

    def vectors(
        self, realm: str, model_id: str, embedded: int, active: int, *, path: Path | None = None
    ) -> dict[str, Any]:
        """The ``realm-vectors`` finding (``recall = "hybrid"``); the inventory's ``vectors``."""
        left = active - embedded
        self.add(
            "info",
            REALM_VECTORS,
            f"realm {realm!r}: vectors of model {model_id}: {embedded} of {active} active records embedded"
            + (f" ({left} to go; hybrid recall finds those lexically meanwhile)" if left else ""),
            path=path,
            realm=realm,
        )
        return {"model_id": model_id, "embedded": embedded, "active": active}

    def to_wire(self) -> dict[str, Any]:
        return {
            "state_dir": _text(self.state_dir),
            "diagnosis": {
                "findings": [f.to_wire() for f in self.findings],
                "inventory": [entry.to_wire() for entry in self.inventory],
            },
            "storage": self.storage.to_wire() if self.storage is not None else None,
        }


class StoreDoctor(Protocol):
    """A storage backend's part of the diagnosis: read-only, and never raising for what it finds."""

    def check_state_dir(self, layout: StateLayout, identity: str | None, out: Diagnosis) -> None:
        """What the backend keeps outside the agent-memory root (the event log, a server, with an
        inventory entry per realm it holds there)."""
        ...

    def check_memory_root(
        self, root: Path, entries: list[Path], identity: str | None, out: Diagnosis
    ) -> None:
        """The backend's files among ``entries`` of the agent-memory ``root``: one inventory entry
        per realm (with ``identity``'s records counted when given)."""
        ...


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
    if len(state_dir.encode("utf-8", "surrogatepass")) > STATE_DIR_MAX_BYTES:
        raise InvalidParams(f"state_dir must be at most {STATE_DIR_MAX_BYTES} bytes")
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


def _sweep_memory_root(
    root: Path, identity: str | None, layout: StateLayout, out: Diagnosis, backend: StoreDoctor
) -> None:
    entries = _list(root, out)
    backend.check_memory_root(root, entries, identity, out)
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
    _check_stages(entries, layout, out)


def diagnose(
    state_dir: str | os.PathLike[str],
    identity: str | None = None,
    *,
    backend: StoreDoctor,
    census: StorageCensus | None = None,
) -> Diagnosis:
    """Diagnose ``state_dir`` read-only (see the module docstring for what that guarantees).

    Args:
        identity: also count this identity's records per status in each realm.
        backend: the storage backend's own checks (its files, or its server).
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
    try:
        is_dir = layout.root.is_dir()
        what = "is not a directory" if layout.root.exists() else "does not exist"
    except OSError as exc:  # a name the OS refuses outright (too long, ...)
        is_dir, what = False, f"cannot be looked up: {exc.strerror or type(exc).__name__}"
    if not is_dir:
        out.add("error", STATE_DIR_MISSING, f"state dir {layout.root} {what}", path=layout.root)
        return _ordered(out)
    top = _list(layout.root, out)
    _check_twins(layout, out)
    _check_ledgers(layout, out)
    _check_stages(top, layout, out)
    backend.check_state_dir(layout, identity, out)
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
            _sweep_memory_root(root, identity, layout, out, backend)
    return _ordered(out)


def _ordered(out: Diagnosis) -> Diagnosis:
    out.findings.sort(key=lambda f: _SEVERITY_ORDER[f.severity])
    return out
