"""The Memory panel's reads of one realm file: keyset record pages, chains, counts and the steward's rows.

Every function takes a :class:`~meta_memory.memory.sqlite.store.SqliteRealmStore` and reads inside
its ``reading()`` transaction (one consistent snapshot under the store lock), like the review does
for writes. Rows come back as the domain's row types (memory/rows.py), body-free: a record's size is
``body_bytes`` (the UTF-8 length SQLite measures), its ``body_head`` the body's first characters
unless its content needs quarantine review (memory/sql/matching.py), and a gated promotion's
``stage_token`` is never selected.
Access filtering and wire shapes belong to :mod:`meta_memory.panel`, whose store seam binds these
functions to a realm store.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..records import content_hash
from ..rows import (
    BODY_HEAD_CHARS,
    ChainLinks,
    DreamRunRow,
    DreamSummaryRow,
    HarvestRow,
    InjectionEntry,
    PromotionEntry,
    ProposalItem,
    ProposalRow,
    RecordAccess,
    RecordFilter,
    RecordKey,
    RecordRow,
    RecordsPage,
    ScopeCounts,
    VerdictRow,
)
from ..sql.matching import BODY_LISTED
from . import steward_rows
from .listing import ROW_FROM, record_where

if TYPE_CHECKING:
    from .store import SqliteRealmStore

__all__ = [
    "dream_runs",
    "dream_summaries",
    "holds_quarantine_evidence",
    "injections",
    "open_verdicts",
    "pending_harvests",
    "pending_promotions",
    "pending_proposals",
    "proposal_detail",
    "proposal_scopes",
    "quarantined",
    "realm_scopes",
    "record_access",
    "record_injections",
    "records_page",
    "scope_counts",
    "supersede_chain",
]

_IN_CHUNK = 500  # ids per ``IN (...)``: well under SQLite's bound-parameter limit
_SAMPLES = 8  # memory ids and rationales sampled per dream summary

_ROW_COLUMNS = (
    "r.id, s.kind, s.key, r.kind, r.title, r.description, r.tags, json_extract(r.provenance, '$.author'), "
    "r.trust, r.status, r.quarantine_reason, r.supersedes, r.superseded_by, r.derived_from, "
    "r.ever_quarantined, r.created_at_ms, r.updated_at_ms, length(CAST(r.body AS BLOB)), "
    f"CASE WHEN {BODY_LISTED} THEN substr(r.body, 1, {BODY_HEAD_CHARS}) END"
)
_ROW_FROM = ROW_FROM


def _json(text: str | None, default: Any) -> Any:
    if text is None:
        return default
    try:
        return json.loads(text)
    except ValueError:
        return text  # a hand-edited column stays readable rather than failing the whole listing


def _row(raw: Sequence[Any]) -> RecordRow:
    mid, skind, skey, kind, title, desc, tags, author, trust, status = raw[:10]
    reason, sup, sup_by, derived, everq, created, updated, nbytes, head = raw[10:19]
    author_value = _json(author, None)
    return RecordRow(
        memory_id=mid,
        scope_kind=skind,
        scope_key=skey,
        kind=kind,
        title=title,
        description=desc,
        tags=tuple(_json(tags, [])),
        author=author_value if isinstance(author_value, dict) else None,
        trust=trust,
        status=status,
        quarantine_reason=reason,
        supersedes=sup,
        superseded_by=sup_by,
        derived_from=tuple(_json(derived, [])),
        ever_quarantined=bool(everq),
        created_at_ms=int(created),
        updated_at_ms=int(updated),
        body_bytes=int(nbytes or 0),
        body_head=head,
    )


def _row_by_id(db: sqlite3.Connection, memory_id: str) -> RecordRow | None:
    raw = db.execute(f"SELECT {_ROW_COLUMNS} {_ROW_FROM} WHERE r.id = ?", (memory_id,)).fetchone()
    return _row(raw) if raw else None


def _chunks(values: Sequence[str]) -> Iterable[Sequence[str]]:
    for start in range(0, len(values), _IN_CHUNK):
        yield values[start : start + _IN_CHUNK]


# -- records -------------------------------------------------------------------------------------


def records_page(
    store: SqliteRealmStore, where: RecordFilter, after: RecordKey | None, limit: int
) -> RecordsPage:
    """Up to ``limit`` rows strictly past ``after`` (updated desc, id desc) matching ``where``."""
    clauses, args = record_where(where, after)
    sql = f"SELECT {_ROW_COLUMNS} {_ROW_FROM}"
    if clauses:
        sql += " WHERE " + " AND ".join(clauses)
    sql += " ORDER BY r.updated_at_ms DESC, r.id DESC LIMIT ?"
    with store.reading() as db:
        raw = db.execute(sql, (*args, limit + 1)).fetchall()
    rows = tuple(_row(r) for r in raw[:limit])
    more = len(raw) > limit
    return RecordsPage(rows, rows[-1].key if more and rows else None)


def record_access(store: SqliteRealmStore, memory_ids: Iterable[str]) -> dict[str, RecordAccess]:
    """Scope, status and quarantine marker of each listed record the realm holds."""
    ids = sorted(set(memory_ids))
    out: dict[str, RecordAccess] = {}
    with store.reading() as db:
        for chunk in _chunks(ids):
            marks = ",".join("?" * len(chunk))
            for mid, kind, key, status, everq in db.execute(
                f"SELECT r.id, s.kind, s.key, r.status, r.ever_quarantined {_ROW_FROM} WHERE r.id IN ({marks})",
                list(chunk),
            ):
                out[mid] = RecordAccess(kind, key, status, bool(everq))
    return out


def supersede_chain(store: SqliteRealmStore, memory_id: str, max_hops: int) -> ChainLinks:
    """Walk ``supersedes`` back and ``superseded_by`` forward (each at most ``max_hops``), then list
    the uncommitted claimants of the tip. A cycle in hand-edited rows ends the walk."""
    with store.reading() as db:
        start = _row_by_id(db, memory_id)
        if start is None:
            return ChainLinks((), (), ())
        seen = {start.memory_id}
        ancestors: list[RecordRow] = []
        cursor = start.supersedes
        while cursor is not None and cursor not in seen and len(ancestors) < max_hops:
            seen.add(cursor)
            found = _row_by_id(db, cursor)
            if found is None:
                break
            ancestors.append(found)
            cursor = found.supersedes
        successors: list[RecordRow] = []
        tip = start
        cursor = start.superseded_by
        while cursor is not None and cursor not in seen and len(successors) < max_hops:
            seen.add(cursor)
            found = _row_by_id(db, cursor)
            if found is None:
                break
            successors.append(found)
            tip = found
            cursor = found.superseded_by
        claimants = [
            _row(raw)
            for raw in db.execute(
                f"SELECT {_ROW_COLUMNS} {_ROW_FROM} WHERE r.supersedes = ? "
                "ORDER BY r.created_at_ms, r.id LIMIT ?",
                (tip.memory_id, max_hops + len(seen)),
            )
        ]
    # A committed successor past the hop limit is no claimant.
    fresh = tuple(c for c in claimants if c.memory_id not in seen and c.memory_id != tip.superseded_by)
    return ChainLinks(tuple(ancestors), tuple(successors), fresh[:max_hops])


def record_injections(
    store: SqliteRealmStore, memory_id: str, before: tuple[int, int] | None, limit: int
) -> list[InjectionEntry]:
    """The record's injection-ledger rows, newest first, strictly before ``(at_ms, seq)``."""
    sql = "SELECT seq, record_id, identity, session_key, surface, at_ms FROM injections WHERE record_id = ?"
    args: list[Any] = [memory_id]
    if before is not None:
        sql += " AND (at_ms < ? OR (at_ms = ? AND seq < ?))"
        args.extend((before[0], before[0], before[1]))
    with store.reading() as db:
        raw = db.execute(sql + " ORDER BY at_ms DESC, seq DESC LIMIT ?", (*args, limit)).fetchall()
    return [InjectionEntry(*r) for r in raw]


def quarantined(store: SqliteRealmStore, limit: int) -> list[RecordRow]:
    """Quarantined records, newest created first."""
    with store.reading() as db:
        raw = db.execute(
            f"SELECT {_ROW_COLUMNS} {_ROW_FROM} WHERE r.status = 'quarantined' "
            "ORDER BY r.created_at_ms DESC, r.id DESC LIMIT ?",
            (limit,),
        ).fetchall()
    return [_row(r) for r in raw]


# -- governance rows ---------------------------------------------------------------------------------


def pending_promotions(store: SqliteRealmStore, limit: int) -> list[PromotionEntry]:
    """Pending gated promotions, newest first (the stage token is never read)."""
    with store.reading() as db:
        raw = db.execute(
            "SELECT pending_id, record_id, scope_kind, scope_key, rationale, status, proposal_id, created_at_ms "
            "FROM promotions WHERE status = 'pending' ORDER BY created_at_ms DESC, pending_id DESC LIMIT ?",
            (limit,),
        ).fetchall()
    return [PromotionEntry(*r) for r in raw]


def proposal_scopes(store: SqliteRealmStore, proposal_ids: Iterable[str]) -> dict[str, tuple[str, str]]:
    """The scope each listed proposal targets."""
    ids = sorted(set(proposal_ids))
    out: dict[str, tuple[str, str]] = {}
    with store.reading() as db:
        for chunk in _chunks(ids):
            marks = ",".join("?" * len(chunk))
            for pid, kind, key in db.execute(
                f"SELECT proposal_id, scope_kind, scope_key FROM proposals WHERE proposal_id IN ({marks})",
                list(chunk),
            ):
                out[pid] = (kind, key)
    return out


def pending_proposals(store: SqliteRealmStore, limit: int) -> list[ProposalRow]:
    """Open proposals' metadata (pending or held), newest first, each with the content hash a
    decision binds to; the body is read for the hash only, never returned."""
    with store.reading() as db:
        raw = db.execute(
            "SELECT proposal_id, scope_kind, scope_key, title, kind, author, status, created_at_ms, tainted, body "
            "FROM proposals WHERE status IN ('pending', 'held') "
            "ORDER BY created_at_ms DESC, proposal_id DESC LIMIT ?",
            (limit,),
        ).fetchall()
    out = []
    for pid, kind, key, title, rkind, author, status, created, tainted, body in raw:
        author_value = _json(author, None)
        out.append(
            ProposalRow(
                pid,
                kind,
                key,
                title,
                rkind,
                author_value if isinstance(author_value, dict) else None,
                status,
                created,
                bool(tainted),
                content_hash(title, body),
            )
        )
    return out


def proposal_detail(store: SqliteRealmStore, proposal_id: str) -> ProposalItem | None:
    """One proposal with its text, whatever its status (as a decision reads it)."""
    with store.reading() as db:
        return steward_rows.proposal_item(db, proposal_id)


def injections(store: SqliteRealmStore, limit: int) -> list[InjectionEntry]:
    """The injection ledger, newest first."""
    with store.reading() as db:
        raw = db.execute(
            "SELECT seq, record_id, identity, session_key, surface, at_ms FROM injections "
            "ORDER BY at_ms DESC, seq DESC LIMIT ?",
            (limit,),
        ).fetchall()
    return [InjectionEntry(*r) for r in raw]


def pending_harvests(store: SqliteRealmStore, limit: int) -> list[HarvestRow]:
    """Exit interviews not yet harvested, most recently retired first."""
    with store.reading() as db:
        raw = db.execute(
            "SELECT identity, session_key, cause, retired_at_ms FROM harvests WHERE status = 'pending' "
            "ORDER BY retired_at_ms DESC, identity, session_key LIMIT ?",
            (limit,),
        ).fetchall()
    return [HarvestRow(*r) for r in raw]


def open_verdicts(store: SqliteRealmStore, limit: int) -> list[VerdictRow]:
    """Usage-audit verdicts awaiting an operator, newest first."""
    with store.reading() as db:
        raw = db.execute(
            "SELECT seq, run_id, record_id, verdict, rationale, created_at_ms FROM audit_verdicts "
            "WHERE status = 'open' ORDER BY created_at_ms DESC, seq DESC LIMIT ?",
            (limit,),
        ).fetchall()
    return [VerdictRow(*r) for r in raw]


def scope_counts(store: SqliteRealmStore) -> list[ScopeCounts]:
    """Per-scope status counts and body bytes over every record of the realm."""
    with store.reading() as db:
        raw = db.execute(
            "SELECT s.kind, s.key, "
            "coalesce(sum(r.status = 'active'), 0), coalesce(sum(r.status = 'quarantined'), 0), "
            "coalesce(sum(r.status = 'superseded'), 0), coalesce(sum(r.status = 'tombstoned'), 0), "
            f"coalesce(sum(length(CAST(r.body AS BLOB))), 0) {_ROW_FROM} "
            "GROUP BY r.scope_id ORDER BY s.kind, s.key"
        ).fetchall()
    return [ScopeCounts(*r) for r in raw]


# -- the dream history -------------------------------------------------------------------------------

_STEWARD_RUN = "json_extract(author, '$.run_id')"
_BY_STEWARD = f"json_extract(author, '$.author') = 'steward' AND {_STEWARD_RUN} IS NOT NULL"


def dream_summaries(store: SqliteRealmStore, limit: int) -> list[DreamSummaryRow]:
    """Steward runs reconstructed from the audit rows their author stamps, latest activity first.

    A quarantined op is one that wrote quarantined content or carried out a quarantine review.
    """
    out: list[DreamSummaryRow] = []
    with store.reading() as db:
        runs = db.execute(
            f"SELECT {_STEWARD_RUN} AS run, min(at_ms), max(at_ms), count(*), "
            "sum(json_extract(detail, '$.quarantined') IS NOT NULL OR json_extract(detail, '$.review') IS NOT NULL) "
            f"FROM audit WHERE {_BY_STEWARD} GROUP BY run ORDER BY max(at_ms) DESC, run DESC LIMIT ?",
            (limit,),
        ).fetchall()
        for run_id, first, last, ops, quarantined_ops in runs:
            kinds = dict(
                db.execute(
                    f"SELECT op, count(*) FROM audit WHERE {_BY_STEWARD} AND {_STEWARD_RUN} = ? GROUP BY op",
                    (run_id,),
                ).fetchall()
            )
            ids: list[str] = []
            notes: list[str] = []
            for record_id, rationale in db.execute(
                f"SELECT record_id, json_extract(detail, '$.rationale') FROM audit WHERE {_BY_STEWARD} "
                f"AND {_STEWARD_RUN} = ? ORDER BY seq",
                (run_id,),
            ):
                if isinstance(record_id, str) and record_id not in ids and len(ids) < _SAMPLES:
                    ids.append(record_id)
                if isinstance(rationale, str) and rationale not in notes and len(notes) < _SAMPLES:
                    notes.append(rationale)
                if len(ids) >= _SAMPLES and len(notes) >= _SAMPLES:
                    break
            out.append(
                DreamSummaryRow(
                    str(run_id), first, last, ops, kinds, int(quarantined_ops or 0), tuple(ids), tuple(notes)
                )
            )
    return out


def dream_runs(store: SqliteRealmStore, limit: int) -> list[DreamRunRow]:
    """Durable dream-run rows, latest start first."""
    with store.reading() as db:
        raw = db.execute(
            "SELECT run_id, partition, started_at_ms, completed_at_ms, ops_committed, detail FROM dream_runs "
            "ORDER BY started_at_ms DESC, run_id DESC LIMIT ?",
            (limit,),
        ).fetchall()
    return [
        DreamRunRow(run, part, start, done, ops, _json(detail, {}))
        for run, part, start, done, ops, detail in raw
    ]


def holds_quarantine_evidence(store: SqliteRealmStore) -> bool:
    """Whether the realm holds content that was ever quarantined (decided or not)."""
    with store.reading() as db:
        row = db.execute(
            "SELECT 1 FROM records WHERE ever_quarantined != 0 OR status = 'quarantined' LIMIT 1"
        ).fetchone()
    return row is not None


def realm_scopes(store: SqliteRealmStore) -> set[tuple[str, str]]:
    """Every memory scope the realm names: its records', its proposals', its gated promotions' targets,
    and the identity scope of each identity with a harvest row."""
    with store.reading() as db:
        raw = db.execute(
            f"SELECT DISTINCT s.kind, s.key {_ROW_FROM} "
            "UNION SELECT scope_kind, scope_key FROM proposals "
            "UNION SELECT scope_kind, scope_key FROM promotions "
            "UNION SELECT 'identity', identity FROM harvests"
        ).fetchall()
    return {(kind, key) for kind, key in raw}
