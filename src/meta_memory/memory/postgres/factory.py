"""The PostgreSQL backend: one connection pool per gateway (:class:`PostgresBackend`, which migrates
the schema at boot, once, whichever gateway boots first), the
:class:`~meta_memory.memory.store.RealmStoreFactory` of its realm stores (a ``realms`` row for
each realm opened), and the shared event log.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import psycopg
import psycopg_pool

from ...clock import Clock
from ...config import MetaConfig
from ...errors import StorageRefused
from ...storage.census import StorageSlot
from ..store import RealmStoreFactory
from .connect import describe, open_pool, unavailable
from .event_log import PostgresEventLog
from .migrations import NewerSchema, migrate
from .store import PostgresRealmStore
from .vectors import EmbeddingWorker, RealmVectors

if TYPE_CHECKING:
    from ..embedding import Embedder

__all__ = ["PostgresBackend", "PostgresStoreFactory"]

log = logging.getLogger("meta_memory.postgres")


class PostgresBackend:
    """The pool, the migrated schema, and what is built on them, for one gateway.

    Raises:
        StorageRefused: the server cannot be reached, or its schema is newer than this release.
    """

    name = "postgres"

    def __init__(
        self, dsn: str, *, clock: Clock, pool_min: int = 1, pool_max: int = 10, timeout_s: float = 10.0
    ) -> None:
        self.dsn = dsn
        self.where = describe(dsn)
        self._clock = clock
        self.pool: psycopg_pool.ConnectionPool = open_pool(
            dsn, min_size=pool_min, max_size=pool_max, timeout_s=timeout_s
        )
        try:
            with self.pool.connection() as conn:
                migrate(conn, clock.now_ms())
                row = conn.execute("SELECT current_schema()").fetchone()
                self.schema = str(row[0]) if row is not None and row[0] is not None else "public"
        except NewerSchema as exc:
            self.pool.close()
            raise StorageRefused(f"PostgreSQL at {self.where}: {exc}") from exc
        except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
            log.error("migrating PostgreSQL at %s failed: %s", self.where, exc)
            self.pool.close()
            raise StorageRefused(
                f"PostgreSQL at {self.where} could not be migrated (see the gateway log)"
            ) from exc

    def realm_stores(
        self, config: MetaConfig, root: Path, *, serving: bool, embedder: Embedder | None = None
    ) -> PostgresStoreFactory:
        return PostgresStoreFactory(
            self.pool,
            self.schema,
            clock=self._clock,
            embedder=embedder,
            ann_min=config.agent_memory.ann_min_vectors,
        )

    def event_log(self) -> PostgresEventLog:
        return PostgresEventLog(self.pool, self.dsn, self.schema)

    def agent_memory_slot(self, stores: RealmStoreFactory) -> StorageSlot:
        realms = len(stores.realms())
        detail = f"{self.where} ({realms} realm{'' if realms == 1 else 's'})"
        return StorageSlot("agent_memory", "durable", "persistent", "postgres", detail=detail)

    def event_log_slot(self) -> StorageSlot:
        return StorageSlot("event_log", "durable", "persistent", "postgres", detail=self.where)

    def close(self) -> None:
        self.pool.close()


class PostgresStoreFactory:
    """Realm stores on the backend's pool."""

    def __init__(
        self,
        pool: psycopg_pool.ConnectionPool,
        schema: str,
        *,
        clock: Clock,
        embedder: Embedder | None = None,
        ann_min: int | None = None,
    ) -> None:
        self.pool = pool
        self.ann_min = ann_min
        self.schema = schema
        self._clock = clock
        self._stores: dict[str, PostgresRealmStore] = {}
        self._lock = threading.Lock()
        # recall = "hybrid": this gateway's embedding thread, shared by its realms (vectors.py).
        self.embedder = embedder
        self.embedding = (
            EmbeddingWorker(pool, schema, embedder, clock=clock) if embedder is not None else None
        )

    def open_realm(self, realm: str) -> PostgresRealmStore:
        with self._lock:
            store = self._stores.get(realm)
            if store is not None:
                return store
        try:
            with self.pool.connection() as conn:
                conn.execute(
                    "INSERT INTO realms (realm, created_at_ms) VALUES (%s, %s) ON CONFLICT (realm) DO NOTHING",
                    (realm, self._clock.now_ms()),
                )
        except (psycopg.OperationalError, psycopg_pool.PoolTimeout) as exc:
            raise unavailable(exc, "open realm") from exc
        vectors = (
            RealmVectors(
                realm, self.embedder.model_id, self.embedder.dim, self.embedding, ann_min=self.ann_min
            )
            if self.embedder is not None
            else None
        )
        with self._lock:
            return self._stores.setdefault(
                realm, PostgresRealmStore(self.pool, realm, self.schema, clock=self._clock, vectors=vectors)
            )

    def realms(self) -> list[str]:
        try:
            with self.pool.connection() as conn:
                return [row[0] for row in conn.execute("SELECT realm FROM realms ORDER BY realm")]
        except (psycopg.OperationalError, psycopg_pool.PoolTimeout) as exc:
            raise unavailable(exc, "realm listing") from exc

    def has_realm(self, realm: str) -> bool:
        try:
            with self.pool.connection() as conn:
                return conn.execute("SELECT 1 FROM realms WHERE realm = %s", (realm,)).fetchone() is not None
        except (psycopg.OperationalError, psycopg_pool.PoolTimeout) as exc:
            raise unavailable(exc, "realm lookup") from exc

    def close(self) -> None:
        """Close the stores (their pending usage written back); the backend closes the pool."""
        if self.embedding is not None:
            self.embedding.close()
        with self._lock:
            stores, self._stores = list(self._stores.values()), {}
        for store in stores:
            store.close()
