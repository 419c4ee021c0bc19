"""Agent-memory benchmark: contextual recall latency, remember throughput, bytes per record, peak RSS.

Run: ``python benchmarks/agent_memory.py`` (defaults: 100 identities x 10,000 records = a
1,000,000-record realm file, built once and cached under ``benchmarks/out/``). Every figure is
printed beside a baseline measured in the same run:

- recall (library API and stdio RPC) vs a naive scan that loads every active record of the
  identity and scores it in Python with the upstream REFERENCE 3.4 scorer;
- remember over stdio (one acknowledged durable write at a time) vs a bare SQLite
  insert-and-commit loop in the same WAL/synchronous mode (no validation, index or audit), with
  the recall index built by the gateway's indexing process (its default) and by the gateway
  itself (``index_worker = "inline"``, what a library runtime does).
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from meta_memory.clock import SystemClock
from meta_memory.config import load_config_dict
from meta_memory.memory.params import parse_recall
from meta_memory.memory.recall.provider import LexicalRecallProvider, RecallQuery
from meta_memory.memory.records import (
    APPLICATION,
    Provenance,
    Record,
    RecordKind,
    Scope,
    Status,
    Trust,
    content_hash,
)
from meta_memory.memory.sqlite.recall_index import connect_readonly
from meta_memory.memory.sqlite.store import REALM_PAGE_SIZE, SqliteRealmStore
from meta_memory.memory.validator import CreateOp, WriteBatch
from meta_memory.runtime import MetaRuntime
from meta_memory.storage.layout import StateLayout

OUT = Path(__file__).resolve().parent / "out"
console = Console()

# -- synthetic corpus -------------------------------------------------------------------------

_SYLLABLES = [c + v for c in "bcdfghjklmnprstvwz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]


def vocabulary(size: int, rng: random.Random) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


class Corpus:
    def __init__(self, seed: int = 7, vocab_size: int = 30_000) -> None:
        self.rng = random.Random(seed)
        self.vocab = vocabulary(vocab_size, self.rng)
        # Zipf-like weights: a few common words, a long tail (cumulative, computed once).
        self.cum_weights = list(itertools.accumulate(1.0 / (rank + 10) for rank in range(vocab_size)))

    def words(self, n: int) -> list[str]:
        return self.rng.choices(self.vocab, cum_weights=self.cum_weights, k=n)

    def record_text(self) -> tuple[str, str]:
        return " ".join(self.words(4)).capitalize(), " ".join(self.words(self.rng.randint(15, 40))) + "."


def identity_name(i: int) -> str:
    return f"agent:{i:03d}"


def build_fixture(path: Path, identities: int, per_identity: int) -> None:
    if path.exists():
        return
    tmp = path.with_suffix(".building")
    for stale in tmp.parent.glob(tmp.name + "*"):
        stale.unlink()
    corpus = Corpus()
    store = SqliteRealmStore(tmp, "bench", clock=SystemClock())
    now = int(time.time() * 1000) - identities * per_identity
    started = time.perf_counter()
    batch_size = 1000
    n = 0
    with console.status("building fixture") as status:
        for ident in range(identities):
            scope = Scope.identity("bench", identity_name(ident))
            for start in range(0, per_identity, batch_size):
                ops = []
                for _ in range(min(batch_size, per_identity - start)):
                    title, body = corpus.record_text()
                    n += 1
                    ops.append(
                        CreateOp(
                            Record(
                                id=f"mem-bench-{n:08d}",
                                scope=scope,
                                kind=RecordKind.FACT,
                                title=title,
                                description="",
                                body=body,
                                tags=(),
                                provenance=Provenance(APPLICATION),
                                trust=Trust.AGENT_OBSERVED,
                                status=Status.ACTIVE,
                                created_at_ms=now + n,
                                updated_at_ms=now + n,
                                content_hash=content_hash(title, body),
                            )
                        )
                    )
                store.commit(WriteBatch("bench", APPLICATION, tuple(ops)))
            rate = n / (time.perf_counter() - started)
            status.update(f"building fixture: {n:,} records ({rate:,.0f}/s)")
    store.close()
    for suffix in ("-wal", "-shm"):
        leftover = Path(str(tmp) + suffix)
        if leftover.exists():
            leftover.unlink()
    StateLayout.recall_index_path(tmp).rename(StateLayout.recall_index_path(path))
    tmp.rename(path)


def upgrade_fixture(path: Path) -> None:
    """A fixture cached by an earlier release is upgraded in place once (schema 5 kept the recall
    index inside the realm file; opening it moves the index to its own file)."""
    if StateLayout.recall_index_path(path).exists():
        return
    with console.status("upgrading the cached fixture (moving its recall index to its own file)"):
        SqliteRealmStore(path, "bench", clock=SystemClock()).close()


# -- baselines ----------------------------------------------------------------------------------

_UPSTREAM_STOP = frozenset(
    [
        "about",
        "after",
        "again",
        "also",
        "and",
        "are",
        "ask",
        "but",
        "can",
        "could",
        "did",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "into",
        "just",
        "may",
        "not",
        "now",
        "only",
        "our",
        "out",
        "put",
        "should",
        "that",
        "the",
        "their",
        "then",
        "there",
        "this",
        "was",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "with",
        "would",
        "you",
        "your",
    ]
)
_SPLIT = re.compile(r"[^A-Za-z0-9_\-]+")


def upstream_terms(text: str) -> set[str]:
    return {t.lower() for t in _SPLIT.split(text) if len(t) >= 3 and t.lower() not in _UPSTREAM_STOP}


def naive_scan(db: sqlite3.Connection, scope_id: int, query: str, limit: int) -> list[str]:
    """The baseline: load every active record of the identity and score it in Python (REFERENCE 3.4)."""
    terms = upstream_terms(query)
    scored = []
    for memory_id, title, body, tags, updated, created in db.execute(
        "SELECT id, title, body, tags, updated_at_ms, created_at_ms FROM records "
        "WHERE scope_id = ? AND status = 'active'",
        (scope_id,),
    ):
        title_l, body_l = title.lower(), body.lower()
        title_t, body_t = upstream_terms(title), upstream_terms(body)
        tag_t = {t for tag in json.loads(tags) for t in upstream_terms(tag)}
        score = 0
        for term in terms:
            if term in tag_t:
                score += 5
            if term in title_t:
                score += 4
            elif len(term) >= 5 and term in title_l:
                score += 1
            if term in body_t:
                score += 2
            elif len(term) >= 5 and term in body_l:
                score += 1
        if score >= 2:
            scored.append((-score, -updated, -created, memory_id))
    scored.sort()
    return [s[3] for s in scored[:limit]]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# -- measurements --------------------------------------------------------------------------------


def queries_for(path: Path, identity: str, n: int, rng: random.Random) -> list[str]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    scope_id = db.execute("SELECT scope_id FROM scopes WHERE key = ?", (identity,)).fetchone()[0]
    docs = [r[0] for r in db.execute("SELECT body FROM records WHERE scope_id = ? LIMIT 2000", (scope_id,))]
    db.close()
    out = []
    for _ in range(n):
        words = rng.choice(docs).rstrip(".").split()
        picked = rng.sample(words, min(len(words), rng.randint(3, 6)))
        out.append("what about " + " ".join(picked) + "?")
    return out


def bench_recall_library(state: Path, identity: str, queries: list[str]) -> list[float]:
    runtime = MetaRuntime.open(state, load_config_dict({"agent_memory": {"realm": "bench"}}))
    memory = runtime.agent_memory
    assert memory is not None
    store = memory.store("bench")
    provider = LexicalRecallProvider()
    scope = Scope.identity("bench", identity)
    for q in queries[:100]:  # a serving gateway is warm: page cache, term and df memos
        provider.recall(store, RecallQuery((scope,), "contextual", q, (), 8))
    times = []
    for q in queries:
        t0 = time.perf_counter()
        params = {"identity": identity, "realm": "bench", "query_text": q}
        memory.recall(
            parse_recall(params, default_realm="bench", default_selection="contextual", default_max=8)
        )
        times.append((time.perf_counter() - t0) * 1000)
    runtime.close()
    return times


def bench_naive(path: Path, identity: str, queries: list[str]) -> list[float]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    scope_id = db.execute("SELECT scope_id FROM scopes WHERE key = ?", (identity,)).fetchone()[0]
    times = []
    for q in queries:
        t0 = time.perf_counter()
        naive_scan(db, scope_id, q, 8)
        times.append((time.perf_counter() - t0) * 1000)
    db.close()
    return times


class StdioGateway:
    def __init__(self, state: Path, config: Path | None = None) -> None:
        cmd = [
            shutil.which("meta_gateway") or "meta_gateway",
            "stdio",
            "--state-dir",
            str(state),
            "--log-level",
            "warning",
        ]
        if config is not None:
            cmd += ["--config", str(config)]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self.proc.stdout is not None and self.proc.stdin is not None
        self.out, self.inp = self.proc.stdout, self.proc.stdin
        json.loads(self.out.readline())  # handshake
        self.next_id = 0

    def call(self, method: str, params: dict[str, Any]) -> Any:
        self.next_id += 1
        self.inp.write(
            json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}).encode()
            + b"\n"
        )
        self.inp.flush()
        reply = json.loads(self.out.readline())
        if "error" in reply:
            raise RuntimeError(reply["error"])
        return reply["result"]

    def peak_rss_mb(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def close(self) -> None:
        self.inp.close()
        self.proc.wait(timeout=30)


def write_config(directory: Path, durability: str, index_worker: str = "auto") -> Path:
    cfg = directory / f"bench-{durability}-{index_worker}.toml"
    cfg.write_text(
        f'[agent_memory]\nrealm = "bench"\ndurability = "{durability}"\nindex_worker = "{index_worker}"\n'
    )
    return cfg


def bench_recall_stdio(state: Path, identity: str, queries: list[str]) -> tuple[list[float], float]:
    gw = StdioGateway(state, write_config(state.parent, "process"))
    for q in queries[:100]:
        gw.call("meta/agent_memory/recall", {"identity": identity, "realm": "bench", "query_text": q})
    times = []
    for q in queries:
        t0 = time.perf_counter()
        gw.call("meta/agent_memory/recall", {"identity": identity, "realm": "bench", "query_text": q})
        times.append((time.perf_counter() - t0) * 1000)
    rss = gw.peak_rss_mb()
    gw.close()
    return times, rss


def bench_remember_stdio(
    n: int, durability: str, index_worker: str = "auto"
) -> tuple[float, float, float, float]:
    """Records/s of one-at-a-time acknowledged remembers; bytes per record (the realm file and
    its recall-index file, once the index has caught up and merged its fresh tier); peak RSS
    (MB) of the gateway; seconds from the last reply until the fresh tier was merged."""
    with tempfile.TemporaryDirectory(dir=OUT) as tmp:
        state = Path(tmp) / "state"
        gw = StdioGateway(state, write_config(Path(tmp), durability, index_worker))
        corpus = Corpus(seed=11)
        texts = [corpus.record_text() for _ in range(n)]
        t0 = time.perf_counter()
        for i, (title, body) in enumerate(texts):
            gw.call(
                "meta/agent_memory/remember",
                {"identity": f"agent:{i % 10}", "realm": "bench", "title": title, "body": body},
            )
        rate = n / (time.perf_counter() - t0)
        gw.call("meta/agent_memory/recall", {"identity": "agent:0", "realm": "bench", "query_text": "x"})
        # Bytes on disk once the quiet spell after the burst has merged the index's fresh tier
        # into its postings (the gateway's indexing process, or its upkeep thread, does that).
        db_path = StateLayout.at(state).realm_db_path("bench")
        t_quiet = time.perf_counter()
        while fresh_records(db_path) and time.perf_counter() - t_quiet < 60:
            time.sleep(0.05)
        merged_s = time.perf_counter() - t_quiet
        rss = gw.peak_rss_mb()
        gw.close()
        size = sum(p.stat().st_size for p in db_path.parent.glob(db_path.name + "*"))
        return rate, size / n, rss, merged_s


def fresh_records(realm_path: Path) -> int:
    """Records waiting in the recall index's fresh tier (read-only: the gateway owns the file)."""
    db = connect_readonly(StateLayout.recall_index_path(realm_path))
    try:
        (n,) = db.execute("SELECT count(*) FROM fresh_terms").fetchone()
        return int(n)
    finally:
        db.close()


def bench_burst_then_recall(
    bursts: tuple[int, ...], rounds: int = 5
) -> list[tuple[int, float, float, float]]:
    """Recall latency right after a burst of remembers, against after a quiet spell.

    For each burst size: (size, median ms of a recall sent right after the burst's last reply, which
    applies the backlog first; median ms of one sent after 100 ms of quiet, when the upkeep thread
    has applied it; median ms of a recall with no backlog at all, the baseline).
    """
    out = []
    corpus = Corpus(seed=13)
    with tempfile.TemporaryDirectory(dir=OUT) as tmp:
        gw = StdioGateway(Path(tmp) / "state", write_config(Path(tmp), "process"))
        recall = {"identity": "agent:burst", "realm": "bench", "query_text": ""}

        def burst(n: int) -> str:
            texts = [corpus.record_text() for _ in range(n)]
            for title, body in texts:
                gw.call(
                    "meta/agent_memory/remember",
                    {"identity": "agent:burst", "realm": "bench", "title": title, "body": body},
                )
            return " ".join(texts[-1][1].split()[:4])

        burst(2_000)  # an identity with some history
        gw.call("meta/agent_memory/recall", {**recall, "query_text": "warm up"})
        for size in bursts:
            hot, quiet, idle = [], [], []
            for _ in range(rounds):
                query = burst(size)
                t0 = time.perf_counter()
                gw.call("meta/agent_memory/recall", {**recall, "query_text": query})
                hot.append((time.perf_counter() - t0) * 1000)
                query = burst(size)
                time.sleep(0.1)
                t0 = time.perf_counter()
                gw.call("meta/agent_memory/recall", {**recall, "query_text": query})
                quiet.append((time.perf_counter() - t0) * 1000)
                t0 = time.perf_counter()
                gw.call("meta/agent_memory/recall", {**recall, "query_text": query})
                idle.append((time.perf_counter() - t0) * 1000)
            out.append((size, statistics.median(hot), statistics.median(quiet), statistics.median(idle)))
        gw.close()
    return out


def bench_bare_sqlite(n: int, durability: str) -> float:
    with tempfile.TemporaryDirectory(dir=OUT) as tmp:
        db = sqlite3.connect(Path(tmp) / "bare.sqlite3", isolation_level=None)
        db.execute("PRAGMA journal_mode = WAL")
        db.execute(f"PRAGMA synchronous = {'FULL' if durability == 'power' else 'NORMAL'}")
        db.execute("CREATE TABLE t (id TEXT PRIMARY KEY, title TEXT, body TEXT)")
        corpus = Corpus(seed=11)
        texts = [corpus.record_text() for _ in range(n)]
        t0 = time.perf_counter()
        for i, (title, body) in enumerate(texts):
            db.execute("BEGIN IMMEDIATE")
            db.execute("INSERT INTO t VALUES (?, ?, ?)", (f"id{i}", title, body))
            db.execute("COMMIT")
        rate = n / (time.perf_counter() - t0)
        db.close()
        return rate


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--identities", type=int, default=100)
    parser.add_argument("--per-identity", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--remembers", type=int, default=5_000)
    parser.add_argument(
        "--repeat", type=int, default=3, help="remember runs per durability (medians are reported)"
    )
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)

    # Named by its page size too: a fixture made by a release with another page size is rebuilt.
    fixture = OUT / f"realm-{args.identities}x{args.per_identity}-p{REALM_PAGE_SIZE}.sqlite3"
    build_fixture(fixture, args.identities, args.per_identity)
    upgrade_fixture(fixture)
    state = OUT / "recall-state"
    if state.exists():
        shutil.rmtree(state)
    realm_path = StateLayout.at(state).realm_db_path("bench", StateLayout.at(state).agent_memory_canonical)
    realm_path.parent.mkdir(parents=True)
    shutil.copyfile(fixture, realm_path)
    shutil.copyfile(StateLayout.recall_index_path(fixture), StateLayout.recall_index_path(realm_path))
    total_records = args.identities * args.per_identity
    identity = identity_name(args.identities // 2)
    queries = queries_for(realm_path, identity, args.queries, random.Random(3))

    lib = bench_recall_library(state, identity, queries)
    naive = bench_naive(realm_path, identity, queries[: max(50, args.queries // 5)])
    rpc, recall_rss = bench_recall_stdio(state, identity, queries)

    table = Table(
        title=f"contextual recall: identity with {args.per_identity:,} records, realm file {total_records:,}"
    )
    for col in ("path", "p50 ms", "p99 ms", "naive scan p50 ms", "speed-up (p50)"):
        table.add_column(col, justify="right")
    naive_p50 = statistics.median(naive)
    table.add_row(
        "library API",
        f"{statistics.median(lib):.2f}",
        f"{percentile(lib, 0.99):.2f}",
        f"{naive_p50:.1f}",
        f"{naive_p50 / statistics.median(lib):.0f}x",
    )
    table.add_row(
        "stdio RPC",
        f"{statistics.median(rpc):.2f}",
        f"{percentile(rpc, 0.99):.2f}",
        f"{naive_p50:.1f}",
        f"{naive_p50 / statistics.median(rpc):.0f}x",
    )
    console.print(table)

    table = Table(
        title=f"remember over stdio, one acknowledged write at a time ({args.remembers:,} records, "
        f"median of {args.repeat} runs, each beside its baseline)"
    )
    for col in (
        "durability",
        "recall index built by",
        "records/s (runs)",
        "bare SQLite insert+commit/s (runs)",
        "ratio of medians",
        "bytes/record",
        "peak RSS MB",
        "fresh tier merged after s",
    ):
        table.add_column(col, justify="right")
    for durability, index_worker in (("process", "auto"), ("process", "inline"), ("power", "auto")):
        rates, bares, sizes, rsses, merges = [], [], [], [], []
        for _ in range(args.repeat):
            rate, per_record, rss, merged_s = bench_remember_stdio(args.remembers, durability, index_worker)
            rates.append(rate)
            bares.append(bench_bare_sqlite(args.remembers, durability))
            sizes.append(per_record)
            rsses.append(rss)
            merges.append(merged_s)
        rate, bare = statistics.median(rates), statistics.median(bares)
        table.add_row(
            durability,
            "indexing process" if index_worker == "auto" else "the gateway",
            f"{rate:,.0f} ({' / '.join(f'{r:,.0f}' for r in rates)})",
            f"{bare:,.0f} ({' / '.join(f'{b:,.0f}' for b in bares)})",
            f"{bare / rate:.1f}x slower",
            f"{statistics.median(sizes):,.0f}",
            f"{max(rsses):.0f}",
            f"{statistics.median(merges):.1f}",
        )
    console.print(table)

    table = Table(title="recall over stdio right after a burst of remembers (median of 5 per size)")
    for col in ("burst", "recall at once ms", "after 100 ms quiet ms", "no backlog ms (baseline)"):
        table.add_column(col, justify="right")
    for size, hot, quiet, idle in bench_burst_then_recall((10, 100, 500)):
        table.add_row(f"{size:,}", f"{hot:.1f}", f"{quiet:.1f}", f"{idle:.1f}")
    console.print(table)
    fixture_bytes = sum(p.stat().st_size for p in fixture.parent.glob(fixture.name + "*"))
    console.print(
        f"realm file: {fixture_bytes / 1e6:,.0f} MB for {total_records:,} records = "
        f"{fixture_bytes / total_records:,.0f} bytes/record; gateway peak RSS during recall: {recall_rss:.0f} MB"
    )


if __name__ == "__main__":
    sys.exit(main())
