"""A purge on PostgreSQL (the realm store's side of memory/purge.py).

:func:`take` runs inside the realm's write transaction (its advisory lock held, so a write to the
realm lands wholly before or wholly after it). It also takes the realm's embedding locks, so no
gateway's embedding thread holds a purged record's text between reading it and storing its
vector. It deletes the records with their postings (and their scope statistics), their vectors
of every model, every row that holds their text or names them, and for an identity its
proposals, injections, harvests and ended sessions, and writes the receipt's audit row.

PostgreSQL keeps a deleted row's old version in its table's pages until a vacuum reclaims the
space and the page is rewritten, and in WAL segments and base backups until they are recycled:
docs/lifecycle.md says what an operator does about those.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable
from typing import Any

import psycopg

from ..codec import dumps
from ..purge import EXPIRY_BATCH, LineageRow, PurgeCounts, PurgeReceipt, PurgeTarget, lineage, own_records

__all__ = ["take"]

_COLS = "r.doc, r.id, s.kind, s.key, r.status, r.content_hash, r.supersedes, r.superseded_by, r.derived_from"
_FROM = "FROM records r JOIN scopes s ON s.scope_id = r.scope_id"


def _rows(conn: psycopg.Connection, sql: str, args: Iterable[object]) -> list[LineageRow]:
    return [
        LineageRow(int(doc), id_, kind, key, status, chash, sup, sup_by, tuple(json.loads(derived)))
        for doc, id_, kind, key, status, chash, sup, sup_by, derived in conn.execute(sql, tuple(args))
    ]


def _seeds(conn: psycopg.Connection, realm: str, target: PurgeTarget) -> list[LineageRow]:
    if target.expired_at_ms is not None:
        return _rows(
            conn,
            f"SELECT {_COLS} {_FROM} WHERE r.realm = %s AND r.expires_at_ms <= %s AND r.status = 'active' "
            "ORDER BY r.expires_at_ms LIMIT %s",
            (realm, target.expired_at_ms, EXPIRY_BATCH),
        )
    if target.memory_ids is not None:
        rows = _rows(
            conn,
            f"SELECT {_COLS} {_FROM} WHERE r.realm = %s AND r.id = ANY(%s)",
            (realm, list(target.memory_ids)),
        )
        return own_records(rows, target)
    return _rows(
        conn,
        f"SELECT {_COLS} {_FROM} WHERE r.realm = %s AND ((s.kind = 'identity' AND s.key = %s) "
        "OR r.provenance::jsonb -> 'author' ->> 'identity' = %s) ORDER BY r.doc",
        (realm, target.identity, target.identity),
    )


def take(
    conn: psycopg.Connection,
    realm: str,
    target: PurgeTarget,
    by: dict[str, Any],
    now_ms: int,
    embedding_locks: Collection[int],
) -> PurgeReceipt:
    """Delete what ``target`` names and its lineage (inside the caller's write transaction).

    Raises:
        UnknownRecord: one of ``target.memory_ids`` is not a record of the identity's scope.
    """
    for key in sorted(embedding_locks):
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (key,))
    taken = lineage(
        _seeds(conn, realm, target),
        lambda ids: _rows(
            conn, f"SELECT {_COLS} {_FROM} WHERE r.realm = %s AND r.id = ANY(%s)", (realm, list(ids))
        ),
        lambda ids: _rows(
            conn,
            f"SELECT {_COLS} {_FROM} WHERE r.realm = %s AND (r.supersedes = ANY(%s) "
            "OR (r.derived_from <> '[]' AND r.derived_from::jsonb ?| %s))",
            (realm, list(ids), list(ids)),
        ),
    )
    ids = list(taken)
    docs = [row.doc for row in taken.values()]
    counts = PurgeCounts()

    def delete(sql: str, *args: object) -> int:
        # RETURNING and a fetch: the transaction runs in pipeline mode, where a rowcount is not
        # known until the pipeline syncs.
        return len(conn.execute(f"{sql} RETURNING 1", args).fetchall())

    # The scope statistics count active records with postings: take out those being deleted.
    conn.execute(
        "UPDATE scope_stats st SET doc_count = st.doc_count - g.n, total_len = st.total_len - g.len "
        "FROM (SELECT scope_id, count(*) AS n, sum(length) AS len FROM "
        "(SELECT DISTINCT scope_id, doc, length FROM postings WHERE doc = ANY(%s)) d GROUP BY scope_id) g "
        "WHERE st.scope_id = g.scope_id",
        (docs,),
    )
    conn.execute("DELETE FROM postings WHERE doc = ANY(%s)", (docs,))
    counts.vectors = delete("DELETE FROM record_vectors WHERE realm = %s AND doc = ANY(%s)", realm, docs)
    if counts.vectors:
        conn.execute("UPDATE vector_marks SET generation = generation + 1 WHERE realm = %s", (realm,))
    counts.injections = delete("DELETE FROM injections WHERE realm = %s AND record_id = ANY(%s)", realm, ids)
    counts.verdicts = delete(
        "DELETE FROM audit_verdicts WHERE realm = %s AND record_id = ANY(%s)", realm, ids
    )
    stages = [
        s
        for (s,) in conn.execute(
            "DELETE FROM promotions WHERE realm = %s AND record_id = ANY(%s) RETURNING stage_token",
            (realm, ids),
        )
    ]
    counts.promotions = len(stages)
    counts.audit_rows = delete("DELETE FROM audit WHERE realm = %s AND record_id = ANY(%s)", realm, ids)
    if target.memory_ids is None and target.expired_at_ms is None:
        who = target.identity
        proposals = [
            p
            for (p,) in conn.execute(
                "DELETE FROM proposals WHERE realm = %s AND ((scope_kind = 'identity' AND scope_key = %s) "
                "OR author ->> 'identity' = %s) RETURNING proposal_id",
                (realm, who, who),
            )
        ]
        counts.proposals = len(proposals)
        more = [
            s
            for (s,) in conn.execute(
                "DELETE FROM promotions WHERE realm = %s AND proposal_id = ANY(%s) RETURNING stage_token",
                (realm, proposals),
            )
        ]
        counts.promotions += len(more)
        stages += more
        counts.audit_rows += delete(
            "DELETE FROM audit WHERE realm = %s AND record_id = ANY(%s)", realm, proposals
        )
        counts.injections += delete("DELETE FROM injections WHERE realm = %s AND identity = %s", realm, who)
        counts.harvests = delete("DELETE FROM harvests WHERE realm = %s AND identity = %s", realm, who)
        # An open session keeps its row: it holds the session's taint and budget, no memory text.
        counts.sessions = delete(
            "DELETE FROM host_sessions WHERE realm = %s AND identity = %s AND ended IS NOT NULL", realm, who
        )
    conn.execute("DELETE FROM stage_batches WHERE realm = %s AND stage_token = ANY(%s)", (realm, stages))
    conn.execute("DELETE FROM records WHERE doc = ANY(%s)", (docs,))
    receipt = PurgeReceipt.draft(realm, target, by, now_ms, taken.values(), counts)
    row = conn.execute(
        "INSERT INTO audit (realm, at_ms, op, record_id, author, detail) "
        "VALUES (%s, %s, 'purge', NULL, %s::jsonb, %s::jsonb) RETURNING seq",
        (realm, now_ms, dumps(by), dumps(receipt.audit_detail())),
    ).fetchone()
    assert row is not None
    return receipt.numbered(int(row[0]))
