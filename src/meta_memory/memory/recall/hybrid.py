"""Hybrid recall: the lexical ranking fused with nearest neighbours by embedding.

:class:`HybridRecallProvider` plugs into the provider seam. For contextual recall it ranks the
scope lexically (as deep as the places it fetches first) and by cosine similarity to the
query's embedding (as deep as the fusion reads), scores lexically the neighbours below the lexical
head that can reach the places of the records it fetches first (fusion.contenders), fuses the two
rankings (:mod:`.fusion`), and returns the best active records carrying the query's tags; when
stale records leave those places short, it ranks lexically deeper, scores the rest and reads the
fusion deeper. A record
not embedded yet is still found lexically, so read-your-writes holds; a neighbour less similar
than ``min_similarity`` is not a candidate, so a query about nothing the scope holds recalls
nothing by embedding alone. ``always`` recall is the lexical provider's (newest first).

The store supplies the vectors (``VectorReads``); a store without them (a realm not embedded yet,
a backend without vectors) gives the lexical ranking alone.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Collection, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Protocol, cast, runtime_checkable

from ..records import Record
from . import shared
from .analyzer import query_terms as analyze_query
from .fusion import DEFAULT_HYBRID, Fusion, HybridParams, near_enough
from .handoff import Handoff
from .index import TermIndex
from .neighbours import MIN_SIMILARITY, Finish, Offload, PiecesQuery, ready
from .provider import LexicalRecallProvider, RecallQuery, Scored, only_docs, relative
from .scan_process import ScanOffload, ScanProcesses
from .scorer import Ranking

if TYPE_CHECKING:
    import numpy as np

    from ..embedding import Embedder
    from ..embedding.static_embedder import PieceReader
    from ..records import Scope
    from ..store import RealmStore

__all__ = ["HybridRecallProvider", "NeighbourSearch", "VectorReads"]

log = logging.getLogger("meta_memory.recall")

QUERY_CACHE_SIZE = 1024  # query embeddings kept by text (an agent asks the same things again)
INLINE_BELOW_S = 0.0005  # a query embedding faster than this runs on the caller's thread
WAIT_STEP_S = 0.01  # how often a recall waiting for vectors looks at their progress


class NeighbourSearch(Protocol):
    """A search of some scopes' vectors (``VectorReads.searcher``)."""

    def __call__(
        self, query: np.ndarray, limit: int, allowed: Collection[int] | None = None
    ) -> list[tuple[int, float]]:
        """The ``limit`` docs nearest ``query`` (cosine, best first), among ``allowed``."""
        ...


class Begin(Protocol):
    """A search that can be begun in two steps (neighbours.ScopesSearch.begin)."""

    def __call__(
        self,
        query: np.ndarray | PiecesQuery,
        limit: int,
        allowed: Collection[int] | None,
        offload: Offload | None,
    ) -> Finish: ...


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

    def searcher(self, scopes: Sequence[Scope], embedder: Embedder) -> NeighbourSearch:
        """:meth:`nearest` in two steps: what the search needs from the store, read now (the
        store may embed as :meth:`nearest` does), and the search, which may run on another
        thread while the store serves a lexical ranking."""
        ...

    def vector_progress(self, nudge_with: Embedder | None = None) -> tuple[int, int] | None:
        """``(newest doc, embedded up to)`` of the realm's vectors, ``None`` without any; with
        ``nudge_with``, the store asks for what is behind to be embedded."""
        ...


_VECTOR_STORES: dict[type, bool] = {}


def _vector_reads(store: RealmStore) -> VectorReads | None:
    """``store`` if it is :class:`VectorReads`, known by its class (the stores' methods are their
    classes'): a runtime protocol's check reads each member, 8 to 25 us a recall."""
    kind = type(store)
    known = _VECTOR_STORES.get(kind)
    if known is None:
        known = _VECTOR_STORES[kind] = isinstance(store, VectorReads)
    return cast("VectorReads", store) if known else None


class HybridRecallProvider:
    """Lexical ranking fused with embedding neighbours (see the module docstring)."""

    def __init__(
        self, embedder: Embedder, *, min_similarity: float = MIN_SIMILARITY, scan_helpers: int | None = None
    ) -> None:
        self.embedder = embedder
        self.min_similarity = min_similarity
        self._lexical = LexicalRecallProvider()
        self._warned = False
        # The query is embedded on a thread of this pool while the lexical ranking runs (the model
        # releases the GIL; on PostgreSQL the ranking is mostly waiting on the server).
        self._embedding = ThreadPoolExecutor(max_workers=4, thread_name_prefix="meta-query-embed")
        # A search's scan of a scope's sketch (its steps that release the GIL) runs on one of
        # these threads while the caller ranks lexically (neighbours.begin_nearest).
        self._scans = Handoff(os.cpu_count() or 1, "meta-scan")
        # Or, where a helper process is ready, in that process: the caller keeps the GIL
        # (scan_process.py; 0.14 ms added to the ranking beside it against 0.56 on a thread).
        self._helpers = ScanProcesses(scan_helpers)  # (None: one fewer than the cores; 0: none)
        self._offload = ScanOffload(
            self._scans.submit, self._helpers.submit if self._helpers.available else None
        )
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()
        self._queries_lock = threading.Lock()
        # How long a query's embedding takes (a moving average, seconds): one that costs less than
        # a thread hand-off is computed on the caller's thread (a static model's tens of
        # microseconds waited milliseconds for the GIL behind the lexical ranking).
        self._embed_s = INLINE_BELOW_S * 10
        # A static model's piece table and weights once in shared memory, and how its pieces
        # are read (_pieces_query): set once, the model complete.
        self._table: tuple[np.ndarray, np.ndarray, PieceReader] | None = None

    def vectors_behind(self, store: RealmStore, wait_s: float = 0.0) -> bool | None:
        """Whether the store's vectors miss records acknowledged before this call (``None``: the
        store has no vectors). With ``wait_s``, first wait up to that long, asking for them to be
        embedded, until they cover every record written before the call."""
        vectors = _vector_reads(store)
        if vectors is None:
            return None
        progress = vectors.vector_progress(self.embedder if wait_s > 0 else None)
        if progress is None:
            return None
        newest, upto = progress
        deadline = time.monotonic() + wait_s
        while upto < newest and time.monotonic() < deadline:
            time.sleep(min(WAIT_STEP_S, max(0.0, deadline - time.monotonic())))
            now = vectors.vector_progress(self.embedder)
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
        self._keep(text, vector)
        return vector

    def _pieces_query(self, text: str) -> PiecesQuery | None:
        """``text`` as a query a scan helper embeds itself (neighbours.PiecesQuery): where the
        helpers run and the model is static, once its table is complete and shared; ``None``
        otherwise (the query is embedded here)."""
        if not self._helpers.available:
            return None
        if self._table is None:
            share = getattr(self.embedder, "shared_table", None)
            if share is None or (moved := share(shared.copy)) is None:
                return None
            reader = self.embedder.piece_reader()  # type: ignore[attr-defined]
            if reader is None:
                return None
            self._table = (*moved, reader)
        table, weights, reader = self._table
        return PiecesQuery(text, reader, table, weights, lambda: self._query_vector(text))

    def _keep(self, text: str, vector: np.ndarray) -> None:
        """``text``'s embedding (computed here or by a scan helper) kept for the recalls that ask
        the same text again."""
        vector.setflags(write=False)  # shared by every recall that asks the same
        with self._queries_lock:
            self._queries[text] = vector
            if len(self._queries) > QUERY_CACHE_SIZE:
                self._queries.popitem(last=False)

    def _neighbours(
        self, search: NeighbourSearch, text: str, depth: int, allowed: Collection[int] | None
    ) -> list[tuple[int, float]]:
        return search(self._query_vector(text), depth, allowed)

    def _semantic(
        self, searched: _Searched, query: RecallQuery
    ) -> tuple[list[tuple[int, float]], HybridParams]:
        """The neighbours the search found at least ``min_similarity`` near and the fusion's params
        for them (fusion.near_enough); none when it failed on an automatic injection
        (``lexical_fallback``), the failure otherwise."""
        try:
            neighbours = searched.result()
        except Exception as exc:
            if not query.lexical_fallback:
                raise
            if not self._warned:  # once: a broken model would otherwise log every turn
                self._warned = True
                log.warning("embedding recall failed (%s); injecting by the lexical ranking alone", exc)
            return [], DEFAULT_HYBRID
        return near_enough(neighbours, self.min_similarity)

    @staticmethod
    def _scores(
        ranking: Ranking | None, index: TermIndex, docs: Collection[int], into: dict[int, float]
    ) -> None:
        """Add the lexical score of each of ``docs`` holding a query word (read from ``index``)
        to ``into``."""
        if ranking is not None and docs:
            into.update(ranking.scores_of(docs, index))

    def recall(self, store: RealmStore, query: RecallQuery) -> list[Record]:
        return [record for record, _ in self.recall_scored(store, query)]

    def recall_scored(self, store: RealmStore, query: RecallQuery) -> list[Scored]:
        """The fused ranking, each record with its fused score: 0.7 x its BM25 over the best
        lexical score + 0.3 x its cosine placed between the least and the best neighbour's
        (fusion.hybrid_scored, fusion.near_enough), raised where the protected lexical head places
        it above a better-scoring record; lexical recall's relative score when there are no
        neighbours."""
        return self._recall(store, query)[0]

    def recall_reporting(self, store: RealmStore, query: RecallQuery) -> tuple[list[Scored], bool | None]:
        """:meth:`recall_scored`, and whether the vectors it ranked with missed records
        acknowledged before it (:meth:`vectors_behind` without a wait), read with the vectors
        where its search read them (one read of the realm's progress, not two)."""
        scored, search = self._recall(store, query)
        progress = getattr(search, "progress", None)
        if progress is None:
            return scored, self.vectors_behind(store)
        newest, upto = progress
        return scored, upto < newest

    def _recall(self, store: RealmStore, query: RecallQuery) -> tuple[list[Scored], NeighbourSearch | None]:
        """:meth:`recall_scored`'s records, and the search it ranked with (``None``: none)."""
        if query.selection == "always":
            return self._lexical.recall_scored(store, query), None
        text = " ".join(t for t in (query.query_text or "", *query.query_terms) if t.strip())
        if not text.strip():
            return [], None
        allowed = store.tagged_docs(query.scopes, query.tags) if query.tags else None
        if allowed is not None and not allowed:
            return [], None
        # The lexical ranking's head as deep as the places wanted (and one past those the fusion
        # keeps in place), the embedding's neighbours as deep as the fusion reads, and the lexical
        # score of each neighbour below the head that can reach those places: the fusion's first
        # places are then those of the fusion over the whole lexical ranking. A record lexically
        # below the head and not a neighbour scores its lexical part alone, no more than any of
        # the head's records past the protected places, and those fill the places first
        # (tests/recall/test_hybrid_recall.py holds recall to that oracle). Records a fetch drops
        # (stale vectors) are replaced from a deeper fusion (:meth:`_deeper`).
        places = max(query.max_entries, DEFAULT_HYBRID.protect + 1)
        depth = DEFAULT_HYBRID.depth
        terms = analyze_query(query.query_text, list(query.query_terms))
        # The query's embedding and its neighbours: a static model's query not asked before is
        # sent as its text to the scan helper of a sketched scope, which embeds it too
        # (neighbours.PiecesQuery, scan_process.py); otherwise on a thread of the pool while this
        # one ranks lexically when the embedding is slow (the model releases the GIL; on
        # PostgreSQL the search waits on the server). When it is cheap or cached, the query is
        # embedded here, first, and a store's search that can be begun (neighbours.begin_nearest)
        # runs its scan in a helper or on a thread meanwhile; one that cannot runs here. (The
        # embedding and the whole search handed to a thread waited for the GIL behind the lexical
        # ranking: 5.0 ms against 3.9 for the whole recall on benchmarks/hybrid.py's realm.)
        searched: _Searched | None = None
        search: NeighbourSearch | None = None
        vectors = _vector_reads(store)
        if vectors is not None:
            cached = self._cached(text)
            if self._table is not None and allowed is None:  # to a scan helper (a filter: here)
                # Its wake-up, and the embedding of a query not asked before, hidden behind the
                # search's start (ScanProcesses.wake).
                self._helpers.wake(None if cached else text, self._table)
            try:
                search = vectors.searcher(query.scopes, self.embedder)
                begin: Begin | None = getattr(search, "begin", None)
                # A static model's query, not asked before, goes to a scan helper as its text.
                pieces = None if begin is None or cached else self._pieces_query(text)
                if pieces is not None and begin is not None:
                    searched = _Begun(begin(pieces, depth, allowed, self._offload), pieces, text, self)
                elif not (cached or self._embed_s < INLINE_BELOW_S):
                    searched = self._embedding.submit(self._neighbours, search, text, depth, allowed)
                elif begin is not None:
                    searched = _Begun(begin(self._query_vector(text), depth, allowed, self._offload))
                else:
                    searched = Future()
                    searched.set_result(self._neighbours(search, text, depth, allowed))
            except Exception as exc:  # reported where the search's own failure would be
                searched = Future()
                searched.set_exception(exc)
        head: Sequence[tuple[int, float]] = ()
        ranking: Ranking | None = None
        semantic: list[tuple[int, float]] = []
        fusion: Fusion | None = None
        params = DEFAULT_HYBRID
        # The lexical scores of the neighbours below the head, read for those that can reach the
        # fusion's first places (fusion.contenders), for the rest only when stale records leave
        # those places short.
        scored: dict[int, float] = {}
        asked: Collection[int] = ()  # the neighbours whose lexical scores were read
        # Records read while a scan helper's answer was still to come (by doc).
        fetched: dict[int, Record] = {}
        try:
            if terms:
                with store.reading_index(query.scopes) as index:
                    ranked = index if allowed is None else only_docs(index, allowed)
                    ranking = Ranking(ranked, terms)
                    head = ranking.top(places)
                    if searched is not None and searched.done():  # searched here: one read serves all
                        if head and isinstance(searched, _Begun) and not searched.ready():
                            # The scan is not done: the lexical head's first records are read
                            # meanwhile (the fusion keeps its protected places, and fills most of
                            # the rest from it).
                            fetched = store.records_by_doc([doc for doc, _ in head[: query.max_entries]])
                        semantic, params = self._semantic(searched, query)
                        fusion = Fusion(head, semantic, params)
                        asked = fusion.contenders(places, ranking.ceilings())
                        self._scores(ranking, ranked, asked, scored)
        except BaseException:
            if searched is not None:
                searched.cancel()
            raise
        if fusion is None:
            if searched is not None:
                semantic, params = self._semantic(searched, query)
            else:
                semantic = []
            fusion = Fusion(head, semantic, params)
            asked = fusion.contenders(places, None if ranking is None else ranking.ceilings())
            if ranking is not None and asked:
                # A second read of the same scopes (a store's read snapshot ends with its block).
                with store.reading_index(query.scopes) as index:
                    ranked = index if allowed is None else only_docs(index, allowed)
                    self._scores(ranking, ranked, asked, scored)
        fused = fusion.fused(scored, places) if semantic else relative(head)
        # Past the first places there is more: neighbours below them, or the rest of a lexical
        # ranking that filled its head.
        deeper = bool(semantic) or (ranking is not None and len(head) >= places)
        head_depth = places
        read = set(asked)  # the neighbours whose lexical scores were read, as it grows
        wanted = set(query.tags)
        out: list[Scored] = []
        # What is wanted is fetched first, then the rest of the fusion's places and on, only if
        # records dropped out: a stale vector (forgotten, superseded or retagged since it was
        # embedded) or a record expired and not swept yet costs a fetch, never an answer.
        start = 0
        seen: set[int] = set()
        while len(out) < query.max_entries:
            if start >= len(fused):
                if not deeper:
                    break
                head_depth = max(4 * head_depth, query.max_entries + params.protect)
                fused, deeper = self._deeper(
                    store, query, terms, allowed, semantic, params, scored, read, head_depth
                )
                continue
            # The deeper fusion's first places are those fetched already (ties aside): skipped. A
            # batch never runs past the fusion's end, where the deeper one takes over.
            stop = min(len(fused), start + (query.max_entries if start == 0 else places))
            batch = [(doc, score) for doc, score in fused[start:stop] if doc not in seen]
            missing = [doc for doc, _ in batch if doc not in fetched]
            by_doc = store.records_by_doc(missing) if missing else {}
            for doc, score in batch:
                seen.add(doc)
                record = by_doc[doc] if doc in by_doc else fetched.get(doc)
                if record is not None and query.live(record) and wanted.issubset(record.tags):
                    out.append((record, round(score, 6)))
                    if len(out) == query.max_entries:
                        break
            start = stop
        return out, search

    def _deeper(
        self,
        store: RealmStore,
        query: RecallQuery,
        terms: Sequence[str],
        allowed: Collection[int] | None,
        semantic: Sequence[tuple[int, float]],
        params: HybridParams,
        scored: dict[int, float],
        asked: set[int],
        head_depth: int,
    ) -> tuple[list[tuple[int, float]], bool]:
        """The fusion read deeper, for a recall whose places held records a fetch dropped (expired
        by the query's time and not swept yet, forgotten, superseded or retagged since embedded):
        the lexical ranking read again to ``head_depth``, and the lexical score of each neighbour
        below it that can reach a place added to ``scored`` (those read added to ``asked``). Cut
        at ``head_depth`` places while the lexical ranking goes on past them (those places are the
        whole ranking's fusion's, so each deeper fusion's first places are those fetched already,
        ties aside); whole once it does not. Also whether it goes on."""
        head: Sequence[tuple[int, float]] = ()
        more = False
        if terms:
            with store.reading_index(query.scopes) as index:
                ranked = index if allowed is None else only_docs(index, allowed)
                ranking = Ranking(ranked, terms)
                head = ranking.top(head_depth)
                more = len(head) >= head_depth
                if semantic:
                    places = head_depth if more else len(head) + len(semantic)
                    wanted = Fusion(head, semantic, params).contenders(places, ranking.ceilings())
                    rest = [doc for doc in wanted if doc not in asked]
                    asked.update(rest)
                    self._scores(ranking, ranked, rest, scored)
        if not semantic:
            return relative(head), more
        fusion = Fusion(head, semantic, params)
        return fusion.fused(scored, head_depth if more else len(head) + len(semantic)), more

    def close(self) -> None:
        self._embedding.shutdown(wait=False, cancel_futures=True)
        self._scans.close()
        self._helpers.close()


class _Searched(Protocol):
    """A recall's neighbour search under way: a future of its answer (or a :class:`_Begun`)."""

    def done(self) -> bool: ...

    def cancel(self) -> bool: ...

    def result(self) -> list[tuple[int, float]]: ...


class _Begun:
    """A search begun (neighbours.begin_nearest) seen as a done future: its answer is finished
    when asked for, on the asking thread. For a :class:`PiecesQuery`, the embedding a helper
    computed is then kept in ``provider``'s cache."""

    def __init__(
        self,
        finish: Finish,
        pieces: PiecesQuery | None = None,
        text: str = "",
        provider: HybridRecallProvider | None = None,
    ) -> None:
        self._finish = finish
        self._pieces, self._text, self._provider = pieces, text, provider

    def done(self) -> bool:
        return True

    def ready(self) -> bool:
        """Whether :meth:`result` waits for no scan (neighbours.Begun)."""
        return ready(self._finish)

    def cancel(self) -> bool:
        return False

    def result(self) -> list[tuple[int, float]]:
        found = self._finish()
        pieces = self._pieces
        if pieces is not None and pieces.answered is not None and self._provider is not None:
            self._provider._keep(self._text, pieces.answered)
        return found
