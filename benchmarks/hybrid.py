"""Hybrid recall's costs: recall latency beside lexical, embedding throughput, bytes, and remember.

Run: ``python benchmarks/hybrid.py [--records 10000] [--queries 300] [--remembers 2000] [--repeat 3]``
(the `semantic` extra installed). Every figure is printed beside its lexical baseline from the same
run:

- contextual recall p50 / p99 for one identity holding ``--records`` active records, through the
  runtime, the query's embedding included: the same queries on the same realm file, lexical then
  hybrid (one runtime holds a state dir at a time), after the realm's vectors were built by the
  code the indexing process runs, which gives the embedding throughput (records/s on one core);
- the vector file's bytes per record, beside the realm file's and its recall index's;
- ``remember`` over stdio, one acknowledged write at a time, with ``recall = "lexical"`` and with
  ``recall = "hybrid"`` (the indexing process embedding meanwhile), each on a fresh state dir,
  medians of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from rich.console import Console

from agent_memory import OUT, Corpus, StdioGateway, percentile
from meta_memory.config import load_config_dict
from meta_memory.memory.embedding import DEFAULT_MODEL, load_embedder
from meta_memory.memory.params import parse_recall, parse_remember
from meta_memory.memory.sqlite.vectors import VectorFile
from meta_memory.runtime import MetaRuntime
from meta_memory.storage.layout import StateLayout

console = Console()
IDENTITY = "agent:bench"


def build(state: Path, records: int) -> None:
    corpus = Corpus(seed=5)
    with MetaRuntime.open(state, load_config_dict({"agent_memory": {}})) as runtime:
        memory = runtime.agent_memory
        assert memory is not None
        for _ in range(records):
            title, body = corpus.record_text()
            memory.remember(
                parse_remember({"identity": IDENTITY, "title": title, "body": body}, default_realm="default")
            )


def embed_all(state: Path) -> tuple[float, int]:
    """Fill the realm's vector file as the indexing process does; records/s, file bytes."""
    path = StateLayout.at(state).realm_db_path("default")
    realm = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    (uid,) = realm.execute("SELECT value FROM store_meta WHERE key = 'realm_uid'").fetchone()
    embedder = load_embedder(DEFAULT_MODEL)
    vectors = VectorFile(path, realm_uid=uid, model_id=embedder.model_id, dim=embedder.dim)
    start = time.perf_counter()
    done = 0
    while vectors.behind(realm):
        done += vectors.catch_up(realm, embedder, 256)
    rate = done / (time.perf_counter() - start)
    vectors.close()
    realm.close()
    vector_path = StateLayout.vector_path(path)
    size = sum(p.stat().st_size for p in vector_path.parent.glob(vector_path.name + "*"))
    return rate, size


def queries(corpus: Corpus, n: int, rng: random.Random) -> list[str]:
    return ["what about " + " ".join(rng.sample(corpus.words(30), 4)) + "?" for _ in range(n)]


def bench_recall(state: Path, n: int) -> tuple[list[float], list[float]]:
    texts = queries(Corpus(seed=5), n, random.Random(3))
    times: dict[str, list[float]] = {"lexical": [], "hybrid": []}
    for mode in ("lexical", "hybrid"):
        runtime = MetaRuntime.open(
            state, load_config_dict({"agent_memory": {"recall": mode, "index_worker": "process"}})
        )
        memory = runtime.agent_memory
        assert memory is not None
        for text in texts[:30]:  # warm the caches (the scope's vector matrix, the index pages)
            memory.recall(
                parse_recall(
                    {"identity": IDENTITY, "query_text": text},
                    default_realm="default",
                    default_selection="contextual",
                    default_max=8,
                )
            )
        for text in texts:
            params = parse_recall(
                {"identity": IDENTITY, "query_text": text},
                default_realm="default",
                default_selection="contextual",
                default_max=8,
            )
            start = time.perf_counter()
            memory.recall(params)
            times[mode].append((time.perf_counter() - start) * 1000)
        runtime.close()
    return times["lexical"], times["hybrid"]


def bench_remember(n: int, recall: str) -> float:
    with tempfile.TemporaryDirectory(dir=OUT) as tmp:
        config = Path(tmp) / "config.toml"
        config.write_text(f'[memory]\nkind = "local_json"\n[agent_memory]\nrecall = "{recall}"\n')
        gateway = StdioGateway(Path(tmp) / "state", config)
        corpus = Corpus(seed=11)
        texts = [corpus.record_text() for _ in range(n)]
        start = time.perf_counter()
        for i, (title, body) in enumerate(texts):
            gateway.call(
                "meta/agent_memory/remember", {"identity": f"agent:{i % 10}", "title": title, "body": body}
            )
        rate = n / (time.perf_counter() - start)
        gateway.close()
        return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--remembers", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(dir=OUT) as tmp:
        state = Path(tmp) / "state"
        build(state, args.records)
        rate, vector_bytes = embed_all(state)
        realm_path = StateLayout.at(state).realm_db_path("default")
        realm_bytes = (
            sum(p.stat().st_size for p in realm_path.parent.glob(realm_path.name + "*")) - vector_bytes
        )
        lexical, hybrid = bench_recall(state, args.queries)
    console.print(
        f"contextual recall, one identity of {args.records:,} active records ({args.queries} queries, in process):\n"
        f"  lexical p50 {percentile(lexical, 0.5):.2f} ms, p99 {percentile(lexical, 0.99):.2f} ms\n"
        f"  hybrid  p50 {percentile(hybrid, 0.5):.2f} ms, p99 {percentile(hybrid, 0.99):.2f} ms "
        f"(the query's embedding included; target p50 <= 10 ms)"
    )
    console.print(
        f"embedding throughput: {rate:,.0f} records/s on one core ({DEFAULT_MODEL}); vector file "
        f"{vector_bytes / args.records:,.0f} bytes per record beside {realm_bytes / args.records:,.0f} for the "
        "realm file and its recall index"
    )
    lexical_rates = [bench_remember(args.remembers, "lexical") for _ in range(args.repeat)]
    hybrid_rates = [bench_remember(args.remembers, "hybrid") for _ in range(args.repeat)]
    lex, hyb = statistics.median(lexical_rates), statistics.median(hybrid_rates)
    console.print(
        f"remember over stdio: lexical {lex:,.0f}/s, hybrid {hyb:,.0f}/s ({hyb / lex:.2f}x; target >= 0.90x), "
        f"medians of {args.repeat} x {args.remembers}"
    )


if __name__ == "__main__":
    main()
