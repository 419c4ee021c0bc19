"""How a :class:`~meta_memory.memory.records.Record` is laid out as a table row, for every backend.

One owner for the row format: the values of an insert (JSON columns compact, enums by value), and
the decoding of a selected row back into a record (JSON columns, enums, the scope by id, and
recall counters still pending in memory), in the column order :data:`RECORD_FIELDS` names. Each
backend writes its own SQL around them. Decoding sits on every recall's path, so the common
shapes (empty lists, a handful of distinct provenances and authors) are served from small caches.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from .records import Author, Provenance, Record, RecordKind, Scope, Status, Trust, Usage
from .usage import PendingUsage

__all__ = [
    "INSERT_FIELDS",
    "RECORD_FIELDS",
    "dumps",
    "record_from_row",
    "record_values",
    "wire_json",
]

RECORD_FIELDS = (
    "doc", "id", "scope_id", "kind", "title", "description", "body", "tags", "provenance", "trust", "status",
    "superseded_by", "quarantine_reason", "supersedes", "derived_from", "ever_quarantined", "working_set_rank",
    "content_hash", "created_at_ms", "updated_at_ms", "injected_count", "last_injected_at_ms",
    "explicit_recall_count", "last_recalled_at_ms", "judged_useful_count", "last_useful_at_ms", "expires_at_ms",
)  # fmt: skip
"""The columns a record read selects, in the order :func:`record_from_row` decodes them."""

INSERT_FIELDS = (
    "id", "scope_id", "kind", "title", "description", "body", "tags", "provenance", "trust", "status",
    "quarantine_reason", "supersedes", "derived_from", "ever_quarantined", "working_set_rank", "content_hash",
    "created_at_ms", "updated_at_ms", "expires_at_ms",
)  # fmt: skip
"""The columns of an insert, in the order :func:`record_values` gives their values."""


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)  # one, not one per call


def dumps(value: Any) -> str:
    """Compact JSON, as every JSON column of the realm file stores it."""
    return _ENCODER.encode(value)


def _dumps_list(values: Sequence[str]) -> str:
    return dumps(list(values)) if values else "[]"


@lru_cache(maxsize=1024)
def wire_json(value: Author | Provenance) -> str:
    """The stored JSON of an author or provenance: a handful of distinct values carry most writes."""
    return dumps(value.to_wire())


def record_values(r: Record, scope_id: int) -> tuple[Any, ...]:
    """The values of :data:`INSERT_FIELDS` for ``r`` in the scope row ``scope_id``
    (``ever_quarantined`` as 0 or 1)."""
    return (
        r.id,
        scope_id,
        r.kind.value,
        r.title,
        r.description,
        r.body,
        _dumps_list(r.tags),
        wire_json(r.provenance),
        r.trust.value,
        r.status.value,
        r.quarantine_reason,
        r.supersedes,
        _dumps_list(r.derived_from),
        int(r.ever_quarantined or r.status is Status.QUARANTINED),
        r.working_set_rank,
        r.content_hash,
        r.created_at_ms,
        r.updated_at_ms,
        r.expires_at_ms,
    )


_KINDS = {kind.value: kind for kind in RecordKind}
_TRUSTS = {trust.value: trust for trust in Trust}
_STATUSES = {status.value: status for status in Status}


def _loads_tuple(text: str) -> tuple[str, ...]:
    return () if text == "[]" else tuple(json.loads(text))


@lru_cache(maxsize=1024)
def _provenance_from(text: str) -> Provenance:
    """Stored provenance JSON -> Provenance (immutable, so one object serves every equal row)."""
    return Provenance.from_wire(json.loads(text))


def record_from_row(row: Sequence[Any], scope_of: Callable[[int], Scope], usage: PendingUsage) -> Record:
    """Decode a row of :data:`RECORD_FIELDS`, with the recall counters ``usage`` still holds."""
    (
        _doc,
        memory_id,
        scope_id,
        kind,
        title,
        description,
        body,
        tags,
        provenance,
        trust,
        status,
        superseded_by,
        quarantine_reason,
        supersedes,
        derived_from,
        ever_quarantined,
        rank,
        chash,
        created,
        updated,
        inj,
        last_inj,
        rec,
        last_rec,
        useful,
        last_useful,
        expires,
    ) = row
    rec, last_rec = usage.overlay(memory_id, rec, last_rec)
    return Record(
        id=memory_id,
        scope=scope_of(scope_id),
        kind=_KINDS[kind],
        title=title,
        description=description,
        body=body,
        tags=_loads_tuple(tags),
        provenance=_provenance_from(provenance),
        trust=_TRUSTS[trust],
        status=_STATUSES[status],
        created_at_ms=created,
        updated_at_ms=updated,
        content_hash=chash,
        supersedes=supersedes,
        derived_from=_loads_tuple(derived_from),
        ever_quarantined=bool(ever_quarantined),
        superseded_by=superseded_by,
        quarantine_reason=quarantine_reason,
        working_set_rank=rank,
        usage=Usage(inj, last_inj, rec, last_rec, useful, last_useful),
        expires_at_ms=expires,
    )
