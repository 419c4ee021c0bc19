"""What a gateway's metrics read from PostgreSQL at scrape time (gateway/metrics.py): the
quarantine queue of every realm in the schema (the fleet's, which every gateway of it reports
alike), by the partial index ``records_quarantined``, the active records the vectors of this
gateway's model do not cover yet (``recall = "hybrid"``; the fleet's backlog), and how many realm
stores this gateway has opened. The recall index is kept in each write's own transaction here, so it has no backlog.
"""

from __future__ import annotations

import logging

import psycopg
import psycopg_pool

from .factory import PostgresStoreFactory

__all__ = ["PostgresGauges"]

_log = logging.getLogger(__name__)

# A scrape waits at most this long for a pooled connection: a metric left out beats a scrape
# that times out.
SCRAPE_TIMEOUT_S = 2.0


class PostgresGauges:
    def __init__(self, factory: PostgresStoreFactory) -> None:
        self._factory = factory

    def open_realms(self) -> int:
        """Realm stores this gateway has opened."""
        with self._factory._lock:
            return len(self._factory._stores)

    def pending_vectors(self) -> int | None:
        """Active records of every realm in the schema that the vectors of this gateway's model do
        not cover yet (the fleet's backlog, which any gateway's embedding thread may take);
        ``None`` without hybrid recall, or when the server cannot answer now (logged)."""
        embedder = self._factory.embedder
        if embedder is None:
            return None
        try:
            with self._factory.pool.connection(timeout=SCRAPE_TIMEOUT_S) as conn:
                row = conn.execute(
                    "SELECT count(*) FROM records r LEFT JOIN vector_marks m "
                    "ON m.realm = r.realm AND m.model_id = %s "
                    "WHERE r.status = 'active' AND r.doc > coalesce(m.embedded_upto, 0)",
                    (embedder.model_id,),
                ).fetchone()
        except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
            _log.warning("metrics: PostgreSQL did not answer the vector backlog: %s", exc)
            return None
        return int(row[0]) if row is not None else 0

    def quarantined(self) -> int | None:
        """Quarantined records in every realm of the schema; ``None`` when the server cannot
        answer now (logged)."""
        try:
            with self._factory.pool.connection(timeout=SCRAPE_TIMEOUT_S) as conn:
                row = conn.execute("SELECT count(*) FROM records WHERE status = 'quarantined'").fetchone()
        except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
            _log.warning("metrics: PostgreSQL did not answer the quarantine count: %s", exc)
            return None
        return int(row[0]) if row is not None else 0
