"""A realm's embedding vectors in PostgreSQL (``recall = "hybrid"``): derived data in tables of
their own, filled off the write path by each gateway's embedding thread and read by every gateway.

``record_vectors`` holds one row per model and record embedded, never the record itself;
``vector_marks`` one row per realm and model: ``embedded_upto`` is the last doc looked at, and
``generation`` moves when vectors are removed. Within a realm docs grow in commit order (its writes
serialize on the realm lock, and each takes its docs from the sequence under it), so every record
past the mark either committed after the mark was read or has not committed yet: reading the
records past it, embedding the active ones and moving the mark in one transaction with their
vectors loses none.

Each gateway runs one :class:`EmbeddingWorker` thread, which visits a realm when a write through
this gateway, or a read that finds the vectors behind, nudges it. It takes the realm's embedding
lock (a session advisory lock, held while one chunk is embedded: two gateways never embed the same
records, and one that dies mid-chunk frees it with its connection), so a fleet shares the work.
The thread runs at a lower CPU priority than the gateway's request threads.

A record that leaves ``active`` keeps its vector until the thread's sweep, at most every
:data:`SWEEP_GAP_S` per realm once it is caught up, removes the vectors of records no longer active
and moves the generation. Recall fetches records by doc and drops what is not active, so a stale
vector costs a slot in a candidate list, never a wrong answer. The sweep also removes the vectors
of a model no gateway has embedded with for :data:`OTHER_MODEL_KEEP_MS`, so a fleet in the middle of
a model switch keeps both.

A gateway keeps each scope's vectors as one float32 matrix (:mod:`..recall.neighbours`), read
incrementally: one statement per recall reads the mark, the generation and the realm's newest
doc; rows past the cached mark are appended, a new generation reloads the scope.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

import psycopg
import psycopg_pool

from ...clock import Clock
from ..priority import BACKGROUND_NICE, lower_this_thread
from ..recall.neighbours import (
    ScopeVectors,
    exact_search,
    extended,
    read_ahead_copies,
    record_text,
    vector_bytes,
)
from .connect import lock_key

if TYPE_CHECKING:
    from ..embedding import Embedder

__all__ = ["CHUNK", "EmbeddingWorker", "RealmVectors", "VectorMark", "read_mark"]

log = logging.getLogger("meta_memory.postgres")

CHUNK = 64  # records a worker looks at per step (and per hold of a realm's embedding lock)
SWEEP_GAP_S = 300.0
OTHER_MODEL_KEEP_MS = 7 * 24 * 3600 * 1000
NUDGE_GAP_S = 1.0  # a read that finds the vectors behind nudges the worker at most this often
NICE = BACKGROUND_NICE  # the worker thread's CPU priority, below the request threads'
# A step starts at most this long after the one before it, so the writes of the gap are embedded in
# one step: a model that embeds in microseconds (the static one) otherwise made a step, with its
# lock, reads and insert, of every write, and writes ran at 0.67x lexical's rate.
STEP_GAP_S = 0.05


def embedding_lock_key(schema: str, realm: str, model_id: str) -> int:
    return lock_key(schema, "vectors", f"{realm}\x00{model_id}")


class VectorMark:
    """How far a realm's vectors of one model have come, with the realm's newest doc."""

    __slots__ = ("generation", "newest_doc", "upto")

    def __init__(self, newest_doc: int | None, upto: int, generation: int) -> None:
        self.newest_doc = newest_doc
        self.upto = upto
        self.generation = generation

    @property
    def behind(self) -> bool:
        return self.newest_doc is not None and self.newest_doc > self.upto


def read_mark(conn: psycopg.Connection, realm: str, model_id: str) -> VectorMark:
    row = conn.execute(
        "SELECT (SELECT max(doc) FROM records WHERE realm = %s), m.embedded_upto, m.generation "
        "FROM (SELECT 1) AS one LEFT JOIN vector_marks m ON m.realm = %s AND m.model_id = %s",
        (realm, realm, model_id),
    ).fetchone()
    assert row is not None
    return VectorMark(row[0], int(row[1] or 0), int(row[2] or 0))


class RealmVectors:
    """One realm's vectors of one model as a gateway reads them, each scope's matrix cached."""

    def __init__(
        self,
        realm: str,
        model_id: str,
        dim: int,
        worker: EmbeddingWorker | None,
        *,
        ann_min: int | None = None,
    ) -> None:
        self.realm = realm
        self.ann_min = ann_min
        self.model_id = model_id
        self.dim = dim
        self._worker = worker
        self._lock = threading.Lock()
        self._cache: dict[int, ScopeVectors] = {}
        self._nudged_at = -NUDGE_GAP_S
        if worker is not None:
            worker.listen(realm, self.read_ahead)

    def scope_vectors(
        self, conn: psycopg.Connection, scope_id: int, mark: VectorMark | None = None
    ) -> ScopeVectors:
        """The scope's vectors embedded so far, up to ``mark`` (default: the mark read now; a
        realm found behind nudges the embedding thread)."""
        if mark is None:
            mark = self.mark(conn)
        return self._scope(conn, scope_id, mark)

    def mark(self, conn: psycopg.Connection) -> VectorMark:
        """The realm's mark for this model, read now (a realm found behind nudges the embedding
        thread)."""
        mark = read_mark(conn, self.realm, self.model_id)
        if mark.behind:
            self.nudge(at_most_every=NUDGE_GAP_S)
        return mark

    def forget_cached(self) -> None:
        """Drop every scope's cached matrix (a purge removed vectors; the generation it moved
        would also make the next read reload them)."""
        with self._lock:
            self._cache.clear()

    def read_ahead(self, conn: psycopg.Connection) -> None:
        """This gateway's embedding thread has embedded the realm's records up to its newest:
        bring the scope copies kept here up to the mark now (scopes holding records past their
        copy's mark read their new rows; the others take the mark), so that the recall after a
        write finds them read rather than decoding, projecting and appending its new vectors
        itself. Copies of another generation, or too far behind (neighbours.read_ahead_copies),
        are left to their next read."""
        if not self._cache:  # nothing to read ahead into: not even the mark read
            return
        mark = read_mark(conn, self.realm, self.model_id)
        key = (mark.generation, mark.upto)
        with self._lock:
            behind = read_ahead_copies(self._cache, key)
        if not behind:
            return
        since = min(cached.mark[1] for cached in behind.values())
        written = {
            scope_id
            for (scope_id,) in conn.execute(
                "SELECT DISTINCT scope_id FROM records WHERE realm = %s AND doc > %s AND doc <= %s",
                (self.realm, since, mark.upto),
            )
        }
        for scope_id, cached in behind.items():
            if scope_id in written:
                self._scope(conn, scope_id, mark)
                continue
            with self._lock:  # no rows past its mark: the same copy, current at the new mark
                if self._cache.get(scope_id) is cached:
                    self._cache[scope_id] = replace(cached, mark=key)

    def nudge(self, *, at_most_every: float = 0.0) -> None:
        if self._worker is None:
            return
        now = time.monotonic()
        if now - self._nudged_at >= at_most_every:
            self._nudged_at = now
            self._worker.nudge(self.realm)

    def _scope(self, conn: psycopg.Connection, scope_id: int, mark: VectorMark) -> ScopeVectors:
        key = (mark.generation, mark.upto)
        with self._lock:
            cached = self._cache.get(scope_id)
        if cached is not None and cached.mark == key:
            return cached
        if cached is not None and cached.mark[0] != mark.generation:
            cached = None  # vectors were removed: read the scope again
        since = cached.mark[1] if cached is not None else 0
        rows = conn.execute(
            "SELECT doc, v FROM record_vectors WHERE realm = %s AND model_id = %s AND scope_id = %s "
            "AND doc > %s AND doc <= %s ORDER BY doc",
            (self.realm, self.model_id, scope_id, since, mark.upto),
        ).fetchall()
        out = extended(cached, rows, self.dim, key, ann_min=self.ann_min)
        with self._lock:
            current = self._cache.get(scope_id)
            if current is not None and current.mark == key:
                return current  # another request read the same meanwhile: one copy, one graph
            if current is None or current.mark < key:
                if current is not None and current.ann is not None and current.mark[0] == key[0]:
                    # Same vectors, more of them: the graph built so far goes on (catching up).
                    out = replace(out, ann=current.ann)
                self._cache[scope_id] = out
                if out.ann is not None:  # the copy kept builds the graph, once
                    out.ann.start(out.docs, out.matrix, exact_search(out))
        return out


class EmbeddingWorker:
    """A gateway's embedding thread: fills the vectors of the realms it is nudged for."""

    def __init__(
        self, pool: psycopg_pool.ConnectionPool, schema: str, embedder: Embedder, *, clock: Clock
    ) -> None:
        self._pool = pool
        self._schema = schema
        self.embedder = embedder
        self._clock = clock
        self._wanted: dict[str, None] = {}  # realms to visit, in nudge order
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._swept_at: dict[str, float] = {}
        self._failed = False
        # Who reads ahead each realm's new vectors once its records are embedded up to the newest.
        self._listeners: dict[str, Callable[[psycopg.Connection], None]] = {}

    def listen(self, realm: str, embedded: Callable[[psycopg.Connection], None]) -> None:
        """Call ``embedded`` (on this thread, with its connection) each time a step has embedded
        ``realm``'s records up to its newest; one listener per realm."""
        self._listeners[realm] = embedded

    def nudge(self, realm: str) -> None:
        with self._cond:
            if self._closed:
                return
            self._wanted[realm] = None
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="meta-embedding", daemon=True)
                self._thread.start()
            self._cond.notify()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify()
            thread = self._thread
        if thread is not None:
            thread.join(timeout=30)

    def _run(self) -> None:
        lower_this_thread(NICE)
        last_step = -STEP_GAP_S
        while True:
            with self._cond:
                # What is written meanwhile joins the next step (a nudge wakes this wait early).
                while (gap := last_step + STEP_GAP_S - time.monotonic()) > 0 and not self._closed:
                    self._cond.wait(gap)
                while not self._wanted and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                realm = next(iter(self._wanted))
                del self._wanted[realm]
            last_step = time.monotonic()
            try:
                more = self.step(realm)
            except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
                log.warning(
                    "embedding records of realm %r failed (%s); retried on its next nudge", realm, exc
                )
                more = False
                time.sleep(1.0)  # the server is likely away: do not spin on it
            except Exception as exc:  # a model fault must not stop the embedding of every realm
                if not self._failed:
                    self._failed = True
                    log.warning(
                        "embedding records failed (%s); retried on the next nudge", type(exc).__name__
                    )
                more = False
            if more:
                with self._cond:
                    self._wanted.setdefault(realm, None)  # after the realms waiting already

    def step(self, realm: str) -> bool:
        """Embed up to :data:`CHUNK` records of ``realm`` past its mark; whether more remain.
        A realm another gateway is embedding is left to it."""
        model_id = self.embedder.model_id
        key = embedding_lock_key(self._schema, realm, model_id)
        with self._pool.connection() as conn:
            (locked,) = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone() or (False,)
            if not locked:
                return False
            try:
                more, embedded = self._embed_chunk(conn, realm, model_id)
            finally:
                if not conn.closed:
                    conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
            listener = self._listeners.get(realm)
            if embedded and not more and listener is not None:
                try:
                    listener(conn)
                except Exception as exc:  # a read-ahead is an optimisation: the next recall reads
                    log.warning(
                        "reading ahead the vectors of realm %r failed (%s)", realm, type(exc).__name__
                    )
            return more

    def _embed_chunk(self, conn: psycopg.Connection, realm: str, model_id: str) -> tuple[bool, bool]:
        """Embed the next chunk of ``realm``'s records past its mark: whether more remain, and
        whether it embedded any."""
        import numpy as np

        mark = read_mark(conn, realm, model_id)
        rows = conn.execute(
            "SELECT doc, scope_id, status, title, body, tags FROM records "
            "WHERE realm = %s AND doc > %s ORDER BY doc LIMIT %s",
            (realm, mark.upto, CHUNK),
        ).fetchall()
        if not rows:
            self._sweep(conn, realm, model_id)
            return False, False
        active = [r for r in rows if r[2] == "active"]
        vectors = (
            self.embedder.embed_documents([record_text(r[3], r[4], json.loads(r[5])) for r in active])
            if active
            else np.zeros((0, self.embedder.dim), dtype=np.float32)
        )
        now = self._clock.now_ms()
        with conn.transaction():
            if active:
                with conn.cursor() as cur:
                    # Only for records still there: a purge deletes records and their vectors
                    # under this realm's embedding lock, which this chunk holds.
                    cur.executemany(
                        "INSERT INTO record_vectors (model_id, doc, realm, scope_id, v) "
                        "SELECT %s::text, %s::bigint, %s::text, %s::bigint, %s::bytea "
                        "WHERE EXISTS (SELECT 1 FROM records WHERE doc = %s::bigint) "
                        "ON CONFLICT (model_id, doc) DO NOTHING",
                        [
                            (model_id, r[0], realm, r[1], vector_bytes(vectors[i]), r[0])
                            for i, r in enumerate(active)
                        ],
                    )
            conn.execute(
                "INSERT INTO vector_marks (realm, model_id, dim, embedded_upto, generation, updated_at_ms) "
                "VALUES (%s, %s, %s, %s, 0, %s) ON CONFLICT (realm, model_id) DO UPDATE SET "
                "embedded_upto = GREATEST(vector_marks.embedded_upto, EXCLUDED.embedded_upto), "
                "updated_at_ms = EXCLUDED.updated_at_ms",
                (realm, model_id, self.embedder.dim, rows[-1][0], now),
            )
        if len(rows) == CHUNK:
            return True, True
        self._sweep(conn, realm, model_id)
        return False, True

    def _sweep(self, conn: psycopg.Connection, realm: str, model_id: str) -> None:
        """Remove the vectors of records no longer active, and of models long unused, at most every
        SWEEP_GAP_S per realm (the embedding lock held)."""
        now = time.monotonic()
        if now - self._swept_at.get(realm, -SWEEP_GAP_S) < SWEEP_GAP_S:
            return
        self._swept_at[realm] = now
        now_ms = self._clock.now_ms()
        with conn.transaction():
            stale = conn.execute(
                "DELETE FROM record_vectors v USING records r WHERE v.realm = %s AND v.model_id = %s "
                "AND r.doc = v.doc AND r.status <> 'active'",
                (realm, model_id),
            ).rowcount
            conn.execute(
                "UPDATE vector_marks SET updated_at_ms = %s, generation = generation + %s "
                "WHERE realm = %s AND model_id = %s",
                (now_ms, 1 if stale else 0, realm, model_id),
            )
            unused = [
                row[0]
                for row in conn.execute(
                    "DELETE FROM vector_marks WHERE realm = %s AND model_id <> %s AND updated_at_ms < %s "
                    "RETURNING model_id",
                    (realm, model_id, now_ms - OTHER_MODEL_KEEP_MS),
                )
            ]
            if unused:
                conn.execute(
                    "DELETE FROM record_vectors WHERE realm = %s AND model_id = ANY(%s)", (realm, unused)
                )
        if stale or unused:
            log.info(
                "realm %r: removed %d stale vector(s) and the vectors of %d unused model(s)",
                realm,
                stale,
                len(unused),
            )
