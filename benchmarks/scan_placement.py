"""Where a hybrid recall's neighbour search should run: what it adds to the lexical ranking beside it.

Run: ``python benchmarks/scan_placement.py [--records 20000] [--queries 300] [--rounds 3]`` (the
`semantic` extra installed).

A hybrid recall ranks its scope lexically and searches the scope's vectors for the query's
neighbours; the caller waits for both. This measures, for the same queries on one realm (built and
embedded as benchmarks/hybrid.py builds it), the caller's time for the lexical ranking of a recall
(``Ranking(...).top(8)`` in the store's read, the baseline) and for that ranking with the
neighbour search (``neighbours.nearest``, 100 deep, the code recall runs) placed

- **inline**: searched first, on the caller's thread;
- **on a thread**: begun on a hand-off thread while the caller ranks (``begin_nearest`` with
  ``handoff.Handoff``: what recall does), then finished by the caller;
- **in a process**: asked of another process that holds the same vectors (forked before anything
  else starts, answering over a socket pair), whose answer the caller reads after ranking.

The arms run in turn for each query (their order rotating), so they share the machine's moments;
medians are printed with what each adds to the ranking alone. The process's answers are checked
equal to the inline search's. The thread arm pays for the GIL: each step of the search that ends
on the other thread takes the GIL back at the ranking's next SQLite call, and on a VM whose idle
cores sleep, each hand-over costs the caller a wake-up.
"""

from __future__ import annotations

import argparse
import os
import random
import socket
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from rich.console import Console

from agent_memory import OUT, Corpus
from hybrid import IDENTITY, MODEL, build, embed_all, queries
from meta_memory.config import load_config_dict
from meta_memory.memory.embedding import Embedder, load_embedder
from meta_memory.memory.recall.analyzer import query_terms
from meta_memory.memory.recall.handoff import Handoff
from meta_memory.memory.recall.neighbours import ScopeVectors, begin_nearest, nearest
from meta_memory.memory.recall.scan_process import ScanOffload, ScanProcesses
from meta_memory.memory.recall.scorer import Ranking
from meta_memory.memory.sqlite.vectors import VectorFile
from meta_memory.runtime import MetaRuntime
from meta_memory.storage.layout import StateLayout

console = Console()
DEPTH = 100  # the neighbours a recall asks for (fusion.DEFAULT_HYBRID.depth)
PLACES = 8  # the lexical head a recall of 8 entries ranks


def scope_vectors(state: Path, embedder: Embedder) -> ScopeVectors:
    """The identity's scope's vectors as recall reads them (no graph index: exact search)."""
    path = StateLayout.at(state).realm_db_path("default")
    realm = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    (uid,) = realm.execute("SELECT value FROM store_meta WHERE key = 'realm_uid'").fetchone()
    (scope_id,) = realm.execute("SELECT DISTINCT scope_id FROM records").fetchone()
    realm.close()
    vectors = VectorFile(path, realm_uid=uid, model_id=embedder.model_id, dim=embedder.dim)
    scope = vectors.scope(int(scope_id))
    vectors.close()
    return scope


def serve(sock: socket.socket, vectors: ScopeVectors) -> None:
    """The process arm: answer each query vector received with its neighbours, until EOF."""
    while True:
        data = sock.recv(1 << 16)
        if not data:
            os._exit(0)
        found = nearest(vectors, np.frombuffer(data, dtype=np.float32), DEPTH)
        docs = np.array([doc for doc, _ in found], dtype=np.int64)
        scores = np.array([score for _, score in found], dtype=np.float64)
        sock.send(docs.tobytes() + scores.tobytes())


def answer(sock: socket.socket) -> list[tuple[int, float]]:
    data = sock.recv(1 << 16)
    half = len(data) // 2
    docs = np.frombuffer(data[:half], dtype=np.int64).tolist()
    scores = np.frombuffer(data[half:], dtype=np.float64).tolist()
    return list(zip(docs, scores, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(dir=OUT) as tmp:
        state = Path(tmp) / "state"
        build(state, args.records)
        embed_all(state)
        texts = queries(Corpus(seed=5), args.queries, random.Random(4))
        embedder = load_embedder(MODEL)
        query_vectors = embedder.embed_queries(texts)
        # The static model distils its vocabulary on a thread after it loads, taking the GIL beside
        # everything measured (benchmarks/hybrid.py settled()).
        deadline = time.monotonic() + 600
        while not getattr(embedder, "distilled", True) and time.monotonic() < deadline:
            time.sleep(1.0)
        helpers = ScanProcesses()  # from here the scope's arrays are shared with the helpers
        vectors = scope_vectors(state, embedder)
        # Forked before the runtime opens; the child only runs numpy and SimSIMD on its copy.
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        if os.fork() == 0:
            ours.close()
            serve(theirs, vectors)
        theirs.close()
        scans = Handoff(os.cpu_count() or 1, "bench-scan")
        to_helper = ScanOffload(scans.submit, helpers.submit)
        deadline = time.monotonic() + 60
        while not helpers.ready() and time.monotonic() < deadline:
            begin_nearest(vectors, query_vectors[0], DEPTH, None, to_helper)()  # the first starts them
            time.sleep(0.1)
        runtime = MetaRuntime.open(
            state, load_config_dict({"memory": {"kind": "local_json"}, "agent_memory": {"recall": "lexical"}})
        )
        memory = runtime.agent_memory
        assert memory is not None
        store = memory.store("default")
        scopes = memory.scopes_of(store, IDENTITY)

        def rank(terms: list[str]) -> None:
            with store.reading_index(scopes) as index:
                Ranking(index, terms).top(PLACES)

        def alone(terms: list[str], q: np.ndarray) -> object:
            rank(terms)
            return None

        def inline(terms: list[str], q: np.ndarray) -> object:
            found = nearest(vectors, q, DEPTH)
            rank(terms)
            return found

        def thread(terms: list[str], q: np.ndarray) -> object:
            finish = begin_nearest(vectors, q, DEPTH, None, scans.submit)
            rank(terms)
            return finish()

        def process(terms: list[str], q: np.ndarray) -> object:
            ours.send(np.ascontiguousarray(q, dtype=np.float32).tobytes())
            rank(terms)
            return answer(ours)

        def helper(terms: list[str], q: np.ndarray) -> object:
            finish = begin_nearest(vectors, q, DEPTH, None, to_helper)
            rank(terms)
            return finish()

        arms = {
            "ranking alone": alone,
            "inline": inline,
            "on a thread": thread,
            "in a process": process,
            "scan helper": helper,
        }
        times: dict[str, list[float]] = {name: [] for name in arms}
        terms_of = [query_terms(text, []) for text in texts]
        mismatched = 0
        for i in range(args.rounds * len(texts)):
            terms, q = terms_of[i % len(texts)], query_vectors[i % len(texts)]
            names = list(arms)
            names = names[i % len(names) :] + names[: i % len(names)]
            found: dict[str, object] = {}
            for name in names:
                start = time.perf_counter()
                found[name] = arms[name](terms, q)
                times[name].append((time.perf_counter() - start) * 1000)
            mismatched += found["in a process"] != found["inline"] or found["scan helper"] != found["inline"]
        runtime.close()
        scans.close()
        helpers.close()
        ours.close()
    base = statistics.median(times["ranking alone"])
    console.print(
        f"the lexical ranking of a recall ({PLACES} places) on {args.records:,} records, with a neighbour "
        f"search {DEPTH} deep placed four ways ({args.rounds} x {args.queries} queries, arms in turn; p50, "
        f"and what the search adds to the ranking alone):"
    )
    for name, values in times.items():
        p50 = statistics.median(values)
        added = "" if name == "ranking alone" else f"  +{p50 - base:.3f} ms"
        console.print(f"  {name:14s} {p50:.3f} ms{added}")
    console.print(f"  answers of the two process arms differing from the inline search's: {mismatched}")


if __name__ == "__main__":
    main()
