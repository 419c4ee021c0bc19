"""The steward's rows in a realm file: the dream queue it reads, dream runs, proposal and harvest
status, usage-audit verdicts, staged batches and gated-promotion mappings (the SQL behind
:mod:`meta_memory.steward`).

Every function runs inside a transaction its caller holds (the store's ``_write()`` for writes, its
``reading()`` for reads), so a dream step and its bookkeeping commit together. Staged batches are
stored as the JSON the steward hands in and never leave the realm file by another path.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

from ..codec import dumps
from ..records import Author, Record, Scope, ScopeKind, content_hash
from ..rows import HarvestItem, PromotionRow, ProposalItem, QueueLimits, QueueRows, VerdictRow

if TYPE_CHECKING:
    from .store import SqliteRealmStore

__all__ = [
    "STAGE_TOKEN_TTL_MS",
    "add_audit_verdicts",
    "add_harvest",
    "audit_verdicts_of",
    "close_audit_verdicts",
    "collect_stale_stages",
    "complete_harvest",
    "finish_run",
    "gather",
    "identity_keys",
    "insert_promotion",
    "note_proposal_decision",
    "note_verdict_resolution",
    "overdue_promotions",
    "pending_promotions_of",
    "promotion",
    "proposal_item",
    "proposal_row",
    "rekey_promotion",
    "resolve_promotion",
    "run_stats",
    "set_proposal_status",
    "signal_count",
    "staged_batch",
    "start_run",
    "verdict_resolutions",
]

STAGE_TOKEN_TTL_MS = 24 * 3600 * 1000


# -- the dream queue ----------------------------------------------------------------------------


def _marks(values: Collection[str]) -> str:
    return ",".join("?" * len(values))


def _identity_filter(identities: Collection[str] | None, column: str) -> tuple[str, list[Any]]:
    if identities is None:
        return "", []
    if not identities:
        return " AND 0", []
    return f" AND {column} IN ({_marks(identities)})", list(identities)


def _active_duplicate(store: SqliteRealmStore, scope: Scope, digest: str, exclude: str) -> str | None:
    row = store._db.execute(
        "SELECT r.id FROM records r JOIN scopes s ON s.scope_id = r.scope_id WHERE s.kind = ? AND s.key = ? "
        "AND r.content_hash = ? AND r.status = 'active' AND r.id != ? ORDER BY r.doc LIMIT 1",
        (scope.kind.value, scope.key, digest, exclude),
    ).fetchone()
    return str(row[0]) if row else None


def gather(
    store: SqliteRealmStore,
    *,
    identities: Collection[str] | None,
    mob: str | None,
    limits: QueueLimits,
    unaffiliated: bool = False,
) -> QueueRows:
    """What waits for review, oldest first, within ``limits``.

    ``identities`` restricts quarantined records and harvests to those identities (a mob partition);
    ``mob`` restricts proposals to that mob's scope, ``unaffiliated`` to proposals outside every mob.
    Sources waiting on a pending gate are left out.
    """
    with store.reading() as db:
        gated = tuple(
            row[0]
            for row in db.execute(
                "SELECT record_id FROM promotions WHERE status = 'pending' ORDER BY created_at_ms"
            )
        )
        where, args = _identity_filter(identities, "s.key")
        ids = [
            row[0]
            for row in db.execute(
                "SELECT r.id FROM records r JOIN scopes s ON s.scope_id = r.scope_id "
                "WHERE r.status = 'quarantined' AND s.kind = 'identity' "
                "AND r.id NOT IN (SELECT record_id FROM promotions WHERE status = 'pending')"
                f"{where} ORDER BY r.created_at_ms, r.id LIMIT ?",
                (*args, limits.quarantined),
            )
        ]
        quarantined: list[tuple[Record, str | None]] = []
        for memory_id in ids:
            record = store._get(memory_id)
            assert record is not None
            dup = _active_duplicate(store, record.scope, record.content_hash, record.id)
            quarantined.append((record, dup))
        mob_where = _proposal_filter(mob, unaffiliated)
        proposals = []
        for row in db.execute(
            "SELECT proposal_id, scope_kind, scope_key, kind, title, description, body, tags, author, status, "
            "tainted, created_at_ms FROM proposals WHERE status IN ('pending', 'held') "
            "AND proposal_id NOT IN (SELECT record_id FROM promotions WHERE status = 'pending')"
            f"{mob_where} ORDER BY created_at_ms, proposal_id LIMIT ?",
            (*([mob] if mob is not None else []), limits.proposals),
        ).fetchall():
            pid, sk, key, kind, title, desc, body, tags, author, status, tainted, created = row
            scope = Scope(ScopeKind(sk), store.realm, key)
            dup = _active_duplicate(store, scope, content_hash(title, body), "")
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
                    json.loads(author),
                    status,
                    bool(tainted),
                    created,
                    dup,
                )
            )
        where, args = _identity_filter(identities, "identity")
        harvests = []
        for identity, session_key, cause, retired in db.execute(
            "SELECT identity, session_key, cause, retired_at_ms FROM harvests WHERE status = 'pending'"
            f"{where} ORDER BY retired_at_ms, identity, session_key LIMIT ?",
            (*args, limits.harvests),
        ).fetchall():
            records = store.newest_active([Scope.identity(store.realm, identity)], limits.harvest_records)
            harvests.append(HarvestItem(identity, session_key, cause, retired, tuple(records)))
        usage_ids = [
            row[0]
            for row in db.execute(
                "SELECT id FROM records WHERE status = 'active' AND injected_count > 0 "
                "ORDER BY injected_count DESC, id LIMIT ?",
                (limits.usage_sample,),
            )
        ]
        usage = tuple(r for r in (store._get(i) for i in usage_ids) if r is not None)
    return QueueRows(tuple(quarantined), tuple(proposals), tuple(harvests), usage, gated)


def _proposal_filter(mob: str | None, unaffiliated: bool) -> str:
    """The proposals of one partition: a mob's (its one ``?``), those outside every mob, or all."""
    if mob is not None:
        return " AND scope_kind = 'mob' AND scope_key = ?"
    return " AND scope_kind != 'mob'" if unaffiliated else ""


def identity_keys(store: SqliteRealmStore) -> list[str]:
    """Every identity the realm holds a scope or a harvest for."""
    with store.reading() as db:
        return [
            row[0]
            for row in db.execute(
                "SELECT key FROM scopes WHERE kind = 'identity' UNION SELECT identity FROM harvests ORDER BY 1"
            )
        ]


def signal_count(
    store: SqliteRealmStore,
    *,
    identities: Collection[str] | None,
    mob: str | None,
    unaffiliated: bool = False,
) -> int:
    """Quarantined identity records, open proposals (neither behind a gate) and pending
    exit-interview harvests waiting for a dream."""
    with store.reading() as db:
        where, args = _identity_filter(identities, "s.key")
        (records,) = db.execute(
            "SELECT count(*) FROM records r JOIN scopes s ON s.scope_id = r.scope_id "
            "WHERE r.status = 'quarantined' AND s.kind = 'identity' "
            f"AND r.id NOT IN (SELECT record_id FROM promotions WHERE status = 'pending'){where}",
            args,
        ).fetchone()
        mob_where = _proposal_filter(mob, unaffiliated)
        (proposals,) = db.execute(
            "SELECT count(*) FROM proposals WHERE status IN ('pending', 'held') "
            f"AND proposal_id NOT IN (SELECT record_id FROM promotions WHERE status = 'pending'){mob_where}",
            [mob] if mob is not None else [],
        ).fetchone()
        where, args = _identity_filter(identities, "identity")
        (harvests,) = db.execute(
            f"SELECT count(*) FROM harvests WHERE status = 'pending'{where}", args
        ).fetchone()
    return int(records) + int(proposals) + int(harvests)


# -- dream runs, proposals, harvests, usage verdicts ----------------------------------------------


def start_run(db: sqlite3.Connection, run_id: str, partition: str, now: int) -> None:
    db.execute(
        "INSERT INTO dream_runs (run_id, partition, started_at_ms, completed_at_ms, ops_committed, detail) "
        "VALUES (?, ?, ?, NULL, 0, '{}')",
        (run_id, partition, now),
    )


def finish_run(db: sqlite3.Connection, run_id: str, now: int, ops: int, detail: dict[str, Any]) -> None:
    db.execute(
        "UPDATE dream_runs SET completed_at_ms = ?, ops_committed = ?, detail = ? WHERE run_id = ?",
        (now, ops, dumps(detail), run_id),
    )


def run_stats(store: SqliteRealmStore, partition: str, since_ms: int) -> tuple[int, int | None]:
    """(runs started at or after ``since_ms``, the latest start) for one partition."""
    with store.reading() as db:
        count, latest = db.execute(
            "SELECT (SELECT count(*) FROM dream_runs WHERE partition = ? AND started_at_ms >= ?), "
            "(SELECT max(started_at_ms) FROM dream_runs WHERE partition = ?)",
            (partition, since_ms, partition),
        ).fetchone()
    return int(count), latest


def proposal_row(db: sqlite3.Connection, proposal_id: str) -> tuple[Any, ...] | None:
    row: tuple[Any, ...] | None = db.execute(
        "SELECT proposal_id, scope_kind, scope_key, kind, title, description, body, tags, status, tainted "
        "FROM proposals WHERE proposal_id = ?",
        (proposal_id,),
    ).fetchone()
    return row


def proposal_item(db: sqlite3.Connection, proposal_id: str) -> ProposalItem | None:
    """The whole proposal, its text too, whatever its status."""
    row = db.execute(
        "SELECT proposal_id, scope_kind, scope_key, kind, title, description, body, tags, author, status, "
        "tainted, created_at_ms FROM proposals WHERE proposal_id = ?",
        (proposal_id,),
    ).fetchone()
    if row is None:
        return None
    pid, sk, key, kind, title, desc, body, tags, author, status, tainted, created = row
    tag_list = tuple(json.loads(tags))
    return ProposalItem(
        pid, sk, key, kind, title, desc, body, tag_list, json.loads(author), status, bool(tainted), created
    )


def note_proposal_decision(
    db: sqlite3.Connection, now: int, proposal_id: str, author: Author, review: dict[str, Any]
) -> int:
    """An operator's decision on a proposal: the audit row a replay reads back (by the proposal id)."""
    detail = {
        "op": "proposal_decision",
        "author": author.to_wire(),
        "rationale": review.get("rationale"),
        "review": review,
    }
    cur = db.execute(
        "INSERT INTO audit (at_ms, op, record_id, author, detail) VALUES (?, 'proposal_decision', ?, ?, ?)",
        (now, proposal_id, dumps(author.to_wire()), dumps(detail)),
    )
    assert cur.lastrowid is not None
    return cur.lastrowid


def set_proposal_status(db: sqlite3.Connection, proposal_id: str, status: str, now: int) -> None:
    db.execute(
        "UPDATE proposals SET status = ?, updated_at_ms = ? WHERE proposal_id = ?", (status, now, proposal_id)
    )


def add_harvest(
    store: SqliteRealmStore, identity: str, session_key: str, cause: str, retired_at_ms: int
) -> None:
    """Queue an exit interview for a retired identity's session (idempotent per session)."""
    with store._write() as db:
        db.execute(
            "INSERT INTO harvests (identity, session_key, cause, retired_at_ms, status) "
            "VALUES (?, ?, ?, ?, 'pending') ON CONFLICT (identity, session_key) DO NOTHING",
            (identity, session_key, cause, retired_at_ms),
        )


def complete_harvest(db: sqlite3.Connection, identity: str, session_key: str) -> None:
    db.execute(
        "UPDATE harvests SET status = 'completed' WHERE identity = ? AND session_key = ? AND status = 'pending'",
        (identity, session_key),
    )


def add_audit_verdicts(
    db: sqlite3.Connection, run_id: str, rows: Sequence[tuple[str, str, str | None]], now: int
) -> None:
    db.executemany(
        "INSERT INTO audit_verdicts (run_id, record_id, verdict, rationale, status, created_at_ms) "
        "VALUES (?, ?, ?, ?, 'open', ?)",
        [(run_id, record_id, verdict, rationale, now) for record_id, verdict, rationale in rows],
    )


def audit_verdicts_of(db: sqlite3.Connection, record_id: str) -> list[tuple[VerdictRow, str]]:
    """Every usage-audit verdict on ``record_id``, with its status, oldest first."""
    found = db.execute(
        "SELECT seq, run_id, record_id, verdict, rationale, created_at_ms, status FROM audit_verdicts "
        "WHERE record_id = ? ORDER BY seq",
        (record_id,),
    ).fetchall()
    return [(VerdictRow(*row[:6]), str(row[6])) for row in found]


def close_audit_verdicts(db: sqlite3.Connection, record_id: str, run_ids: Sequence[str], status: str) -> None:
    db.execute(
        f"UPDATE audit_verdicts SET status = ? WHERE record_id = ? AND status = 'open' AND run_id IN ({_marks(run_ids)})",
        (status, record_id, *run_ids),
    )


def note_verdict_resolution(
    db: sqlite3.Connection, record_id: str, author: dict[str, Any], detail: dict[str, Any], now: int
) -> int:
    """The audit row of an operator's resolution of usage-audit verdicts; returns its sequence."""
    cur = db.execute(
        "INSERT INTO audit (at_ms, op, record_id, author, detail) VALUES (?, 'audit_verdict', ?, ?, ?)",
        (now, record_id, dumps(author), dumps({"op": "audit_verdict", **detail})),
    )
    assert cur.lastrowid is not None
    return cur.lastrowid


def verdict_resolutions(db: sqlite3.Connection, record_id: str) -> list[dict[str, Any]]:
    """The resolutions of ``record_id``'s verdicts as their audit rows hold them, newest first."""
    found = db.execute(
        "SELECT seq, at_ms, detail FROM audit WHERE record_id = ? AND op = 'audit_verdict' ORDER BY seq DESC",
        (record_id,),
    ).fetchall()
    return [
        {
            "audit_token": f"audit-{seq}",
            "decided_at_ms": at_ms,
            "resolution": json.loads(detail)["resolution"],
        }
        for seq, at_ms, detail in found
    ]


# -- gated promotions ---------------------------------------------------------------------------


_PROMOTION_COLUMNS = (
    "pending_id, stage_token, record_id, scope_kind, scope_key, rationale, status, proposal_id, "
    "created_at_ms, resolved_at_ms"
)


def promotion(db: sqlite3.Connection, pending_id: str) -> PromotionRow | None:
    row = db.execute(
        f"SELECT {_PROMOTION_COLUMNS} FROM promotions WHERE pending_id = ?", (pending_id,)
    ).fetchone()
    return PromotionRow(*row) if row else None


def pending_promotions_of(db: sqlite3.Connection, source_id: str) -> list[PromotionRow]:
    """The pending promotions of one source (a record or a proposal), oldest first."""
    found = db.execute(
        f"SELECT {_PROMOTION_COLUMNS} FROM promotions WHERE record_id = ? AND status = 'pending' "
        "ORDER BY created_at_ms",
        (source_id,),
    ).fetchall()
    return [PromotionRow(*row) for row in found]


def insert_promotion(db: sqlite3.Connection, row: PromotionRow, staged: dict[str, Any]) -> None:
    db.execute(
        "INSERT INTO stage_batches (stage_token, batch, created_at_ms) VALUES (?, ?, ?)",
        (row.stage_token, dumps(staged), row.created_at_ms),
    )
    db.execute(
        f"INSERT INTO promotions ({_PROMOTION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
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


def staged_batch(db: sqlite3.Connection, stage_token: str) -> dict[str, Any] | None:
    row = db.execute("SELECT batch FROM stage_batches WHERE stage_token = ?", (stage_token,)).fetchone()
    return json.loads(row[0]) if row else None


def resolve_promotion(db: sqlite3.Connection, row: PromotionRow, status: str, now: int) -> None:
    """Leave ``pending`` for ``committed | denied | expired``; the staged batch is discarded."""
    db.execute(
        "UPDATE promotions SET status = ?, resolved_at_ms = ? WHERE pending_id = ?",
        (status, now, row.pending_id),
    )
    db.execute("DELETE FROM stage_batches WHERE stage_token = ?", (row.stage_token,))


def rekey_promotion(db: sqlite3.Connection, pending_id: str, next_pending_id: str) -> bool:
    """An escalation: the promotion stays pending under the successor pending id."""
    cur = db.execute(
        "UPDATE promotions SET pending_id = ? WHERE pending_id = ? AND status = 'pending'",
        (next_pending_id, pending_id),
    )
    return cur.rowcount > 0


def overdue_promotions(db: sqlite3.Connection, created_before_ms: int) -> list[PromotionRow]:
    rows = db.execute(
        f"SELECT {_PROMOTION_COLUMNS} FROM promotions WHERE status = 'pending' AND created_at_ms <= ? "
        "ORDER BY created_at_ms",
        (created_before_ms,),
    ).fetchall()
    return [PromotionRow(*row) for row in rows]


def collect_stale_stages(db: sqlite3.Connection, now: int) -> int:
    """Drop staged batches older than 24 h that no pending promotion references."""
    cur = db.execute(
        "DELETE FROM stage_batches WHERE created_at_ms <= ? AND stage_token NOT IN "
        "(SELECT stage_token FROM promotions WHERE status = 'pending')",
        (now - STAGE_TOKEN_TTL_MS,),
    )
    return cur.rowcount
