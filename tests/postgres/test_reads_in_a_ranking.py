"""Records read during a recall's index read (a hybrid recall reads its lexical head's records while
its neighbours are to come): on the read's own connection and snapshot, so that a gateway whose pool
holds one connection does not wait for itself."""

from __future__ import annotations

import time
from pathlib import Path

from meta_memory import Meta
from meta_memory.memory.records import Scope

from ..conftest import Backend


def test_records_read_inside_an_index_read_use_its_connection(tmp_path: Path, pg: Backend) -> None:
    assert pg.dsn is not None
    postgres = {"dsn": pg.dsn, "pool_min": 1, "pool_max": 1, "timeout_s": 2}
    with (
        Meta.builder()
        .persistent_state(tmp_path / "state")
        .memory()
        .agent_memory(store="postgres", postgres=postgres)
        .build() as meta
    ):
        for i in range(5):
            meta.remember_agent_memory("lead", title=f"note {i}", body=f"Item {i} of the list.")
        memory = meta.runtime.agent_memory
        assert memory is not None
        store = memory.store("default")
        docs = sorted(doc for (doc,) in pg.stored(tmp_path / "state", "SELECT doc FROM records"))
        assert len(docs) == 5
        started = time.monotonic()
        with store.reading_index([Scope.identity("default", "lead")]):
            inside = store.records_by_doc(docs)  # none of them read by a ranking
        assert time.monotonic() - started < 2.0  # never waited for a pooled connection
        assert sorted(inside) == docs and [inside[d].title for d in docs] == [f"note {i}" for i in range(5)]
        assert store.records_by_doc(docs[:2]).keys() == set(docs[:2])  # after it, the pool's
