"""Hybrid recall: the lexical ranking fused with nearest neighbours by embedding.

:class:`HybridRecallProvider` plugs into the provider seam. For contextual recall it ranks the
scope lexically and by cosine similarity to the query's embedding (both to a candidate depth a few
times ``max_entries``), fuses the two rankings (:mod:`.fusion`), and returns the best active
records carrying the query's tags. A record not embedded yet is still found lexically, so
read-your-writes holds; a neighbour less similar than ``min_similarity`` is not a candidate, so a
query about nothing the scope holds recalls nothing by embedding alone. ``always`` recall is the
lexical provider's (newest first).

The store supplies the vectors (``VectorReads``); a store without them (a realm not embedded yet,
a backend without vectors) gives the lexical ranking alone.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Collection, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ..records import Record, Status
from .analyzer import query_terms as analyze_query
from .fusion import hybrid
from .neighbours import MIN_SIMILARITY
from .provider import LexicalRecallProvider, RecallQuery, only_docs
from .scorer import rank

if TYPE_CHECKING:
    import numpy as np

    from ..embedding import Embedder
    from ..records import Scope
    from ..store import RealmStore

__all__ = ["HybridRecallProvider", "VectorReads"]

log = logging.getLogger("meta_memory.recall")

DEPTH_FACTOR = 4
DEPTH_MIN = 40
QUERY_CACHE_SIZE = 1024  # query embeddings kept by text (an agent asks the same things again)
INLINE_BELOW_S = 0.0005  # a query embedding faster than this runs on the caller's thread
WAIT_STEP_S = 0.01  # how often a recall waiting for vectors looks at their progress


@runtime_checkable
class VectorReads(Protocol):
    """A store's embedding vectors (``recall = "hybrid"``)."""

    def nearest(
        self,
        scopes: Sequence[Scope],
        query: np.ndarray,
        limit: int,
        embedder: Embedder,
        allowed: Collection[int] | None = None,
    ) -> list[tuple[int, float]]:
        """The ``limit`` docs of ``scopes`` nearest ``query`` (cosine, best first), among ``allowed``;
        the store may first embed a bounded number of records not embedded yet with ``embedder``."""
        ...

    def vector_progress(self, nudge_with: Embedder | None = None) -> tuple[int, int] | None:
        """``(newest doc, embedded up to)`` of the realm's vectors, ``None`` without any; with
        ``nudge_with``, the store asks for what is behind to be embedded."""
        ...


class HybridRecallProvider:
    """Lexical ranking fused with embedding neighbours (see the module docstring)."""

    def __init__(self, embedder: Embedder, *, min_similarity: float = MIN_SIMILARITY) -> None:
        self.embedder = embedder
        self.min_similarity = min_similarity
        self._lexical = LexicalRecallProvider()
        self._warned = False
        # The query is embedded on a thread of this pool while the lexical ranking runs (the model
        # releases the GIL; on PostgreSQL the ranking is mostly waiting on the server).
        self._embedding = ThreadPoolExecutor(max_workers=4, thread_name_prefix="meta-query-embed")
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()
        self._queries_lock = threading.Lock()
        # How long a query's embedding takes (a moving average, seconds): one that costs less than
        # a thread hand-off is computed on the caller's thread (a static model's tens of
        # microseconds waited milliseconds for the GIL behind the lexical ranking).
        self._embed_s = INLINE_BELOW_S * 10

    def vectors_behind(self, store: RealmStore, wait_s: float = 0.0) -> bool | None:
        """Whether the store's vectors miss records acknowledged before this call (``None``: the
        store has no vectors). With ``wait_s``, first wait up to that long, asking for them to be
        embedded, until they cover every record written before the call."""
        if not isinstance(store, VectorReads):
            return None
        progress = store.vector_progress(self.embedder if wait_s > 0 else None)
        if progress is None:
            return None
        newest, upto = progress
        deadline = time.monotonic() + wait_s
        while upto < newest and time.monotonic() < deadline:
            time.sleep(min(WAIT_STEP_S, max(0.0, deadline - time.monotonic())))
            now = store.vector_progress(self.embedder)
            if now is None:
                return None
            upto = now[1]
        return upto < newest

    def _cached(self, text: str) -> bool:
        with self._queries_lock:
            return text in self._queries

    def _query_vector(self, text: str) -> np.ndarray:
        """The query's embedding, from the cache when the same text was asked before."""
        with self._queries_lock:
            cached = self._queries.get(text)
            if cached is not None:
                self._queries.move_to_end(text)
                return cached
        started = time.perf_counter()
        vector: np.ndarray = self.embedder.embed_queries([text])[0]
        self._embed_s = 0.8 * self._embed_s + 0.2 * (time.perf_counter() - started)
        vector.setflags(write=False)  # shared by every recall that asks the same
        with self._queries_lock:
            self._queries[text] = vector
            if len(self._queries) > QUERY_CACHE_SIZE:
                self._queries.popitem(last=False)
        return vector

    def recall(self, store: RealmStore, query: RecallQuery) -> list[Record]:
        if query.selection == "always":
            return self._lexical.recall(store, query)
        text = " ".join(t for t in (query.query_text or "", *query.query_terms) if t.strip())
        if not text.strip():
            return []
        allowed = store.tagged_docs(query.scopes, query.tags) if query.tags else None
        if allowed is not None and not allowed:
            return []
        depth = max(DEPTH_MIN, DEPTH_FACTOR * query.max_entries)
        terms = analyze_query(query.query_text, list(query.query_terms))
        embedded: Future[np.ndarray] | None = None
        if isinstance(store, VectorReads):
            if self._cached(text) or self._embed_s < INLINE_BELOW_S:
                embedded = Future()
                try:
                    embedded.set_result(self._query_vector(text))
                except Exception as exc:  # reported where the thread's failure would be
                    embedded.set_exception(exc)
            else:
                embedded = self._embedding.submit(self._query_vector, text)
        lexical: Sequence[tuple[int, float]] = ()
        try:
            if terms:
                with store.reading_index(query.scopes) as index:
                    ranked = index if allowed is None else only_docs(index, allowed)
                    lexical = rank(ranked, terms, depth)
        except BaseException:
            if embedded is not None:
                embedded.cancel()
            raise
        semantic: list[tuple[int, float]] = []
        if embedded is not None and isinstance(store, VectorReads):
            try:
                vector = embedded.result()
                neighbours = store.nearest(query.scopes, vector, depth, self.embedder, allowed)
            except Exception as exc:
                if not query.lexical_fallback:
                    raise
                if not self._warned:  # once: a broken model would otherwise log every turn
                    self._warned = True
                    log.warning("embedding recall failed (%s); injecting by the lexical ranking alone", exc)
                neighbours = []
            semantic = [(doc, score) for doc, score in neighbours if score >= self.min_similarity]
        fused = hybrid(lexical, semantic, limit=depth) if semantic else [doc for doc, _ in lexical]
        wanted = set(query.tags)
        out: list[Record] = []
        # Fetched a little past what is wanted, then on only if records dropped out: a stale vector
        # (forgotten, superseded or retagged since it was embedded) costs a slot, never an answer.
        start, step = 0, query.max_entries + 4
        while start < len(fused) and len(out) < query.max_entries:
            batch = fused[start : start + step]
            by_doc = store.records_by_doc(batch)
            for doc in batch:
                record = by_doc.get(doc)
                if record is not None and record.status is Status.ACTIVE and wanted.issubset(record.tags):
                    out.append(record)
                    if len(out) == query.max_entries:
                        break
            start += step
        return out

    def close(self) -> None:
        self._embedding.shutdown(wait=False, cancel_futures=True)
