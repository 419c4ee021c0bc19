"""A realm file's birth and the checks that tell a realm file from a damaged one.

A new realm file is built whole under a stage name (``<enc(realm)>.sqlite3.tmp``: schema, WAL
mode, page size) and only then renamed to its canonical name, so a canonical file always holds
a realm schema from its first moment. That makes damage recognizable: an existing canonical file
that is empty, is not SQLite, or holds no realm schema was truncated, overwritten or replaced,
and opening it as a new empty realm (which SQLite would happily do) would hide the loss and let
new writes land on top. Such a file is refused instead, and left exactly as it is, with its
recall index, for an operator to restore.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

from ...storage.layout import STAGE_SUFFIX, StateLayout
from .migrations import migrate

__all__ = ["REALM_PAGE_SIZE", "RealmFileDamaged", "check_realm_file", "create_realm_file", "holds_schema"]

# The page size of new realm files. A remember dirties about ten pages (the record's, its four
# indexes', the audit row's and its index's, the header's when the file grows), each written
# whole to the WAL and again by the checkpoint that copies it: measured in the runtime, 22 KiB of
# WAL a remember at 2 KiB pages against 44 KiB at 4 KiB, and remember over stdio ran 4-12% faster
# in three paired runs. The price is space: a page holds two typical records instead of five, so
# the records table packs less tightly (the 1,000,000-record benchmark fixture: 912 MB against
# 872 MB at 4 KiB with one more index). Recall was not slower (docs/benchmarks.md). The recall
# index keeps SQLite's default in its own file; existing realm files keep their page size.
REALM_PAGE_SIZE = 2048

_SQLITE_MAGIC = b"SQLite format 3\x00"


class RealmFileDamaged(Exception):
    """A realm file that must not be opened; ``reason`` completes "its file <name> ..."."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def check_realm_file(path: Path) -> None:
    """Refuse an existing canonical realm file that cannot be a realm store (reads 100 bytes).

    Raises:
        RealmFileDamaged: the file is empty or does not start with SQLite's header.
        OSError: the file cannot be read at all.
    """
    with path.open("rb") as f:
        header = f.read(100)
    if not header:
        raise RealmFileDamaged("is empty (0 bytes): it was truncated or replaced")
    if len(header) < 100 or not header.startswith(_SQLITE_MAGIC):
        raise RealmFileDamaged("is not an SQLite database")


def holds_schema(db: sqlite3.Connection) -> bool:
    """Whether the open file has a realm schema (reads ``sqlite_master`` only: writes nothing)."""
    row = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    ).fetchone()
    return row is not None


def create_realm_file(path: Path, now_ms: int, *, durability: str) -> None:
    """Build a new realm file at ``path``: whole under its stage name, then renamed into place.

    Raises:
        RealmFileDamaged: ``path`` is missing but its WAL is present (replaying that WAL into a
            new file would mix another file's pages into it).
        OSError, sqlite3.Error: the stage could not be built or renamed.
    """
    wal, shm = StateLayout.sqlite_sidecars(path)
    if wal.exists():
        raise RealmFileDamaged(f"is missing while its WAL file {wal.name} is present")
    path.parent.mkdir(parents=True, exist_ok=True)
    stage = path.with_name(path.name + STAGE_SUFFIX)
    for leftover in (stage, *StateLayout.sqlite_sidecars(stage), stage.with_name(stage.name + "-journal")):
        with contextlib.suppress(FileNotFoundError):
            leftover.unlink()  # an earlier build that was interrupted
    db = sqlite3.connect(stage, isolation_level=None)
    try:
        db.execute(f"PRAGMA page_size = {REALM_PAGE_SIZE}")
        db.execute("PRAGMA journal_mode = WAL")
        migrate(db, now_ms)
    finally:
        db.close()  # the last connection: its WAL is checkpointed into the stage and removed
    if durability == "power":
        _fsync(stage)
    with contextlib.suppress(FileNotFoundError):
        shm.unlink()  # no process has the canonical file open: a -shm left there is stale
    os.rename(stage, path)
    if durability == "power":
        _fsync(path.parent)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
