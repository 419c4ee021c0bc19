"""Which storage backend a configuration chooses, and its parts: the factory of realm stores, the
timeline's event log, the doctor's checks and the census slot.

This is the one module that picks a backend by ``agent_memory.store``; the runtime and the CLI ask
it, and nothing in the domain imports a backend. The embedded default keeps everything in files
under the state dir; ``store = "postgres"`` puts agent memory and the timeline on a database that
several gateways share (each keeps its own state dir for its ledger and lock).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from .clock import Clock
from .config import MetaConfig, PostgresConfig
from .errors import ConfigError
from .memory.embedding.models import MODELS
from .memory.sqlite.doctor import SqliteDoctor
from .memory.sqlite.event_log import SqliteEventLog
from .memory.sqlite.factory import SqliteStoreFactory
from .memory.store import RealmStoreFactory
from .storage.census import StorageSlot
from .storage.doctor import StoreDoctor
from .storage.layout import StateLayout
from .timeline import EventLog

if TYPE_CHECKING:
    from .memory.embedding import Embedder

__all__ = ["StorageBackend", "open_backend", "postgres_dsn", "store_doctor"]


class StorageBackend(Protocol):
    """What a runtime's storage is: opened once at boot, closed last."""

    name: str

    def realm_stores(
        self, config: MetaConfig, root: Path, *, serving: bool, embedder: Embedder | None = None
    ) -> RealmStoreFactory:
        """The realm stores; ``embedder``: the model hybrid recall embeds with, for a backend that
        embeds in the gateway (a realm file's indexing process loads its own)."""
        ...

    def event_log(self) -> EventLog: ...

    def agent_memory_slot(self, stores: RealmStoreFactory) -> StorageSlot: ...

    def event_log_slot(self) -> StorageSlot: ...

    def close(self) -> None: ...


def postgres_dsn(pg: PostgresConfig, environ: Mapping[str, str]) -> str:
    """The DSN of ``[agent_memory.postgres]``: ``dsn``, or the variable ``dsn_env`` names.

    Raises:
        ConfigError: ``dsn_env`` names a variable that is not set (or is blank).
    """
    if pg.dsn is not None:
        return pg.dsn
    assert pg.dsn_env is not None
    value = environ.get(pg.dsn_env, "").strip()
    if not value:
        raise ConfigError(
            f"agent_memory.postgres.dsn_env names {pg.dsn_env}, which is not set in the environment"
        )
    return value


class _Embedded:
    """Realm files and the event log under the state dir."""

    name = "sqlite"

    def __init__(self, layout: StateLayout, clock: Clock) -> None:
        self._layout = layout
        self._clock = clock

    def realm_stores(
        self, config: MetaConfig, root: Path, *, serving: bool, embedder: Embedder | None = None
    ) -> RealmStoreFactory:
        return SqliteStoreFactory(self._layout, root, config.agent_memory, clock=self._clock, serving=serving)

    def event_log(self) -> EventLog:
        return SqliteEventLog(self._layout.event_log_path)

    def agent_memory_slot(self, stores: RealmStoreFactory) -> StorageSlot:
        realms = len(stores.realms())
        root = stores.root if isinstance(stores, SqliteStoreFactory) else self._layout.agent_memory_canonical
        detail = f"{root} ({realms} realm{'' if realms == 1 else 's'})"
        return StorageSlot("agent_memory", "durable", "persistent", "sqlite", detail=detail)

    def event_log_slot(self) -> StorageSlot:
        return StorageSlot(
            "event_log", "durable", "persistent", "sqlite", detail=str(self._layout.event_log_path)
        )

    def close(self) -> None:
        pass


def _require_driver() -> None:
    """psycopg is an optional extra: without it, say how to install it.

    Raises:
        ConfigError: psycopg or psycopg_pool is not installed.
    """
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError as exc:
        raise ConfigError(
            'agent_memory.store = "postgres" needs the PostgreSQL driver: '
            "pip install 'meta-memory[postgres]'"
        ) from exc


def open_backend(
    config: MetaConfig, layout: StateLayout, *, clock: Clock, environ: Mapping[str, str] | None = None
) -> StorageBackend:
    """The storage backend ``config`` chooses, opened (a database's pool connected and migrated).

    Raises:
        ConfigError: the DSN's environment variable is not set.
        StorageRefused: the database cannot be reached or is at a newer schema.
    """
    am = config.agent_memory
    if not (am.enabled and am.store == "postgres"):
        return _Embedded(layout, clock)
    _require_driver()
    from .memory.postgres.factory import PostgresBackend  # psycopg is needed only here

    assert am.postgres is not None
    dsn = postgres_dsn(am.postgres, os.environ if environ is None else environ)
    pg = am.postgres
    return PostgresBackend(
        dsn, clock=clock, pool_min=pg.pool_min, pool_max=pg.pool_max, timeout_s=pg.timeout_s
    )


def store_doctor(config: MetaConfig, environ: Mapping[str, str] | None = None) -> StoreDoctor:
    """The backend's part of ``meta_gateway doctor`` and ``meta/storage/doctor``."""
    am = config.agent_memory
    if am.enabled and am.store == "postgres":
        _require_driver()
        from .memory.postgres.doctor import PostgresDoctor

        assert am.postgres is not None
        try:
            dsn = postgres_dsn(am.postgres, os.environ if environ is None else environ)
        except ConfigError as exc:
            return PostgresDoctor(None, problem=exc.message)
        vectors_model = MODELS[am.embedding_model].model_id if am.recall == "hybrid" else None
        return PostgresDoctor(dsn, vectors_model=vectors_model)
    return SqliteDoctor()
