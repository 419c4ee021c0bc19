"""Recall-quality and latency benchmark: plain BM25 vs the upstream REFERENCE 3.4 scorer vs our ranker.

Run ``python benchmarks/recall_quality/evaluate.py`` (add ``--ablations`` for the component table, ``--sweep``
for the parameter grid on the tuning sets only). A question scores the fraction of its evidence records found
in the top k, averaged over questions (recall@5, recall@10). Tuning sets use phrasing half A; held-out sets
use half B (other wording of statements and questions), other seeds, another title style and another
structure.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))

from devset import Scope, chat_scopes, notes_scopes

from meta_memory.memory.recall import (
    DEFAULT_PARAMS,
    CollectionStats,
    InMemoryTermIndex,
    Opening,
    Posting,
    RankParams,
    TieKey,
    compose_opening,
    query_terms,
    rank,
)
from meta_memory.memory.recall.lexicon import UPSTREAM_STOPWORDS

Ranker = Callable[[Scope], Callable[[str, int], list[int]]]

# ----------------------------------------------------------------------------------------------------
# Baselines

_SPLIT = re.compile(r"[^A-Za-z0-9_-]+")


def upstream_terms(text: str) -> list[str]:
    """REFERENCE 3.4 tokenizer (with repetitions): ≥3 bytes, lowercase, 45 stopwords dropped."""
    return [t.lower() for t in _SPLIT.split(text) if len(t) >= 3 and t.lower() not in UPSTREAM_STOPWORDS]


def bm25_ranker(scope: Scope) -> Callable[[str, int], list[int]]:
    """Plain BM25 (k1=1.2, b=0.75) over title+body+tags as one field, upstream tokenizer, no stemming."""
    docs = {r.doc: Counter(upstream_terms(" ".join((r.title, r.body, *r.tags)))) for r in scope.records}
    lengths = {d: sum(c.values()) for d, c in docs.items()}
    avg = sum(lengths.values()) / len(lengths)
    postings: dict[str, list[tuple[int, int]]] = {}
    for d, counts in docs.items():
        for term, tf in counts.items():
            postings.setdefault(term, []).append((d, tf))
    n = len(docs)

    def run(query: str, k: int) -> list[int]:
        scores: dict[int, float] = {}
        for term in set(upstream_terms(query)):
            plist = postings.get(term, [])
            idf = math.log(1 + (n - len(plist) + 0.5) / (len(plist) + 0.5))
            for d, tf in plist:
                scores[d] = scores.get(d, 0.0) + idf * tf * 2.2 / (
                    tf + 1.2 * (0.25 + 0.75 * lengths[d] / avg)
                )
        return sorted(scores, key=lambda d: (-scores[d], -d))[:k]

    return run


def upstream_ranker(scope: Scope) -> Callable[[str, int], list[int]]:
    """The REFERENCE 3.4 contextual scorer (tags +5, title +4/+1, body +2/+1, keep ≥ 2; newer first)."""
    prepared = [
        (r.doc, set(upstream_terms(" ".join(r.tags))), set(upstream_terms(r.title)), r.title.lower(),
         set(upstream_terms(r.body)), r.body.lower())
        for r in scope.records
    ]  # fmt: skip

    def run(query: str, k: int) -> list[int]:
        terms = set(upstream_terms(query))
        scored = []
        for doc, tags, title_t, title, body_t, body in prepared:
            score = 0
            for t in terms:
                score += 5 if t in tags else 0
                score += 4 if t in title_t else (1 if len(t) >= 5 and t in title else 0)
                score += 2 if t in body_t else (1 if len(t) >= 5 and t in body else 0)
            if score >= 2:
                scored.append((score, doc))
        scored.sort(key=lambda sd: (-sd[0], -sd[1]))
        return [doc for _, doc in scored[:k]]

    return run


def build_index(scope: Scope) -> InMemoryTermIndex:
    index = InMemoryTermIndex()
    for r in scope.records:
        index.add(r.doc, title=r.title, body=r.body, tags=r.tags, created_at_ms=r.doc)
    return index


def ours(params: RankParams = DEFAULT_PARAMS, keep: Callable[[str], bool] = lambda t: True) -> Ranker:
    def make(scope: Scope) -> Callable[[str, int], list[int]]:
        index = build_index(scope)

        def run(query: str, k: int) -> list[int]:
            terms = [t for t in query_terms(query, None) if keep(t)]
            return [doc for doc, _ in rank(index, terms, k, params)]

        return run

    return make


# ----------------------------------------------------------------------------------------------------
# Data sets and metrics


def tuning_sets() -> dict[str, list[Scope]]:
    return {
        "chat A s1": chat_scopes(1, half=0),
        "chat A s2": chat_scopes(2, half=0),
        "notes A s1": notes_scopes(1, half=0),
    }


def heldout_sets() -> dict[str, list[Scope]]:
    return {
        "chat B s11": chat_scopes(11, half=1),
        "chat B s12": chat_scopes(12, half=1),
        "chat B s13 dated": chat_scopes(13, half=1, title_style="dated"),
        "notes B s11": notes_scopes(11, half=1),
    }


def recall_at(make: Ranker, scopes: Sequence[Scope], ks: Sequence[int] = (5, 10)) -> tuple[float, ...]:
    totals = [0.0] * len(ks)
    count = 0
    for scope in scopes:
        run = make(scope)
        for q in scope.questions:
            got = run(q.text, max(ks))
            for i, k in enumerate(ks):
                totals[i] += len(set(got[:k]) & set(q.evidence)) / len(q.evidence)
            count += 1
    return tuple(100.0 * t / count for t in totals)


def quality_table(title: str, sets: dict[str, list[Scope]], systems: dict[str, Ranker]) -> Table:
    table = Table(title=title)
    table.add_column("system")
    for name in [*sets, "mean"]:
        table.add_column(f"{name}\nR@5 / R@10", justify="right")
    for sys_name, make in systems.items():
        cells = []
        r5s, r10s = [], []
        for scopes in sets.values():
            r5, r10 = recall_at(make, scopes)
            r5s.append(r5)
            r10s.append(r10)
            cells.append(f"{r5:.1f} / {r10:.1f}")
        cells.append(f"{statistics.mean(r5s):.1f} / {statistics.mean(r10s):.1f}")
        table.add_row(sys_name, *cells)
    return table


def main_systems() -> dict[str, Ranker]:
    return {"plain BM25": bm25_ranker, "upstream 3.4": upstream_ranker, "ours": ours()}


def ablation_systems() -> dict[str, Ranker]:
    base = dataclasses.replace(DEFAULT_PARAMS, neighbor_weight=0.0)
    untuned = dataclasses.replace(base, k1=1.2, b=0.75, title_weight=1.0, cue_weight=0.3)

    def words_only(t: str) -> bool:
        return not t.startswith(("~", "#"))

    return {
        "analyzer, k1=1.2 b=0.75, fields 1/1/2": ours(untuned, words_only),
        "+ concepts": ours(untuned, lambda t: not t.startswith("#")),
        "+ when cue": ours(untuned),
        "+ tuned k1/b/title weight (= ours)": ours(base),
        "ours + neighbors 0.1": ours(dataclasses.replace(base, neighbor_weight=0.1)),
        "ours + neighbors 0.2": ours(dataclasses.replace(base, neighbor_weight=0.2)),
        "ours, no concepts": ours(DEFAULT_PARAMS, lambda t: not t.startswith("~")),
        "ours, no when cue": ours(DEFAULT_PARAMS, lambda t: not t.startswith("#")),
        "ours, no budget cap": ours(dataclasses.replace(DEFAULT_PARAMS, postings_budget=10**9)),
    }


def sweep(console: Console) -> None:
    sets = tuning_sets()
    grid: list[tuple[str, RankParams]] = []
    for k1 in (0.9, 1.2, 1.6):
        for b in (0.3, 0.5, 0.75):
            grid.append((f"k1={k1} b={b}", dataclasses.replace(DEFAULT_PARAMS, k1=k1, b=b)))
    for tw in (0.5, 1.0, 2.0, 3.0):
        grid.append((f"title_weight={tw}", dataclasses.replace(DEFAULT_PARAMS, title_weight=tw)))
    for cw in (0.25, 0.5, 0.75, 1.0):
        grid.append((f"concept_weight={cw}", dataclasses.replace(DEFAULT_PARAMS, concept_weight=cw)))
    for qw in (0.0, 0.15, 0.3, 0.6, 1.0):
        grid.append((f"cue_weight={qw}", dataclasses.replace(DEFAULT_PARAMS, cue_weight=qw)))
    for nw in (0.0, 0.1, 0.2, 0.3, 0.5):
        grid.append((f"neighbor_weight={nw}", dataclasses.replace(DEFAULT_PARAMS, neighbor_weight=nw)))
    console.print(quality_table("Sweep (tuning sets only)", sets, {name: ours(p) for name, p in grid}))


# ----------------------------------------------------------------------------------------------------
# Latency


def latency(console: Console, target: int = 10_000) -> None:
    index = InMemoryTermIndex()
    questions: list[str] = []
    seed = 100
    while len(index) < target:
        for scope in chat_scopes(seed, half=seed % 2):
            for r in scope.records:
                if len(index) >= target:
                    break
                doc = len(index) + 1
                index.add(doc, title=r.title, body=r.body, tags=r.tags, created_at_ms=doc)
            questions.extend(q.text for q in scope.questions)
        seed += 1
    for notes in notes_scopes(seed, half=0):
        questions.extend(q.text for q in notes.questions)
    table = Table(title=f"Per-query cost, one scope of {len(index):,} records (InMemoryTermIndex)")
    for col in ("stage (µs unless count)", "queries", "median", "p90", "p99", "max"):
        table.add_column(col, justify="right")
    analyzed = [query_terms(q, None) for q in questions]
    rounds: dict[str, list[float]] = {"query_terms": [], "rank (limit 10)": [], "total": []}
    for _ in range(5):
        for q, terms in zip(questions, analyzed, strict=True):
            t0 = time.perf_counter()
            terms = query_terms(q, None)
            t1 = time.perf_counter()
            rank(index, terms, 10)
            t2 = time.perf_counter()
            rounds["query_terms"].append((t1 - t0) * 1e6)
            rounds["rank (limit 10)"].append((t2 - t1) * 1e6)
            rounds["total"].append((t2 - t0) * 1e6)
    counter = _CountingIndex(index)
    for terms in analyzed:
        counter.begin()
        rank(counter, terms, 10)
    rounds["postings read in full (count)"] = [float(n) for n in counter.full]
    rounds["point lookups (terms x docs)"] = [float(n) for n in counter.restricted]
    for name, samples in rounds.items():
        samples.sort()
        n = len(samples)
        table.add_row(
            name, str(n), f"{samples[n // 2]:.0f}", f"{samples[int(n * 0.9)]:.0f}",
            f"{samples[int(n * 0.99)]:.0f}", f"{samples[-1]:.0f}",
        )  # fmt: skip
    console.print(table)


class _CountingIndex:
    """Wraps an index to count the posting work each query causes: a load-independent cost measure."""

    def __init__(self, inner: InMemoryTermIndex) -> None:
        self.inner = inner
        self.full: list[int] = []
        self.restricted: list[int] = []

    def begin(self) -> None:
        self.full.append(0)
        self.restricted.append(0)

    def collection_stats(self) -> CollectionStats:
        return self.inner.collection_stats()

    def document_frequencies(self, terms: Collection[str]) -> Mapping[str, int]:
        return self.inner.document_frequencies(terms)

    def opening(self, terms: Collection[str], prefetch: Collection[str], rare_floor: int) -> Opening:
        return compose_opening(self, terms, prefetch, rare_floor)  # its postings are counted too

    def postings(self, terms: Collection[str]) -> Mapping[str, Sequence[Posting]]:
        out = self.inner.postings(terms)
        self.full[-1] += sum(len(p) for p in out.values())
        return out

    def postings_for_docs(
        self, terms: Collection[str], docs: Collection[int]
    ) -> Mapping[str, Sequence[Posting]]:
        self.restricted[-1] += len(terms) * len(docs)
        return self.inner.postings_for_docs(terms, docs)

    def neighbors(self, docs: Collection[int]) -> Mapping[int, Sequence[int]]:
        return self.inner.neighbors(docs)

    def tie_keys(self, docs: Collection[int]) -> Mapping[int, TieKey]:
        return self.inner.tie_keys(docs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ablations", action="store_true", help="also print the component ablation table")
    parser.add_argument("--sweep", action="store_true", help="print the parameter sweep on the tuning sets")
    parser.add_argument("--no-latency", action="store_true", help="skip the 10,000-record latency run")
    args = parser.parse_args()
    console = Console(width=200)
    if args.sweep:
        sweep(console)
        return
    console.print(quality_table("Recall, tuning sets", tuning_sets(), main_systems()))
    console.print(quality_table("Recall, held-out sets", heldout_sets(), main_systems()))
    if args.ablations:
        console.print(quality_table("Ablations, tuning sets", tuning_sets(), ablation_systems()))
        console.print(quality_table("Ablations, held-out sets", heldout_sets(), ablation_systems()))
    if not args.no_latency:
        latency(console)


if __name__ == "__main__":
    main()
