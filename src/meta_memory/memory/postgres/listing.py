"""The record listing of one realm in PostgreSQL: the same WHERE clause, keyset order and results as
a realm file's (memory/sqlite/listing.py), shared by the panel's body-free rows (panel.py) and
agent memory's whole records, and the tag test recall's tag filter uses.

Tags are a JSON array kept as text (as the realm file keeps it); a tag filter reads it as
``jsonb`` with ``?|`` (any of) and ``?&`` (all of), comparing exactly. The text filter
(memory/sql/matching.py) folds case with ``lower``, which folds every letter under the database's
collation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..rows import RecordFilter, RecordKey
from ..sql.matching import like_pattern, text_condition
from .columns import RECORD_COLUMNS

__all__ = ["ROW_FROM", "full_records_query", "record_where", "tags_all_sql"]

ROW_FROM = "FROM records r JOIN scopes s ON s.scope_id = r.scope_id"


def tags_all_sql(column: str, tags: Sequence[str]) -> tuple[str, list[Any]]:
    """A condition true when the JSON array ``column`` holds every one of ``tags`` (at least one)."""
    return f"({column})::jsonb ?& %s::text[]", [sorted(set(tags))]


def record_where(realm: str, where: RecordFilter, after: RecordKey | None) -> tuple[list[str], list[Any]]:
    """The conditions (over ``records r`` joined to ``scopes s``) and their arguments that select
    the realm's records matching ``where`` strictly past ``after``."""
    clauses = ["r.realm = %s"]
    args: list[Any] = [realm]
    for sql, value in (
        ("s.kind = %s", where.scope_kind),
        ("s.key = %s", where.scope_key),
        (
            "r.status = %s",
            where.status if where.now_ms is None or where.status not in ("active", "expired") else None,
        ),
        ("r.kind = %s", where.kind),
        ("r.created_at_ms >= %s", where.created_after_ms),
        ("r.created_at_ms < %s", where.created_before_ms),
        ("r.updated_at_ms >= %s", where.updated_after_ms),
        ("r.updated_at_ms < %s", where.updated_before_ms),
    ):
        if value is not None:
            clauses.append(sql)
            args.append(value)
    if where.now_ms is not None and where.status == "active":
        clauses.append("r.status = 'active' AND (r.expires_at_ms IS NULL OR r.expires_at_ms > %s)")
        args.append(where.now_ms)
    elif where.now_ms is not None and where.status == "expired":
        clauses.append("r.status = 'active' AND r.expires_at_ms <= %s")
        args.append(where.now_ms)
    if where.tags_any:
        clauses.append("(r.tags)::jsonb ?| %s::text[]")
        args.append(sorted(set(where.tags_any)))
    if where.tags_all:
        sql, values = tags_all_sql("r.tags", where.tags_all)
        clauses.append(sql)
        args.extend(values)
    if where.text:
        clauses.append(text_condition("lower", "%s"))
        args.extend([like_pattern(where.text)] * 2)
    if after is not None:
        clauses.append("(r.updated_at_ms, r.id) < (%s, %s)")
        args.extend(after)
    return clauses, args


def full_records_query(
    realm: str, where: RecordFilter, after: RecordKey | None, limit: int
) -> tuple[str, list[Any]]:
    """The statement selecting up to ``limit + 1`` whole records (the extra one says more follow)."""
    clauses, args = record_where(realm, where, after)
    sql = (
        f"SELECT {RECORD_COLUMNS} {ROW_FROM} WHERE {' AND '.join(clauses)} "
        "ORDER BY r.updated_at_ms DESC, r.id DESC LIMIT %s"
    )
    return sql, [*args, limit + 1]
