"""The one owner of every path under the state directory.

No other module joins a file name onto the state dir. Names follow the upstream
``MetaStorageLayout``: canonical first, legacy spelling second, both present is a
"file-name twins" refusal, and a twin is never created.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import StorageRefused

__all__ = [
    "AGENT_MEMORY_DIR",
    "AGENT_MEMORY_LEGACY_DIR",
    "BLOBS_DIR",
    "CONSOLE_FILE_PATTERN",
    "CONTINUITY_FILES",
    "EVENT_LOG_FILE",
    "IMPORTED_SUFFIX",
    "IMPORT_FAILED_SUFFIX",
    "LEDGER_FILE",
    "LEGACY_MARKDOWN_SUFFIX",
    "METADATA_FILE_PATTERN",
    "PREDECESSOR_LEDGER_FILE",
    "REALM_DB_SUFFIX",
    "RUNTIME_FILE",
    "SCHEDULE_FILE",
    "SESSIONS_FILES",
    "STAGE_SUFFIX",
    "STORE_FAMILIES",
    "WORKGRAPH_FILE",
    "StateLayout",
    "StoreFamily",
    "decode_component",
    "encode_component",
]

LEDGER_FILE = "memory-ledger-state.json"
LEDGER_STAGE_FILE = "memory-ledger-state.tmp"
PREDECESSOR_LEDGER_FILE = "elephant-memory-state.json"
PREDECESSOR_STAGE_FILE = "elephant-memory-state.tmp"
AGENT_MEMORY_DIR = "agent-memory"
AGENT_MEMORY_LEGACY_DIR = "agent-memory-sqlite"
LOCK_FILE = ".meta-runtime.lock"
EVENT_LOG_FILE = "event_log.sqlite3"
REALM_DB_SUFFIX = ".sqlite3"
RECALL_INDEX_SUFFIX = "-index"  # <enc(realm)>.sqlite3-index (and its own -wal / -shm)
VECTORS_SUFFIX = "-vectors"  # <enc(realm)>.sqlite3-vectors: embedding vectors (derived), recall = "hybrid"
# What a stage (a file written whole, then renamed over its target) is called while it exists.
STAGE_SUFFIX = ".tmp"
# Legacy markdown memory inside a realm's directory: pending, then renamed once imported or refused.
LEGACY_MARKDOWN_SUFFIX = ".md"
IMPORTED_SUFFIX = ".imported"
IMPORT_FAILED_SUFFIX = ".import-failed"
# SQLite's own files beside a database in WAL mode.
SQLITE_WAL_SUFFIX = "-wal"
SQLITE_SHM_SUFFIX = "-shm"

# REFERENCE 8: the stores a Meta state dir may hold, canonical spelling first, then legacy ones.
# This runtime writes only the agent-memory root and the event log; the rest are named so the
# doctor can recognise them (and their twins) in a directory an upstream gateway also served.
SESSIONS_FILES = ("sessions.sqlite3", "sessions.db", "sessions.sqlite")
RUNTIME_FILE = "runtime.sqlite"
SCHEDULE_FILE = "schedule.sqlite"
WORKGRAPH_FILE = "workgraph.sqlite3"
CONTINUITY_FILES = ("continuity.sqlite3", "continuity.db", "identity_continuity.sqlite")
METADATA_FILE_PATTERN = "*_metadata.sqlite3"
CONSOLE_FILE_PATTERN = "*_console.sqlite3"
BLOBS_DIR = "blobs"


@dataclass(frozen=True)
class StoreFamily:
    """Every spelling one store has had under the state dir; two present at once are twins."""

    domain: str
    spellings: tuple[str, ...]  # canonical first


STORE_FAMILIES: tuple[StoreFamily, ...] = (
    StoreFamily("agent_memory", (AGENT_MEMORY_DIR, AGENT_MEMORY_LEGACY_DIR)),
    StoreFamily("event_log", (EVENT_LOG_FILE,)),
    StoreFamily("sessions", SESSIONS_FILES),
    StoreFamily("runtime", (RUNTIME_FILE,)),
    StoreFamily("schedule", (SCHEDULE_FILE,)),
    StoreFamily("workgraph", (WORKGRAPH_FILE,)),
    StoreFamily("continuity", CONTINUITY_FILES),
    StoreFamily("blobs", (BLOBS_DIR,)),
)

_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def encode_component(name: str) -> str:
    """File-name encoding of a realm or identity: keep ``[A-Za-z0-9_-]``, else ``%XX``.

    The empty string encodes as ``_``, so the one-character name ``_`` is escaped (``%5F``) to keep
    the two apart.
    """
    if name == "":
        return "_"
    if name == "_":
        return "%5F"
    return "".join(chr(b) if b in _SAFE else f"%{b:02X}" for b in name.encode("utf-8"))


def decode_component(encoded: str) -> str | None:
    """Inverse of :func:`encode_component`; ``None`` when ``encoded`` is not canonical."""
    if encoded == "_":
        return ""
    out = bytearray()
    i = 0
    raw = encoded.encode("utf-8", "surrogateescape")
    while i < len(raw):
        b = raw[i]
        if b == ord("%"):
            hexpair = raw[i + 1 : i + 3]
            if len(hexpair) != 2 or not all(c in b"0123456789ABCDEF" for c in hexpair):
                return None
            out.append(int(hexpair, 16))
            i += 3
        elif b in _SAFE:
            out.append(b)
            i += 1
        else:
            return None
    try:
        decoded = out.decode("utf-8")
    except UnicodeDecodeError:
        return None
    # Only the canonical spelling decodes: "%41" is not a second name for "A".
    return decoded if encode_component(decoded) == encoded else None


@dataclass(frozen=True)
class StateLayout:
    """Paths under one state directory. Pure: building one touches nothing on disk."""

    root: Path

    @classmethod
    def at(cls, state_dir: str | os.PathLike[str]) -> StateLayout:
        return cls(Path(state_dir).expanduser().absolute())

    # -- the assertion ledger -------------------------------------------------
    @property
    def ledger_path(self) -> Path:
        return self.root / LEDGER_FILE

    @property
    def ledger_stage_path(self) -> Path:
        return self.root / LEDGER_STAGE_FILE

    @property
    def predecessor_ledger_path(self) -> Path:
        return self.root / PREDECESSOR_LEDGER_FILE

    @property
    def predecessor_stage_path(self) -> Path:
        return self.root / PREDECESSOR_STAGE_FILE

    # -- the timeline's event log -------------------------------------------------
    @property
    def event_log_path(self) -> Path:
        return self.root / EVENT_LOG_FILE

    # -- runtime lock -----------------------------------------------------------
    @property
    def lock_path(self) -> Path:
        return self.root / LOCK_FILE

    # -- agent memory -------------------------------------------------------------
    @property
    def agent_memory_canonical(self) -> Path:
        return self.root / AGENT_MEMORY_DIR

    @property
    def agent_memory_legacy(self) -> Path:
        return self.root / AGENT_MEMORY_LEGACY_DIR

    def agent_memory_twins(self) -> bool:
        return self.agent_memory_canonical.exists() and self.agent_memory_legacy.exists()

    def agent_memory_root(self) -> Path:
        """The agent-memory root: canonical first, then legacy; never both.

        Raises:
            StorageRefused: both spellings exist ("file-name twins").
        """
        canonical, legacy = self.agent_memory_canonical, self.agent_memory_legacy
        if canonical.exists() and legacy.exists():
            raise StorageRefused(
                f"storage refused: file-name twins {canonical} and {legacy} both exist; "
                f"keep one (run `meta_gateway doctor --state-dir {self.root}` / meta/storage/doctor)"
            )
        if legacy.exists():
            return legacy
        return canonical

    def realm_db_path(self, realm: str, root: Path | None = None) -> Path:
        base = root if root is not None else self.agent_memory_root()
        return base / f"{encode_component(realm)}{REALM_DB_SUFFIX}"

    def realm_legacy_markdown_dir(self, realm: str, root: Path | None = None) -> Path:
        base = root if root is not None else self.agent_memory_root()
        return base / encode_component(realm)

    @staticmethod
    def realm_from_db_name(file_name: str) -> str | None:
        if not file_name.endswith(REALM_DB_SUFFIX):
            return None
        return decode_component(file_name[: -len(REALM_DB_SUFFIX)])

    @staticmethod
    def realm_from_dir_name(dir_name: str) -> str | None:
        """The realm whose legacy markdown directory is ``dir_name`` (``None``: no realm's)."""
        return decode_component(dir_name)

    @staticmethod
    def recall_index_path(db_path: Path) -> Path:
        """The realm file's recall-index file (derived data, rebuilt when missing): beside it, named
        so no realm-file listing (``*.sqlite3``) ever takes it for a realm."""
        return db_path.with_name(db_path.name + RECALL_INDEX_SUFFIX)

    @staticmethod
    def vector_path(db_path: Path) -> Path:
        """The realm file's embedding vectors (derived data, rebuilt when missing or of another model)."""
        return db_path.with_name(db_path.name + VECTORS_SUFFIX)

    @staticmethod
    def sqlite_sidecars(db_path: Path) -> tuple[Path, Path]:
        """The ``-wal`` and ``-shm`` files SQLite keeps beside ``db_path`` in WAL mode."""
        return (
            db_path.with_name(db_path.name + SQLITE_WAL_SUFFIX),
            db_path.with_name(db_path.name + SQLITE_SHM_SUFFIX),
        )

    @staticmethod
    def sqlite_main_of_wal(wal: Path) -> Path | None:
        """The database file whose ``-wal`` ``wal`` is (``None`` when it names no WAL)."""
        if not wal.name.endswith(SQLITE_WAL_SUFFIX):
            return None
        return wal.with_name(wal.name.removesuffix(SQLITE_WAL_SUFFIX))

    # -- every store a state dir may hold (REFERENCE 8) ----------------------------------
    def family_paths(self, family: StoreFamily) -> tuple[Path, ...]:
        """Every spelling of ``family`` under this state dir, canonical first."""
        return tuple(self.root / name for name in family.spellings)

    # -- boot checks ----------------------------------------------------------
    def refuse_predecessor(self) -> None:
        """Refuse to start beside a predecessor ledger that has not been adopted."""
        if self.predecessor_ledger_path.exists() or self.predecessor_stage_path.exists():
            raise StorageRefused(
                f"storage refused: a predecessor (pre-0.9) ledger was found in {self.root}; "
                "stop every gateway on it and adopt it once with "
                f"`meta_gateway storage-adopt-predecessor --state-dir {self.root} --apply`"
            )
