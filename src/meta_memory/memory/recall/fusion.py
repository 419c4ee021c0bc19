"""Rank fusion: merging the rankings of several recall methods (lexical, embedding) into one.

Two families, both pure functions over doc ids. :func:`rrf` (reciprocal-rank fusion) sees only positions:
a doc at 1-based rank ``r`` in ranking ``i`` earns ``weights[i] / (k + r)``. :func:`convex` sees scores: each
ranking's scores are min-max normalised to [0, 1] (against an optional known floor, such as 0 for BM25 or
-1 for cosine, instead of the list's own minimum) and the normalised scores are added with weights, a doc
absent from a ranking counting as that ranking's floor. :func:`hybrid` is the default recall fusion of a
lexical and an embedding ranking, with the method and constants the recall-quality benchmark chose on its
tuning sets (``benchmarks/recall_quality/hybrid.py``).

Order is deterministic and does not depend on the order in which the rankings are given (as long as each
keeps its weight): fused score descending (sums are exactly rounded with :func:`math.fsum`, so the addition
order cannot split a tie), then the best rank the doc has in any ranking, then the smaller doc id.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal, NamedTuple

__all__ = [
    "DEFAULT_HYBRID",
    "Ceilings",
    "Fusion",
    "HybridParams",
    "contenders",
    "convex",
    "hybrid",
    "hybrid_scored",
    "lexical_candidates",
    "monotone",
    "near_enough",
    "rrf",
]


def rrf(
    rankings: Sequence[Sequence[int]],
    *,
    k: float = 60,
    weights: Sequence[float] | None = None,
    limit: int,
) -> list[int]:
    """Reciprocal-rank fusion of best-first rankings.

    Args:
        rankings: each a best-first sequence of distinct doc ids.
        k: the rank offset; small k lets the top ranks dominate, large k flattens them.
        weights: one non-negative weight per ranking (default 1 each).
        limit: at most this many docs are returned.

    Returns:
        Up to ``limit`` distinct doc ids, best first (see the module docstring for ties).

    Raises:
        ValueError: a ranking repeats a doc, a weight is negative or their count differs from the rankings',
            ``k`` is negative or not finite, or ``limit`` is negative.
    """
    if not (math.isfinite(k) and k >= 0):
        raise ValueError(f"k must be a finite number >= 0, not {k!r}")
    ws = _weights(weights, len(rankings))
    _check_limit(limit)
    for ranking in rankings:
        _check_distinct(ranking)
    return _top(_rrf_scores(rankings, k=k, weights=ws), _best_ranks(rankings), limit)[0]


def _best_ranks(rankings: Sequence[Sequence[int]]) -> dict[int, int]:
    """Each doc's best 1-based rank in any of ``rankings`` (the tie-break after the score)."""
    best: dict[int, int] = {}
    for ranking in rankings:
        for position, doc in enumerate(ranking, start=1):
            if position < best.get(doc, position + 1):
                best[doc] = position
    return best


def _rrf_scores(rankings: Sequence[Sequence[int]], *, k: float, weights: Sequence[float]) -> dict[int, float]:
    contributions: dict[int, list[float]] = {}
    for ranking, w in zip(rankings, weights, strict=True):
        for position, doc in enumerate(ranking, start=1):
            contributions.setdefault(doc, []).append(w / (k + position))
    return {d: math.fsum(c) for d, c in contributions.items()}


def _normaliser(scores: Sequence[float], floor: float | None) -> tuple[float, float]:
    """``(lo, span)`` of a ranking's min-max normalisation: a score ``s`` becomes ``(s - lo) / span``
    clamped to [0, 1]; a span of 0 gives every doc 1 (all scores equal, or none above the floor)."""
    hi = max(scores)
    lo = min(scores) if floor is None else floor
    return lo, (hi - lo if hi > lo else 0.0)


def _normalised(score: float, lo: float, span: float) -> float:
    return 1.0 if span == 0.0 else min(1.0, max(0.0, (score - lo) / span))


class _Weighted:
    """A ranking's normalisation (:func:`_normaliser`, :func:`_normalised`) weighted by ``w``: of one
    score (:meth:`one`), of a list of them in one loop (:meth:`many`)."""

    __slots__ = ("lo", "span", "w")

    def __init__(self, lo: float, span: float, w: float) -> None:
        self.lo, self.span, self.w = lo, span, w

    def one(self, score: float) -> float:
        return self.w * _normalised(score, self.lo, self.span)

    def many(self, scores: Sequence[float]) -> list[float]:
        lo, span, w = self.lo, self.span, self.w
        if span == 0.0:
            return [w] * len(scores)
        return [w * (1.0 if v > 1.0 else 0.0 if v < 0.0 else v) for v in [(s - lo) / span for s in scores]]


def _weighted(scores: list[float], floor: float | None, w: float) -> _Weighted:
    """The normalisation of a ranking of ``scores`` (:func:`_normaliser`), weighted by ``w``; a
    ranking with no scores normalises nothing (any score it is asked for counts 0)."""
    if not scores:
        return _Weighted(0.0, 1.0, 0.0)
    return _Weighted(*_normaliser(scores, floor), w)


def _convex_scores(
    scored: Sequence[Sequence[tuple[int, float]]],
    *,
    weights: Sequence[float],
    floors: Sequence[float | None],
) -> dict[int, float]:
    contributions: dict[int, list[float]] = {}
    for ranking, w, floor in zip(scored, weights, floors, strict=True):
        if not ranking:
            continue
        lo, span = _normaliser([s for _, s in ranking], floor)
        for doc, s in ranking:
            # _normalised, inline (a call per doc was a third of the fusion's time)
            v = 1.0 if span == 0.0 else (s - lo) / span
            contributions.setdefault(doc, []).append(w * (1.0 if v > 1.0 else 0.0 if v < 0.0 else v))
    # Two terms add exactly rounded in either order; fsum keeps three or more order-free too.
    return {
        d: c[0] if len(c) == 1 else c[0] + c[1] if len(c) == 2 else math.fsum(c)
        for d, c in contributions.items()
    }


def convex(
    scored: Sequence[Sequence[tuple[int, float]]],
    *,
    weights: Sequence[float] | None = None,
    floors: Sequence[float | None] | None = None,
    limit: int,
) -> list[int]:
    """Weighted sum of min-max normalised scores (a convex combination when the weights sum to 1).

    Ranking ``i``'s score ``s`` becomes ``(s - lo) / (hi - lo)`` clamped to [0, 1], where ``hi`` is the
    ranking's best score and ``lo`` is ``floors[i]`` when given (the scoring function's theoretical minimum),
    else the ranking's worst score. A doc missing from a ranking scores 0 there. A ranking whose scores are
    all equal (``hi <= lo``) gives each of its docs 1.

    Args:
        scored: each a best-first sequence of ``(doc, score)`` with distinct docs and finite scores.
        weights: one non-negative weight per ranking (default 1 each).
        floors: one known lower bound (or None) per ranking (default None each).
        limit: at most this many docs are returned.

    Returns:
        Up to ``limit`` distinct doc ids, best first (see the module docstring for ties).

    Raises:
        ValueError: a ranking repeats a doc or holds a non-finite score, a weight is negative, a count
            differs from the rankings', or ``limit`` is negative.
    """
    ws = _weights(weights, len(scored))
    fl: Sequence[float | None] = [None] * len(scored) if floors is None else floors
    if len(fl) != len(scored):
        raise ValueError(f"{len(fl)} floors for {len(scored)} rankings")
    _check_limit(limit)
    for ranking in scored:
        _check_distinct([doc for doc, _ in ranking])
        if not all(math.isfinite(s) for _, s in ranking):
            raise ValueError("scores must be finite")
    best = _best_ranks([[doc for doc, _ in ranking] for ranking in scored])
    return _top(_convex_scores(scored, weights=ws, floors=fl), best, limit)[0]


@dataclass(frozen=True, slots=True)
class HybridParams:
    """How :func:`hybrid` fuses a lexical and an embedding ranking.

    Attributes:
        method: ``"rrf"`` (:func:`rrf`) or ``"convex"`` (:func:`convex`).
        lexical_weight: the lexical ranking's weight; the embedding ranking's is ``1 - lexical_weight``.
        k: the RRF rank offset (``rrf`` only).
        lexical_floor, semantic_floor: known score minima for ``convex`` (None: the list's own minimum).
        depth: how many docs of each ranking take part.
        protect: the first ``protect`` places keep the lexical ranking's top docs, in its order; the
            fusion orders the rest.
    """

    method: Literal["rrf", "convex"] = "convex"
    lexical_weight: float = 0.4
    k: float = 60.0
    lexical_floor: float | None = 0.0
    semantic_floor: float | None = 0.0
    depth: int = 100
    protect: int = 0


# The lexical ranking's first five places stay as they are; from the sixth on, 0.7 x (BM25 / the
# query's best BM25) + 0.3 x (cosine - the least cosine of the neighbours) / (the best - the least)
# orders the rest (the least: see near_enough). Normalising a cosine by the neighbours' own spread
# rather than by the best alone is what a static model needs: its cosines crowd together (0.80-0.89
# for every record of a notes scope), so over the best alone every neighbour looked nearly as good
# as the best. The lexical weight is the smallest of 0.5, 0.55, 0.6 and 0.7 with which every
# offered model meets the targets on every development set, tuning and held-out halves
# (benchmarks/recall_quality/README.md, docs/benchmarks.md). Without the protected head the
# embedding outvotes a strong lexical ranking on conversations, where a weak embedder finds every
# turn on the same topic about equally near.
DEFAULT_HYBRID = HybridParams(lexical_weight=0.7, semantic_floor=None, protect=5)


_doc, _cosine = operator.itemgetter(0), operator.itemgetter(1)


def near_enough(
    neighbours: Sequence[tuple[int, float]], min_similarity: float, params: HybridParams = DEFAULT_HYBRID
) -> tuple[list[tuple[int, float]], HybridParams]:
    """The neighbours a recall fuses, and the params it fuses them with: the ``params.depth``
    nearest at least ``min_similarity`` near, each cosine placed between the least of them and the
    best (``semantic_floor`` None) when none was too far, and between ``min_similarity`` and the
    best when the floor left some out (the least kept is then a real candidate, not the edge of a
    crowd: with the list's own least it would count for nothing)."""
    nearest = neighbours[: params.depth]
    # Mostly none is too far: passes in C find that out (a comprehension cost 12 us a recall); the
    # sum is NaN where a cosine is (which min() may pass over), and the comprehension drops it.
    if not nearest or (
        min(map(_cosine, nearest)) >= min_similarity and (total := sum(map(_cosine, nearest))) == total
    ):
        return list(nearest), params
    kept = [hit for hit in nearest if hit[1] >= min_similarity]
    if len(kept) < len(nearest) and params.method == "convex" and params.semantic_floor is None:
        params = replace(params, semantic_floor=min_similarity)
    return kept, params


def lexical_candidates(
    head: Sequence[tuple[int, float]], semantic: Sequence[tuple[int, float]], scored: Mapping[int, float]
) -> list[tuple[int, float]]:
    """The lexical ranking :func:`hybrid` fuses, without ranking lexically as deep as the embedding:
    the lexical ``head`` (its best ``limit + protect`` docs), then each doc of ``semantic`` below
    the head that holds a query word, with its lexical score from ``scored``, by score. A doc
    lexically below the head and not among the embedding's neighbours is left out: only its
    lexical score could place it, and the head's docs already outscore it. (On the development
    sets this fuses exactly as the lexical ranking 100 deep: benchmarks/recall_quality/hybrid.py.)"""
    have = {doc for doc, _ in head}
    below = sorted(
        ((doc, scored[doc]) for doc, _ in semantic if doc not in have and doc in scored),
        key=lambda hit: (-hit[1], hit[0]),
    )
    return [*head, *below]


def contenders(
    head: Sequence[tuple[int, float]],
    semantic: Sequence[tuple[int, float]],
    *,
    places: int,
    params: HybridParams = DEFAULT_HYBRID,
    ceilings: Mapping[int, float] | None = None,
) -> list[int]:
    """The docs of ``semantic`` below the lexical ``head`` whose lexical scores :func:`hybrid_scored`
    needs for its first ``places`` places; the others cannot reach them whatever their lexical
    score, so fused without it (as docs holding no query word) they leave those places as they
    are.

    A doc below the head scores at most its lexical bound (the head's least score, over the head's
    best) plus its own normalised cosine, each weighted; every doc of the head past the protected
    places has a known fused score, and every neighbour scores at least its weighted cosine. A doc
    whose bound is below the ``places - protect``-th best of those known scores is not needed.
    ``ceilings`` lowers a doc's bound where the ranking knows more (Ranking.score_ceilings: the
    terms it read in full); a doc whose ceiling is 0 holds no query word and is never needed. Only
    ``convex`` fusion with a known lexical floor is bounded so; otherwise every doc below the head
    is needed."""
    return Fusion(head, semantic, params).contenders(places, None if ceilings is None else Ceilings(ceilings))


class Ceilings(NamedTuple):
    """The most some docs' lexical scores can be, known without a read (Ranking.score_ceilings):
    ``known[doc] + more`` for a doc in ``known``, ``default`` for any other (``None``: nothing
    known of it, its bound is the head's least score's)."""

    known: Mapping[int, float]
    more: float = 0.0
    default: float | None = None


class Fusion:
    """One recall's fusion of its lexical ``head`` (best first) and its embedding's neighbours
    (``semantic``, best first), as the recall provider asks for it: which neighbours' lexical
    scores the first places need (:meth:`contenders`, as :func:`contenders`), then those places
    (:meth:`fused`, as :func:`hybrid_scored` over :func:`lexical_candidates`). The neighbours'
    normalisation, their cosine parts and their places are worked out once for both, and the
    fusion looks up the lexical side's docs among them instead of reading them all (a recall's
    neighbours are a hundred; each pass over them cost 5 to 10 us). The docs of each list are
    distinct and their scores finite (the ranking's and the search's), not checked again here."""

    __slots__ = ("_near", "_ordered", "_parts", "_sem", "head", "params", "semantic")

    def __init__(
        self,
        head: Sequence[tuple[int, float]],
        semantic: Sequence[tuple[int, float]],
        params: HybridParams = DEFAULT_HYBRID,
    ) -> None:
        self.head, self.semantic, self.params = head, semantic, params
        sem = semantic[: params.depth]
        self._sem = sem
        cosines = list(map(_cosine, sem))
        self._ordered = cosines == sorted(cosines, reverse=True)
        # Each neighbour's weighted, normalised cosine, and each neighbour's place in ``sem`` (built
        # in C: a comprehension over the hundred neighbours cost 5 to 8 us a recall).
        self._parts = _weighted(cosines, params.semantic_floor, 1.0 - params.lexical_weight).many(cosines)
        self._near = dict(zip(map(_doc, sem), itertools.count()))

    def contenders(self, places: int, ceilings: Ceilings | None = None) -> list[int]:
        """The neighbours below the head whose lexical scores the first ``places`` places need
        (see :func:`contenders`), fewer where ``ceilings`` bounds their lexical scores."""
        params, head, sem, parts = self.params, self.head, self._sem, self._parts
        have = {doc for doc, _ in head}
        protected = min(params.protect, places)
        if params.method != "convex" or params.lexical_floor is None or len(head) < protected or not head:
            # With the lexical list's own least as its floor, every doc's normalised score depends on
            # which docs are in it; a head shorter than the protected places leaves them to the docs
            # below it.
            return [doc for doc, _ in sem if doc not in have]
        lex = head[: params.depth]
        lexical = _weighted([s for _, s in lex], params.lexical_floor, params.lexical_weight)
        near = self._near
        known = [
            part + (parts[i] if (i := near.get(doc)) is not None else 0.0)
            for (doc, _), part in zip(
                lex[protected:], lexical.many([s for _, s in lex[protected:]]), strict=True
            )
        ]
        wanted = places - protected
        ordered = self._ordered
        # Below the head, best first (as ``semantic`` is), the cosine parts never rise: the first
        # ``wanted`` hold the best ``wanted`` of them, and once a doc's bound misses the threshold so
        # do the bounds of every doc after it. (An unsorted list is read whole.)
        if ordered:
            known += itertools.islice(
                (part for (doc, _), part in zip(sem, parts, strict=True) if doc not in have), max(wanted, 0)
            )
        else:
            known += [part for (doc, _), part in zip(sem, parts, strict=True) if doc not in have]
        # A margin for rounding: a doc too many is scored, never one too few.
        threshold = sorted(known, reverse=True)[wanted - 1] - 1e-9 if 0 < wanted <= len(known) else -math.inf
        # The most the lexical part of the fused score of a doc below the head can be: the head's least
        # score's, or less by its ceiling; a doc whose ceiling is 0 holds no query word (nothing to read).
        most = lexical.one(min(s for _, s in head))
        if not most > 0.0:
            return []
        lo, span, w = lexical.lo, lexical.span, lexical.w

        def bound(ceiling: float) -> float:  # _normalised, inline; at most ``most``
            v = 1.0 if span == 0.0 else (ceiling - lo) / span
            return min(most, w * (1.0 if v > 1.0 else 0.0 if v < 0.0 else v))

        bounded: Mapping[int, float] = ceilings.known if ceilings is not None else {}
        get, more = bounded.get, ceilings.more if ceilings is not None else 0.0
        default = ceilings.default if ceilings is not None else None
        # A doc holding no word of those the ceilings know: the default's bound, the same for each.
        otherwise = most if default is None else bound(default) if default > 0.0 else 0.0
        needed = []
        for (doc, _), part in zip(sem, parts, strict=True):
            if most + part < threshold:
                if ordered:
                    break
                continue
            if doc in have:
                continue
            own = get(doc)
            if own is None:
                top = otherwise
            elif (ceiling := own + more) > 0.0:
                v = 1.0 if span == 0.0 else (ceiling - lo) / span  # bound(ceiling), inline
                top = w * (1.0 if v > 1.0 else 0.0 if v < 0.0 else v)
                top = most if most < top else top
            else:
                top = 0.0
            if top > 0.0 and top + part >= threshold:
                needed.append(doc)
        return needed

    def fused(self, scored: Mapping[int, float], limit: int) -> list[tuple[int, float]]:
        """The fusion's first ``limit`` places, each doc with its fused score: the head, then the
        neighbours below it with a lexical score in ``scored`` (every one of them counted: the
        lexical side as deep as the neighbours), fused with the neighbours, as
        ``hybrid_scored(lexical_candidates(head, semantic, scored), semantic, ...)`` gives them,
        its depth raised to the lexical side's length."""
        params, head, sem, parts, near = self.params, self.head, self._sem, self._parts, self._near
        if (
            params.method != "convex"
            or not 0.0 <= params.lexical_weight <= 1.0
            or len(self.semantic) > len(sem)
        ):
            # (Past ``depth``, the neighbours the fusion reads depend on the lexical side's length.)
            lexical = lexical_candidates(head, self.semantic, scored)
            deep = replace(params, depth=max(params.depth, len(lexical)))
            return hybrid_scored(lexical, self.semantic, limit=limit, params=deep)
        _check_limit(limit)
        have = {doc for doc, _ in head}
        # The neighbours below the head with a lexical score, by score then doc (as tuples: no key).
        below = sorted([(-score, doc) for doc, score in scored.items() if doc in near and doc not in have])
        docs = [doc for doc, _ in head]
        docs += [doc for _, doc in below]
        lex_scores = [s for _, s in head]
        lex_scores += [-negated for negated, _ in below]
        weighted = _weighted(lex_scores, params.lexical_floor, params.lexical_weight).many(lex_scores)
        # (-fused score, best rank, doc) of each doc, sorted below: the lexical part first, then the
        # cosine's (as hybrid_scored adds them).
        rows: list[tuple[float, int, int]] = []
        add, get = rows.append, near.get
        for position, doc, part in zip(itertools.count(1), docs, weighted):
            i = get(doc)
            if i is None:
                add((-part, position, doc))
            else:
                add((-(part + parts[i]), i + 1 if i < position else position, doc))
        protected = docs[: min(params.protect, limit)]
        # (The protected docs' rows are the first: their scores, before the sort.)
        protected_scores = [-negated for negated, _, _ in rows[: len(protected)]]
        wanted = limit + len(protected)
        # A doc only the embedding ranks scores its cosine part alone, which never rises down a
        # best-first list, and its best rank is its place there: past the first ``wanted`` such
        # docs none can reach the places (an unsorted list is fused whole).
        alone = wanted if self._ordered else len(sem)
        if alone:
            ranked = set(docs)
            for position, (doc, _), part in zip(itertools.count(1), sem, parts):
                if doc not in ranked:
                    add((-part, position, doc))
                    alone -= 1
                    if not alone:
                        break
        rows.sort()
        if not protected:
            return monotone([(doc, -negated) for negated, _, doc in rows[:wanted]])
        kept = set(protected)
        merged = list(zip(protected, protected_scores, strict=True))
        merged += [(doc, -negated) for negated, _, doc in rows[:wanted] if doc not in kept]
        return monotone(merged[:limit])


def hybrid(
    lexical: Sequence[tuple[int, float]],
    semantic: Sequence[tuple[int, float]],
    *,
    limit: int,
    params: HybridParams = DEFAULT_HYBRID,
) -> list[int]:
    """Fuse a lexical ``(doc, score)`` ranking with an embedding ``(doc, cosine)`` ranking, both best first.

    Raises:
        ValueError: as :func:`rrf` or :func:`convex`, or ``params.lexical_weight`` is outside [0, 1].
    """
    return [doc for doc, _ in hybrid_scored(lexical, semantic, limit=limit, params=params)]


def hybrid_scored(
    lexical: Sequence[tuple[int, float]],
    semantic: Sequence[tuple[int, float]],
    *,
    limit: int,
    params: HybridParams = DEFAULT_HYBRID,
) -> list[tuple[int, float]]:
    """:func:`hybrid`'s order, each doc with its fused score: for ``convex``, the weighted sum of
    its normalised scores (in [0, 1] when the weights sum to 1); for ``rrf``, its reciprocal-rank
    sum over the best possible one. A doc of the protected head scores at least what any doc
    after it scores (:func:`monotone`), so the scores never rise down the list.

    Raises:
        ValueError: as :func:`hybrid`.
    """
    if not 0.0 <= params.lexical_weight <= 1.0:
        raise ValueError(f"lexical_weight must be in [0, 1], not {params.lexical_weight!r}")
    lex, sem = lexical[: params.depth], semantic[: params.depth]
    weights = (params.lexical_weight, 1.0 - params.lexical_weight)
    head = [d for d, _ in lex[: min(params.protect, limit)]]
    wanted = limit + len(head)
    ids = [[d for d, _ in lex], [d for d, _ in sem]]
    _check_limit(limit)
    for ranking in ids:
        _check_distinct(ranking)
    if params.method == "rrf":
        if not (math.isfinite(params.k) and params.k >= 0):
            raise ValueError(f"k must be a finite number >= 0, not {params.k!r}")
        raw = _rrf_scores(ids, k=params.k, weights=weights)
        top = math.fsum(w / (params.k + 1) for w in weights) or 1.0
        merged, _ = _top(raw, _best_ranks(ids), wanted)
        scores = {d: s / top for d, s in raw.items()}
    else:
        # _convex_scores and _top for two rankings, in fewer steps (this runs on every hybrid
        # recall): each doc's weighted parts added lexical first (two terms add exactly rounded in
        # either order), sorted by (score desc, best rank, doc) as tuples.
        lex_scores, sem_scores = [s for _, s in lex], [s for _, s in sem]
        if not (all(map(math.isfinite, lex_scores)) and all(map(math.isfinite, sem_scores))):
            raise ValueError("scores must be finite")
        scores = dict(
            zip(ids[0], _weighted(lex_scores, params.lexical_floor, weights[0]).many(lex_scores), strict=True)
        )
        best = {doc: position for position, doc in enumerate(ids[0], start=1)}
        cosine = _weighted(sem_scores, params.semantic_floor, weights[1])
        # A doc only the embedding ranks scores its cosine part alone, which never rises down a
        # best-first list, and its best rank is its place there: past the first ``wanted`` such
        # docs none can reach the places (an unsorted list is fused whole).
        alone = wanted if sem_scores == sorted(sem_scores, reverse=True) else len(sem)
        fused = []
        for position, (doc, s) in enumerate(sem, start=1):
            if doc in scores:
                fused.append((position, doc, s))
            elif alone:
                alone -= 1
                fused.append((position, doc, s))
        for (position, doc, _), part in zip(fused, cosine.many([s for _, _, s in fused]), strict=True):
            had = scores.get(doc)
            if had is None:
                scores[doc] = part
                best[doc] = position
            else:
                scores[doc] = had + part
                if position < best[doc]:
                    best[doc] = position
        rows = sorted([(-score, best[doc], doc) for doc, score in scores.items()])
        merged = [doc for _, _, doc in rows[:wanted]]
    if head:
        kept = set(head)
        merged = (head + [d for d in merged if d not in kept])[:limit]
    return monotone([(d, scores.get(d, 0.0)) for d in merged])


def monotone(ranked: Sequence[tuple[int, float]]) -> list[tuple[int, float]]:
    """``ranked`` with each score raised to the best score ranked after it: an order that places a
    doc above another (the fusion's protected head) vouches that it is at least as relevant."""
    out: list[tuple[int, float]] = []
    floor = -math.inf
    for doc, score in reversed(ranked):
        floor = max(floor, score)
        out.append((doc, floor))
    out.reverse()
    return out


def _weights(weights: Sequence[float] | None, n: int) -> Sequence[float]:
    if weights is None:
        return [1.0] * n
    if len(weights) != n:
        raise ValueError(f"{len(weights)} weights for {n} rankings")
    if not all(math.isfinite(w) and w >= 0 for w in weights):
        raise ValueError("weights must be finite and >= 0")
    return weights


def _check_limit(limit: int) -> None:
    if limit < 0:
        raise ValueError(f"limit must be >= 0, not {limit}")


def _check_distinct(docs: Sequence[int]) -> None:
    if len(set(docs)) == len(docs):
        return
    seen: set[int] = set()
    for doc in docs:
        if doc in seen:
            raise ValueError(f"doc {doc} appears twice in one ranking")
        seen.add(doc)


def _top(scores: dict[int, float], best: dict[int, int], limit: int) -> tuple[list[int], dict[int, float]]:
    """The ``limit`` best docs (see the module docstring for ties), and ``scores``."""
    return sorted(scores, key=lambda d: (-scores[d], best[d], d))[:limit], scores
