"""A realm's whole content as backend-neutral tables, and the digest that proves two copies equal.

``meta_gateway storage-copy`` reads a realm out of one backend as these tables, writes them into
another, reads the copy back the same way and compares digests before it commits. Each table has
the columns :data:`DUMP_COLUMNS` names, in that order, with scopes by ``(kind, key)`` rather than
by a backend's row id; rows come in the realm's own order (creation order for records, sequence
order for the logs, primary key for the rest). The recall index is not part of a dump: the
destination builds its own from the active records, with the same analyzer.

Digests compare meaning, not bytes: a JSON column is compared parsed (PostgreSQL's ``jsonb``
reorders keys and spaces), a flag as a boolean (SQLite keeps 0 and 1).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "DUMP_COLUMNS",
    "DUMP_ORDER",
    "EVENT_COLUMNS",
    "Digest",
    "DumpTable",
    "combined",
    "digest_tables",
    "normalized",
]

Row = tuple[Any, ...]

DUMP_COLUMNS: dict[str, tuple[str, ...]] = {
    "records": (
        "id", "scope_kind", "scope_key", "kind", "title", "description", "body", "tags", "provenance",
        "trust", "status", "superseded_by", "quarantine_reason", "supersedes", "derived_from",
        "ever_quarantined", "working_set_rank", "content_hash", "created_at_ms", "updated_at_ms",
        "injected_count", "last_injected_at_ms", "explicit_recall_count", "last_recalled_at_ms",
        "judged_useful_count", "last_useful_at_ms", "expires_at_ms",
    ),
    "audit": ("at_ms", "op", "record_id", "author", "detail"),
    "injections": ("record_id", "identity", "session_key", "surface", "at_ms"),
    "proposals": (
        "proposal_id", "scope_kind", "scope_key", "kind", "title", "description", "body", "tags", "author",
        "status", "tainted", "created_at_ms", "updated_at_ms",
    ),
    "stage_batches": ("stage_token", "batch", "created_at_ms"),
    "promotions": (
        "pending_id", "stage_token", "record_id", "scope_kind", "scope_key", "rationale", "status",
        "proposal_id", "created_at_ms", "resolved_at_ms",
    ),
    "dream_runs": ("run_id", "partition", "started_at_ms", "completed_at_ms", "ops_committed", "detail"),
    "harvests": ("identity", "session_key", "cause", "retired_at_ms", "status"),
    "audit_verdicts": ("run_id", "record_id", "verdict", "rationale", "status", "created_at_ms"),
    "legacy_imports": ("file_name", "imported", "skipped", "completed_at_ms"),
}  # fmt: skip
"""Every table of a realm, in the order a copy writes them (records before what refers to them)."""

DUMP_ORDER: dict[str, str] = {
    "records": "doc",
    "audit": "seq",
    "injections": "seq",
    "proposals": "proposal_id",
    "stage_batches": "stage_token",
    "promotions": "pending_id",
    "dream_runs": "run_id",
    "harvests": "identity, session_key",
    "audit_verdicts": "seq",
    "legacy_imports": "file_name",
}
"""The order a dump reads each table in (both backends compare text columns bytewise)."""

EVENT_COLUMNS = ("identity", "event_type", "timestamp_ms", "data")
"""The timeline's rows (the ``events`` part of a copy), in sequence order."""

_JSON = {
    "records": {"tags", "provenance", "derived_from"},
    "audit": {"author", "detail"},
    "proposals": {"tags", "author"},
    "stage_batches": {"batch"},
    "dream_runs": {"detail"},
    "events": {"data"},
}
_FLAGS = {"records": {"ever_quarantined"}, "proposals": {"tainted"}}


def _positions(table: str, names: dict[str, set[str]]) -> tuple[int, ...]:
    columns = EVENT_COLUMNS if table == "events" else DUMP_COLUMNS[table]
    return tuple(i for i, name in enumerate(columns) if name in names.get(table, set()))


_JSON_AT = {t: _positions(t, _JSON) for t in [*DUMP_COLUMNS, "events"]}
_FLAG_AT = {t: _positions(t, _FLAGS) for t in [*DUMP_COLUMNS, "events"]}


def normalized(table: str, row: Row) -> Row:
    """``row`` as a digest compares it: JSON columns parsed, flags as booleans."""
    json_at, flag_at = _JSON_AT[table], _FLAG_AT[table]
    if not json_at and not flag_at:
        return tuple(row)
    out = list(row)
    for i in json_at:
        if isinstance(out[i], str):
            out[i] = json.loads(out[i])
    for i in flag_at:
        out[i] = bool(out[i])
    return tuple(out)


@dataclass(frozen=True)
class DumpTable:
    """One table of a dump: its name (a key of :data:`DUMP_COLUMNS`, or ``"events"``) and its rows."""

    name: str
    rows: Iterable[Row]


@dataclass
class Digest:
    """How many rows a table holds and a SHA-256 over them, normalized, in order."""

    rows: int = 0
    _hash: Any = field(default_factory=hashlib.sha256, repr=False)

    def add(self, table: str, row: Row) -> None:
        self.rows += 1
        text = json.dumps(normalized(table, row), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        self._hash.update(text.encode("utf-8"))
        self._hash.update(b"\n")

    def hexdigest(self) -> str:
        return str(self._hash.hexdigest())


def digest_tables(tables: Iterable[DumpTable]) -> dict[str, Digest]:
    """The digest of every table of a dump (read through once)."""
    out: dict[str, Digest] = {}
    for table in tables:
        digest = out.setdefault(table.name, Digest())
        for row in table.rows:
            digest.add(table.name, row)
    return out


def combined(digests: dict[str, Digest]) -> str:
    """One digest over every table's (for the copy ledger): names, counts and hashes, sorted."""
    text = json.dumps({name: [d.rows, d.hexdigest()] for name, d in sorted(digests.items())}, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
