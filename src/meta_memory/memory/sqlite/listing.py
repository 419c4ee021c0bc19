"""The record listing of a realm file: one WHERE clause for every :class:`RecordFilter`, in keyset
order (``updated_at_ms`` desc, id desc), shared by the panel's body-free rows (panel.py) and agent
memory's whole records, and the tag test recall's tag filter uses.

Tags are a JSON array column; a tag filter reads it with ``json_each`` and compares exactly (the
API stores tags trimmed and lowercased). A hand-edited column that is not JSON matches no tag
filter instead of failing the listing. The text filter (memory/sql/matching.py) folds case with
:data:`FOLD_CASE`, which :func:`register_functions` gives a realm connection: SQLite's own
``lower`` folds only ASCII, PostgreSQL's every letter, and both backends answer alike.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from ..codec import RECORD_FIELDS
from ..rows import RecordFilter, RecordKey
from ..sql.matching import like_pattern, text_condition

__all__ = [
    "FOLD_CASE",
    "FULL_COLUMNS",
    "ROW_FROM",
    "full_records_query",
    "record_where",
    "register_functions",
    "tags_all_sql",
]

FOLD_CASE = "meta_lower"

ROW_FROM = "FROM records r JOIN scopes s ON s.scope_id = r.scope_id"
# Qualified: ``kind`` names a column of both tables.
FULL_COLUMNS = ", ".join(f"r.{name}" for name in RECORD_FIELDS)


def _lower(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value


def register_functions(db: sqlite3.Connection) -> None:
    """Give a realm connection the functions the listing's SQL calls (:data:`FOLD_CASE`)."""
    db.create_function(FOLD_CASE, 1, _lower, deterministic=True)


def _marks(values: Sequence[str]) -> str:
    return ",".join("?" * len(values))


def tags_all_sql(column: str, tags: Sequence[str]) -> tuple[str, list[Any]]:
    """A condition true when the JSON array ``column`` holds every one of ``tags`` (at least one)."""
    wanted = sorted(set(tags))
    sql = (
        f"(CASE WHEN json_valid({column}) THEN (SELECT count(DISTINCT value) FROM json_each({column}) "
        f"WHERE value IN ({_marks(wanted)})) = {len(wanted)} ELSE 0 END)"
    )
    return sql, list(wanted)


def _tags_any_sql(column: str, tags: Sequence[str]) -> tuple[str, list[Any]]:
    wanted = sorted(set(tags))
    sql = (
        f"(CASE WHEN json_valid({column}) THEN EXISTS (SELECT 1 FROM json_each({column}) "
        f"WHERE value IN ({_marks(wanted)})) ELSE 0 END)"
    )
    return sql, list(wanted)


def record_where(where: RecordFilter, after: RecordKey | None) -> tuple[list[str], list[Any]]:
    """The conditions (over ``records r`` joined to ``scopes s``) and their arguments that select
    the records matching ``where`` strictly past ``after``."""
    clauses: list[str] = []
    args: list[Any] = []
    for sql, value in (
        ("s.kind = ?", where.scope_kind),
        ("s.key = ?", where.scope_key),
        (
            "r.status = ?",
            where.status if where.now_ms is None or where.status not in ("active", "expired") else None,
        ),
        ("r.kind = ?", where.kind),
        ("r.created_at_ms >= ?", where.created_after_ms),
        ("r.created_at_ms < ?", where.created_before_ms),
        ("r.updated_at_ms >= ?", where.updated_after_ms),
        ("r.updated_at_ms < ?", where.updated_before_ms),
    ):
        if value is not None:
            clauses.append(sql)
            args.append(value)
    if where.now_ms is not None and where.status == "active":
        clauses.append("r.status = 'active' AND (r.expires_at_ms IS NULL OR r.expires_at_ms > ?)")
        args.append(where.now_ms)
    elif where.now_ms is not None and where.status == "expired":
        clauses.append("r.status = 'active' AND r.expires_at_ms <= ?")
        args.append(where.now_ms)
    for build, tags in ((_tags_any_sql, where.tags_any), (tags_all_sql, where.tags_all)):
        if tags:
            sql, values = build("r.tags", tags)
            clauses.append(sql)
            args.extend(values)
    if where.text:
        clauses.append(text_condition(FOLD_CASE, "?"))
        args.extend([like_pattern(where.text)] * 2)
    if after is not None:
        clauses.append("(r.updated_at_ms < ? OR (r.updated_at_ms = ? AND r.id < ?))")
        args.extend((after[0], after[0], after[1]))
    return clauses, args


def full_records_query(where: RecordFilter, after: RecordKey | None, limit: int) -> tuple[str, list[Any]]:
    """The statement selecting up to ``limit + 1`` whole records (the extra one says more follow)."""
    clauses, args = record_where(where, after)
    sql = f"SELECT {FULL_COLUMNS} {ROW_FROM}"
    if clauses:
        sql += " WHERE " + " AND ".join(clauses)
    return sql + " ORDER BY r.updated_at_ms DESC, r.id DESC LIMIT ?", [*args, limit + 1]
