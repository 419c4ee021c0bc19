"""Backup and restore of a state directory, while a gateway serves it.

:func:`backup` copies every file of a state dir into a new directory, without the runtime lock
and without stopping anything: each SQLite database (realm files, their recall-index and vector
files, the event log, any other store) through SQLite's online backup API, which copies one
consistent snapshot of the file (in WAL mode the gateway's writers are not blocked; what was
acknowledged before the copy of a file began is in it); every other file (the ledger, written whole
and renamed over, and legacy markdown) read whole. A realm's derived files are copied before the
realm file, so a restored recall index or vector file is never ahead of its realm file (its
indexing process catches it up). Consistency is per file: two realms' copies may be a few writes
apart. The copy is written beside its destination and renamed into place, so a backup appears
whole or not at all; ``backup.json`` lists each file with its size and sha256.

:func:`restore` checks the manifest and the files' presence and sizes first, then each file's
sha256 as it copies it beside the target (one read of each file); a damaged or edited backup is
refused and the partial copy removed, so the state dir appears whole or not at all. It never
writes over a state dir that holds anything.

PostgreSQL-backed memory (``store = "postgres"``) lives in the database server: back it up with
``pg_dump`` of the schema (docs/lifecycle.md); the state dir's backup covers the ledger and the
event log of each gateway.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ...errors import StorageRefused
from ...storage.layout import (
    LOCK_FILE,
    RECALL_INDEX_SUFFIX,
    SQLITE_SHM_SUFFIX,
    SQLITE_WAL_SUFFIX,
    STAGE_SUFFIX,
    VECTORS_SUFFIX,
)

__all__ = ["MANIFEST_FILE", "BackupReport", "backup", "restore"]

MANIFEST_FILE = "backup.json"
FORMAT = "meta-memory-state-backup"
FORMAT_VERSION = 1
_SQLITE_MAGIC = b"SQLite format 3\x00"
_PARTIAL = ".partial"
_CHUNK = 1 << 20


@dataclass(frozen=True)
class BackupReport:
    """What a backup or restore wrote: the files (relative paths) and their bytes."""

    destination: Path
    files: tuple[str, ...]
    total_bytes: int
    seconds: float


def backup(
    state_dir: Path, destination: Path, *, progress: Callable[[str], None] | None = None
) -> BackupReport:
    """Copy ``state_dir`` into the new directory ``destination`` (see the module docstring).

    Raises:
        StorageRefused: ``state_dir`` is not a directory, ``destination`` exists, or a file cannot be
            read or written (the partial copy is removed).
    """
    started = time.monotonic()
    source = state_dir.absolute()
    if not source.is_dir():
        raise StorageRefused(f"state dir {state_dir} does not exist: nothing to back up")
    target = destination.absolute()
    if target.exists():
        raise StorageRefused(f"backup destination {destination} already exists; name a new directory")
    if target == source or source in target.parents:
        raise StorageRefused(f"backup destination {destination} is inside the state dir it backs up")
    partial = target.with_name(target.name + _PARTIAL)
    shutil.rmtree(partial, ignore_errors=True)
    files: list[dict[str, object]] = []
    try:
        partial.mkdir(parents=True)
        for path in _files(source):
            relative = path.relative_to(source).as_posix()
            copy = partial / relative
            copy.parent.mkdir(parents=True, exist_ok=True)
            kind = "sqlite" if _is_sqlite(path) else "file"
            if kind == "sqlite":
                _backup_sqlite(path, copy)
                size, digest = copy.stat().st_size, _sha256(copy)
            else:
                size, digest = _copy_whole(path, copy)
            files.append({"path": relative, "kind": kind, "size": size, "sha256": digest})
            if progress is not None:
                progress(relative)
        manifest = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "created_at_ms": int(time.time() * 1000),
            "files": files,
        }
        _write_synced(partial / MANIFEST_FILE, json.dumps(manifest, indent=1).encode())
        _sync_tree(partial)
        os.replace(partial, target)
    except (OSError, sqlite3.Error) as exc:
        shutil.rmtree(partial, ignore_errors=True)
        raise StorageRefused(f"backup of {state_dir} failed: {_reason(exc)}") from exc
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    total = sum(int(str(f["size"])) for f in files)
    return BackupReport(target, tuple(str(f["path"]) for f in files), total, time.monotonic() - started)


def restore(backup_dir: Path, state_dir: Path) -> BackupReport:
    """Write the backup ``backup_dir`` as the state dir ``state_dir``, which must not exist or be
    empty, every file checked against its manifest (the sums as the files are copied).

    Raises:
        StorageRefused: the backup is missing, damaged or not one (its manifest, a file's size or
            sha256, a file it does not list), ``state_dir`` holds anything, or a file cannot be
            written (nothing is left behind).
    """
    started = time.monotonic()
    source = backup_dir.absolute()
    files = _checked_manifest(source)  # what to copy, each file's size and sha256
    target = state_dir.absolute()
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise StorageRefused(
            f"state dir {state_dir} is not empty; restore into a new or empty directory "
            "(stop the gateway and move the old state dir aside first)"
        )
    partial = target.with_name(target.name + ".restoring")
    shutil.rmtree(partial, ignore_errors=True)
    try:
        partial.mkdir(parents=True)
        for relative, (size, digest) in files.items():
            copy = partial / relative
            copy.parent.mkdir(parents=True, exist_ok=True)
            # Checked as it is copied (one read of each file): a mismatch removes the partial
            # state dir, so nothing appears.
            if _copy_whole(source / relative, copy) != (size, digest):
                raise StorageRefused(
                    f"the backup is damaged: {relative} does not match its sha256 in {MANIFEST_FILE}"
                )
        _sync_tree(partial)
        if target.exists():
            target.rmdir()  # empty, checked above
        os.replace(partial, target)
    except OSError as exc:
        shutil.rmtree(partial, ignore_errors=True)
        raise StorageRefused(f"restore into {state_dir} failed: {_reason(exc)}") from exc
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    total = sum(size for size, _ in files.values())
    return BackupReport(target, tuple(files), total, time.monotonic() - started)


def _files(root: Path) -> list[Path]:
    """Every file a backup copies, derived SQLite files before the realm file they derive from:
    not the runtime lock, SQLite's -wal / -shm (a database's online backup includes its WAL's
    committed pages), stages, or symlinks."""
    found: list[Path] = []
    for path in sorted(root.rglob("*")):
        name = path.name
        if path.is_symlink() or not path.is_file():
            continue
        if name == LOCK_FILE or name.endswith((SQLITE_WAL_SUFFIX, SQLITE_SHM_SUFFIX, STAGE_SUFFIX, _PARTIAL)):
            continue
        found.append(path)
    derived = (RECALL_INDEX_SUFFIX, VECTORS_SUFFIX)
    # Stable sort: derived files (index, vectors) first, everything else after, each in path order.
    return sorted(found, key=lambda p: 0 if p.name.endswith(derived) else 1)


def _is_sqlite(path: Path) -> bool:
    with path.open("rb") as f:
        return f.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC


def _backup_sqlite(path: Path, copy: Path) -> None:
    # Read-only: the backup never writes to the served state dir (nor creates a -wal there).
    uri = f"{path.as_uri()}?mode=ro"
    with sqlite3.connect(uri, uri=True) as source_db, sqlite3.connect(copy) as copy_db:
        source_db.execute("PRAGMA busy_timeout = 10000")
        source_db.backup(copy_db)  # one step: one consistent snapshot of the file
    source_db.close()
    copy_db.close()
    with copy.open("rb+") as f:
        os.fsync(f.fileno())


def _copy_whole(path: Path, copy: Path) -> tuple[int, str]:
    """Copy ``path`` to ``copy`` (synced); the bytes copied and their sha256."""
    digest = hashlib.sha256()
    size = 0
    with path.open("rb") as src, copy.open("wb") as dst:
        while chunk := src.read(_CHUNK):
            digest.update(chunk)
            size += len(chunk)
            dst.write(chunk)
        dst.flush()
        os.fsync(dst.fileno())
    return size, digest.hexdigest()


def _write_synced(path: Path, data: bytes) -> None:
    with path.open("wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _sync_tree(root: Path) -> None:
    """fsync every directory under ``root`` (and it), so the renames and new entries are durable."""
    for directory in [root, *(p for p in root.rglob("*") if p.is_dir())]:
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _checked_manifest(source: Path) -> dict[str, tuple[int, str]]:
    """The files the backup's manifest lists, each with its size and sha256, once the manifest is
    one, every path stays inside the backup, every listed file is there at its size and no other
    file is (the sums are checked as the files are copied).

    Raises:
        StorageRefused: any of those fails.
    """
    manifest_path = source / MANIFEST_FILE
    try:
        manifest = json.loads(manifest_path.read_bytes())
    except FileNotFoundError as exc:
        raise StorageRefused(f"{source} is not a backup: it has no {MANIFEST_FILE}") from exc
    except (OSError, ValueError) as exc:
        raise StorageRefused(f"the backup's {MANIFEST_FILE} cannot be read: {_reason(exc)}") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise StorageRefused(f"{source} is not a backup: its {MANIFEST_FILE} is not a {FORMAT} manifest")
    if manifest.get("version") != FORMAT_VERSION:
        raise StorageRefused(
            f"the backup's format version {manifest.get('version')!r} is not {FORMAT_VERSION}, "
            "the one this release restores"
        )
    entries = manifest.get("files")
    if not isinstance(entries, list):
        raise StorageRefused(f"the backup's {MANIFEST_FILE} lists no files")
    listed: dict[str, tuple[int, str]] = {}
    for entry in entries:
        relative = entry.get("path") if isinstance(entry, dict) else None
        if not isinstance(relative, str) or not _safe_relative(relative):
            raise StorageRefused(f"the backup's {MANIFEST_FILE} names an unsafe path {relative!r}")
        size, digest = entry.get("size"), entry.get("sha256")
        if isinstance(size, bool) or not isinstance(size, int) or not isinstance(digest, str):
            raise StorageRefused(f"the backup's {MANIFEST_FILE} gives {relative} no size and sha256")
        path = source / relative
        if not path.is_file() or path.is_symlink():
            raise StorageRefused(f"the backup is damaged: {relative} is missing")
        if path.stat().st_size != size:
            raise StorageRefused(
                f"the backup is damaged: {relative} does not match its sha256 in {MANIFEST_FILE}"
            )
        listed[relative] = (size, digest)
    present = {
        p.relative_to(source).as_posix() for p in source.rglob("*") if p.is_file() and p.name != MANIFEST_FILE
    }
    extra = sorted(present - set(listed))
    if extra:
        raise StorageRefused(
            f"the backup holds files its {MANIFEST_FILE} does not list: {', '.join(extra[:5])}"
        )
    return listed


def _safe_relative(relative: str) -> bool:
    parts = Path(relative).parts
    return (
        bool(parts) and not Path(relative).is_absolute() and ".." not in parts and relative != MANIFEST_FILE
    )


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        return f"{exc.strerror or type(exc).__name__}" + (f": {exc.filename}" if exc.filename else "")
    return type(exc).__name__
