"""Writing realms out as an export file: the header, then each realm's records in one read view.

Realms go in name order (bytewise, as :meth:`RealmStoreFactory.realms` sorts them) and each
realm's records by creation time, then id, so the same records always make the same file. By
default an export holds what a realm holds now: its active records and its quarantined ones (with
their status: they stay quarantined wherever they are imported, awaiting review). With
``include_history`` it adds the superseded and tombstoned records (forgotten, discarded, and the
originals of released quarantine), so every lineage link of the realm is in the file.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from ..records import Scope, Status
from ..store import RealmStore
from .lines import ExportHeader, header_line, record_line

__all__ = ["CURRENT", "HISTORY", "export_realms"]

CURRENT = (Status.ACTIVE, Status.QUARANTINED)
HISTORY = (*CURRENT, Status.SUPERSEDED, Status.TOMBSTONED)


def export_realms(
    stores: Iterable[RealmStore],
    write: Callable[[bytes], object],
    *,
    include_history: bool = False,
    realm: str | None = None,
    identity: str | None = None,
    now_ms: int | None = None,
) -> int:
    """Write the export of ``stores`` (in the order given) through ``write``; returns how many
    records it holds.

    Args:
        realm: the realm the caller selected (named in the header; ``stores`` holds its store).
        identity: export only that identity's records.
        now_ms: expiry is judged at this time: an active record whose expiry has come is left
            out (the upkeep deletes it); ``None``: the wall clock.
    """
    now = now_ms if now_ms is not None else int(time.time() * 1000)
    write(header_line(ExportHeader(include_history, realm, identity)))
    written = 0
    for store in stores:
        scope = Scope.identity(store.realm, identity) if identity is not None else None
        with store.exporting(statuses=HISTORY if include_history else CURRENT, scope=scope) as records:
            for record in records:
                if record.live_expired(now):
                    continue
                write(record_line(record))
                written += 1
    return written
