"""Staged batches as JSON: a gated promotion's :class:`~meta_memory.memory.validator.WriteBatch` is
written into the realm file when it is staged and read back, unchanged, when the gate approves it,
so the store validator judges exactly what was staged.
"""

from __future__ import annotations

from typing import Any

from ..memory.records import Author, Provenance, Record, RecordKind, Scope, ScopeKind, Status, Trust
from ..memory.validator import CreateOp, TombstoneOp, WriteBatch

__all__ = ["batch_from_json", "batch_to_json", "record_from_json", "record_to_json"]


def _scope_to_json(scope: Scope) -> dict[str, str]:
    return {"kind": scope.kind.value, "realm": scope.realm, "key": scope.key}


def _scope_from_json(d: dict[str, Any]) -> Scope:
    return Scope(ScopeKind(d["kind"]), d["realm"], d["key"])


def record_to_json(r: Record) -> dict[str, Any]:
    return {
        "id": r.id,
        "scope": _scope_to_json(r.scope),
        "kind": r.kind.value,
        "title": r.title,
        "description": r.description,
        "body": r.body,
        "tags": list(r.tags),
        "provenance": r.provenance.to_wire(),
        "trust": r.trust.value,
        "status": r.status.value,
        "created_at_ms": r.created_at_ms,
        "updated_at_ms": r.updated_at_ms,
        "content_hash": r.content_hash,
        "supersedes": r.supersedes,
        "derived_from": list(r.derived_from),
        "ever_quarantined": r.ever_quarantined,
    }


def record_from_json(d: dict[str, Any]) -> Record:
    return Record(
        id=d["id"],
        scope=_scope_from_json(d["scope"]),
        kind=RecordKind(d["kind"]),
        title=d["title"],
        description=d["description"],
        body=d["body"],
        tags=tuple(d["tags"]),
        provenance=Provenance.from_wire(d["provenance"]),
        trust=Trust(d["trust"]),
        status=Status(d["status"]),
        created_at_ms=d["created_at_ms"],
        updated_at_ms=d["updated_at_ms"],
        content_hash=d["content_hash"],
        supersedes=d["supersedes"],
        derived_from=tuple(d["derived_from"]),
        ever_quarantined=d["ever_quarantined"],
    )


def batch_to_json(batch: WriteBatch) -> dict[str, Any]:
    ops: list[dict[str, Any]] = []
    for op in batch.ops:
        if isinstance(op, CreateOp):
            ops.append({"op": "create", "record": record_to_json(op.record)})
        else:
            ops.append({"op": "tombstone", "memory_id": op.memory_id, "scope": _scope_to_json(op.scope)})
    return {"realm": batch.realm, "author": batch.author.to_wire(), "rationale": batch.rationale, "ops": ops}


def batch_from_json(d: dict[str, Any]) -> WriteBatch:
    ops: list[CreateOp | TombstoneOp] = []
    for op in d["ops"]:
        if op["op"] == "create":
            ops.append(CreateOp(record_from_json(op["record"])))
        else:
            ops.append(TombstoneOp(op["memory_id"], _scope_from_json(op["scope"])))
    return WriteBatch(d["realm"], Author.from_wire(d["author"]), tuple(ops), d["rationale"])
