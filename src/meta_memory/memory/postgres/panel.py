"""The Memory panel's reads of one realm in PostgreSQL: the same rows, cursors and orders as a realm
file's (memory/sqlite/panel.py), in the domain's row types.

Every function takes a connection inside the store's read snapshot and the realm. List rows are
body-free (``body_bytes`` is the UTF-8 length, ``body_head`` the body's first characters unless its
content needs quarantine review), and a gated promotion's ``stage_token`` is never selected.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

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

_SAMPLES = 8  # memory ids and rationales sampled per dream summary

_ROW_COLUMNS = (
    "r.id, s.kind, s.key, r.kind, r.title, r.description, r.tags, (r.provenance::jsonb)->'author', "
    "r.trust, r.status, r.quarantine_reason, r.supersedes, r.superseded_by, r.derived_from, "
    "r.ever_quarantined, r.created_at_ms, r.updated_at_ms, octet_length(r.body), "
    f"CASE WHEN {BODY_LISTED} THEN left(r.body, {BODY_HEAD_CHARS}) END"
)
_ROW_FROM = ROW_FROM


def _json_list(text: str | None) -> tuple[str, ...]:
    import json

    if text is None:
        return ()
    try:
        value = json.loads(text)
    except ValueError:
        return ()
    return tuple(value) if isinstance(value, list) else ()


def _row(raw: Sequence[Any]) -> RecordRow:
    mid, skind, skey, kind, title, desc, tags, author, trust, status = raw[:10]
    reason, sup, sup_by, derived, everq, created, updated, nbytes, head = raw[10:19]
    return RecordRow(
        memory_id=mid,
        scope_kind=skind,
        scope_key=skey,
        kind=kind,
        title=title,
        description=desc,
        tags=_json_list(tags),
        author=author if isinstance(author, dict) else None,
        trust=trust,
        status=status,
        quarantine_reason=reason,
        supersedes=sup,
        superseded_by=sup_by,
        derived_from=_json_list(derived),
        ever_quarantined=bool(everq),
        created_at_ms=int(created),
        updated_at_ms=int(updated),
        body_bytes=int(nbytes or 0),
        body_head=head,
    )


def _row_by_id(conn: psycopg.Connection, realm: str, memory_id: str) -> RecordRow | None:
    raw = conn.execute(
        f"SELECT {_ROW_COLUMNS} {_ROW_FROM} WHERE r.realm = %s AND r.id = %s", (realm, memory_id)
    ).fetchone()
    return _row(raw) if raw else None


def records_page(
    conn: psycopg.Connection, realm: str, where: RecordFilter, after: RecordKey | None, limit: int
) -> RecordsPage:
    clauses, args = record_where(realm, where, after)
    sql = f"SELECT {_ROW_COLUMNS} {_ROW_FROM} WHERE {' AND '.join(clauses)} ORDER BY r.updated_at_ms DESC, r.id DESC LIMIT %s"
    raw = conn.execute(sql, (*args, limit + 1)).fetchall()
    rows = tuple(_row(r) for r in raw[:limit])
    more = len(raw) > limit
    return RecordsPage(rows, rows[-1].key if more and rows else None)


def record_access(conn: psycopg.Connection, realm: str, memory_ids: list[str]) -> dict[str, RecordAccess]:
    if not memory_ids:
        return {}
    rows = conn.execute(
        f"SELECT r.id, s.kind, s.key, r.status, r.ever_quarantined {_ROW_FROM} WHERE r.realm = %s AND r.id = ANY(%s)",
        (realm, memory_ids),
    ).fetchall()
    return {mid: RecordAccess(kind, key, status, bool(everq)) for mid, kind, key, status, everq in rows}


def supersede_chain(conn: psycopg.Connection, realm: str, memory_id: str, max_hops: int) -> ChainLinks:
    start = _row_by_id(conn, realm, memory_id)
    if start is None:
        return ChainLinks((), (), ())
    seen = {start.memory_id}
    ancestors: list[RecordRow] = []
    cursor = start.supersedes
    while cursor is not None and cursor not in seen and len(ancestors) < max_hops:
        seen.add(cursor)
        found = _row_by_id(conn, realm, cursor)
        if found is None:
            break
        ancestors.append(found)
        cursor = found.supersedes
    successors: list[RecordRow] = []
    tip = start
    cursor = start.superseded_by
    while cursor is not None and cursor not in seen and len(successors) < max_hops:
        seen.add(cursor)
        found = _row_by_id(conn, realm, cursor)
        if found is None:
            break
        successors.append(found)
        tip = found
        cursor = found.superseded_by
    claimants = [
        _row(raw)
        for raw in conn.execute(
            f"SELECT {_ROW_COLUMNS} {_ROW_FROM} WHERE r.realm = %s AND r.supersedes = %s "
            "ORDER BY r.created_at_ms, r.id LIMIT %s",
            (realm, tip.memory_id, max_hops + len(seen)),
        )
    ]
    fresh = tuple(c for c in claimants if c.memory_id not in seen and c.memory_id != tip.superseded_by)
    return ChainLinks(tuple(ancestors), tuple(successors), fresh[:max_hops])


def record_injections(
    conn: psycopg.Connection, realm: str, memory_id: str, before: tuple[int, int] | None, limit: int
) -> list[InjectionEntry]:
    sql = "SELECT seq, record_id, identity, session_key, surface, at_ms FROM injections WHERE realm = %s AND record_id = %s"
    args: list[Any] = [realm, memory_id]
    if before is not None:
        sql += " AND (at_ms, seq) < (%s, %s)"
        args.extend(before)
    raw = conn.execute(sql + " ORDER BY at_ms DESC, seq DESC LIMIT %s", (*args, limit)).fetchall()
    return [InjectionEntry(*r) for r in raw]


def quarantined(conn: psycopg.Connection, realm: str, limit: int) -> list[RecordRow]:
    raw = conn.execute(
        f"SELECT {_ROW_COLUMNS} {_ROW_FROM} WHERE r.realm = %s AND r.status = 'quarantined' "
        "ORDER BY r.created_at_ms DESC, r.id DESC LIMIT %s",
        (realm, limit),
    ).fetchall()
    return [_row(r) for r in raw]


def pending_promotions(conn: psycopg.Connection, realm: str, limit: int) -> list[PromotionEntry]:
    raw = conn.execute(
        "SELECT pending_id, record_id, scope_kind, scope_key, rationale, status, proposal_id, created_at_ms "
        "FROM promotions WHERE realm = %s AND status = 'pending' ORDER BY created_at_ms DESC, pending_id DESC LIMIT %s",
        (realm, limit),
    ).fetchall()
    return [PromotionEntry(*r) for r in raw]


def proposal_scopes(
    conn: psycopg.Connection, realm: str, proposal_ids: list[str]
) -> dict[str, tuple[str, str]]:
    if not proposal_ids:
        return {}
    rows = conn.execute(
        "SELECT proposal_id, scope_kind, scope_key FROM proposals WHERE realm = %s AND proposal_id = ANY(%s)",
        (realm, proposal_ids),
    ).fetchall()
    return {pid: (kind, key) for pid, kind, key in rows}


def pending_proposals(conn: psycopg.Connection, realm: str, limit: int) -> list[ProposalRow]:
    """Open proposals (pending or held), newest first, each with its content hash; the body is
    read for the hash only."""
    raw = conn.execute(
        "SELECT proposal_id, scope_kind, scope_key, title, kind, author, status, created_at_ms, tainted, body "
        "FROM proposals WHERE realm = %s AND status IN ('pending', 'held') "
        "ORDER BY created_at_ms DESC, proposal_id DESC LIMIT %s",
        (realm, limit),
    ).fetchall()
    return [
        ProposalRow(
            pid,
            kind,
            key,
            title,
            rkind,
            author if isinstance(author, dict) else None,
            status,
            created,
            bool(t),
            content_hash(title, body),
        )
        for pid, kind, key, title, rkind, author, status, created, t, body in raw
    ]


def proposal_detail(conn: psycopg.Connection, realm: str, proposal_id: str) -> ProposalItem | None:
    """One proposal with its text, whatever its status (as a decision reads it)."""
    return steward_rows.proposal_item(conn, realm, proposal_id)


def injections(conn: psycopg.Connection, realm: str, limit: int) -> list[InjectionEntry]:
    raw = conn.execute(
        "SELECT seq, record_id, identity, session_key, surface, at_ms FROM injections WHERE realm = %s "
        "ORDER BY at_ms DESC, seq DESC LIMIT %s",
        (realm, limit),
    ).fetchall()
    return [InjectionEntry(*r) for r in raw]


def pending_harvests(conn: psycopg.Connection, realm: str, limit: int) -> list[HarvestRow]:
    raw = conn.execute(
        "SELECT identity, session_key, cause, retired_at_ms FROM harvests WHERE realm = %s AND status = 'pending' "
        "ORDER BY retired_at_ms DESC, identity, session_key LIMIT %s",
        (realm, limit),
    ).fetchall()
    return [HarvestRow(*r) for r in raw]


def open_verdicts(conn: psycopg.Connection, realm: str, limit: int) -> list[VerdictRow]:
    raw = conn.execute(
        "SELECT seq, run_id, record_id, verdict, rationale, created_at_ms FROM audit_verdicts "
        "WHERE realm = %s AND status = 'open' ORDER BY created_at_ms DESC, seq DESC LIMIT %s",
        (realm, limit),
    ).fetchall()
    return [VerdictRow(*r) for r in raw]


def scope_counts(conn: psycopg.Connection, realm: str) -> list[ScopeCounts]:
    raw = conn.execute(
        "SELECT s.kind, s.key, "
        "count(*) FILTER (WHERE r.status = 'active'), count(*) FILTER (WHERE r.status = 'quarantined'), "
        "count(*) FILTER (WHERE r.status = 'superseded'), count(*) FILTER (WHERE r.status = 'tombstoned'), "
        f"coalesce(sum(octet_length(r.body)), 0) {_ROW_FROM} WHERE r.realm = %s "
        "GROUP BY s.scope_id, s.kind, s.key ORDER BY s.kind, s.key",
        (realm,),
    ).fetchall()
    return [
        ScopeCounts(kind, key, int(a), int(q), int(s), int(t), int(b)) for kind, key, a, q, s, t, b in raw
    ]


_BY_STEWARD = "realm = %s AND author->>'author' = 'steward' AND author->>'run_id' IS NOT NULL"


def dream_summaries(conn: psycopg.Connection, realm: str, limit: int) -> list[DreamSummaryRow]:
    out: list[DreamSummaryRow] = []
    runs = conn.execute(
        "SELECT author->>'run_id' AS run, min(at_ms), max(at_ms), count(*), "
        "count(*) FILTER (WHERE (detail->>'quarantined') IS NOT NULL OR detail ? 'review') "
        f"FROM audit WHERE {_BY_STEWARD} GROUP BY run ORDER BY max(at_ms) DESC, run DESC LIMIT %s",
        (realm, limit),
    ).fetchall()
    for run_id, first, last, ops, quarantined_ops in runs:
        kinds: dict[str, int] = dict(
            conn.execute(
                f"SELECT op, count(*) FROM audit WHERE {_BY_STEWARD} AND author->>'run_id' = %s GROUP BY op",
                (realm, run_id),
            ).fetchall()
        )
        ids: list[str] = []
        notes: list[str] = []
        for record_id, rationale in conn.execute(
            f"SELECT record_id, detail->>'rationale' FROM audit WHERE {_BY_STEWARD} AND author->>'run_id' = %s "
            "ORDER BY seq",
            (realm, run_id),
        ):
            if isinstance(record_id, str) and record_id not in ids and len(ids) < _SAMPLES:
                ids.append(record_id)
            if isinstance(rationale, str) and rationale not in notes and len(notes) < _SAMPLES:
                notes.append(rationale)
            if len(ids) >= _SAMPLES and len(notes) >= _SAMPLES:
                break
        out.append(
            DreamSummaryRow(
                str(run_id),
                first,
                last,
                int(ops),
                {k: int(v) for k, v in kinds.items()},
                int(quarantined_ops or 0),
                tuple(ids),
                tuple(notes),
            )
        )
    return out


def dream_runs(conn: psycopg.Connection, realm: str, limit: int) -> list[DreamRunRow]:
    import json

    raw = conn.execute(
        "SELECT run_id, partition, started_at_ms, completed_at_ms, ops_committed, detail FROM dream_runs "
        "WHERE realm = %s ORDER BY started_at_ms DESC, run_id DESC LIMIT %s",
        (realm, limit),
    ).fetchall()
    out = []
    for run, part, start, done, ops, detail in raw:
        try:
            parsed = json.loads(detail)
        except ValueError:
            parsed = detail
        out.append(DreamRunRow(run, part, start, done, ops, parsed))
    return out


def holds_quarantine_evidence(conn: psycopg.Connection, realm: str) -> bool:
    row = conn.execute(
        "SELECT 1 FROM records WHERE realm = %s AND (ever_quarantined OR status = 'quarantined') LIMIT 1",
        (realm,),
    ).fetchone()
    return row is not None


def realm_scopes(conn: psycopg.Connection, realm: str) -> set[tuple[str, str]]:
    raw = conn.execute(
        f"SELECT DISTINCT s.kind, s.key {_ROW_FROM} WHERE r.realm = %s "
        "UNION SELECT scope_kind, scope_key FROM proposals WHERE realm = %s "
        "UNION SELECT scope_kind, scope_key FROM promotions WHERE realm = %s "
        "UNION SELECT 'identity', identity FROM harvests WHERE realm = %s",
        (realm, realm, realm, realm),
    ).fetchall()
    return {(kind, key) for kind, key in raw}
