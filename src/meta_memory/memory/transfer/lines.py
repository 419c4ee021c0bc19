"""The export file's line format: a header line, then one record per line, and the strict reading
of both.

Every line is one JSON object with sorted keys, compact separators and UTF-8 text (nothing
ASCII-escaped), ending in ``\\n``, so one set of records always makes the same bytes. The header
is ``{"format": "meta-memory-export", "version": 1, ...}`` and names the selection the export
made; a record line is ``{"content_hash", "realm", "record"}``, the record in its wire form
(:meth:`~meta_memory.memory.records.Record.to_wire`) without its usage counters (statistics of
one deployment), its status carrying every lineage fact the record holds (``by`` for the record
that superseded it, ``reason`` for the quarantine it went through, even once it was released).

Reading is strict: unknown or missing keys, wrong types, text that no store can hold (NUL, lone
surrogates) and numbers out of a column's range are a :class:`LineProblem` naming the field, so a
hand-made or damaged line is refused on its own and never reaches a store as a driver error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ...names import realm_problem
from ..params import IDENTITY_MAX_BYTES
from ..records import (
    LLM_AUTHOR_KINDS,
    Author,
    Evidence,
    Provenance,
    Record,
    RecordKind,
    Scope,
    ScopeKind,
    Status,
    Trust,
    VerificationClaim,
)

__all__ = [
    "FORMAT",
    "MEMORY_ID_MAX_BYTES",
    "VERSION",
    "Entry",
    "ExportHeader",
    "LineProblem",
    "check_texts",
    "encode_line",
    "header_line",
    "parse_header",
    "parse_json_line",
    "record_from_line",
    "record_line",
]

FORMAT = "meta-memory-export"
VERSION = 1
MEMORY_ID_MAX_BYTES = 256
"""The longest record id (and lineage reference) an import accepts."""

_AUTHOR_KINDS = frozenset({"operator", "application", *LLM_AUTHOR_KINDS})
_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)
_RECORD_KEYS = frozenset(
    {
        "id", "scope", "kind", "title", "description", "body", "tags", "provenance", "trust", "status",
        "supersedes", "derived_from", "ever_quarantined", "working_set_rank", "content_hash",
        "created_at_ms", "updated_at_ms",
    }
)  # fmt: skip
_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class LineProblem(Exception):
    """Why one line (or one mem0 item) cannot be imported; ``rule`` names it in the report."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(message)
        self.rule = rule
        self.message = message


@dataclass(frozen=True)
class Entry:
    """One entry of an import file, read: where it is (``line 7``, ``item 3``), the realm it goes
    to and its record, or the problem that refuses it before any store sees it; ``notes``: what the
    reading left out (a mem0 category that is no valid tag)."""

    at: str
    realm: str | None
    memory_id: str | None
    record: Record | None = None
    problem: LineProblem | None = None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class ExportHeader:
    """The first line: what the export selected (informational; the lines are what is imported)."""

    include_history: bool
    realm: str | None
    identity: str | None

    def to_wire(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "include_history": self.include_history,
            "realm": self.realm,
            "identity": self.identity,
        }


def encode_line(value: dict[str, Any]) -> bytes:
    """One line of the file: sorted keys, compact, UTF-8, newline-terminated."""
    return _ENCODER.encode(value).encode("utf-8") + b"\n"


def header_line(header: ExportHeader) -> bytes:
    return encode_line(header.to_wire())


def _status_wire(record: Record) -> dict[str, Any]:
    status: dict[str, Any] = {"status": record.status.value}
    if record.superseded_by is not None:
        status["by"] = record.superseded_by
    if record.quarantine_reason is not None:
        status["reason"] = record.quarantine_reason
    return status


def record_line(record: Record) -> bytes:
    """The line of one record."""
    wire = record.to_wire()
    del wire["usage"]
    wire["status"] = _status_wire(record)
    if record.expires_at_ms is not None:  # absent when it never expires (files of older releases)
        wire["expires_at_ms"] = record.expires_at_ms
    return encode_line({"content_hash": record.content_hash, "realm": record.scope.realm, "record": wire})


# -- reading ----------------------------------------------------------------------------------------


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"key {key!r} appears twice")
        out[key] = value
    return out


def parse_json_line(raw: bytes) -> dict[str, Any]:
    """One line as a JSON object (strict: UTF-8, no NaN, no repeated key).

    Raises:
        ValueError: it is not one JSON object; the message says where it breaks.
    """
    try:
        text = raw.rstrip(b"\r\n").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 (byte {exc.start + 1})") from None
    try:
        value = json.loads(text, parse_constant=_no_constant, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg.removesuffix(' at')}: column {exc.colno})") from None
    if not isinstance(value, dict):
        raise ValueError(f"a JSON {type(value).__name__}, not an object")
    return value


def parse_header(value: dict[str, Any]) -> ExportHeader:
    """The header line.

    Raises:
        ValueError: it is no export header, or one of a version this release cannot read.
    """
    if value.get("format") != FORMAT:
        raise ValueError(f'not a meta-memory export header (it must be {{"format": "{FORMAT}", ...}})')
    version = value.get("version")
    if version != VERSION:
        if isinstance(version, int) and not isinstance(version, bool) and version > VERSION:
            raise ValueError(f"export format version {version} is newer than this release reads ({VERSION})")
        raise ValueError(f"export format version {version!r} is not one this release reads ({VERSION})")
    unknown = sorted(set(value) - {"format", "version", "include_history", "realm", "identity"})
    if unknown:
        raise ValueError(f"the header has unknown keys: {', '.join(unknown)}")
    include_history, realm, identity = value.get("include_history"), value.get("realm"), value.get("identity")
    if not isinstance(include_history, bool):
        raise ValueError("the header's include_history must be true or false")
    if not all(v is None or isinstance(v, str) for v in (realm, identity)):
        raise ValueError("the header's realm and identity must be strings or null")
    return ExportHeader(include_history, realm, identity)


def _text_problem(value: str) -> str | None:
    if "\x00" in value:
        return "contains NUL (U+0000)"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "is not valid Unicode (a lone surrogate)"
    return None


def check_texts(value: Any, path: str) -> None:
    """No string anywhere in ``value`` may hold what a store cannot keep.

    Raises:
        LineProblem: ``field-invalid``, naming where.
    """
    if isinstance(value, str):
        problem = _text_problem(value)
        if problem is not None:
            raise LineProblem("field-invalid", f"{path} {problem}")
    elif isinstance(value, dict):
        for key, item in value.items():
            check_texts(key, f"{path} key")
            check_texts(item, f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            check_texts(item, f"{path}[{i}]")


def _malformed(message: str) -> LineProblem:
    return LineProblem("malformed-record", message)


def _str(d: dict[str, Any], key: str, path: str, *, optional: bool = False) -> Any:
    value = d.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise _malformed(f"{path}.{key} must be a string{' or null' if optional else ''}")
    return value


def _int(d: dict[str, Any], key: str, path: str, bounds: tuple[int, int], *, optional: bool = False) -> Any:
    value = d.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise _malformed(f"{path}.{key} must be an integer{' or null' if optional else ''}")
    if not bounds[0] <= value <= bounds[1]:
        raise _malformed(f"{path}.{key} is out of range")
    return value


def _strs(d: dict[str, Any], key: str, path: str) -> tuple[str, ...]:
    value = d.get(key)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _malformed(f"{path}.{key} must be a list of strings")
    return tuple(value)


def _memory_id(value: Any, path: str) -> str:
    if not isinstance(value, str) or not value.strip() or value != value.strip():
        raise _malformed(f"{path} must be a non-empty string without surrounding whitespace")
    if len(value.encode("utf-8")) > MEMORY_ID_MAX_BYTES or any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise _malformed(f"{path} must be at most {MEMORY_ID_MAX_BYTES} bytes, without control characters")
    return value


def _keys(
    d: Any, path: str, required: frozenset[str], optional: frozenset[str] = frozenset()
) -> dict[str, Any]:
    if not isinstance(d, dict):
        raise _malformed(f"{path} must be an object")
    missing = sorted(required - set(d))
    if missing:
        raise _malformed(f"{path} lacks {', '.join(missing)}")
    unknown = sorted(set(d) - required - optional)
    if unknown:
        raise _malformed(f"{path} has unknown keys: {', '.join(unknown)}")
    return d


def _scope(value: Any, realm: str) -> Scope:
    d = _keys(value, "record.scope", frozenset({"scope", "realm"}), frozenset(k.value for k in ScopeKind))
    try:
        kind = ScopeKind(d["scope"])
    except ValueError:
        raise _malformed(f"record.scope.scope {d['scope']!r} is not a scope kind") from None
    if d["realm"] != realm:
        raise _malformed("record.scope.realm is not the line's realm")
    extra = set(d) - {"scope", "realm"}
    if kind is ScopeKind.REALM:
        if extra:
            raise _malformed("a realm scope names no key")
        return Scope(kind, realm)
    if extra != {kind.value}:
        raise _malformed(f"a {kind.value} scope names its {kind.value} (and nothing else)")
    key = d[kind.value]
    if (
        not isinstance(key, str)
        or not key.strip()
        or key != key.strip()
        or len(key.encode()) > IDENTITY_MAX_BYTES
    ):
        raise _malformed(
            f"record.scope.{kind.value} must be a non-empty string of at most {IDENTITY_MAX_BYTES} bytes"
        )
    if any(ord(c) < 32 or ord(c) == 127 for c in key):
        raise _malformed(f"record.scope.{kind.value} must not contain control characters")
    return Scope(kind, realm, key)


def _author(value: Any) -> Author:
    d = _keys(value, "record.provenance.author", frozenset({"author"}), frozenset({"identity", "run_id"}))
    kind = _str(d, "author", "record.provenance.author")
    if kind not in _AUTHOR_KINDS:
        raise _malformed(f"record.provenance.author.author {kind!r} is not an author kind")
    identity = _str(d, "identity", "record.provenance.author", optional=True)
    if kind == "agent" and identity is None:
        raise _malformed("an agent author names its identity")
    return Author(kind, identity, _str(d, "run_id", "record.provenance.author", optional=True))


def _provenance(value: Any) -> Provenance:
    path = "record.provenance"
    d = _keys(value, path, frozenset({"author", "evidence"}), frozenset({"profile", "verification"}))
    if not isinstance(d["evidence"], list):
        raise _malformed(f"{path}.evidence must be a list")
    evidence = []
    for i, e in enumerate(d["evidence"]):
        at = f"{path}.evidence[{i}]"
        e = _keys(e, at, frozenset({"session_id", "generation"}), frozenset({"revision", "range"}))
        evidence.append(
            Evidence(
                _str(e, "session_id", at),
                _int(e, "generation", at, _INT64),
                _int(e, "revision", at, _INT64, optional=True),
                _str(e, "range", at, optional=True),
            )
        )
    verification = None
    if d.get("verification") is not None:
        v = _keys(d["verification"], f"{path}.verification", frozenset({"checked", "evidence"}))
        verification = VerificationClaim(
            _str(v, "checked", f"{path}.verification"), _strs(v, "evidence", f"{path}.verification")
        )
    return Provenance(
        author=_author(d["author"]),
        evidence=tuple(evidence),
        profile=_str(d, "profile", path, optional=True),
        verification=verification,
    )


def _enum(enum: Any, value: Any, path: str) -> Any:
    try:
        return enum(value)
    except ValueError:
        raise _malformed(f"{path} {value!r} is not one of {', '.join(e.value for e in enum)}") from None


def record_from_line(value: dict[str, Any]) -> Record:
    """The record of one record line, read strictly; the store's validator judges it next.

    Raises:
        LineProblem: the line is not a record this format holds (``malformed-record``), or holds
            text no store can keep (``field-invalid``).
    """
    check_texts(value, "line")
    d = _keys(value, "the line", frozenset({"content_hash", "realm", "record"}))
    realm = d["realm"]
    if (problem := realm_problem(realm)) is not None or realm != realm.strip():
        raise _malformed(f"realm {problem or 'must not begin or end with whitespace'}")
    r = _keys(d["record"], "record", _RECORD_KEYS, frozenset({"expires_at_ms"}))
    if not isinstance(r["ever_quarantined"], bool):
        raise _malformed("record.ever_quarantined must be true or false")
    status = _keys(r["status"], "record.status", frozenset({"status"}), frozenset({"by", "reason"}))
    if not isinstance(d["content_hash"], str) or d["content_hash"] != r["content_hash"]:
        raise LineProblem("content-hash-mismatch", "the line's content_hash is not its record's")
    record = Record(
        id=_memory_id(r["id"], "record.id"),
        scope=_scope(r["scope"], realm),
        kind=_enum(RecordKind, r["kind"], "record.kind"),
        title=_str(r, "title", "record"),
        description=_str(r, "description", "record"),
        body=_str(r, "body", "record"),
        tags=_strs(r, "tags", "record"),
        provenance=_provenance(r["provenance"]),
        trust=_enum(Trust, r["trust"], "record.trust"),
        status=_enum(Status, status["status"], "record.status.status"),
        created_at_ms=_int(r, "created_at_ms", "record", _INT64),
        updated_at_ms=_int(r, "updated_at_ms", "record", _INT64),
        content_hash=_str(r, "content_hash", "record"),
        supersedes=None if r["supersedes"] is None else _memory_id(r["supersedes"], "record.supersedes"),
        derived_from=tuple(
            _memory_id(i, f"record.derived_from[{n}]")
            for n, i in enumerate(_strs(r, "derived_from", "record"))
        ),
        ever_quarantined=r["ever_quarantined"],
        superseded_by=None if status.get("by") is None else _memory_id(status["by"], "record.status.by"),
        quarantine_reason=_str(status, "reason", "record.status", optional=True),
        working_set_rank=_int(r, "working_set_rank", "record", _INT32, optional=True),
        expires_at_ms=_int(r, "expires_at_ms", "record", (1, 2**53 - 1), optional=True),
    )
    return record
