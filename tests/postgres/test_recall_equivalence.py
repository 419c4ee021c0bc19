"""Contextual recall on PostgreSQL returns what it returns on SQLite, in the same order, for the same
records: the two backends share the analyzer and the ranker, and PostgreSQL's reads (one opening
statement, postings held in memory, records read with the tie-break keys) must hand the ranker
exactly the rows SQLite's do. The corpus has posting lists of every length the ranker treats
differently: rare (read up front), middling (read in full in its loop, or held), and common
(past what PostgreSQL holds, scored only on candidates)."""

from __future__ import annotations

import random
from pathlib import Path

from meta_memory.clock import ManualClock
from meta_memory.config import load_config_dict
from meta_memory.runtime import MetaRuntime
from meta_memory.sdk import MetaHandle

from ..conftest import Backend

RECORDS = 640
WORDS = [f"w{n:03d}" for n in range(400)]


def _corpus(rng: random.Random) -> list[tuple[str, str]]:
    weights = [1.0 / (rank + 3) for rank in range(len(WORDS))]
    out = []
    for n in range(RECORDS):
        words = rng.choices(WORDS, weights=weights, k=rng.randint(6, 18))
        # "staging" is in every other record, "deploy" in nearly all: lists past 512 documents.
        extra = ["deploy"] * (n % 20 != 0) + ["staging"] * (n % 2)
        out.append((" ".join(rng.sample(WORDS, 2)).title(), " ".join(words + extra) + "."))
    return out


def _queries(rng: random.Random, corpus: list[tuple[str, str]]) -> list[str]:
    queries = []
    for _ in range(120):
        _, body = rng.choice(corpus)
        words = body.rstrip(".").split()
        picked = rng.sample(words, min(len(words), rng.randint(2, 6)))
        queries.append("what about " + " ".join(picked) + "?")
    return [*queries, "deploy staging", "deploy", "w000 deploy", "nothing matches this zzz"]


def test_every_query_returns_the_same_records_in_the_same_order_on_both_backends(
    pg: Backend, tmp_path: Path
) -> None:
    rng = random.Random(5)
    corpus = _corpus(rng)
    queries = _queries(rng, corpus)
    results: dict[str, list[list[tuple[str, str]]]] = {}
    for backend in (Backend("sqlite"), pg):
        clock = ManualClock()
        config = load_config_dict(backend.config({"agent_memory": {"enabled": True}}))
        with MetaRuntime.open(tmp_path / backend.name, config, clock=clock) as runtime:
            meta = MetaHandle(runtime)
            for title, body in corpus:
                clock.advance(1)
                meta.remember_agent_memory("alice", title=title, body=body)
            results[backend.name] = [
                [(r.title, r.body) for r in meta.recall_agent_memory("alice", query_text=q, max_entries=8)]
                for q in queries
            ]

    assert sum(1 for hits in results["sqlite"] if hits) > 100  # the queries find things
    for query, on_sqlite, on_postgres in zip(queries, results["sqlite"], results["postgres"], strict=True):
        assert on_postgres == on_sqlite, query
