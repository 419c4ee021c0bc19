"""Hybrid recall's costs: recall latency beside lexical, embedding throughput, bytes, and remember.

Run: ``python benchmarks/hybrid.py [--records 10000] [--queries 300] [--remembers 2000] [--repeat 3]
[--postgres DSN [--postgres-only]] [--model ID] [--settle 60]`` (the `semantic` extra installed; with ``--postgres``, the same
figures on a PostgreSQL server too, each measurement in a schema of its own). Every figure is printed beside its
baseline from the same run:

- contextual recall p50 / p99 for one identity holding ``--records`` active records, through the
  runtime, the query's embedding included: the same queries on the same realm file, lexical then
  hybrid (one runtime holds a state dir at a time), after the realm's vectors were built by the
  code the indexing process runs, on every core, which gives the embedding throughput (records/s),
  beside the baseline of one text at a time on one core through all-MiniLM-L6-v2 with float
  activations (the first 1,000 records); then the same in an agent's loop: each recall after a
  ``remember`` of its own (50 ms before it: the indexing process embeds it meanwhile, and the
  recall reads the scope's new vectors); then other queries, not asked before, lexical and hybrid
  in turn on the hybrid runtime's realm (the two runtimes' runs above are minutes apart, and on a
  shared machine drift by more than the difference measured); and on SQLite, a lexical runtime
  and a hybrid one side by side, each in a process of its own on a copy of the realm as built,
  asked the same queries in turn (which goes first alternates), at rest and each after a
  ``remember`` of its own: the lexical deployment against the hybrid one at the same moments;
- the vector file's bytes per record, beside the realm file's and its recall index's;
- ``remember`` over stdio, one acknowledged write at a time, with ``recall = "lexical"`` and with
  ``recall = "hybrid"`` (the indexing process embedding meanwhile), each on a fresh state dir,
  medians of ``--repeat`` runs; for hybrid, how long after the last acknowledgement every record is
  searchable by meaning (recall's ``vectors_behind`` turns false); on SQLite, every file of the
  realm in bytes per record once the gateway is idle (its WALs cut back).

On PostgreSQL the vectors are built by the gateway's embedding thread's own steps (its records/s),
their bytes are the ``record_vectors`` table's with its indexes, and ``remember`` with
``recall = "hybrid"`` runs while that thread embeds in the gateway's own process.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import random
import secrets
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console

from agent_memory import OUT, Corpus, StdioGateway, percentile
from meta_memory.config import load_config_dict
from meta_memory.memory.embedding import BACKGROUND_NICE, DEFAULT_MODEL, load_embedder
from meta_memory.memory.params import RecallParams, parse_recall, parse_remember
from meta_memory.memory.recall.ann import PROBES_MIN
from meta_memory.memory.recall.neighbours import record_text
from meta_memory.memory.recall.provider import LexicalRecallProvider
from meta_memory.memory.service import AgentMemory
from meta_memory.memory.sqlite.checkpoint import QUIET_S
from meta_memory.memory.sqlite.vectors import VectorFile
from meta_memory.runtime import MetaRuntime
from meta_memory.storage.layout import StateLayout

console = Console()
IDENTITY = "agent:bench"
MODEL = DEFAULT_MODEL  # --model
# After a runtime opens, before its recalls are timed: a serving gateway's steady state, not its
# first minute (a 20,000-vector scope's graph builds in about 10 s, the indexing process starts;
# the static model distils its vocabulary in each process for 30 to 70 s after it loads, which
# the benchmark waits for besides: settled()).
SETTLE_S = 60.0
HELPER_WARM, HELPER_START_S = 20, 5.0  # recalls that start the scan helpers, and their start
# The remember-then-recall loop: its turns, and the pause between a turn's write and its recall.
LOOP_TURNS = 100
LOOP_PAUSE_S = 0.05


def stored(dsn: str | None) -> dict[str, Any]:
    """The ``[agent_memory]`` keys of the backend: the embedded default, or PostgreSQL at ``dsn``."""
    return {"store": "postgres", "postgres": {"dsn": dsn}} if dsn else {}


@contextlib.contextmanager
def fresh_schema(dsn: str) -> Iterator[str]:
    """A schema of its own for one measurement (dropped after); yields its DSN."""
    import psycopg

    schema = f"bench_{secrets.token_hex(4)}"
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {schema}")
        try:
            yield f"{dsn}{'&' if '?' in dsn else '?'}options=-csearch_path%3D{schema}"
        finally:
            admin.execute(f"DROP SCHEMA {schema} CASCADE")


def build(state: Path, records: int, dsn: str | None = None) -> None:
    corpus = Corpus(seed=5)
    config = {"memory": {"kind": "local_json"}, "agent_memory": stored(dsn)}
    with MetaRuntime.open(state, load_config_dict(config)) as runtime:
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
    embedder = load_embedder(MODEL, parallel=os.cpu_count() or 1)  # as the indexing process does
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


def embed_one_at_a_time(state: Path, records: int, dsn: str | None = None) -> float:
    """The baseline: records/s of all-MiniLM-L6-v2 with float activations, one text per graph call
    on one core, over the realm's first ``records`` records (how records were embedded before
    the dynamically quantized default and its parallel runs)."""
    query = "SELECT title, body, tags FROM records ORDER BY doc LIMIT {}"
    if dsn is None:
        path = StateLayout.at(state).realm_db_path("default")
        realm = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        rows = realm.execute(query.format("?"), (records,)).fetchall()
        realm.close()
    else:
        import psycopg

        with psycopg.connect(dsn) as conn:
            rows = conn.execute(query.format("%s"), (records,)).fetchall()
    embedder = load_embedder("all-minilm-l6-v2-int8", batch_size=1)
    texts = [record_text(t, b, json.loads(g)) for t, b, g in rows]
    start = time.perf_counter()
    embedder.embed_documents(texts)
    return len(texts) / (time.perf_counter() - start)


def embed_all_postgres(dsn: str, records: int) -> tuple[float, int]:
    """Fill the realm's vectors with the embedding thread's own steps; records/s, table bytes."""
    import psycopg

    from meta_memory.clock import SystemClock
    from meta_memory.memory.postgres.connect import open_pool
    from meta_memory.memory.postgres.vectors import EmbeddingWorker

    pool = open_pool(dsn, min_size=1, max_size=2, timeout_s=10)
    with pool.connection() as conn:
        (schema,) = conn.execute("SELECT current_schema()").fetchone() or ("public",)
    embedder = load_embedder(MODEL, parallel=os.cpu_count() or 1, parallel_nice=BACKGROUND_NICE)
    worker = EmbeddingWorker(pool, str(schema), embedder, clock=SystemClock())
    start = time.perf_counter()
    while worker.step("default"):
        pass
    rate = records / (time.perf_counter() - start)
    pool.close()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE record_vectors")
        (size,) = conn.execute("SELECT pg_total_relation_size('record_vectors')").fetchone() or (0,)
    return rate, int(size)


def open_runtime(state: Path, mode: str, model: str, dsn: str | None = None) -> MetaRuntime:
    """A runtime on ``state`` (or on PostgreSQL at ``dsn``) recalling by ``mode`` with ``model``,
    its indexing process a process of its own, as a served gateway's is."""
    agent_memory = {"recall": mode, "embedding_model": model, "index_worker": "process", **stored(dsn)}
    return MetaRuntime.open(
        state, load_config_dict({"memory": {"kind": "local_json"}, "agent_memory": agent_memory})
    )


def recall_params(text: str) -> RecallParams:
    """The benchmark identity's contextual recall of ``text``, 8 records, as a turn asks it."""
    return parse_recall(
        {"identity": IDENTITY, "query_text": text},
        default_realm="default",
        default_selection="contextual",
        default_max=8,
    )


def queries(corpus: Corpus, n: int, rng: random.Random) -> list[str]:
    return ["what about " + " ".join(rng.sample(corpus.words(30), 4)) + "?" for _ in range(n)]


def bench_recall(state: Path, n: int, dsn: str | None = None) -> dict[str, list[float]]:
    """Recall times in ms: ``lexical`` and ``hybrid`` on the realm as built, then
    ``lexical after a write`` and ``hybrid after a write``: an agent's loop, each recall after one
    ``remember`` of its own (LOOP_PAUSE_S later, time for the indexing process to embed it). Then
    ``lexical, alternating`` and ``hybrid, alternating``: ``n`` other queries asked of the hybrid
    runtime's realm in both modes, one after the other (the lexical provider swapped in for every
    other recall, which goes first alternating), so that both share the machine's moments: on a
    shared machine the two runtimes' runs above drift apart by more than the difference measured."""
    texts = queries(Corpus(seed=5), n, random.Random(3))
    others = queries(Corpus(seed=5), n, random.Random(4))  # not asked before: embedded when asked
    corpus = Corpus(seed=11)
    times: dict[str, list[float]] = {}
    for mode in ("lexical", "hybrid"):
        runtime = open_runtime(state, mode, MODEL, dsn)
        memory = runtime.agent_memory
        assert memory is not None
        # Warm the caches (the scope's vector matrix, the index pages) and ask a large scope the
        # queries its graph's build is checked with (recall/ann.py PROBES_MIN), then settle: the
        # indexing process's start (a model load, a merge) and a graph's build are not the query's.
        warm = [recall_params(text) for text in (texts * 2)[: PROBES_MIN + 36]]
        for params in warm:
            memory.recall(params)
        time.sleep(SETTLE_S)
        settled(memory, 5 * SETTLE_S)
        # A static model's queries go to a scan helper once its vocabulary is distilled: the
        # first of them start it (a process that is ready about 1.5 s later, each recall scanning
        # here meanwhile), which is not the query's either.
        for params in warm[:HELPER_WARM]:
            memory.recall(params)
        time.sleep(HELPER_START_S)
        for key, write in ((mode, False), (f"{mode} after a write", True)):
            times[key] = []
            for text in texts[: LOOP_TURNS if write else None]:
                if write:
                    title, body = corpus.record_text()
                    memory.remember(
                        parse_remember(
                            {"identity": IDENTITY, "title": title, "body": body}, default_realm="default"
                        )
                    )
                    time.sleep(LOOP_PAUSE_S)
                params = recall_params(text)
                start = time.perf_counter()
                memory.recall(params)
                times[key].append((time.perf_counter() - start) * 1000)
        if mode == "hybrid":
            times.update(_alternating(memory, others))
        runtime.close()
    return times


def bench_side_by_side(state: Path, n: int) -> dict[str, list[float]]:
    """Recall times in ms of a lexical runtime and a hybrid one, each in a process of its own on
    a copy of ``state``, asked each query in turn (which goes first alternates): ``lexical, side
    by side`` and ``hybrid, side by side`` at rest, then the same ``after a write`` (each writes
    the same record, then after LOOP_PAUSE_S each recalls). Each settles as bench_recall's do."""
    import multiprocessing
    import shutil

    texts = queries(Corpus(seed=5), n, random.Random(3))
    spawn = multiprocessing.get_context("spawn")
    pipes: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(dir=OUT) as tmp:
        for mode in ("lexical", "hybrid"):
            copy = Path(tmp) / mode
            shutil.copytree(state, copy)
            mine, theirs = spawn.Pipe()
            spawn.Process(target=_runtime_serving, args=(copy, mode, MODEL, theirs), daemon=True).start()
            pipes[mode] = mine

        def ask(mode: str, *message: Any) -> Any:
            pipes[mode].send(message)
            return pipes[mode].recv()

        warm = (texts * 2)[: PROBES_MIN + 36]
        for text in warm:
            for mode in pipes:
                ask(mode, "recall", text)
        time.sleep(SETTLE_S)
        for mode in pipes:
            ask(mode, "settle", 5 * SETTLE_S)
        for text in warm[:HELPER_WARM]:
            for mode in pipes:
                ask(mode, "recall", text)
        time.sleep(HELPER_START_S)
        corpus = Corpus(seed=11)
        times: dict[str, list[float]] = {}
        for write in (False, True):
            suffix = ", side by side" + (" after a write" if write else "")
            for mode in pipes:
                times[mode + suffix] = []
            for i, text in enumerate(texts[: LOOP_TURNS if write else None]):
                if write:
                    title, body = corpus.record_text()
                    for mode in pipes:
                        ask(mode, "remember", title, body)
                    time.sleep(LOOP_PAUSE_S)
                for mode in ("hybrid", "lexical") if i % 2 == 0 else ("lexical", "hybrid"):
                    times[mode + suffix].append(ask(mode, "recall", text))
        for mode in pipes:
            ask(mode, "close")
    return times


def _runtime_serving(state: Path, mode: str, model: str, pipe: Any) -> None:
    """bench_side_by_side's runtime: opens ``state`` with ``recall = mode`` and answers
    ``("recall", text)`` with the recall's time in ms, ``("remember", title, body)``,
    ``("settle", limit_s)`` (settled()) and ``("close",)``."""
    runtime = open_runtime(state, mode, model)
    memory = runtime.agent_memory
    assert memory is not None
    while True:
        message = pipe.recv()
        if message[0] == "recall":
            params = recall_params(message[1])
            start = time.perf_counter()
            memory.recall(params)
            pipe.send((time.perf_counter() - start) * 1000)
        elif message[0] == "remember":
            memory.remember(
                parse_remember(
                    {"identity": IDENTITY, "title": message[1], "body": message[2]}, default_realm="default"
                )
            )
            pipe.send(None)
        elif message[0] == "settle":
            settled(memory, message[1])
            pipe.send(None)
        else:
            runtime.close()
            pipe.send(None)
            return


def settled(memory: AgentMemory, limit_s: float) -> None:
    """Wait (up to ``limit_s``: five times ``--settle``) until a static model's vocabulary is
    distilled: the thread that distils it takes the GIL beside every recall (66 s of it on a
    2-core AMD EPYC without AVX-512, past the default settle)."""
    embedder = getattr(memory.provider, "embedder", None)
    deadline = time.monotonic() + limit_s
    while not getattr(embedder, "distilled", True) and time.monotonic() < deadline:
        time.sleep(1.0)


def _alternating(memory: AgentMemory, texts: list[str]) -> dict[str, list[float]]:
    """Each of ``texts`` recalled by ``memory``'s hybrid provider and by a lexical one swapped in,
    in turn (which goes first alternates): times in ms per mode."""
    providers = {"hybrid": memory.provider, "lexical": LexicalRecallProvider()}
    times: dict[str, list[float]] = {f"{mode}, alternating": [] for mode in providers}
    try:
        for i, text in enumerate(texts):
            params = recall_params(text)
            for mode in ("hybrid", "lexical") if i % 2 == 0 else ("lexical", "hybrid"):
                memory.provider = providers[mode]
                start = time.perf_counter()
                memory.recall(params)
                times[f"{mode}, alternating"].append((time.perf_counter() - start) * 1000)
    finally:
        memory.provider = providers["hybrid"]
    return times


@dataclasses.dataclass
class Remembered:
    rate: float  # acknowledged writes per second
    searchable_after_s: float | None  # from the last acknowledgement until no vector is behind
    bytes_per_record: float | None  # every file of the realm (SQLite), once idle


def bench_remember(n: int, recall: str, dsn: str | None = None) -> Remembered:
    if dsn is None:
        return _remember(n, recall, None)
    with fresh_schema(dsn) as schema_dsn:
        return _remember(n, recall, schema_dsn)


def _remember(n: int, recall: str, dsn: str | None) -> Remembered:
    with tempfile.TemporaryDirectory(dir=OUT) as tmp:
        config = Path(tmp) / "config.toml"
        store = f'store = "postgres"\n[agent_memory.postgres]\ndsn = "{dsn}"\n' if dsn else ""
        config.write_text(
            f'[memory]\nkind = "local_json"\n[agent_memory]\nrecall = "{recall}"\n'
            f'embedding_model = "{MODEL}"\n{store}'
        )
        gateway = StdioGateway(Path(tmp) / "state", config)
        corpus = Corpus(seed=11)
        texts = [corpus.record_text() for _ in range(n)]
        start = time.perf_counter()
        for i, (title, body) in enumerate(texts):
            gateway.call(
                "meta/agent_memory/remember", {"identity": f"agent:{i % 10}", "title": title, "body": body}
            )
        acknowledged = time.perf_counter()
        rate = n / (acknowledged - start)
        searchable = None
        if recall == "hybrid":
            probe = {"identity": "agent:0", "query_text": "what about the plan?", "max_entries": 1}
            while gateway.call("meta/agent_memory/recall", probe)["vectors_behind"]:
                time.sleep(0.02)
            searchable = time.perf_counter() - acknowledged
        size = None
        if dsn is None:  # idle: merged, embedded, the WALs cut back (checkpoint.py), sizes still
            folder = Path(tmp) / "state" / "agent-memory"
            size = _settled_size(folder) / n
        gateway.close()
        return Remembered(rate, searchable, size)


def _settled_size(folder: Path) -> int:
    """The folder's bytes once no file in it changed size for QUIET_S + 5 s (at most 5 minutes)."""
    deadline = time.monotonic() + 300
    last, since = -1, time.monotonic()
    while time.monotonic() < deadline:
        size = sum(p.stat().st_size for p in folder.iterdir() if p.is_file())
        if size != last:
            last, since = size, time.monotonic()
        elif time.monotonic() - since >= QUIET_S + 5:
            break
        time.sleep(0.5)
    return last


def measure(args: argparse.Namespace, dsn: str | None) -> None:
    where = f"PostgreSQL ({dsn})" if dsn else "SQLite (the embedded default)"
    console.rule(where)
    with tempfile.TemporaryDirectory(dir=OUT) as tmp, contextlib.ExitStack() as stack:
        state = Path(tmp) / "state"
        schema_dsn = stack.enter_context(fresh_schema(dsn)) if dsn else None
        build(state, args.records, schema_dsn)
        baseline = embed_one_at_a_time(state, min(args.records, 1_000), schema_dsn)
        if schema_dsn is None:
            rate, vector_bytes = embed_all(state)
            realm_path = StateLayout.at(state).realm_db_path("default")
            realm_bytes = (
                sum(p.stat().st_size for p in realm_path.parent.glob(realm_path.name + "*")) - vector_bytes
            )
            beside = "the realm file and its recall index"
            side_by_side = bench_side_by_side(state, args.queries)
        else:
            rate, vector_bytes = embed_all_postgres(schema_dsn, args.records)
            realm_bytes = _postgres_bytes(schema_dsn)
            beside = "the records, postings and their indexes"
        recalled = bench_recall(state, args.queries, schema_dsn)
    lexical, hybrid = recalled["lexical"], recalled["hybrid"]
    console.print(
        f"contextual recall, one identity of {args.records:,} active records ({args.queries} queries, in process):\n"
        f"  lexical p50 {percentile(lexical, 0.5):.2f} ms, p99 {percentile(lexical, 0.99):.2f} ms\n"
        f"  hybrid  p50 {percentile(hybrid, 0.5):.2f} ms, p99 {percentile(hybrid, 0.99):.2f} ms "
        f"(the query's embedding included): {percentile(hybrid, 0.5) / percentile(lexical, 0.5):.2f}x / "
        f"{percentile(hybrid, 0.99) / percentile(lexical, 0.99):.2f}x lexical (targets 1.5x / 2x)"
    )
    lexical, hybrid = recalled["lexical, alternating"], recalled["hybrid, alternating"]
    console.print(
        f"  {args.queries} other queries, lexical and hybrid in turn on the hybrid runtime: lexical p50 "
        f"{percentile(lexical, 0.5):.2f} ms, p99 {percentile(lexical, 0.99):.2f} ms; hybrid p50 "
        f"{percentile(hybrid, 0.5):.2f} ms, p99 {percentile(hybrid, 0.99):.2f} ms: "
        f"{percentile(hybrid, 0.5) / percentile(lexical, 0.5):.2f}x / "
        f"{percentile(hybrid, 0.99) / percentile(lexical, 0.99):.2f}x"
    )
    lexical, hybrid = recalled["lexical after a write"], recalled["hybrid after a write"]
    console.print(
        f"  each after a remember of its own ({LOOP_TURNS} turns, {LOOP_PAUSE_S * 1000:.0f} ms between): "
        f"lexical p50 {percentile(lexical, 0.5):.2f} ms, p99 {percentile(lexical, 0.99):.2f} ms; hybrid p50 "
        f"{percentile(hybrid, 0.5):.2f} ms, p99 {percentile(hybrid, 0.99):.2f} ms: "
        f"{percentile(hybrid, 0.5) / percentile(lexical, 0.5):.2f}x / "
        f"{percentile(hybrid, 0.99) / percentile(lexical, 0.99):.2f}x"
    )
    if schema_dsn is None:
        for suffix, what in (("", "at rest"), (" after a write", "each after a remember of its own")):
            lexical = side_by_side[f"lexical, side by side{suffix}"]
            hybrid = side_by_side[f"hybrid, side by side{suffix}"]
            console.print(
                f"  a lexical and a hybrid runtime side by side, in turn, {what}: lexical p50 "
                f"{percentile(lexical, 0.5):.2f} ms, p99 {percentile(lexical, 0.99):.2f} ms; hybrid p50 "
                f"{percentile(hybrid, 0.5):.2f} ms, p99 {percentile(hybrid, 0.99):.2f} ms: "
                f"{percentile(hybrid, 0.5) / percentile(lexical, 0.5):.2f}x / "
                f"{percentile(hybrid, 0.99) / percentile(lexical, 0.99):.2f}x"
            )
    console.print(
        f"embedding throughput: {rate:,.0f} records/s ({MODEL}, {os.cpu_count()} threads) against "
        f"{baseline:,.0f} one text at a time on one core (all-minilm-l6-v2-int8): {rate / baseline:.1f}x; vectors "
        f"{vector_bytes / args.records:,.0f} bytes per record beside {realm_bytes / args.records:,.0f} for "
        f"{beside}"
    )
    lexical_runs = [bench_remember(args.remembers, "lexical", dsn) for _ in range(args.repeat)]
    hybrid_runs = [bench_remember(args.remembers, "hybrid", dsn) for _ in range(args.repeat)]
    lex = statistics.median(r.rate for r in lexical_runs)
    hyb = statistics.median(r.rate for r in hybrid_runs)
    console.print(
        f"remember over stdio: lexical {lex:,.0f}/s, hybrid {hyb:,.0f}/s ({hyb / lex:.2f}x; target >= 0.90x), "
        f"medians of {args.repeat} x {args.remembers}"
    )
    searchable = statistics.median(r.searchable_after_s or 0.0 for r in hybrid_runs)
    console.print(
        f"  every record searchable by meaning {searchable:.1f} s after the last acknowledgement "
        f"({args.remembers / (args.remembers / hyb + searchable):,.0f} records/s from the first write)"
    )
    if dsn is None:
        console.print(
            f"  bytes on disk per record, idle (realm, recall index, vectors, WALs): lexical "
            f"{statistics.median(r.bytes_per_record or 0.0 for r in lexical_runs):,.0f}, hybrid "
            f"{statistics.median(r.bytes_per_record or 0.0 for r in hybrid_runs):,.0f} (the peer: 2,341)"
        )


def _postgres_bytes(dsn: str) -> int:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE records")
        conn.execute("VACUUM ANALYZE postings")
        (size,) = conn.execute(
            "SELECT pg_total_relation_size('records') + pg_total_relation_size('postings')"
        ).fetchone() or (0,)
    return int(size)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--remembers", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--postgres", metavar="DSN", default=None, help="also measure on this server")
    parser.add_argument("--model", default=DEFAULT_MODEL, help="the embedding model (default: the default)")
    parser.add_argument("--postgres-only", action="store_true", help="with --postgres: not SQLite")
    parser.add_argument(
        "--settle",
        type=float,
        default=60.0,
        help="seconds a runtime settles first (and up to five times that for its model)",
    )
    args = parser.parse_args()
    global MODEL, SETTLE_S
    MODEL, SETTLE_S = args.model, args.settle
    OUT.mkdir(exist_ok=True)
    if not args.postgres_only:
        measure(args, None)
    if args.postgres:
        measure(args, args.postgres)


if __name__ == "__main__":
    main()
