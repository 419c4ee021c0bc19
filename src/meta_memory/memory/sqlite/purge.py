"""A purge on the SQLite backend (the realm store's side of memory/purge.py).

:func:`take` runs inside the realm file's write transaction: it reads the lineage closure, deletes
the records and every row that holds their text or names them (audit rows, injections,
promotions and their staged batches, usage verdicts; for an identity, its proposals with their
audit rows, its harvests and its ended sessions) and writes the receipt's audit row. The derived
files follow it (``RecallIndexFile.purge_docs``, ``VectorFile.purge_docs``), then :func:`scrub`
rewrites each file from its live rows (``VACUUM``: no free page, freeblock or moved cell keeps a
deleted text) and cuts its WAL to nothing, where older page images would otherwise stay.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..codec import dumps
from ..purge import EXPIRY_BATCH, LineageRow, PurgeCounts, PurgeReceipt, PurgeTarget, lineage, own_records
from .checkpoint import truncate_wal

__all__ = ["Taken", "docs_of", "lower_mark", "purge_vector_file", "rewrite", "rewrite_path", "take"]

_log = logging.getLogger("meta_memory.purge")

REWRITE_WAIT_S = 30.0  # how long a rewrite waits for a reader to let go of a file's WAL

_COLS = "r.doc, r.id, s.kind, s.key, r.status, r.content_hash, r.supersedes, r.superseded_by, r.derived_from"
_FROM = "FROM records r JOIN scopes s ON s.scope_id = r.scope_id"
_IDS = "(SELECT value FROM json_each(?))"
_IDS1 = "(SELECT value FROM json_each(?1))"


@dataclass(frozen=True)
class Taken:
    """What :func:`take` deleted: the receipt, and each record's text for the derived files."""

    receipt: PurgeReceipt
    texts: list[tuple[int, int, str, str, str]]  # (doc, scope_id, title, body, tags JSON)
    # The newest doc left: SQLite gives the next record max(doc) + 1, so when the newest records
    # went, their docs come again, and the derived files' marks must come back down to it.
    newest_doc: int


def _rows(db: sqlite3.Connection, sql: str, *args: object) -> list[LineageRow]:
    return [
        LineageRow(doc, id_, kind, key, status, chash, sup, sup_by, tuple(json.loads(derived)))
        for doc, id_, kind, key, status, chash, sup, sup_by, derived in db.execute(sql, args)
    ]


def _seeds(db: sqlite3.Connection, target: PurgeTarget) -> list[LineageRow]:
    if target.expired_at_ms is not None:
        return _rows(
            db,
            f"SELECT {_COLS} {_FROM} WHERE r.expires_at_ms <= ? AND r.status = 'active' "
            "ORDER BY r.expires_at_ms LIMIT ?",
            target.expired_at_ms,
            EXPIRY_BATCH,
        )
    if target.memory_ids is not None:
        rows = _rows(db, f"SELECT {_COLS} {_FROM} WHERE r.id IN {_IDS}", json.dumps(target.memory_ids))
        return own_records(rows, target)
    return _rows(
        db,
        f"SELECT {_COLS} {_FROM} WHERE (s.kind = 'identity' AND s.key = ?1) "
        "OR json_extract(r.provenance, '$.author.identity') = ?1 ORDER BY r.doc",
        target.identity,
    )


def take(db: sqlite3.Connection, realm: str, target: PurgeTarget, by: dict[str, Any], now_ms: int) -> Taken:
    """Delete what ``target`` names and its lineage (inside the caller's write transaction).

    Raises:
        UnknownRecord: one of ``target.memory_ids`` is not a record of the identity's scope.
    """
    taken = lineage(
        _seeds(db, target),
        lambda ids: _rows(db, f"SELECT {_COLS} {_FROM} WHERE r.id IN {_IDS}", json.dumps(list(ids))),
        lambda ids: _rows(
            db,
            f"SELECT {_COLS} {_FROM} WHERE r.supersedes IN {_IDS1} UNION "
            f"SELECT {_COLS} {_FROM}, json_each(r.derived_from) j "
            f"WHERE r.derived_from <> '[]' AND j.value IN {_IDS1}",
            json.dumps(list(ids)),
        ),
    )
    ids = json.dumps(list(taken))
    docs = json.dumps([row.doc for row in taken.values()])
    texts = db.execute(
        f"SELECT doc, scope_id, title, body, tags FROM records WHERE doc IN {_IDS} ORDER BY doc", (docs,)
    ).fetchall()
    counts = PurgeCounts()
    counts.injections = db.execute(f"DELETE FROM injections WHERE record_id IN {_IDS}", (ids,)).rowcount
    counts.verdicts = db.execute(f"DELETE FROM audit_verdicts WHERE record_id IN {_IDS}", (ids,)).rowcount
    stages = [
        s for (s,) in db.execute(f"SELECT stage_token FROM promotions WHERE record_id IN {_IDS}", (ids,))
    ]
    counts.promotions = db.execute(f"DELETE FROM promotions WHERE record_id IN {_IDS}", (ids,)).rowcount
    counts.audit_rows = db.execute(f"DELETE FROM audit WHERE record_id IN {_IDS}", (ids,)).rowcount
    if target.memory_ids is None and target.expired_at_ms is None:
        who = target.identity
        proposals = json.dumps(
            [
                p
                for (p,) in db.execute(
                    "SELECT proposal_id FROM proposals WHERE (scope_kind = 'identity' AND scope_key = ?1) "
                    "OR json_extract(author, '$.identity') = ?1",
                    (who,),
                )
            ]
        )
        stages += [
            s
            for (s,) in db.execute(
                f"SELECT stage_token FROM promotions WHERE proposal_id IN {_IDS}", (proposals,)
            )
        ]
        counts.promotions += db.execute(
            f"DELETE FROM promotions WHERE proposal_id IN {_IDS}", (proposals,)
        ).rowcount
        counts.proposals = db.execute(
            f"DELETE FROM proposals WHERE proposal_id IN {_IDS}", (proposals,)
        ).rowcount
        counts.audit_rows += db.execute(f"DELETE FROM audit WHERE record_id IN {_IDS}", (proposals,)).rowcount
        counts.injections += db.execute("DELETE FROM injections WHERE identity = ?", (who,)).rowcount
        counts.harvests = db.execute("DELETE FROM harvests WHERE identity = ?", (who,)).rowcount
        # An open session keeps its row: it holds the session's taint and budget (no memory text),
        # and removing it would end the session unannounced. An ended one is only history.
        counts.sessions = db.execute(
            "DELETE FROM host_sessions WHERE identity = ? AND ended IS NOT NULL", (who,)
        ).rowcount
    db.execute(f"DELETE FROM stage_batches WHERE stage_token IN {_IDS}", (json.dumps(stages),))
    db.execute(f"DELETE FROM index_queue WHERE doc IN {_IDS}", (docs,))
    db.execute(f"DELETE FROM records WHERE doc IN {_IDS}", (docs,))
    receipt = PurgeReceipt.draft(realm, target, by, now_ms, taken.values(), counts)
    cur = db.execute(
        "INSERT INTO audit (at_ms, op, record_id, author, detail) VALUES (?, 'purge', NULL, ?, ?)",
        (now_ms, dumps(by), dumps(receipt.audit_detail())),
    )
    assert cur.lastrowid is not None
    receipt = receipt.numbered(cur.lastrowid)
    (newest,) = db.execute("SELECT coalesce(max(doc), 0) FROM records").fetchone()
    return Taken(receipt, texts, int(newest))


def rewrite(db: sqlite3.Connection, name: str) -> bool:
    """Rewrite ``db``'s file from its live rows and cut its WAL to nothing; whether it could
    (a reader in the way past :data:`REWRITE_WAIT_S`: the caller reports the purge incomplete)."""
    db.execute("VACUUM")
    stop = time.monotonic() + REWRITE_WAIT_S
    while True:
        if truncate_wal(db, 5000):
            return True
        if time.monotonic() >= stop:
            _log.error(
                "purge: the WAL of %s could not be cut: a reader held it past %.0f s", name, REWRITE_WAIT_S
            )
            return False
        time.sleep(0.05)


def purge_vector_file(path: Path, docs: Collection[tuple[int, int]], newest_doc: int) -> int:
    """Delete purged records' vectors from a vector file no store has open (the realm ranks
    lexically now) and lower its mark; how many. No file, or one never filled: nothing to do."""
    if not path.is_file():
        return 0
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("PRAGMA busy_timeout = 5000")
        db.execute("BEGIN IMMEDIATE")
        try:
            deleted = sum(
                db.execute("DELETE FROM vectors WHERE scope_id = ? AND doc = ?", (scope_id, doc)).rowcount
                for doc, scope_id in docs
            )
            lower_mark(db, "embedded_upto", newest_doc)
        except sqlite3.OperationalError:  # no vectors table: a file never filled
            db.execute("ROLLBACK")
            return 0
        db.execute("COMMIT")
        return deleted
    finally:
        db.close()


def rewrite_path(path: Path) -> bool:
    """:func:`rewrite` for a file no store has open (a lexical realm's vector file); none: done."""
    if not path.is_file():
        return True
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("PRAGMA busy_timeout = 5000")
        return rewrite(db, path.name)
    finally:
        db.close()


def lower_mark(db: sqlite3.Connection, key: str, newest_doc: int) -> None:
    """Bring a derived file's ``key`` mark (in its ``meta``) down to ``newest_doc``, inside the
    caller's write transaction: the docs above it are gone and will be given again."""
    db.execute(
        "UPDATE meta SET value = CAST(? AS TEXT) WHERE key = ? AND CAST(value AS INTEGER) > ?",
        (newest_doc, key, newest_doc),
    )


def docs_of(texts: Sequence[tuple[int, int, str, str, str]]) -> Collection[tuple[int, int]]:
    """(doc, scope_id) of each purged record."""
    return [(doc, scope_id) for doc, scope_id, *_ in texts]
