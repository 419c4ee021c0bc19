"""One-time import of a realm's legacy per-identity markdown files into its realm store.

Runs when a realm is first opened. Each ``<realm dir>/<enc(identity)>.md`` is parsed and
its records go through the store validator in one transaction (ids, tags and timestamps
kept; malformed records, cap violations and secret matches skipped with an audit row);
then the file is renamed ``<name>.md.imported``. A file whose stem is not a valid encoded
identity becomes ``<name>.import-failed``. A crash between commit and rename is safe: the
re-run finds every id present and only renames.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..clock import Clock
from ..storage.layout import decode_component
from .legacy_markdown import MAX_LEGACY_FILE_BYTES, parse_legacy_markdown
from .params import IDENTITY_MAX_BYTES
from .records import Author, Provenance, Record, RecordKind, Scope, Status, Trust, content_hash
from .store import RealmStore

__all__ = ["ImportReport", "import_legacy_realm", "pending_legacy_files"]

log = logging.getLogger("meta_memory.legacy_import")

ProgressFn = Callable[[str, int, int], None]  # (file name, files done, files total)


@dataclass
class ImportReport:
    files: int = 0
    imported: int = 0
    skipped: int = 0
    failed_files: int = 0


def pending_legacy_files(legacy_dir: Path) -> list[Path]:
    return sorted(p for p in legacy_dir.glob("*.md") if p.is_file())


def _identity_from_stem(stem: str) -> str | None:
    identity = decode_component(stem)
    if identity is None or not identity.strip() or identity != identity.strip():
        return None
    if len(identity.encode("utf-8")) > IDENTITY_MAX_BYTES or any(
        ord(c) < 32 or ord(c) == 127 for c in identity
    ):
        return None
    return identity


def _rename(path: Path, suffix: str) -> None:
    os.replace(path, path.with_name(path.name + suffix))
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def import_legacy_realm(
    store: RealmStore, legacy_dir: Path, *, clock: Clock, progress: ProgressFn | None = None
) -> ImportReport:
    """Import every pending ``*.md`` of ``legacy_dir`` into ``store``."""
    report = ImportReport()
    files = pending_legacy_files(legacy_dir)
    for done, path in enumerate(files):
        if progress is not None:
            progress(path.name, done, len(files))
        report.files += 1
        identity = _identity_from_stem(path.stem)
        if identity is None:
            log.warning(
                "legacy memory file %s: stem is not an encoded identity; renamed .import-failed", path
            )
            _rename(path, ".import-failed")
            report.failed_files += 1
            continue
        try:
            if path.stat().st_size > MAX_LEGACY_FILE_BYTES:
                raise ValueError(f"larger than {MAX_LEGACY_FILE_BYTES} bytes")
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            log.warning("legacy memory file %s cannot be read (%s); renamed .import-failed", path, exc)
            _rename(path, ".import-failed")
            report.failed_files += 1
            continue
        parsed = parse_legacy_markdown(text)
        author = Author("agent", identity=identity)
        scope = Scope.identity(store.realm, identity)
        seen: set[str] = set()
        records: list[Record] = []
        malformed = [(m.memory_id, m.reason) for m in parsed.malformed]
        for legacy in parsed.records:
            if legacy.memory_id in seen:
                malformed.append((legacy.memory_id, "duplicate memory_id within the file"))
                continue
            seen.add(legacy.memory_id)
            records.append(
                Record(
                    id=legacy.memory_id,
                    scope=scope,
                    kind=RecordKind.FACT,
                    title=legacy.title,
                    description="",
                    body=legacy.body,
                    tags=tuple(legacy.tags),
                    provenance=Provenance(author=author),
                    trust=Trust.AGENT_OBSERVED,
                    status=Status.ACTIVE,
                    created_at_ms=legacy.created_at_ms,
                    updated_at_ms=legacy.updated_at_ms,
                    content_hash=content_hash(legacy.title, legacy.body),
                )
            )
        imported, skipped = store.import_records(path.name, author, records, malformed)
        report.imported += imported
        report.skipped += skipped
        _rename(path, ".imported")
        log.info("imported %s: %d records, %d skipped", path, imported, skipped)
    if progress is not None and files:
        progress("", len(files), len(files))
    return report
