"""The legacy per-identity markdown memory format (REFERENCE 3.6), which 0.9.9 only imports: parsing a
file into records plus a report of every record it had to skip, and, for tests and fixtures, rendering
records back into the same format. Parsing never raises on a bad record (the importer audits and skips
what :class:`Malformed` reports); only an oversized or undecodable file is an error. Renaming imported
files, identity decoding and the import itself belong to the store.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from meta_memory.errors import StoreCorrupt

__all__ = [
    "FILE_HEADER",
    "MAX_LEGACY_FILE_BYTES",
    "METADATA_PREFIX",
    "METADATA_SUFFIX",
    "RECORD_END",
    "LegacyRecord",
    "Malformed",
    "ParseResult",
    "parse_legacy_markdown",
    "read_legacy_markdown",
    "render_legacy_markdown",
]

FILE_HEADER = "# MobKit Agent Memory\n\n"
METADATA_PREFIX = "<!-- mobkit-agent-memory "
METADATA_SUFFIX = " -->"
RECORD_END = "<!-- /mobkit-agent-memory -->"
MAX_LEGACY_FILE_BYTES = 8 * 1024 * 1024

_TITLE_PREFIX = "## "
_U64_MAX = 2**64 - 1


@dataclass(frozen=True, slots=True)
class LegacyRecord:
    memory_id: str
    title: str
    body: str
    tags: tuple[str, ...]
    created_at_ms: int
    updated_at_ms: int


@dataclass(frozen=True, slots=True)
class Malformed:
    """A record the parser skipped. ``line_no`` (1-based) is its ``## `` title line."""

    reason: str
    line_no: int
    memory_id: str | None


@dataclass(frozen=True, slots=True)
class ParseResult:
    records: list[LegacyRecord] = field(default_factory=list)
    malformed: list[Malformed] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Metadata:
    memory_id: str
    tags: tuple[str, ...]
    created_at_ms: int
    updated_at_ms: int


class _BadMetadata(Exception):
    def __init__(self, reason: str, memory_id: str | None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.memory_id = memory_id


def _is_structural(line: str) -> bool:
    trimmed = line.strip()
    return trimmed == RECORD_END or trimmed.startswith(METADATA_PREFIX)


def _needs_escape(line: str) -> bool:
    # A structural line, or one that would read as an escaped structural line (backslashes then a
    # marker). Escaping the latter too is what makes unescaping exact for every body; the original
    # MobKit writer escaped only the former, which differs only for bodies that already held such lines.
    return _is_structural(line.lstrip("\\"))


def _escape_body(body: str) -> str:
    return "\n".join("\\" + line if _needs_escape(line) else line for line in body.split("\n"))


def _unescape_line(line: str) -> str:
    if line.startswith("\\") and _needs_escape(line[1:]):
        return line[1:]
    return line


def _lines(text: str) -> list[str]:
    """Lines as MobKit's reader saw them: split on LF, one trailing CR dropped, no final empty line."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def _u64(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _U64_MAX


def _parse_metadata(line: str) -> _Metadata | None:
    """``None`` when ``line`` is not a metadata line at all; raises :class:`_BadMetadata` when it is one
    whose JSON or fields are wrong."""
    trimmed = line.strip()
    if not trimmed.startswith(METADATA_PREFIX):
        return None
    payload = trimmed[len(METADATA_PREFIX) :]
    if not payload.endswith(METADATA_SUFFIX):
        raise _BadMetadata("metadata comment is not closed with ' -->'", None)
    try:
        data = json.loads(payload[: -len(METADATA_SUFFIX)])
    except json.JSONDecodeError as exc:
        raise _BadMetadata(f"metadata is not valid JSON ({exc.msg})", None) from exc
    except RecursionError as exc:
        raise _BadMetadata("metadata JSON is nested too deeply", None) from exc
    if not isinstance(data, dict):
        raise _BadMetadata("metadata JSON is not an object", None)
    memory_id = data.get("memory_id")
    if not isinstance(memory_id, str):
        raise _BadMetadata("metadata field 'memory_id' is missing or not a string", None)
    # serde's `#[serde(default)]` on tags: absent means none; unknown keys were ignored upstream too.
    tags = data.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
        raise _BadMetadata("metadata field 'tags' is not a list of strings", memory_id)
    for name in ("created_at_ms", "updated_at_ms"):
        if not _u64(data.get(name)):
            raise _BadMetadata(f"metadata field '{name}' is missing or not a non-negative integer", memory_id)
    return _Metadata(memory_id, tuple(tags), data["created_at_ms"], data["updated_at_ms"])


@dataclass(slots=True)
class _Pending:
    title: str
    line_no: int
    metadata: _Metadata | None = None
    metadata_error: _BadMetadata | None = None
    body: list[str] = field(default_factory=list)


def _finish(pending: _Pending | None, result: ParseResult) -> None:
    if pending is None:
        return
    metadata = pending.metadata
    if metadata is None:
        error = pending.metadata_error
        reason = error.reason if error is not None else "missing metadata comment"
        result.malformed.append(Malformed(reason, pending.line_no, error.memory_id if error else None))
        return
    body = "\n".join(pending.body).strip()
    if not body:
        result.malformed.append(Malformed("empty body", pending.line_no, metadata.memory_id))
        return
    result.records.append(
        LegacyRecord(
            memory_id=metadata.memory_id,
            title=pending.title,
            body=body,
            tags=metadata.tags,
            created_at_ms=metadata.created_at_ms,
            updated_at_ms=metadata.updated_at_ms,
        )
    )


def _check_size(size: int, what: str) -> None:
    if size > MAX_LEGACY_FILE_BYTES:
        raise StoreCorrupt(
            f"legacy agent-memory markdown {what} is {size} bytes, over the {MAX_LEGACY_FILE_BYTES}-byte "
            "(8 MiB) import cap"
        )


def parse_legacy_markdown(text: str) -> ParseResult:
    """Parse a legacy markdown memory file.

    A ``## `` line starts a new record only while the current one still lacks a title or metadata, so
    once a record has its metadata, ``## `` lines belong to its body until the end marker. Lines before
    the first record (the ``# MobKit Agent Memory`` header) and between an end marker and the next title
    are ignored. A metadata-looking line with bad JSON or fields does not become metadata; as in MobKit,
    it stays in the body, and the record is reported with that reason unless a valid metadata line
    follows.

    Returns:
        The well-formed records in file order, and a :class:`Malformed` entry for every record skipped
        for missing or bad metadata or an empty body.

    Raises:
        StoreCorrupt: the text is over 8 MiB of UTF-8.
    """
    _check_size(len(text.encode("utf-8", errors="surrogatepass")), "text")
    result = ParseResult()
    pending: _Pending | None = None
    for line_no, line in enumerate(_lines(text), start=1):
        lacks_metadata = pending is None or pending.metadata is None
        if lacks_metadata and line.startswith(_TITLE_PREFIX):
            _finish(pending, result)
            pending = _Pending(title=line[len(_TITLE_PREFIX) :].strip(), line_no=line_no)
            continue
        if pending is None:
            continue
        if pending.metadata is None:
            try:
                metadata = _parse_metadata(line)
            except _BadMetadata as exc:
                metadata = None
                pending.metadata_error = exc
            if metadata is not None:
                pending.metadata = metadata
                continue
        if line.strip() == RECORD_END:
            _finish(pending, result)
            pending = None
            continue
        pending.body.append(_unescape_line(line))
    _finish(pending, result)
    return result


def read_legacy_markdown(path: Path) -> ParseResult:
    """Read and parse one legacy file, refusing files over 8 MiB before reading them.

    Raises:
        StoreCorrupt: the file is over 8 MiB or is not UTF-8.
    """
    _check_size(path.stat().st_size, f"file {path.name!r}")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise StoreCorrupt(f"legacy agent-memory markdown file {path.name!r} is not valid UTF-8") from exc
    return parse_legacy_markdown(text)


def render_legacy_markdown(records: Iterable[LegacyRecord]) -> str:
    """Render records in the legacy format (for tests and fixtures; the 0.9.9 runtime never writes it).

    Titles must be single-line; bodies are written with structural lines escaped by a leading ``\\``.
    """
    parts = [FILE_HEADER]
    for record in records:
        metadata = json.dumps(
            {
                "memory_id": record.memory_id,
                "tags": list(record.tags),
                "created_at_ms": record.created_at_ms,
                "updated_at_ms": record.updated_at_ms,
            },
            ensure_ascii=False,
            separators=(",", ":"),
        )
        parts.append(
            f"{_TITLE_PREFIX}{record.title}\n{METADATA_PREFIX}{metadata}{METADATA_SUFFIX}\n"
            f"{_escape_body(record.body)}\n{RECORD_END}\n\n"
        )
    return "".join(parts)
