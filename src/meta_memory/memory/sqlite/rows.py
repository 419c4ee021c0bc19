"""The SQL of a realm file's ``records`` table: the column list every record read selects and the
insert, in the orders of the shared row codec (memory/codec.py)."""

from __future__ import annotations

from ..codec import INSERT_FIELDS, RECORD_FIELDS

__all__ = ["INSERT_RECORD", "RECORD_COLUMNS"]

RECORD_COLUMNS = ", ".join(RECORD_FIELDS)

# A new record's doc_len is 0 (the recall index, in its own file, keeps lengths) and nothing has
# superseded it yet.
INSERT_RECORD = (
    f"INSERT INTO records ({', '.join(INSERT_FIELDS)}, superseded_by, doc_len) "
    f"VALUES ({', '.join('?' * len(INSERT_FIELDS))}, NULL, 0)"
)
