"""Hybrid recall benchmark: our lexical ranker vs embedding nearest neighbours vs their fusion.

Run ``python benchmarks/recall_quality/hybrid.py`` (``--float32`` to rank the model's own vectors instead of
the int8 form a store keeps, ``--quick`` for a smoke run on one seed per set and two
conversations per chat seed, ``--sweep`` for the record-text choice and the fusion grid on the tuning sets
only, for every packaged model; ``--model`` to pick one, ``--runtime`` its runtime). Every system ranks the same questions in the same run: ``ours`` is the lexical ranker of
``evaluate.py``; ``embedding`` is exact cosine nearest neighbours over the scope's records (the model of
``meta_memory.memory.embedding.load_embedder()``, records through ``embed_documents``, questions through
``embed_queries``); the ``hybrid`` rows fuse the two rankings' top ``depth`` docs with
``meta_memory.memory.recall.fusion``. ``hybrid (default)`` is ``fusion.DEFAULT_HYBRID`` run as the recall
provider runs it (:func:`as_recall`: the lexical head, the neighbours above the similarity floor, and
the neighbours' lexical scores), the grid point of ``--sweep`` with the best objective (see
:func:`objective`) averaged over the models; ``hybrid (default), lexical 100 deep`` is the same fusion
over the whole lexical ranking, as the grid compares it.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conversations import conversation_scopes
from devset import Record, Scope, chat_scopes, notes_scopes
from evaluate import build_index
from paraphrase import paraphrase_scopes

from meta_memory.memory.embedding import DEFAULT_MODEL, MODELS, load_embedder
from meta_memory.memory.recall import query_terms
from meta_memory.memory.recall.fusion import (
    DEFAULT_HYBRID,
    HybridParams,
    contenders,
    hybrid,
    lexical_candidates,
    near_enough,
)
from meta_memory.memory.recall.neighbours import MIN_SIMILARITY, decode_vectors, vector_bytes
from meta_memory.memory.recall.scorer import Ranking

STORED = True  # rank record vectors as a store keeps them (``--float32``: as the model gave them)
DEPTH = 100  # docs of each ranking kept for fusion (and the deepest any grid point reads)
KS = (5, 10)


@dataclass(frozen=True)
class Judged:
    """One question with both rankings (best first, ``DEPTH`` deep) and its evidence."""

    lexical: list[tuple[int, float]]
    semantic: list[tuple[int, float]]
    evidence: frozenset[int]
    category: str
    scored: dict[int, float]  # the lexical score of each doc of ``semantic`` that holds a query word


System = Callable[[Judged, int], list[int]]
Sets = dict[str, list[Scope]]


def record_text(record: Record, style: str = "title: body") -> str:
    """The text a record is embedded as; ``--sweep`` compares the styles on the tuning sets."""
    if style == "body":
        return record.body
    text = f"{record.title}: {record.body}"
    if style == "title: body (tags)" and record.tags:
        text += f" ({', '.join(record.tags)})"
    return text


RECORD_TEXT = "title: body (tags)"


RUNTIME = "auto"


def load(model: str | None) -> Any:
    return load_embedder(model or DEFAULT_MODEL, parallel=os.cpu_count() or 1, runtime=RUNTIME)  # type: ignore[arg-type]


@dataclass
class Throughput:
    records: int = 0
    record_s: float = 0.0
    queries: int = 0
    query_s: float = 0.0


def prepare(
    sets: Sets, embedder: Any, meter: Throughput, style: str = RECORD_TEXT
) -> dict[str, list[Judged]]:
    """Rank every question of every set lexically and by embedding, once."""
    out: dict[str, list[Judged]] = {}
    for name, scopes in sets.items():
        judged: list[Judged] = []
        for scope in scopes:
            index = build_index(scope)
            docs = np.array([r.doc for r in scope.records])
            t0 = time.perf_counter()
            matrix = embedder.embed_documents([record_text(r, style) for r in scope.records])
            t1 = time.perf_counter()
            queries = embedder.embed_queries([q.text for q in scope.questions])
            t2 = time.perf_counter()
            if STORED:  # as a store keeps them: int8 with a scale per vector, decoded for ranking
                matrix = decode_vectors([vector_bytes(v) for v in matrix], matrix.shape[1])
            meter.records += len(scope.records)
            meter.record_s += t1 - t0
            meter.queries += len(scope.questions)
            meter.query_s += t2 - t1
            sims = queries @ matrix.T
            top = np.argsort(-sims, axis=1, kind="stable")[:, :DEPTH]
            for i, q in enumerate(scope.questions):
                ranking = Ranking(index, query_terms(q.text, None))
                lexical = ranking.top(DEPTH)
                semantic = [(int(docs[j]), float(sims[i, j])) for j in top[i]]
                scored = ranking.scores_of([doc for doc, _ in semantic])
                judged.append(Judged(lexical, semantic, frozenset(q.evidence), q.category, scored))
        out[name] = judged
    return out


def recall(system: System, judged: Sequence[Judged]) -> tuple[float, float]:
    totals = [0.0, 0.0]
    for j in judged:
        got = system(j, max(KS))
        for i, k in enumerate(KS):
            totals[i] += len(j.evidence.intersection(got[:k])) / len(j.evidence)
    return 100.0 * totals[0] / len(judged), 100.0 * totals[1] / len(judged)


def lexical(j: Judged, k: int) -> list[int]:
    return [d for d, _ in j.lexical[:k]]


def semantic(j: Judged, k: int) -> list[int]:
    return [d for d, _ in j.semantic[:k]]


def fused(params: HybridParams) -> System:
    return lambda j, k: hybrid(j.lexical, j.semantic, limit=k, params=params)


def as_recall(j: Judged, k: int) -> list[int]:
    """``DEFAULT_HYBRID`` as the recall provider runs it (recall/hybrid.py): the lexical ranking
    to ``k`` only (at least one past the protected head), the neighbours at least MIN_SIMILARITY
    near, ``depth`` of them, and
    the lexical score of each neighbour below the lexical head that can reach the first ``k``
    places (fusion.contenders), every one of them fused (the lexical side as deep as the
    neighbours)."""
    semantic, params = near_enough(j.semantic, MIN_SIMILARITY)
    if not semantic:
        return [doc for doc, _ in j.lexical[:k]]
    places = max(k, params.protect + 1)
    head = j.lexical[:places]
    needed = contenders(head, semantic, places=places, params=params)
    lexical = lexical_candidates(head, semantic, {doc: j.scored[doc] for doc in needed if doc in j.scored})
    return hybrid(
        lexical, semantic, limit=k, params=dataclasses.replace(params, depth=max(params.depth, len(lexical)))
    )


def candidates() -> dict[str, HybridParams]:
    """The fusions reported beside the default; their constants come from ``--sweep`` on the tuning sets."""
    return {
        "hybrid RRF k=60, 1:1": HybridParams("rrf", 0.5, k=60),
        "hybrid RRF k=10, lexical 0.6": HybridParams("rrf", 0.6, k=10),
        "hybrid convex, list min-max, lexical 0.5": HybridParams(
            "convex", 0.5, lexical_floor=None, semantic_floor=None
        ),
        "hybrid convex, floors 0, lexical 0.4, no protected head": HybridParams(
            "convex", 0.4, lexical_floor=0.0, semantic_floor=0.0
        ),
        "hybrid convex, floors 0, lexical 0.4, protect 4": HybridParams(
            "convex", 0.4, lexical_floor=0.0, semantic_floor=0.0, protect=4
        ),
        "hybrid convex, floors 0, lexical 0.4, protect 5 (the default to e85f6cd)": HybridParams(
            "convex", 0.4, lexical_floor=0.0, semantic_floor=0.0, protect=5
        ),
    }


def systems() -> dict[str, System]:
    out: dict[str, System] = {"ours (lexical)": lexical, "embedding": semantic}
    out.update({name: fused(p) for name, p in candidates().items()})
    out["hybrid (default), lexical 100 deep"] = fused(DEFAULT_HYBRID)
    out["hybrid (default)"] = as_recall
    return out


def table(
    title: str, judged: dict[str, list[Judged]], rows: dict[str, System]
) -> tuple[Table, dict[str, Any]]:
    t = Table(title=title)
    t.add_column("system")
    for name in [*judged, "mean"]:
        t.add_column(f"{name}\nR@5 / R@10", justify="right")
    results: dict[str, Any] = {}
    for row, system in rows.items():
        per = {name: recall(system, js) for name, js in judged.items()}
        mean = (statistics.mean(v[0] for v in per.values()), statistics.mean(v[1] for v in per.values()))
        results[row] = {**per, "mean": mean}
        t.add_row(row, *(f"{r5:.1f} / {r10:.1f}" for r5, r10 in [*per.values(), mean]))
    return t, results


def targets(console: Console, label: str, results: dict[str, Any]) -> None:
    """The issue's targets, hybrid (default) against lexical on every set: R@5 no lower than
    lexical's minus 1 point, R@10 never below lexical's and at least +3 points on average."""
    base, hyb = results["ours (lexical)"], results["hybrid (default)"]
    sets = [n for n in base if n != "mean"]
    gain = statistics.mean(hyb[n][1] - base[n][1] for n in sets)
    worst5 = min(hyb[n][0] - base[n][0] for n in sets)
    worst10 = min(hyb[n][1] - base[n][1] for n in sets)
    per_set = ", ".join(f"{n} {hyb[n][0] - base[n][0]:+.1f} / {hyb[n][1] - base[n][1]:+.1f}" for n in sets)
    console.print(
        f"{label}: hybrid (default) − lexical, R@5 / R@10 per set: {per_set}\n"
        f"  mean R@10 {gain:+.1f} (target ≥ +3: {'met' if gain >= 3 else 'NOT met'}); "
        f"worst R@10 {worst10:+.1f} (target ≥ 0: {'met' if worst10 >= 0 else 'NOT met'}); "
        f"worst R@5 {worst5:+.1f} (target ≥ −1: {'met' if worst5 >= -1 else 'NOT met'})"
    )


def by_category(console: Console, judged: dict[str, list[Judged]]) -> None:
    t = Table(title="Paraphrase sets by kind of paraphrase, R@5 / R@10")
    t.add_column("set / kind")
    t.add_column("questions", justify="right")
    rows = {"ours (lexical)": lexical, "embedding": semantic, "hybrid (default)": as_recall}
    for row in rows:
        t.add_column(row, justify="right")
    for name, js in judged.items():
        if not name.startswith("para"):
            continue
        for kind in sorted({j.category for j in js}):
            part = [j for j in js if j.category == kind]
            cells = [f"{r5:.1f} / {r10:.1f}" for r5, r10 in (recall(s, part) for s in rows.values())]
            t.add_row(f"{name} / {kind}", str(len(part)), *cells)
    console.print(t)


# ----------------------------------------------------------------------------------------------------
# Data sets


def tuning_sets(quick: bool) -> Sets:
    conversations = 2 if quick else 5
    sets = {
        "chat A s1": chat_scopes(1, half=0, conversations=conversations),
        "chat A s2": chat_scopes(2, half=0, conversations=conversations),
        "notes A s1": notes_scopes(1, half=0),
        "para A s1": paraphrase_scopes(1, half=0),
        "para A s2": paraphrase_scopes(2, half=0),
        "conv A s1": conversation_scopes(1, half=0, conversations=2 if quick else 4),
        "conv A s2": conversation_scopes(2, half=0),
    }
    if quick:
        del sets["chat A s2"], sets["para A s2"], sets["conv A s2"]
    return sets


def heldout_sets(quick: bool) -> Sets:
    conversations = 2 if quick else 5
    sets = {
        "chat B s11": chat_scopes(11, half=1, conversations=conversations),
        "chat B s12": chat_scopes(12, half=1, conversations=conversations),
        "chat B s13 dated": chat_scopes(13, half=1, conversations=conversations, title_style="dated"),
        "notes B s11": notes_scopes(11, half=1),
        "para B s11": paraphrase_scopes(11, half=1),
        "para B s12": paraphrase_scopes(12, half=1),
        "conv B s11": conversation_scopes(11, half=1, conversations=2 if quick else 4),
        "conv B s12": conversation_scopes(12, half=1),
    }
    if quick:
        del sets["chat B s12"], sets["chat B s13 dated"], sets["para B s12"], sets["conv B s12"]
    return sets


# ----------------------------------------------------------------------------------------------------
# The choice, on the tuning sets only


def objective(results: dict[str, tuple[float, float]], base: dict[str, tuple[float, float]]) -> float | None:
    """Mean gain of R@10 over lexical across the sets, then of R@5 (a tenth as much); None when a
    set loses more than 1 point of R@5 or any R@10 against lexical (the issue's rule: hybrid is
    never worse than lexical)."""
    if any(results[n][0] < base[n][0] - 1.0 or results[n][1] < base[n][1] for n in results):
        return None
    gain10 = statistics.mean(results[n][1] - base[n][1] for n in results)
    gain5 = statistics.mean(results[n][0] - base[n][0] for n in results)
    return gain10 + gain5 / 10


def grid() -> list[HybridParams]:
    points = []
    for protect in (0, 1, 2, 3, 4, 5, 6, 7):
        for w in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
            for k in (1, 5, 10, 20, 30, 60, 100):
                points.append(HybridParams("rrf", w, k=k, protect=protect))
            for lex_floor in (None, 0.0):
                for sem_floor in (None, 0.0, -1.0):
                    points.append(
                        HybridParams(
                            "convex", w, lexical_floor=lex_floor, semantic_floor=sem_floor, protect=protect
                        )
                    )
    return points


def sweep(console: Console, models: Sequence[str]) -> None:
    """The record-text table per model, then the grid ranked by its objective averaged over ``models``."""
    sets = tuning_sets(quick=False)
    styles = ("body", "title: body", "title: body (tags)")
    t = Table(title="Record text for the embedding (tuning sets), embedding alone, R@5 / R@10")
    t.add_column("model / record text")
    for name in [*sets, "mean"]:
        t.add_column(name, justify="right")
    judged: dict[str, dict[str, list[Judged]]] = {}
    for model in models:
        embedder = load(model)
        for style in styles:
            js = prepare(sets, embedder, Throughput(), style)
            if style == RECORD_TEXT:
                judged[model] = js
            per = [recall(semantic, v) for v in js.values()]
            mean = (statistics.mean(p[0] for p in per), statistics.mean(p[1] for p in per))
            t.add_row(f"{model} / {style}", *(f"{a:.1f} / {b:.1f}" for a, b in [*per, mean]))
    console.print(t)

    Scored = tuple[float | None, HybridParams, dict[str, tuple[float | None, tuple[float, float]]]]
    scored: list[Scored] = []
    bases = {m: {name: recall(lexical, v) for name, v in js.items()} for m, js in judged.items()}
    points = grid()
    points += [dataclasses.replace(DEFAULT_HYBRID, depth=d) for d in (20, 50, 200)]
    for p in points:
        per_model: dict[str, tuple[float | None, tuple[float, float]]] = {}
        for m, js in judged.items():
            res = {name: recall(fused(p), v) for name, v in js.items()}
            mean = (statistics.mean(v[0] for v in res.values()), statistics.mean(v[1] for v in res.values()))
            per_model[m] = (objective(res, bases[m]), mean)
        objs = [o for o, _ in per_model.values()]
        scored.append(
            (None if None in objs else statistics.mean(o for o in objs if o is not None), p, per_model)
        )
    scored.sort(key=lambda s: -1.0 if s[0] is None else s[0], reverse=True)
    g = Table(title="Fusion grid on the tuning sets, best 25 by the objective averaged over the models")
    g.add_column("objective")
    g.add_column("fusion")
    for m in judged:
        g.add_column(f"{m}\nobjective, mean R@5 / R@10", justify="right")
    lexical_cells = []
    for m in judged:
        base = bases[m].values()
        lexical_cells.append(
            f"{statistics.mean(v[0] for v in base):.1f} / {statistics.mean(v[1] for v in base):.1f}"
        )
    g.add_row("", "ours (lexical)", *lexical_cells)
    for obj, p, per_model in scored[:25]:
        cells = [
            f"{'—' if o is None else f'{o:.2f}'}, {r5:.1f} / {r10:.1f}" for o, (r5, r10) in per_model.values()
        ]
        g.add_row("—" if obj is None else f"{obj:.2f}", _describe(p), *cells)
    console.print(g)
    for family in ("rrf", "convex"):
        obj, p, _ = next(s for s in scored if s[1].method == family)
        console.print(f"best {family}: {_describe(p)}, objective {obj}")
    console.print(f"DEFAULT_HYBRID: {_describe(DEFAULT_HYBRID)}")


def _describe(p: HybridParams) -> str:
    protect = f", protect {p.protect}" if p.protect else ""
    if p.method == "rrf":
        return f"RRF k={p.k:g}, lexical {p.lexical_weight:g}, depth {p.depth}{protect}"
    floors = f"floors {p.lexical_floor}/{p.semantic_floor}"
    return f"convex, lexical {p.lexical_weight:g}, {floors}, depth {p.depth}{protect}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="one seed per set, two conversations per chat seed"
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="one small set per half: checks the script runs, measures nothing",
    )
    parser.add_argument(
        "--sweep", action="store_true", help="the fusion grid and record-text choice (tuning only)"
    )
    parser.add_argument(
        "--model", help="an embedding model id of meta_memory.memory.embedding.MODELS (--sweep: all of them)"
    )
    parser.add_argument(
        "--float32", action="store_true", help="rank the model's float32 vectors, not the stored int8 form"
    )
    parser.add_argument(
        "--runtime",
        choices=["auto", "numpy", "onnxruntime"],
        default="auto",
        help="the embedding runtime (auto: onnxruntime when installed)",
    )
    args = parser.parse_args()
    global STORED, RUNTIME
    STORED = not args.float32
    RUNTIME = args.runtime
    console = Console(width=220)
    started = time.perf_counter()
    if args.sweep:
        sweep(console, [args.model] if args.model else sorted(MODELS))
        return
    embedder = load(args.model)
    stored = "stored int8 form" if STORED else "float32"
    console.print(
        f"embedding model: {embedder.model_id} on {getattr(embedder, 'runtime', '?')}; record text: {RECORD_TEXT!r}; record vectors: {stored}"
    )
    meter = Throughput()
    tuning_wanted = tuning_sets(args.quick or args.smoke)
    heldout_wanted = heldout_sets(args.quick or args.smoke)
    if args.smoke:
        tuning_wanted = {name: tuning_wanted[name] for name in ("chat A s1", "para A s1")}
        heldout_wanted = {name: heldout_wanted[name] for name in ("chat B s11", "para B s11")}
    tuning = prepare(tuning_wanted, embedder, meter)
    heldout = prepare(heldout_wanted, embedder, meter)
    t, tuning_results = table("Hybrid recall, tuning sets (half A)", tuning, systems())
    console.print(t)
    t, heldout_results = table("Hybrid recall, held-out sets (half B)", heldout, systems())
    console.print(t)
    targets(console, "tuning", tuning_results)
    targets(console, "held-out", heldout_results)
    by_category(console, {**tuning, **heldout})
    console.print(
        f"embedding throughput: {meter.records / meter.record_s:,.0f} records/s ({meter.records:,} records), "
        f"{meter.queries / meter.query_s:,.0f} questions/s ({meter.queries:,} questions); "
        f"total run {time.perf_counter() - started:.0f} s"
    )


if __name__ == "__main__":
    main()
