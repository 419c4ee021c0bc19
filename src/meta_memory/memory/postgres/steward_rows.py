"""The steward's rows of one realm in PostgreSQL: the dream queue it reads, dream runs, proposal and
harvest status, usage-audit verdicts, staged batches and gated-promotion mappings (the SQL behind
the steward, as memory/sqlite/steward_rows.py is a realm file's).

Writes run on the connection of the caller's write transaction; :func:`gather` and
:func:`signal_count` on the store's read snapshot.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

import psycopg

from ..codec import dumps
from ..records import Record, Scope, ScopeKind, content_hash
from ..rows import HarvestItem, PromotionRow, ProposalItem, ProposalState, QueueLimits, QueueRows, VerdictRow
from .columns import RECORD_COLUMNS

if TYPE_CHECKING:
    from .store import PostgresRealmStore

__all__ = [
    "IDENTITY_KEYS",
    "add_audit_verdicts",
    "audit_verdicts_of",
    "close_audit_verdicts",
    "collect_stale_stages",
    "complete_harvest",
    "finish_run",
    "gather",
    "insert_promotion",
    "note_proposal_decision",
    "note_verdict_resolution",
    "overdue_promotions",
    "pending_promotions_of",
    "promotion",
    "proposal",
    "proposal_item",
    "rekey_promotion",
    "resolve_promotion",
    "set_proposal_status",
    "signal_count",
    "staged_batch",
    "start_run",
    "verdict_resolutions",
]

STAGE_TOKEN_TTL_MS = 24 * 3600 * 1000

IDENTITY_KEYS = (
    "SELECT key FROM scopes WHERE realm = %s AND kind = 'identity' "
    "UNION SELECT identity FROM harvests WHERE realm = %s ORDER BY 1"
)


def _identity_filter(identities: Collection[str] | None, column: str) -> tuple[str, list[Any]]:
    if identities is None:
        return "", []
    return f" AND {column} = ANY(%s)", [list(identities)]


def _active_duplicate(conn: psycopg.Connection, scope: Scope, digest: str, exclude: str) -> str | None:
    row = conn.execute(
        "SELECT r.id FROM records r JOIN scopes s ON s.scope_id = r.scope_id WHERE s.realm = %s AND s.kind = %s "
        "AND s.key = %s AND r.content_hash = %s AND r.status = 'active' AND r.id != %s ORDER BY r.doc LIMIT 1",
        (scope.realm, scope.kind.value, scope.key, digest, exclude),
    ).fetchone()
    return str(row[0]) if row else None


_PENDING_SOURCES = "(SELECT record_id FROM promotions WHERE realm = %s AND status = 'pending')"


def _proposal_filter(mob: str | None, unaffiliated: bool) -> str:
    """The proposals of one partition: a mob's (its one ``%s``), those outside every mob, or all."""
    if mob is not None:
        return " AND scope_kind = 'mob' AND scope_key = %s"
    return " AND scope_kind != 'mob'" if unaffiliated else ""


def gather(
    store: PostgresRealmStore,
    conn: psycopg.Connection,
    *,
    identities: Collection[str] | None,
    mob: str | None,
    limits: QueueLimits,
    unaffiliated: bool = False,
) -> QueueRows:
    realm = store.realm
    gated = tuple(
        row[0]
        for row in conn.execute(
            "SELECT record_id FROM promotions WHERE realm = %s AND status = 'pending' ORDER BY created_at_ms",
            (realm,),
        )
    )
    where, args = _identity_filter(identities, "s.key")
    rows = conn.execute(
        f"SELECT {RECORD_COLUMNS} FROM records r JOIN scopes s ON s.scope_id = r.scope_id "
        "WHERE r.realm = %s AND r.status = 'quarantined' AND s.kind = 'identity' "
        f"AND r.id NOT IN {_PENDING_SOURCES}{where} ORDER BY r.created_at_ms, r.id LIMIT %s",
        (realm, realm, *args, limits.quarantined),
    ).fetchall()
    quarantined: list[tuple[Record, str | None]] = []
    for record in store.records_from(conn, rows):
        quarantined.append((record, _active_duplicate(conn, record.scope, record.content_hash, record.id)))
    mob_where = _proposal_filter(mob, unaffiliated)
    proposals = []
    for row in conn.execute(
        "SELECT proposal_id, scope_kind, scope_key, kind, title, description, body, tags, author, status, "
        "tainted, created_at_ms FROM proposals WHERE realm = %s AND status IN ('pending', 'held') "
        f"AND proposal_id NOT IN {_PENDING_SOURCES}{mob_where} ORDER BY created_at_ms, proposal_id LIMIT %s",
        (realm, realm, *([mob] if mob is not None else []), limits.proposals),
    ).fetchall():
        pid, sk, key, kind, title, desc, body, tags, author, status, tainted, created = row
        scope = Scope(ScopeKind(sk), realm, key)
        dup = _active_duplicate(conn, scope, content_hash(title, body), "")
        proposals.append(
            ProposalItem(
                pid,
                sk,
                key,
                kind,
                title,
                desc,
                body,
                tuple(json.loads(tags)),
                author,
                status,
                bool(tainted),
                created,
                dup,
            )
        )
    where, args = _identity_filter(identities, "identity")
    harvests = []
    for identity, session_key, cause, retired in conn.execute(
        "SELECT identity, session_key, cause, retired_at_ms FROM harvests WHERE realm = %s AND status = 'pending'"
        f"{where} ORDER BY retired_at_ms, identity, session_key LIMIT %s",
        (realm, *args, limits.harvests),
    ).fetchall():
        scope_rows = conn.execute(
            f"SELECT {RECORD_COLUMNS} FROM records r JOIN scopes s ON s.scope_id = r.scope_id "
            "WHERE s.realm = %s AND s.kind = 'identity' AND s.key = %s AND r.status = 'active' "
            "ORDER BY r.updated_at_ms DESC, r.created_at_ms DESC, r.id DESC LIMIT %s",
            (realm, identity, limits.harvest_records),
        ).fetchall()
        records = store.records_from(conn, scope_rows)
        harvests.append(HarvestItem(identity, session_key, cause, retired, tuple(records)))
    usage_rows = conn.execute(
        f"SELECT {RECORD_COLUMNS} FROM records r WHERE r.realm = %s AND r.status = 'active' AND r.injected_count > 0 "
        "ORDER BY r.injected_count DESC, r.id LIMIT %s",
        (realm, limits.usage_sample),
    ).fetchall()
    usage = tuple(store.records_from(conn, usage_rows))
    return QueueRows(tuple(quarantined), tuple(proposals), tuple(harvests), usage, gated)


def signal_count(
    conn: psycopg.Connection,
    realm: str,
    *,
    identities: Collection[str] | None,
    mob: str | None,
    unaffiliated: bool = False,
) -> int:
    where, args = _identity_filter(identities, "s.key")
    records = _count(
        conn,
        "SELECT count(*) FROM records r JOIN scopes s ON s.scope_id = r.scope_id "
        "WHERE r.realm = %s AND r.status = 'quarantined' AND s.kind = 'identity' "
        f"AND r.id NOT IN {_PENDING_SOURCES}{where}",
        (realm, realm, *args),
    )
    mob_where = _proposal_filter(mob, unaffiliated)
    proposals = _count(
        conn,
        "SELECT count(*) FROM proposals WHERE realm = %s AND status IN ('pending', 'held') "
        f"AND proposal_id NOT IN {_PENDING_SOURCES}{mob_where}",
        (realm, realm, *([mob] if mob is not None else [])),
    )
    where, args = _identity_filter(identities, "identity")
    harvests = _count(
        conn, f"SELECT count(*) FROM harvests WHERE realm = %s AND status = 'pending'{where}", (realm, *args)
    )
    return records + proposals + harvests


def _count(conn: psycopg.Connection, sql: str, args: Sequence[Any]) -> int:
    row = conn.execute(sql, args).fetchone()
    return int(row[0]) if row else 0


# -- inside a write transaction -------------------------------------------------------------------


def proposal(conn: psycopg.Connection, realm: str, proposal_id: str) -> ProposalState | None:
    row = conn.execute(
        "SELECT proposal_id, scope_kind, scope_key, status, tainted FROM proposals WHERE realm = %s AND proposal_id = %s",
        (realm, proposal_id),
    ).fetchone()
    return ProposalState(row[0], row[1], row[2], row[3], bool(row[4])) if row else None


def proposal_item(conn: psycopg.Connection, realm: str, proposal_id: str) -> ProposalItem | None:
    """The whole proposal, its text too, whatever its status."""
    row = conn.execute(
        "SELECT proposal_id, scope_kind, scope_key, kind, title, description, body, tags, author, status, "
        "tainted, created_at_ms FROM proposals WHERE realm = %s AND proposal_id = %s",
        (realm, proposal_id),
    ).fetchone()
    if row is None:
        return None
    pid, sk, key, kind, title, desc, body, tags, author, status, tainted, created = row
    tag_list = tuple(json.loads(tags))
    return ProposalItem(
        pid, sk, key, kind, title, desc, body, tag_list, author, status, bool(tainted), created
    )


def note_proposal_decision(
    conn: psycopg.Connection,
    realm: str,
    now: int,
    proposal_id: str,
    author: dict[str, Any],
    review: dict[str, Any],
) -> int:
    """An operator's decision on a proposal: the audit row a replay reads back (by the proposal
    id); returns its sequence."""
    detail = {
        "op": "proposal_decision",
        "author": author,
        "rationale": review.get("rationale"),
        "review": review,
    }
    row = conn.execute(
        "INSERT INTO audit (realm, at_ms, op, record_id, author, detail) "
        "VALUES (%s, %s, 'proposal_decision', %s, %s, %s) RETURNING seq",
        (realm, now, proposal_id, dumps(author), dumps(detail)),
    ).fetchone()
    assert row is not None
    return int(row[0])


def set_proposal_status(
    conn: psycopg.Connection, realm: str, proposal_id: str, status: str, now: int
) -> None:
    conn.execute(
        "UPDATE proposals SET status = %s, updated_at_ms = %s WHERE realm = %s AND proposal_id = %s",
        (status, now, realm, proposal_id),
    )


def complete_harvest(conn: psycopg.Connection, realm: str, identity: str, session_key: str) -> None:
    conn.execute(
        "UPDATE harvests SET status = 'completed' WHERE realm = %s AND identity = %s AND session_key = %s "
        "AND status = 'pending'",
        (realm, identity, session_key),
    )


def start_run(conn: psycopg.Connection, realm: str, run_id: str, partition: str, now: int) -> None:
    conn.execute(
        "INSERT INTO dream_runs (realm, run_id, partition, started_at_ms, completed_at_ms, ops_committed, detail) "
        "VALUES (%s, %s, %s, %s, NULL, 0, '{}')",
        (realm, run_id, partition, now),
    )


def finish_run(
    conn: psycopg.Connection, realm: str, run_id: str, now: int, ops: int, detail: dict[str, Any]
) -> None:
    conn.execute(
        "UPDATE dream_runs SET completed_at_ms = %s, ops_committed = %s, detail = %s WHERE realm = %s AND run_id = %s",
        (now, ops, dumps(detail), realm, run_id),
    )


def add_audit_verdicts(
    conn: psycopg.Connection, realm: str, run_id: str, rows: Sequence[tuple[str, str, str | None]], now: int
) -> None:
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO audit_verdicts (realm, run_id, record_id, verdict, rationale, status, created_at_ms) "
            "VALUES (%s, %s, %s, %s, %s, 'open', %s)",
            [(realm, run_id, record_id, verdict, rationale, now) for record_id, verdict, rationale in rows],
        )


def audit_verdicts_of(conn: psycopg.Connection, realm: str, record_id: str) -> list[tuple[VerdictRow, str]]:
    found = conn.execute(
        "SELECT seq, run_id, record_id, verdict, rationale, created_at_ms, status FROM audit_verdicts "
        "WHERE realm = %s AND record_id = %s ORDER BY seq",
        (realm, record_id),
    ).fetchall()
    return [(VerdictRow(*row[:6]), str(row[6])) for row in found]


def close_audit_verdicts(
    conn: psycopg.Connection, realm: str, record_id: str, run_ids: Sequence[str], status: str
) -> None:
    conn.execute(
        "UPDATE audit_verdicts SET status = %s WHERE realm = %s AND record_id = %s AND status = 'open' "
        "AND run_id = ANY(%s)",
        (status, realm, record_id, list(run_ids)),
    )


def note_verdict_resolution(
    conn: psycopg.Connection,
    realm: str,
    record_id: str,
    author: dict[str, Any],
    detail: dict[str, Any],
    now: int,
) -> int:
    """The audit row of an operator's resolution of usage-audit verdicts; returns its sequence."""
    row = conn.execute(
        "INSERT INTO audit (realm, at_ms, op, record_id, author, detail) "
        "VALUES (%s, %s, 'audit_verdict', %s, %s, %s) RETURNING seq",
        (realm, now, record_id, dumps(author), dumps({"op": "audit_verdict", **detail})),
    ).fetchone()
    assert row is not None
    return int(row[0])


def verdict_resolutions(conn: psycopg.Connection, realm: str, record_id: str) -> list[dict[str, Any]]:
    found = conn.execute(
        "SELECT seq, at_ms, detail FROM audit WHERE realm = %s AND record_id = %s AND op = 'audit_verdict' "
        "ORDER BY seq DESC",
        (realm, record_id),
    ).fetchall()
    return [
        {"audit_token": f"audit-{seq}", "decided_at_ms": at_ms, "resolution": detail["resolution"]}
        for seq, at_ms, detail in found
    ]


_PROMOTION_COLUMNS = (
    "pending_id, stage_token, record_id, scope_kind, scope_key, rationale, status, proposal_id, "
    "created_at_ms, resolved_at_ms"
)


def promotion(conn: psycopg.Connection, realm: str, pending_id: str) -> PromotionRow | None:
    row = conn.execute(
        f"SELECT {_PROMOTION_COLUMNS} FROM promotions WHERE realm = %s AND pending_id = %s",
        (realm, pending_id),
    ).fetchone()
    return PromotionRow(*row) if row else None


def pending_promotions_of(conn: psycopg.Connection, realm: str, source_id: str) -> list[PromotionRow]:
    rows = conn.execute(
        f"SELECT {_PROMOTION_COLUMNS} FROM promotions WHERE realm = %s AND record_id = %s AND status = 'pending' "
        "ORDER BY created_at_ms",
        (realm, source_id),
    ).fetchall()
    return [PromotionRow(*row) for row in rows]


def insert_promotion(conn: psycopg.Connection, realm: str, row: PromotionRow, staged: dict[str, Any]) -> None:
    conn.execute(
        "INSERT INTO stage_batches (realm, stage_token, batch, created_at_ms) VALUES (%s, %s, %s, %s)",
        (realm, row.stage_token, dumps(staged), row.created_at_ms),
    )
    conn.execute(
        f"INSERT INTO promotions (realm, {_PROMOTION_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (
            realm,
            row.pending_id,
            row.stage_token,
            row.record_id,
            row.scope_kind,
            row.scope_key,
            row.rationale,
            row.status,
            row.proposal_id,
            row.created_at_ms,
            row.resolved_at_ms,
        ),
    )


def staged_batch(conn: psycopg.Connection, realm: str, stage_token: str) -> dict[str, Any] | None:
    row = conn.execute(
        "SELECT batch FROM stage_batches WHERE realm = %s AND stage_token = %s", (realm, stage_token)
    ).fetchone()
    return json.loads(row[0]) if row else None


def resolve_promotion(conn: psycopg.Connection, realm: str, row: PromotionRow, status: str, now: int) -> None:
    conn.execute(
        "UPDATE promotions SET status = %s, resolved_at_ms = %s WHERE realm = %s AND pending_id = %s",
        (status, now, realm, row.pending_id),
    )
    conn.execute("DELETE FROM stage_batches WHERE realm = %s AND stage_token = %s", (realm, row.stage_token))


def rekey_promotion(conn: psycopg.Connection, realm: str, pending_id: str, next_pending_id: str) -> bool:
    # RETURNING, not rowcount: in a pipelined transaction only a fetch waits for the answer.
    cur = conn.execute(
        "UPDATE promotions SET pending_id = %s WHERE realm = %s AND pending_id = %s AND status = 'pending' "
        "RETURNING pending_id",
        (next_pending_id, realm, pending_id),
    )
    return bool(cur.fetchall())


def overdue_promotions(conn: psycopg.Connection, realm: str, created_before_ms: int) -> list[PromotionRow]:
    rows = conn.execute(
        f"SELECT {_PROMOTION_COLUMNS} FROM promotions WHERE realm = %s AND status = 'pending' AND created_at_ms <= %s "
        "ORDER BY created_at_ms",
        (realm, created_before_ms),
    ).fetchall()
    return [PromotionRow(*row) for row in rows]


def collect_stale_stages(conn: psycopg.Connection, realm: str, now: int) -> int:
    cur = conn.execute(
        "DELETE FROM stage_batches WHERE realm = %s AND created_at_ms <= %s AND stage_token NOT IN "
        "(SELECT stage_token FROM promotions WHERE realm = %s AND status = 'pending') RETURNING stage_token",
        (realm, now - STAGE_TOKEN_TTL_MS, realm),
    )
    return len(cur.fetchall())
