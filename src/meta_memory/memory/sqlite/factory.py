"""The embedded backend's :class:`~meta_memory.memory.store.RealmStoreFactory`: one SQLite file per
realm under the agent-memory root, the indexing process that builds their recall indexes, and
the bound on how many keep their files open.

It opens each realm's store once and keeps it; :meth:`SqliteStoreFactory.close` stops the
indexing process first, so the stores' own connections are the last ones on their files and
closing them checkpoints and removes each WAL.
"""

from __future__ import annotations

import threading
from pathlib import Path

from ...clock import Clock
from ...config import AgentMemoryConfig
from ...storage.layout import StateLayout
from ..embedding.models import MODELS
from .budget import OpenRealmBudget
from .index_worker import IndexWorkerProcess
from .store import SqliteRealmStore
from .vectors import VectorSpec

__all__ = ["SqliteStoreFactory"]


class SqliteStoreFactory:
    """Realm stores as ``<root>/<enc(realm)>.sqlite3`` files.

    Args:
        serving: the runtime is a gateway's, so ``index_worker = "auto"`` means a helper process
            builds the recall indexes (index_worker.py).
    """

    def __init__(
        self,
        layout: StateLayout,
        root: Path,
        config: AgentMemoryConfig,
        *,
        clock: Clock,
        serving: bool = False,
    ) -> None:
        self.layout = layout
        self.root = root
        self._config = config
        self._clock = clock
        self._stores: dict[str, SqliteRealmStore] = {}
        self._lock = threading.Lock()
        # At most this many realms keep their files open at once (budget.py).
        self._budget = OpenRealmBudget(config.max_open_realms)
        mode = config.index_worker
        self.index_worker = (
            IndexWorkerProcess(embedding_runtime=config.embedding_runtime)
            if mode == "process" or (mode == "auto" and serving)
            else None
        )
        if self.index_worker is not None:
            self.index_worker.start()  # its start-up overlaps ours, not the first writes
        # recall = "hybrid": each realm keeps its records' vectors of the configured model.
        self.vectors: VectorSpec | None = None
        if config.recall == "hybrid":
            spec = MODELS[config.embedding_model]
            self.vectors = VectorSpec(spec.model_id, spec.dim, config.ann_min_vectors)

    def open_realm(self, realm: str) -> SqliteRealmStore:
        with self._lock:
            store = self._stores.get(realm)
            if store is None:
                path = self.layout.realm_db_path(realm, self.root)
                store = SqliteRealmStore(
                    path,
                    realm,
                    clock=self._clock,
                    durability=self._config.durability,
                    index_worker=self.index_worker,
                    shown_as=str(path.relative_to(self.layout.root)),
                    budget=self._budget,
                    vectors=self.vectors,
                )
                self._stores[realm] = store
            return store

    def realms(self) -> list[str]:
        if not self.root.is_dir():
            return []
        names = (StateLayout.realm_from_db_name(p.name) for p in self.root.iterdir() if p.is_file())
        return sorted(name for name in names if name is not None)

    def has_realm(self, realm: str) -> bool:
        return self.layout.realm_db_path(realm, self.root).is_file()

    def open_count(self) -> int:
        """How many realm stores hold their files open right now."""
        return self._budget.open_count()

    def close(self) -> None:
        if self.index_worker is not None:
            self.index_worker.close()
        with self._lock:
            stores, self._stores = list(self._stores.values()), {}
        for store in stores:
            store.close()
