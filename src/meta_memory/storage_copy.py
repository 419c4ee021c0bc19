"""``meta_gateway storage-copy``: a state dir's SQLite realms and its timeline, copied into PostgreSQL,
verified, and safe to run again.

The copy holds the state dir's lock throughout (no gateway may serve it meanwhile, so the source
stands still). Each realm file is opened the way a gateway opens it (a damaged or newer file is
refused, an older one migrated), read out as backend-neutral tables (memory/dump.py) and written
in one verified transaction (memory/postgres/copy.py); the timeline follows when every realm is
copied, and what was copied is vacuumed and analyzed (statistics for the planner, and postings
readable from the index alone). A part the database's copy ledger already holds from this state dir is not copied again:
its source is digested and compared, so a second run either confirms the copy or says the source
has changed since. One realm refused (not empty in the database, a NUL the server cannot store, a
damaged file, a record written outside the store's rules) does not stop the others.

A copy moves a store inside the trust boundary: records keep the status and trust they have in
the source (which a gateway serving it already gives them), and the audit rows that hold their
reviews come with them; only what every stored record keeps is checked again
(memory/postgres/copy.py).

This module is wiring: it knows both backends, as backends.py does.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from .clock import Clock, SystemClock
from .config import AgentMemoryConfig
from .errors import StorageRefused, StoreUnavailable
from .memory.dump import DumpTable, combined, digest_tables
from .memory.postgres.copy import CopyLedger, load_events, load_realm, settle
from .memory.postgres.factory import PostgresBackend
from .memory.sqlite import dump as sqlite_dump
from .memory.sqlite.factory import SqliteStoreFactory
from .storage.layout import StateLayout
from .storage.lock import StateDirLock

__all__ = ["CopyProgress", "PartReport", "copy_to_postgres"]

Outcome = Literal["copied", "already_copied", "refused"]


@dataclass(frozen=True)
class PartReport:
    """What became of one part: ``realm:<name>`` or ``events``."""

    part: str
    rows: int
    outcome: Outcome
    message: str | None = None
    digest: str | None = None


class CopyProgress(Protocol):
    def start(self, part: str, total: int) -> None: ...

    def advance(self, part: str, rows: int) -> None: ...

    def finish(self, report: PartReport) -> None: ...


class _Quiet:
    def start(self, part: str, total: int) -> None:
        pass

    def advance(self, part: str, rows: int) -> None:
        pass

    def finish(self, report: PartReport) -> None:
        pass


def copy_to_postgres(
    state_dir: str | Path,
    dsn: str,
    *,
    realms: Sequence[str] | None = None,
    clock: Clock | None = None,
    progress: CopyProgress | None = None,
    timeout_s: float = 10.0,
) -> list[PartReport]:
    """Copy every realm of ``state_dir`` (or those named) and, copying all, its timeline.

    Raises:
        StorageRefused: the state dir does not exist or a runtime serves it; the database cannot
            be reached or is at a newer schema.
        StoreUnavailable: the server failed part-way (what committed before stays, verified).
    """
    clock = clock or SystemClock()
    progress = progress or _Quiet()
    layout = StateLayout.at(state_dir)
    if not layout.root.is_dir():
        raise StorageRefused(f"state dir {layout.root} does not exist")
    lock = StateDirLock.acquire(layout)
    try:
        root = layout.agent_memory_root()
        files = SqliteStoreFactory(layout, root, AgentMemoryConfig(), clock=clock)
        target = PostgresBackend(dsn, clock=clock, timeout_s=timeout_s)
        try:
            ledger = CopyLedger(target.pool, str(layout.root.resolve()))
            present = set(files.realms())
            reports = [
                _copy_realm(files, target, ledger, layout, realm, present, clock, progress)
                for realm in (realms if realms else sorted(present))
            ]
            if not realms and layout.event_log_path.is_file():
                reports.append(_copy_events(target, ledger, layout.event_log_path, clock, progress))
            if any(r.outcome == "copied" for r in reports):
                settle(target.pool)
            return reports
        finally:
            target.close()
            files.close()
    finally:
        lock.release()


def _already(ledger: CopyLedger, part: str, tables: Iterable[DumpTable]) -> PartReport | None:
    """The report of a part this source copied before (its source digested again), else None."""
    done = ledger.get(part)
    if done is None:
        return None
    rows, digest = done
    now = combined(digest_tables(tables))
    if now == digest:
        return PartReport(part, rows, "already_copied", digest=digest)
    return PartReport(
        part,
        rows,
        "refused",
        f"{part} was copied from this state dir before and has changed since; its copy is left as it is",
    )


def _copy_realm(
    files: SqliteStoreFactory,
    target: PostgresBackend,
    ledger: CopyLedger,
    layout: StateLayout,
    realm: str,
    present: set[str],
    clock: Clock,
    progress: CopyProgress,
) -> PartReport:
    part = f"realm:{realm}"
    if realm not in present:
        report = PartReport(part, 0, "refused", f"no realm file for {realm!r} under {files.root.name}/")
        progress.finish(report)
        return report
    try:
        files.open_realm(realm)  # what a gateway checks on opening: damaged, newer and older files
        path = layout.realm_db_path(realm, files.root)
        before = _already(ledger, part, sqlite_dump.dump_realm(path))
        if before is not None:
            report = before
        else:
            progress.start(part, sum(sqlite_dump.realm_counts(path).values()))
            digests = load_realm(
                target.pool,
                target.schema,
                realm,
                sqlite_dump.dump_realm(path),
                ledger=ledger,
                now_ms=clock.now_ms(),
                progress=lambda n: progress.advance(part, n),
            )
            report = PartReport(
                part, sum(d.rows for d in digests.values()), "copied", digest=combined(digests)
            )
    except StoreUnavailable:
        raise
    except StorageRefused as exc:
        report = PartReport(part, 0, "refused", exc.message)
    progress.finish(report)
    return report


def _copy_events(
    target: PostgresBackend, ledger: CopyLedger, path: Path, clock: Clock, progress: CopyProgress
) -> PartReport:
    report = _already(ledger, "events", sqlite_dump.dump_events(path))
    if report is None:
        progress.start("events", sqlite_dump.event_count(path))
        try:
            digest = load_events(
                target.pool,
                target.schema,
                sqlite_dump.dump_events(path),
                ledger=ledger,
                now_ms=clock.now_ms(),
                progress=lambda n: progress.advance("events", n),
            )
            report = PartReport("events", digest.rows, "copied", digest=combined({"events": digest}))
        except StoreUnavailable:
            raise
        except StorageRefused as exc:
            report = PartReport("events", 0, "refused", exc.message)
    progress.finish(report)
    return report
