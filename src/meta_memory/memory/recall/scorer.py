"""Contextual-recall ranking: field-weighted BM25 with pruning, paraphrase concepts, cues and neighbor
smoothing.

:func:`rank` scores the documents of one scope (a :class:`~meta_memory.memory.recall.index.TermIndex`) for the
analyzed query terms of :func:`~meta_memory.memory.recall.analyzer.query_terms`. Only documents that contain
at least one query word or concept are returned; ``#`` cue terms (such as "when") only re-rank those. To stay
cheap on large scopes, full posting lists are read only for the rarer terms; terms that occur in a large
fraction of the scope (speaker names, "#when") are scored on the candidates those produce, through point
lookups. A candidate's creation-order neighbors then borrow part of the best adjacent score, because in a
dialogue the answer often sits in the turn right after the one that names the topic. Ties break by
``updated_at_ms`` desc, ``created_at_ms`` desc, then record id, so results are deterministic.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from meta_memory.memory.recall.analyzer import CONCEPT_PREFIX, CUE_PREFIX
from meta_memory.memory.recall.fusion import Ceilings
from meta_memory.memory.recall.index import Posting, TermIndex

__all__ = ["DEFAULT_PARAMS", "RankParams", "Ranking", "rank"]


@dataclass(frozen=True, slots=True)
class RankParams:
    """Tunable constants of :func:`rank`; the defaults come from the recall-quality benchmarks.

    Attributes:
        k1: BM25 term-frequency saturation.
        b: BM25 length normalisation.
        title_weight, body_weight, tags_weight: BM25F field weights on term frequency (all > 0).
        concept_weight: query weight of a ``~concept`` (paraphrase) term relative to a word.
        cue_weight: query weight of a ``#cue`` term such as "#when".
        neighbor_weight: share of the best adjacent document's score a matching document receives.
        neighbor_pool: how many top documents lend their score to their neighbors.
        rare_floor: posting lists this short are read in one batch up front.
        common_fraction, common_floor: a term with df > max(common_floor, common_fraction × N), such as a
            speaker name, is never read in full once candidates exist; it only scores them.
        postings_budget: a cap on full posting reads per query; past it, remaining terms only score
            the candidates found so far (the one place where the ranking becomes approximate).
        candidate_cap: before the remaining (common) terms score the candidates, at most this many
            of the best candidates are kept; only a query made of very common words reaches it, and
            point lookups on thousands of candidates were the latency tail.
    """

    k1: float = 0.9
    b: float = 0.3
    title_weight: float = 3.0
    body_weight: float = 1.0
    tags_weight: float = 2.0
    concept_weight: float = 0.5
    cue_weight: float = 0.6
    neighbor_weight: float = 0.0
    neighbor_pool: int = 30
    rare_floor: int = 64
    common_fraction: float = 0.05
    common_floor: int = 256
    postings_budget: int = 20_000
    candidate_cap: int = 1024


DEFAULT_PARAMS = RankParams()


def _query_weight(term: str, params: RankParams) -> float:
    if term.startswith(CONCEPT_PREFIX):
        return params.concept_weight
    if term.startswith(CUE_PREFIX):
        return params.cue_weight
    return 1.0


def _term_weights(params: RankParams, doc_count: int, dfs: Mapping[str, int]) -> dict[str, float]:
    """Each term's query weight times its inverse document frequency (BM25's)."""
    return {
        term: _query_weight(term, params) * math.log(1.0 + (doc_count - df + 0.5) / (df + 0.5))
        for term, df in dfs.items()
    }


class _Scorer:
    """Accumulates BM25F contributions; the inner loop keeps its constants in locals for speed."""

    def __init__(
        self,
        params: RankParams,
        doc_count: int,
        avg_length: float,
        dfs: Mapping[str, int],
        weights: Mapping[str, float] | None = None,
    ) -> None:
        self.params = params
        self.doc_count = doc_count
        # (``weights``: the terms' weights worked out before, under the same statistics: Ranking._scorer)
        self.weights = _term_weights(params, doc_count, dfs) if weights is None else weights
        # Every doc in here holds a query word or concept: cues never add a doc on their own.
        self.scores: dict[int, float] = {}

    def add(self, term: str, postings: Iterable[Posting], avg_length: float) -> None:
        p = self.params
        weight = self.weights[term]
        k1p1 = p.k1 + 1.0
        base = p.k1 * (1.0 - p.b)
        per_len = p.k1 * p.b / avg_length
        wt, wb, wg = p.title_weight, p.body_weight, p.tags_weight
        scores = self.scores
        get = scores.get
        for doc, tf_title, tf_body, tf_tags, length in postings:
            tf = wt * tf_title + wb * tf_body + wg * tf_tags
            scores[doc] = get(doc, 0.0) + weight * tf * k1p1 / (tf + base + per_len * length)


def rank(
    index: TermIndex, terms: Sequence[str], limit: int, params: RankParams = DEFAULT_PARAMS
) -> list[tuple[int, float]]:
    """Rank one scope's documents for analyzed query ``terms``: up to ``limit`` (doc, score), best first.

    Args:
        index: the term index of one scope.
        terms: output of :func:`~meta_memory.memory.recall.analyzer.query_terms` (duplicates are ignored).
        limit: maximum number of results.
        params: ranking constants.

    Returns:
        Documents containing at least one query word or concept, by score desc, then ``updated_at_ms`` desc,
        ``created_at_ms`` desc and record id asc. Scores are positive and rounded to 1e-9.
    """
    if limit <= 0:
        return []
    return Ranking(index, terms, params).top(limit)


class Ranking:
    """One query's lexical ranking of one index: its best documents (:meth:`top`, as :func:`rank`)
    and the exact score of any other documents named (:meth:`scores_of`), under the same collection
    statistics. Hybrid recall ranks the lexical head this way and scores only the documents the
    embedding finds below it, instead of ranking lexically as deep as the embedding."""

    def __init__(self, index: TermIndex, terms: Sequence[str], params: RankParams = DEFAULT_PARAMS) -> None:
        self.params = params
        self._index = index
        self._state: tuple[int, float, dict[str, int], Mapping[str, Sequence[Posting]]] | None = None
        # After top(): each doc's score over the terms whose posting lists it read in full, and
        # those terms (scores_of reads only the others' postings).
        self._partial: tuple[Mapping[int, float], frozenset[str]] | None = None
        # score_ceilings' bound for the terms not read in full: for a doc holding a word read in
        # full, and for one holding none (worked out at its first call after top()).
        self._ceiling_parts: Ceilings | None = None
        self._weights: Mapping[str, float] | None = None  # the terms' (_Scorer.weights), once worked out
        unique = sorted(set(terms))
        if not unique:
            return
        opening = index.opening(
            unique, [t for t in unique if not t.startswith(CUE_PREFIX)], params.rare_floor
        )
        doc_count, total_length = opening.stats
        if doc_count <= 0:
            return
        dfs = {t: df for t, df in opening.dfs.items() if df > 0}
        if not any(not t.startswith(CUE_PREFIX) for t in dfs):
            return
        self._state = (doc_count, max(total_length / doc_count, 1.0), dfs, opening.postings)

    def _scorer(self) -> _Scorer:
        """A scorer under the ranking's statistics, the terms' weights worked out once (top, the
        ceilings and scores_of each score with one)."""
        assert self._state is not None
        doc_count, avg_length, dfs, _ = self._state
        scorer = _Scorer(self.params, doc_count, avg_length, dfs, self._weights)
        self._weights = scorer.weights
        return scorer

    def top(self, limit: int) -> list[tuple[int, float]]:
        """Up to ``limit`` (doc, score), best first (see :func:`rank`)."""
        if self._state is None or limit <= 0:
            return []
        _, avg_length, dfs, rare = self._state
        params, index = self.params, self._index
        scorer = self._scorer()
        pool = max(limit, params.neighbor_pool if params.neighbor_weight > 0.0 else 0)
        partial = _score_maxscore(scorer, index, dfs, pool, avg_length, rare)
        final = scorer.scores
        if params.neighbor_weight > 0.0:
            final = _smooth(scorer, index, sorted(dfs), avg_length)
        elif self._partial is None:
            self._partial = partial
        return _top(index, final, limit)

    def score_ceilings(self, docs: Collection[int]) -> dict[int, float]:
        """For each of ``docs``, the most :meth:`scores_of` can give it, known without a read: after
        :meth:`top`, its sum over the terms read in full plus the most the others can add (BM25's
        bound for each, its weight x (k1 + 1)), 1e-9 more for the rounding; 0 for a doc that holds
        no word read in full when no other word is left (it scores nothing). Empty before
        :meth:`top`, and with neighbor smoothing (not bounded so)."""
        ceilings = self.ceilings()
        if ceilings is None:
            return {}
        get, more = ceilings.known.get, ceilings.more
        alone = 0.0 if ceilings.default is None else ceilings.default
        return {doc: own + more if (own := get(doc)) is not None else alone for doc in docs}

    def ceilings(self) -> Ceilings | None:
        """:meth:`score_ceilings` for any doc, as the fusion reads it (fusion.Ceilings): the sums
        over the terms read in full, the most the others can add, and the ceiling of a doc
        holding no word read in full; ``None`` before :meth:`top` and with neighbor smoothing."""
        if self._state is None or self._partial is None:
            return None
        partial, full = self._partial
        if self._ceiling_parts is None:
            dfs = self._state[2]
            weights = self._scorer().weights
            others = [t for t in dfs if t not in full]
            more = sum(weights[t] for t in others) * (self.params.k1 + 1.0) + 1e-9
            # Cues add only to a doc that holds a word: with no word left to read, a doc holding
            # none of those read scores nothing.
            alone = more if any(not t.startswith(CUE_PREFIX) for t in others) else 0.0
            self._ceiling_parts = Ceilings(partial, more, alone)
        return self._ceiling_parts

    def scores_of(self, docs: Collection[int], index: TermIndex | None = None) -> dict[int, float]:
        """The score of each of ``docs`` that holds a query word or concept (rounded to 1e-9, as
        :meth:`top`'s), read from ``index`` (default: the one ranked; a store whose reads end with
        a snapshot passes the same scopes' index again). Neighbor smoothing is not applied."""
        if self._state is None or not docs:
            return {}
        _, avg_length, dfs, rare = self._state
        wanted = set(docs)
        scorer = self._scorer()
        read: dict[str, Sequence[Posting]] = {}
        matched: set[int] = set()
        if self._partial is not None:  # top() read some terms in full: their sums are kept
            partial, full = self._partial
            scorer.scores = {doc: partial[doc] for doc in wanted if doc in partial}
            matched.update(scorer.scores)  # each holds a word read in full (cues never are)
            others = [t for t in dfs if t not in full]
        else:
            read.update((t, [p for p in rows if p[0] in wanted]) for t, rows in rare.items())
            others = [t for t in dfs if t not in rare]
        if others:
            read.update((self._index if index is None else index).postings_for_docs(others, wanted))
        for term, postings in sorted(read.items()):
            if term not in dfs or not postings:
                continue
            scorer.add(term, postings, avg_length)
            if not term.startswith(CUE_PREFIX):
                matched.update(p[0] for p in postings)
        return {doc: round(scorer.scores[doc], 9) for doc in matched}


def _score_maxscore(
    scorer: _Scorer,
    index: TermIndex,
    dfs: Mapping[str, int],
    pool: int,
    avg_length: float,
    rare_postings: Mapping[str, Sequence[Posting]],
) -> tuple[Mapping[int, float], frozenset[str]]:
    """Score exactly the docs that can reach the top ``pool``, reading long posting lists sparingly.

    MaxScore: terms go from the highest score bound (rarest) down. A term's posting list is read in full only
    while a document holding nothing but the terms not read yet could still beat the ``pool``-th best score;
    after that the remaining terms (and always the cues) are looked up for the surviving candidates only.
    Returns each doc's score over the terms read in full, and those terms: the scorer's scores
    from then on are another mapping, unless every term was read in full (then neighbor
    smoothing, which adds to them, changes it too).
    """
    params = scorer.params
    bound = {t: w * (params.k1 + 1.0) for t, w in scorer.weights.items()}
    words = sorted((t for t in dfs if not t.startswith(CUE_PREFIX)), key=lambda t: (-bound[t], t))
    rest = sum(bound.values())
    # Short posting lists cost less than the round trips MaxScore would save: read them in one batch.
    first = [t for t in words if dfs[t] <= params.rare_floor]
    read = rare_postings  # the opening read these: every word with 0 < df <= rare_floor
    if not first:  # no short list: the rarest word is read alone
        first = words[:1]
        read = index.postings(first)
    for term, postings in sorted(read.items()):
        scorer.add(term, postings, avg_length)
    common = max(params.common_floor, params.common_fraction * scorer.doc_count)
    rest -= sum(bound[t] for t in first)
    pending = [t for t in words if t not in first]
    budget = params.postings_budget
    fetched = sum(dfs[t] for t in first)
    while pending:
        threshold = _kth(scorer.scores, pool)
        term = pending[0]
        if threshold > rest or (scorer.scores and (dfs[term] > common or fetched + dfs[term] > budget)):
            break
        for t, postings in index.postings([term]).items():
            scorer.add(t, postings, avg_length)
        fetched += dfs[term]
        rest -= bound[term]
        pending.pop(0)
    partial, full = scorer.scores, frozenset(t for t in words if t not in pending)
    restricted = pending + sorted(t for t in dfs if t.startswith(CUE_PREFIX))
    if not restricted:  # every term read in full: the scores are final (smoothing aside)
        return partial, full
    threshold = _kth(scorer.scores, pool)
    if threshold > 0.0:
        # A dropped doc cannot reach the pool; forgetting it lets neighbor smoothing re-score it in full.
        scorer.scores = {d: s for d, s in scorer.scores.items() if s + rest >= threshold}
    if len(scorer.scores) > params.candidate_cap:
        best = heapq.nlargest(
            params.candidate_cap, scorer.scores.items(), key=lambda item: (item[1], -item[0])
        )
        scorer.scores = dict(best)
    if scorer.scores is partial:  # fewer docs than the pool: a small copy
        scorer.scores = dict(partial)
    if scorer.scores:
        _add_restricted(scorer, index, restricted, set(scorer.scores), avg_length)
    return partial, full


def _kth(scores: Mapping[int, float], k: int) -> float:
    if len(scores) < k:
        return 0.0
    return heapq.nlargest(k, scores.values())[-1]


def _add_restricted(
    scorer: _Scorer, index: TermIndex, terms: Sequence[str], docs: set[int], avg_length: float
) -> set[int]:
    """Score ``terms`` on ``docs`` only; return the docs holding a query word or concept (not just a cue)."""
    matched: set[int] = set()
    for term, postings in sorted(index.postings_for_docs(terms, docs).items()):
        scorer.add(term, postings, avg_length)
        if not term.startswith(CUE_PREFIX):
            matched.update(p[0] for p in postings)  # p.doc; rows may be plain tuples
    return matched


def _smooth(scorer: _Scorer, index: TermIndex, terms: Sequence[str], avg_length: float) -> dict[int, float]:
    params = scorer.params
    own = scorer.scores
    pool = heapq.nlargest(params.neighbor_pool, own.items(), key=lambda item: (item[1], item[0]))
    adjacent = index.neighbors([doc for doc, _ in pool])
    fresh = {n for ns in adjacent.values() for n in ns if n not in own}
    if fresh:
        matched = _add_restricted(scorer, index, terms, fresh, avg_length)
        for doc in fresh - matched:
            # Contextual recall returns only docs that hold a query word; a cue-only neighbor is dropped.
            own.pop(doc, None)
    bonus: dict[int, float] = {}
    for doc, ns in adjacent.items():
        for n in ns:
            # Symmetric: the strong doc lends to its neighbor and borrows from it.
            bonus[n] = max(bonus.get(n, 0.0), own[doc])
            bonus[doc] = max(bonus.get(doc, 0.0), own.get(n, 0.0))
    alpha = params.neighbor_weight
    return {doc: score + alpha * bonus.get(doc, 0.0) for doc, score in own.items()}


def _top(index: TermIndex, scores: Mapping[int, float], limit: int) -> list[tuple[int, float]]:
    if not scores:
        return []
    best = heapq.nlargest(limit, scores.values())
    # Scores are compared after rounding, so summation-order noise cannot reorder equal documents; every doc
    # tied with the last kept score competes on the tie key, so keys are fetched for all of them.
    floor = round(best[-1], 9)
    rounded = {doc: round(score, 9) for doc, score in scores.items() if score >= best[-1] - 1e-6}
    pool = [doc for doc, r in rounded.items() if r >= floor]
    keys = index.tie_keys(pool)
    pool.sort(key=lambda d: (-rounded[d], -keys[d].updated_at_ms, -keys[d].created_at_ms, keys[d].record_id))
    return [(doc, rounded[doc]) for doc in pool[:limit]]
