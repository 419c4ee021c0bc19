"""What a gateway's metrics read from its SQLite realms at scrape time (gateway/metrics.py).

For each realm store the runtime has opened: the active records its vectors do not cover yet
(``pending_vectors``, with ``recall = "hybrid"``), the recall index's backlog (``pending_index``, as
the doctor counts it: queued removals and active records past the index file's watermark, two
range counts) and its fresh tier (``unmerged_index``), and the quarantine queue (a seek per
scope on ``records_by_scope_status``, so the cost follows the scopes and the queue, not the
realm's size). A store whose files the open-realm budget closed is not reopened for a scrape
while its file is unchanged since it was last read: that reading stands.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from dataclasses import dataclass

from ...errors import MetaError
from ...storage.layout import StateLayout
from .factory import SqliteStoreFactory
from .store import SqliteRealmStore

__all__ = ["RealmGauges", "SqliteGauges"]

_log = logging.getLogger(__name__)

_QUARANTINED = (
    "SELECT coalesce(sum((SELECT count(*) FROM records r "
    "WHERE r.scope_id = s.scope_id AND r.status = 'quarantined')), 0) FROM scopes s"
)


@dataclass(frozen=True)
class RealmGauges:
    pending_index: int
    unmerged_index: int
    quarantined: int
    pending_vectors: int | None = None  # active records past the vector file's mark (hybrid)


class SqliteGauges:
    """The scrape-time readings of one factory's realm stores."""

    def __init__(self, factory: SqliteStoreFactory) -> None:
        self._factory = factory
        self._lock = threading.Lock()
        # realm -> (its files' stamp when read, the reading)
        self._last: dict[str, tuple[tuple[int, ...], RealmGauges]] = {}

    def open_realms(self) -> int:
        """Realm stores holding their files open now."""
        return self._factory.open_count()

    def realms(self) -> list[RealmGauges]:
        """One reading per realm store the runtime has opened (a store that cannot be read is
        left out, and logged)."""
        with self._factory._lock:
            stores = list(self._factory._stores.values())
        with self._lock:
            out = []
            for store in stores:
                try:
                    out.append(self._read(store))
                except (MetaError, sqlite3.Error) as exc:
                    _log.debug("metrics: realm %r not read: %s", store.realm, exc)
            return out

    def _read(self, store: SqliteRealmStore) -> RealmGauges:
        stamp = _stamp(store)
        with store._lock.idle():  # never reopens: a scrape is not a use of the realm
            last = self._last.get(store.realm)
            if not store._files_open and last is not None and last[0] == stamp:
                return last[1]
            if store._files_open:
                reading = _reading(store)
                self._last[store.realm] = (stamp, reading)
                return reading
        with store._lock:  # closed and changed since last read (or never read): open it once
            reading = _reading(store)
        self._last[store.realm] = (_stamp(store), reading)
        return reading


def _stamp(store: SqliteRealmStore) -> tuple[int, ...]:
    """The realm file's and its WAL's (mtime, size): a write since changes one of them."""
    out: list[int] = []
    for path in (store.path, StateLayout.sqlite_sidecars(store.path)[0]):
        try:
            st = path.stat()
        except OSError:
            out += [0, 0]
        else:
            out += [st.st_mtime_ns, st.st_size]
    return tuple(out)


def _reading(store: SqliteRealmStore) -> RealmGauges:
    """Read under the store's lock, its files open."""
    db = store._db
    index = store._keeper.index
    vectors = store._vectors
    db.execute("BEGIN")
    try:
        pending = index.backlog(db)
        (quarantined,) = db.execute(_QUARANTINED).fetchone()
        unembedded = None
        if vectors is not None:  # a range count on the doc key
            (unembedded,) = db.execute(
                "SELECT count(*) FROM records WHERE doc > ? AND status = 'active'", (vectors.embedded_upto,)
            ).fetchone()
    finally:
        db.execute("COMMIT")
    return RealmGauges(
        pending, index.fresh_size(), int(quarantined), None if unembedded is None else int(unembedded)
    )
