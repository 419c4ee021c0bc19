"""A realm file's embedding vectors: derived data in a file of their own, beside the recall index.

``agent-memory/<realm>.sqlite3-vectors`` holds one vector per active record of the realm, written
off the write path (by the indexing process, or a bounded catch-up on reads) and never read by a
write. It follows the realm file by ``doc``, its creation order: ``embedded_upto`` is the last doc
looked at, so a catch-up reads the records past it, embeds the active ones and moves the mark.
A record that leaves ``active`` keeps its vector until the next rebuild; recall fetches records by
doc and drops what is no longer active, so a stale vector costs a slot in a candidate list, never
a wrong answer. The file names the realm (``realm_uid``) and the model (``model_id``, ``dim``): a
file of another realm or model is emptied and rebuilt, so vectors of two models never meet in one
ranking.

A scope's vectors are one contiguous float32 matrix kept in memory, extended as the file grows; a
query is one matrix-vector product, or a search of the scope's graph index once it holds
``ann_min`` vectors (recall/neighbours.py, recall/ann.py). A gateway that ranks lexically keeps
the file but marks it paused, so its indexing process does not fill it.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
from collections.abc import Collection, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ...storage.layout import StateLayout
from ..recall.ann import ANN_MIN_VECTORS
from ..recall.neighbours import (
    ScopeVectors,
    exact_search,
    extended,
    read_ahead_copies,
    record_text,
    vector_bytes,
)
from .checkpoint import WAL_KEEP_BYTES, truncate_wal

if TYPE_CHECKING:
    from ..embedding import Embedder

__all__ = ["INLINE_EMBED_MAX", "VectorFile", "VectorSpec"]

# Records a read embeds itself, at most, when no indexing process does it (library runtimes).
INLINE_EMBED_MAX = 32


@dataclass(frozen=True)
class VectorSpec:
    """Which model a realm's vectors are of (``recall = "hybrid"``)."""

    model_id: str
    dim: int
    ann_min: int | None = ANN_MIN_VECTORS  # a scope this large gets a graph index (recall/ann.py)


# The vectors table's layout: clustered by (scope_id, doc), the order a scope is read in, with no
# rowid and no second index (a file of the rowid layout, "1", is emptied and rebuilt).
LAYOUT = "2"
PAUSED = "paused"  # meta key: the realm ranks lexically, the indexing process leaves the file be

_log = logging.getLogger("meta_memory.vectors")
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
VECTORS_TABLE = """
CREATE TABLE vectors (
    scope_id INTEGER NOT NULL,
    doc INTEGER NOT NULL,
    v BLOB NOT NULL,
    PRIMARY KEY (scope_id, doc)
) WITHOUT ROWID
"""


def _still_there(realm: sqlite3.Connection, docs: list[int]) -> set[int]:
    if not docs:
        return set()
    import json

    return {
        doc
        for (doc,) in realm.execute(
            "SELECT doc FROM records WHERE doc IN (SELECT value FROM json_each(?))", (json.dumps(docs),)
        )
    }


class VectorFile:
    """The vectors of one realm file, for one model. Thread-safe (one lock)."""

    def __init__(
        self, realm_path: Path, *, realm_uid: str, model_id: str, dim: int, ann_min: int | None = None
    ) -> None:
        self.path = StateLayout.vector_path(realm_path)
        self.model_id = model_id
        self.dim = dim
        self.ann_min = ann_min
        self._lock = threading.Lock()
        self._cache: dict[int, ScopeVectors] = {}
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA busy_timeout = 5000")
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute(f"PRAGMA journal_size_limit = {WAL_KEEP_BYTES}")
        self._db.execute("PRAGMA synchronous = NORMAL")
        self._db.executescript(SCHEMA)
        meta = self._meta()
        wanted = {"realm_uid": realm_uid, "model_id": model_id, "dim": str(dim), "layout": LAYOUT}
        if any(meta.get(k) != v for k, v in wanted.items()):
            self._reset(wanted)
        elif meta.get(PAUSED) is not None:
            self._db.execute("DELETE FROM meta WHERE key = ?", (PAUSED,))

    @staticmethod
    def pause(realm_path: Path) -> None:
        """Mark the realm's vector file, if there is one, as not to be filled: its store ranks
        lexically. The indexing process does not follow a paused file (:meth:`follow`); a store
        that opens it for hybrid recall resumes it, embedding what was written meanwhile."""
        path = StateLayout.vector_path(realm_path)
        if not path.is_file():
            return
        db = sqlite3.connect(path, isolation_level=None)
        try:
            db.execute("PRAGMA busy_timeout = 5000")
            db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, '1')", (PAUSED,))
        except sqlite3.Error as exc:  # not a vector file this release reads: opened for hybrid, it is rebuilt
            _log.warning("vector file of %s not paused: %s", realm_path.name, exc)
        finally:
            db.close()

    @classmethod
    def follow(cls, realm_path: Path, realm_uid: str) -> VectorFile | None:
        """The realm file's vector file as its store made it (the indexing process's view): of the
        model its meta names; ``None`` when there is none, or it is another realm's."""
        path = StateLayout.vector_path(realm_path)
        if not path.is_file():
            return None
        probe = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            meta = dict(probe.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.Error:
            return None
        finally:
            probe.close()
        if meta.get("realm_uid") != realm_uid or "model_id" not in meta or "dim" not in meta:
            return None
        if meta.get("layout") != LAYOUT:
            return None  # the store empties and rebuilds it when it opens the realm
        if meta.get(PAUSED) is not None:
            return None  # its store ranks lexically (pause)
        return cls(realm_path, realm_uid=realm_uid, model_id=meta["model_id"], dim=int(meta["dim"]))

    def _meta(self) -> dict[str, str]:
        return dict(self._db.execute("SELECT key, value FROM meta").fetchall())

    def _reset(self, meta: dict[str, str]) -> None:
        """Empty the file for ``meta`` (another realm's file, another model's vectors, another layout)."""
        with self._writing() as db:
            db.execute("DROP INDEX IF EXISTS vectors_by_scope")
            db.execute("DROP TABLE IF EXISTS vectors")
            db.execute(VECTORS_TABLE)
            db.execute("DELETE FROM meta")
            db.executemany(
                "INSERT INTO meta (key, value) VALUES (?, ?)", [*meta.items(), ("embedded_upto", "0")]
            )
        self._cache.clear()

    @contextlib.contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    @property
    def embedded_upto(self) -> int:
        row = self._db.execute("SELECT value FROM meta WHERE key = 'embedded_upto'").fetchone()
        return int(row[0]) if row else 0

    def behind(self, realm: sqlite3.Connection, upto: int | None = None) -> bool:
        """Whether the realm holds records past ``upto`` (default: the mark now)."""
        row = realm.execute("SELECT max(doc) FROM records").fetchone()
        return row[0] is not None and int(row[0]) > (self.embedded_upto if upto is None else upto)

    def catch_up(self, realm: sqlite3.Connection, embedder: Embedder, limit: int) -> int:
        """Embed the active records past the mark, at most ``limit`` looked at; how many were read.

        Raises:
            CapabilityUnavailable: ``embedder`` is not this file's model.
        """
        if embedder.model_id != self.model_id:
            from ...errors import CapabilityUnavailable

            raise CapabilityUnavailable(
                f"the vectors of this realm are of model {self.model_id!r}, not {embedder.model_id!r}"
            )
        import json

        import numpy as np

        with self._lock:
            upto = self.embedded_upto
            rows = realm.execute(
                "SELECT doc, scope_id, status, title, body, tags FROM records WHERE doc > ? ORDER BY doc LIMIT ?",
                (upto, limit),
            ).fetchall()
            if not rows:
                return 0
            active = [r for r in rows if r[2] == "active"]
            vectors = (
                embedder.embed_documents([record_text(r[3], r[4], json.loads(r[5])) for r in active])
                if active
                else np.zeros((0, self.dim), dtype=np.float32)
            )
            with self._writing() as db:
                # A purge may have deleted some of them since they were read: it commits the realm
                # file before it takes this file's write lock, so what the realm holds now is final.
                kept = _still_there(realm, [r[0] for r in active])
                db.executemany(
                    "INSERT OR REPLACE INTO vectors (doc, scope_id, v) VALUES (?, ?, ?)",
                    [(r[0], r[1], vector_bytes(vectors[i])) for i, r in enumerate(active) if r[0] in kept],
                )
                # Unless a purge brought the mark down meanwhile (the docs above it will be given
                # again, and embedded when they are).
                db.execute(
                    "UPDATE meta SET value = ? WHERE key = 'embedded_upto' AND value = ?",
                    (str(rows[-1][0]), str(upto)),
                )
            return len(rows)

    def scope(self, scope_id: int, upto: int | None = None) -> ScopeVectors:
        """The scope's vectors up to ``upto`` (default: the mark now) as one matrix, read
        incrementally from the cached copy."""
        with self._lock:
            upto = self.embedded_upto if upto is None else upto
            cached = self._cache.get(scope_id)
            if cached is not None and cached.mark == (upto,):
                return cached
            return self._extend(scope_id, cached, upto)

    def _extend(self, scope_id: int, cached: ScopeVectors | None, upto: int) -> ScopeVectors:
        """``cached`` (the scope's copy, or none) with its rows up to ``upto`` read, kept as the
        scope's copy (under the lock)."""
        since = cached.mark[0] if cached is not None else 0
        rows = self._db.execute(
            "SELECT doc, v FROM vectors WHERE scope_id = ? AND doc > ? AND doc <= ? ORDER BY doc",
            (scope_id, since, upto),
        ).fetchall()
        out = extended(cached, rows, self.dim, (upto,), ann_min=self.ann_min)
        self._cache[scope_id] = out
        if out.ann is not None:  # once: later copies carry the same graph
            out.ann.start(out.docs, out.matrix, exact_search(out))
        return out

    def keeps_copies(self) -> bool:
        """Whether any scope's copy is kept here (a read-ahead has something to bring up)."""
        return bool(self._cache)

    def oldest_behind(self, upto: int) -> int | None:
        """The oldest mark of the scope copies kept here that a read-ahead to ``upto`` brings up
        (neighbours.read_ahead_copies); ``None`` when there are none."""
        with self._lock:
            return min((c.mark[0] for c in read_ahead_copies(self._cache, (upto,)).values()), default=None)

    def read_ahead(self, upto: int, written: Collection[int]) -> None:
        """Bring the scope copies kept here up to ``upto`` (those neighbours.read_ahead_copies
        chooses), as a read at ``upto`` would (:meth:`scope`), before a recall asks: ``written``
        are the scopes holding records past the oldest of their marks (read by the caller under the
        store's lock, as for a read); a copy of any other scope only takes the new mark (it has no
        rows past its own)."""
        with self._lock:
            for scope_id, cached in read_ahead_copies(self._cache, (upto,)).items():
                if scope_id in written:
                    self._extend(scope_id, cached, upto)
                else:
                    self._cache[scope_id] = replace(cached, mark=(upto,))

    def purge_docs(self, docs: Collection[tuple[int, int]], newest_doc: int) -> int:
        """Delete the vectors of purged records ((doc, scope_id) each), bring ``embedded_upto``
        down to ``newest_doc`` (the realm's newest doc left: purged docs are given again) and drop
        their scopes' matrices; how many it deleted. The caller rewrites the file afterwards."""
        from .purge import lower_mark

        with self._lock:
            with self._writing() as db:
                lower_mark(db, "embedded_upto", newest_doc)
                deleted = sum(
                    db.execute("DELETE FROM vectors WHERE scope_id = ? AND doc = ?", (scope_id, doc)).rowcount
                    for doc, scope_id in docs
                )
            # Every scope's matrix: its mark may now be past docs that will be given again.
            self._cache.clear()
            return deleted

    def scrub(self) -> bool:
        """Rewrite the file from its live rows and cut its WAL (after :meth:`purge_docs`)."""
        from .purge import rewrite

        with self._lock:
            return rewrite(self._db, self.path.name)

    def truncate_wal(self) -> bool:
        """Cut the file's WAL to nothing if nobody is in the way (the indexing process, idle); whether it did."""
        with self._lock:
            return truncate_wal(self._db, 5000)

    def close(self) -> None:
        with self._lock:
            self._db.close()
