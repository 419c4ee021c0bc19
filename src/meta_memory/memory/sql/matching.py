"""The record listings' text filter, one condition for both dialects: a literal, case-insensitive
substring of a record's title or body (``RecordFilter.text``), and which bodies a list may show
or match at all.

A body whose content needs ``memory.quarantine.review`` (a quarantined record, a tombstone that
was ever quarantined) is never matched and never previewed: :data:`BODY_LISTED` is the one
condition that says so, for the text match and the preview column alike. The pattern escapes
``%``, ``_`` and the escape character itself, so what a caller types matches only itself.
"""

from __future__ import annotations

from ..records import Status

__all__ = ["BODY_LISTED", "LIKE_ESCAPE", "like_pattern", "text_condition"]

LIKE_ESCAPE = "\\"

BODY_LISTED = (
    f"NOT (r.status = '{Status.QUARANTINED.value}' "
    f"OR (r.status = '{Status.TOMBSTONED.value}' AND r.ever_quarantined))"
)
"""True for a record (``records r``) whose body a list may show or match."""


def like_pattern(text: str) -> str:
    """``text`` as a LIKE pattern matching it anywhere, its wildcards taken literally."""
    escaped = text.replace(LIKE_ESCAPE, LIKE_ESCAPE * 2).replace("%", LIKE_ESCAPE + "%")
    return "%" + escaped.replace("_", LIKE_ESCAPE + "_") + "%"


def text_condition(fold: str, mark: str) -> str:
    """The condition matching ``RecordFilter.text``, taking the pattern (:func:`like_pattern`) twice.

    Args:
        fold: the dialect's case-folding function (``lower`` folds every letter on PostgreSQL;
            SQLite's folds only ASCII, so its realm connections bring one of their own).
        mark: the dialect's parameter placeholder.
    """
    like = f"LIKE {fold}({mark}) ESCAPE '{LIKE_ESCAPE}'"
    return f"({fold}(r.title) {like} OR ({BODY_LISTED} AND {fold}(r.body) {like}))"
