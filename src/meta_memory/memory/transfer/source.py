"""An import file, recognized and read: a meta-memory export (JSON lines behind a header) or a mem0
export (one JSON document), as a count and a stream of :class:`~.lines.Entry`.

The format is told from the content unless given: a first line that is a JSON object holding
``format`` (or any object that is not mem0's ``{"results": ...}``) is an export, and then its
header must be one this release reads; a JSON document (a list, or an object with ``results``)
is mem0's. An export is read twice: once to check that every line is a JSON object and to count
them (a file that is not JSON lines is refused whole, naming its first bad line, before anything
is written), then line by line as the import goes. Lines are split at ``\\n`` only (U+2028 and
its kind are text), blank lines are skipped, and a UTF-8 byte-order mark is ignored.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import IO, Literal

from ...errors import InvalidParams
from ...names import realm_problem
from .lines import Entry, ExportHeader, LineProblem, parse_header, parse_json_line, record_from_line
from .mem0 import mem0_entries, mem0_items

__all__ = ["Format", "ImportSource", "Opener", "bytes_opener", "read_source"]

Format = Literal["jsonl", "mem0"]
Opener = Callable[[], AbstractContextManager[IO[bytes]]]
"""Opens the file for one read from its start (a path's ``open(path, "rb")``)."""

_BOM = b"\xef\xbb\xbf"


def bytes_opener(data: bytes) -> Opener:
    """An opener over bytes already read (standard input)."""
    return lambda: io.BytesIO(data)


@dataclass(frozen=True)
class ImportSource:
    """A recognized import file: ``count`` entries, read again by each call of ``entries()``."""

    name: str
    format: Format
    count: int
    header: ExportHeader | None
    entries: Callable[[], Iterator[Entry]]


def read_source(
    open_file: Opener,
    name: str,
    *,
    format: Literal["auto", "jsonl", "mem0"] = "auto",
    realm: str,
    identity: str | None,
    now_ms: int,
) -> ImportSource:
    """Recognize (or take ``format``) and check an import file.

    Args:
        name: how reports and audit rows name the file.
        realm: the realm a mem0 export goes to (an export's lines name their own).
        identity: the identity every mem0 memory goes to (default: each one's ``user_id``).
        now_ms: the creation time of a mem0 memory that has none.

    Raises:
        InvalidParams: the file cannot be read as the format, named with the line that breaks it.
    """
    try:
        chosen: Format = _detect(open_file, name) if format == "auto" else format
        if chosen == "mem0":
            return _mem0(open_file, name, realm=realm, identity=identity, now_ms=now_ms)
        header, count = _scan(open_file, name)
    except OSError as exc:
        raise InvalidParams(f"cannot read {name}: {exc.strerror or exc}") from exc
    return ImportSource(name, "jsonl", count, header, lambda: _entries(open_file))


def _lines(open_file: Opener) -> Iterator[tuple[int, bytes]]:
    """Every non-blank line with its number (the first is 1)."""
    with open_file() as f:
        for n, raw in enumerate(f, start=1):
            if n == 1:
                raw = raw.removeprefix(_BOM)
            if raw.strip():
                yield n, raw


def _detect(open_file: Opener, name: str) -> Format:
    first = next((raw.strip() for _, raw in _lines(open_file)), b"")
    if not first:
        raise InvalidParams(f"{name} is empty: it is neither a meta-memory export nor a mem0 export")
    try:
        value = parse_json_line(first)
    except ValueError:
        if first[:1] in (b"[", b"{"):
            return "mem0"  # a JSON document spread over lines (or a list on one)
        raise InvalidParams(
            f"{name} line 1 is not JSON: it is neither a meta-memory export nor a mem0 export"
        ) from None
    return "mem0" if "results" in value and "format" not in value else "jsonl"


def _scan(open_file: Opener, name: str) -> tuple[ExportHeader, int]:
    header: ExportHeader | None = None
    count = 0
    for n, raw in _lines(open_file):
        try:
            value = parse_json_line(raw)
        except ValueError as exc:
            raise InvalidParams(
                f"{name} line {n} is {exc}: the file is not JSON lines, and nothing was imported"
            ) from None
        if header is None:
            try:
                header = parse_header(value)
            except ValueError as exc:
                raise InvalidParams(f"{name} line {n}: {exc}") from None
        else:
            count += 1
    if header is None:
        raise InvalidParams(f"{name} is empty: a meta-memory export starts with its header line")
    return header, count


def _entries(open_file: Opener) -> Iterator[Entry]:
    lines = _lines(open_file)
    next(lines, None)  # the header, checked by _scan
    for n, raw in lines:
        at = f"line {n}"
        try:
            value = parse_json_line(raw)
        except ValueError as exc:  # the file changed since it was checked
            yield Entry(at, None, None, problem=LineProblem("malformed-line", f"the line is {exc}"))
            continue
        named = value.get("realm")
        realm = (
            named
            if isinstance(named, str) and realm_problem(named) is None and named == named.strip()
            else None
        )
        record = value.get("record")
        memory_id = record.get("id") if isinstance(record, dict) else None
        try:
            parsed = record_from_line(value)
        except LineProblem as problem:
            yield Entry(at, realm, memory_id if isinstance(memory_id, str) else None, problem=problem)
            continue
        yield Entry(at, parsed.scope.realm, parsed.id, record=parsed)


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _mem0(open_file: Opener, name: str, *, realm: str, identity: str | None, now_ms: int) -> ImportSource:
    with open_file() as f:
        data = f.read().removeprefix(_BOM)
    try:
        document = json.loads(data.decode("utf-8"), parse_constant=_no_constant)
    except UnicodeDecodeError as exc:
        raise InvalidParams(f"{name} is not UTF-8 (byte {exc.start + 1})") from None
    except ValueError as exc:
        where = f" line {exc.lineno}" if isinstance(exc, json.JSONDecodeError) else ""
        raise InvalidParams(f"{name}{where} is not JSON ({exc}): it is not a mem0 export") from None
    items = mem0_items(document)
    if items is None:
        raise InvalidParams(
            f'{name} is not a mem0 export: it must be {{"results": [...]}} or a list of memories'
        )
    entries = mem0_entries(items, realm=realm, identity=identity, now_ms=now_ms)
    return ImportSource(name, "mem0", len(entries), None, lambda: iter(entries))
