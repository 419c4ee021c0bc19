"""PostgreSQL backend benchmark: remember, contextual recall, and several gateways on one database.

Run: ``python benchmarks/postgres.py`` (a PostgreSQL server at ``--dsn``, by default the machine's
own ``postgresql://127.0.0.1:5432/test``; each measurement works in a schema of its own). Every
figure is printed beside a baseline measured in the same run:

- remember, one acknowledged write at a time, over stdio and over HTTP, on PostgreSQL and on the
  embedded SQLite default, beside a bare psycopg ``INSERT`` + ``COMMIT`` loop of the same rows on
  the same server (the database's own floor) and the bare SQLite loop;
- contextual recall for one identity of a 100,000-record realm (10 identities x 10,000), the same
  records on both backends (the PostgreSQL copy is made by ``storage-copy``, whose speed is
  printed too), queries interleaved between the backends so that both see the same machine;
- 1 and 2 gateways (``meta_gateway serve``) on one database with 8 concurrent HTTP clients, each
  remembering and recalling in turn: aggregate remember/s, recall p50/p99, errors.
"""

from __future__ import annotations

import argparse
import json
import random
import secrets
import shutil
import socket
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import psycopg
from rich.console import Console
from rich.table import Table

from agent_memory import OUT, Corpus, StdioGateway, bench_bare_sqlite, build_fixture, percentile, queries_for
from meta_memory.config import load_config_dict
from meta_memory.memory.params import parse_recall
from meta_memory.memory.sqlite.store import REALM_PAGE_SIZE
from meta_memory.runtime import MetaRuntime
from meta_memory.storage.layout import StateLayout
from meta_memory.storage_copy import copy_to_postgres

console = Console()


# -- schemas and gateways -----------------------------------------------------------------------


def in_schema(dsn: str, schema: str) -> str:
    return f"{dsn}{'&' if '?' in dsn else '?'}options=-csearch_path%3D{schema}"


@contextmanager
def fresh_schema(dsn: str) -> Iterator[str]:
    """A schema of its own for one measurement (dropped after); yields its DSN."""
    schema = f"bench_{secrets.token_hex(4)}"
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {schema}")
        try:
            yield in_schema(dsn, schema)
        finally:
            admin.execute(f"DROP SCHEMA {schema} CASCADE")


def config_file(directory: Path, dsn: str | None, name: str) -> Path:
    path = directory / f"{name}.toml"
    store = f'store = "postgres"\n[agent_memory.postgres]\ndsn = "{dsn}"\npool_max = 16\n' if dsn else ""
    path.write_text(f'[agent_memory]\nrealm = "bench"\n{store}')
    return path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class HttpGateway:
    """``meta_gateway serve`` on a port of its own."""

    def __init__(self, state: Path, config: Path) -> None:
        self.port = free_port()
        command = [shutil.which("meta_gateway") or "meta_gateway", "serve", "--state-dir", str(state)]
        self.proc = subprocess.Popen(
            [*command, "--config", str(config), "--port", str(self.port), "--log-level", "warning"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.url = f"http://127.0.0.1:{self.port}/rpc"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the gateway did not listen")

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=60)


def rpc(http: httpx.Client, url: str, method: str, params: dict[str, Any]) -> Any:
    reply = http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).json()
    if "error" in reply:
        raise RuntimeError(reply["error"])
    return reply["result"]


# -- remember -----------------------------------------------------------------------------------


def texts(n: int) -> list[tuple[str, str]]:
    corpus = Corpus(seed=11)
    return [corpus.record_text() for _ in range(n)]


def remember_stdio(dsn: str | None, n: int) -> float:
    with tempfile.TemporaryDirectory(dir=OUT) as tmp:
        gw = StdioGateway(Path(tmp) / "state", config_file(Path(tmp), dsn, "stdio"))
        rows = texts(n)
        t0 = time.perf_counter()
        for i, (title, body) in enumerate(rows):
            gw.call(
                "meta/agent_memory/remember", {"identity": f"agent:{i % 10}", "title": title, "body": body}
            )
        rate = n / (time.perf_counter() - t0)
        gw.close()
        return rate


def remember_http(dsn: str | None, n: int) -> float:
    with tempfile.TemporaryDirectory(dir=OUT) as tmp:
        gw = HttpGateway(Path(tmp) / "state", config_file(Path(tmp), dsn, "http"))
        try:
            rows = texts(n)
            with httpx.Client(timeout=60) as http:
                t0 = time.perf_counter()
                for i, (title, body) in enumerate(rows):
                    params = {"identity": f"agent:{i % 10}", "title": title, "body": body}
                    rpc(http, gw.url, "meta/agent_memory/remember", params)
                return n / (time.perf_counter() - t0)
        finally:
            gw.close()


def bare_psycopg(dsn: str, n: int) -> float:
    """The database's floor: one INSERT and one COMMIT per row, on one connection."""
    rows = texts(n)
    with psycopg.connect(dsn) as conn:
        conn.execute("CREATE TABLE bare (id TEXT PRIMARY KEY, title TEXT NOT NULL, body TEXT NOT NULL)")
        conn.commit()
        t0 = time.perf_counter()
        for i, (title, body) in enumerate(rows):
            conn.execute("INSERT INTO bare VALUES (%s, %s, %s)", (f"id{i}", title, body))
            conn.commit()
        return n / (time.perf_counter() - t0)


def bench_remember(dsn: str, n: int, rounds: int) -> None:
    paths = ("postgres stdio", "postgres http", "bare psycopg", "sqlite stdio", "sqlite http", "bare sqlite")
    rates: dict[str, list[float]] = {p: [] for p in paths}
    for r in range(rounds):
        order = paths if r % 2 == 0 else tuple(reversed(paths))
        for path in order:
            with console.status(f"remember round {r + 1}/{rounds}: {path}"):
                if path == "bare sqlite":
                    rates[path].append(bench_bare_sqlite(n, "process"))
                    continue
                if path.startswith("sqlite"):
                    rates[path].append((remember_stdio if "stdio" in path else remember_http)(None, n))
                    continue
                with fresh_schema(dsn) as schema_dsn:
                    if path == "bare psycopg":
                        rates[path].append(bare_psycopg(schema_dsn, n))
                    else:
                        rates[path].append(
                            (remember_stdio if "stdio" in path else remember_http)(schema_dsn, n)
                        )
    median = {p: statistics.median(v) for p, v in rates.items()}
    table = Table(
        title=f"remember, one acknowledged write at a time ({n:,} records, {rounds} rounds, medians)"
    )
    for col in ("path", "records/s (rounds)", "median", "vs its database's bare loop"):
        table.add_column(col, justify="right")
    for path in paths:
        floor = (
            median["bare psycopg"] if path.startswith(("postgres", "bare psycopg")) else median["bare sqlite"]
        )
        table.add_row(
            path,
            " / ".join(f"{x:,.0f}" for x in rates[path]),
            f"{median[path]:,.0f}",
            f"{floor / median[path]:.2f}x slower" if not path.startswith("bare") else "1.00x",
        )
    console.print(table)


# -- recall -------------------------------------------------------------------------------------


def _state_with(fixture: Path, state: Path) -> Path:
    """A state dir holding the fixture as its one realm ``bench``; returns the realm file."""
    layout = StateLayout.at(state)
    realm = layout.realm_db_path("bench", layout.agent_memory_canonical)
    realm.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(fixture, realm)
    shutil.copyfile(StateLayout.recall_index_path(fixture), StateLayout.recall_index_path(realm))
    return realm


def recall_fixture(dsn: str, identities: int, per_identity: int) -> tuple[Path, str]:
    """The same realm on both backends: a fresh SQLite state dir holding the fixture (recalls
    write their usage counters into it), and a schema filled by ``storage-copy`` from a pristine
    copy of it (kept between runs: the copy ledger makes a second copy a verification)."""
    fixture = OUT / f"realm-{identities}x{per_identity}-p{REALM_PAGE_SIZE}.sqlite3"
    build_fixture(fixture, identities, per_identity)
    source = OUT / f"pg-recall-source-{identities}x{per_identity}"
    if not source.exists():
        _state_with(fixture, source)
    schema = f"bench_recall_{identities}x{per_identity}"
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
    schema_dsn = in_schema(dsn, schema)
    t0 = time.perf_counter()
    [report] = copy_to_postgres(source, schema_dsn, realms=["bench"])
    elapsed = time.perf_counter() - t0
    if report.outcome == "refused":
        raise RuntimeError(report.message)
    verb = "copied" if report.outcome == "copied" else "verified (copied before)"
    console.print(
        f"storage-copy: {report.rows:,} rows {verb} in {elapsed:.1f} s ({report.rows / elapsed:,.0f} rows/s)"
    )
    state = OUT / "pg-recall-sqlite-state"
    if state.exists():
        shutil.rmtree(state)
    _state_with(fixture, state)
    return state, schema_dsn


def library_recall(runtime: MetaRuntime, identity: str, query: str) -> float:
    memory = runtime.agent_memory
    assert memory is not None
    params = parse_recall(
        {"identity": identity, "realm": "bench", "query_text": query},
        default_realm="bench",
        default_selection="contextual",
        default_max=8,
    )
    t0 = time.perf_counter()
    memory.recall(params)
    return (time.perf_counter() - t0) * 1000


def bench_recall(dsn: str, identities: int, per_identity: int, n: int) -> None:
    state, schema_dsn = recall_fixture(dsn, identities, per_identity)
    realm = StateLayout.at(state).realm_db_path("bench", StateLayout.at(state).agent_memory_canonical)
    identity = f"agent:{identities // 2:03d}"
    queries = queries_for(realm, identity, n, random.Random(3))
    times: dict[str, list[float]] = {
        "sqlite library": [],
        "postgres library": [],
        "sqlite stdio": [],
        "postgres stdio": [],
    }
    with tempfile.TemporaryDirectory(dir=OUT) as tmp:
        pg_state = Path(tmp) / "pg-state"
        sqlite_rt = MetaRuntime.open(state, load_config_dict({"agent_memory": {"realm": "bench"}}))
        pg_rt = MetaRuntime.open(
            pg_state,
            load_config_dict(
                {"agent_memory": {"realm": "bench", "store": "postgres", "postgres": {"dsn": schema_dsn}}}
            ),
        )
        try:
            for q in queries[:100]:  # warm: page caches, term memos
                library_recall(sqlite_rt, identity, q)
                library_recall(pg_rt, identity, q)
            for i, q in enumerate(queries):
                pair = ((sqlite_rt, "sqlite"), (pg_rt, "postgres"))
                for rt, name in pair if i % 2 == 0 else reversed(pair):
                    times[f"{name} library"].append(library_recall(rt, identity, q))
        finally:
            sqlite_rt.close()
            pg_rt.close()
        gateways = {
            "sqlite": StdioGateway(state, config_file(Path(tmp), None, "sqlite")),
            "postgres": StdioGateway(pg_state, config_file(Path(tmp), schema_dsn, "pg")),
        }
        try:
            params = {"identity": identity, "realm": "bench"}
            for q in queries[:100]:
                for gw in gateways.values():
                    gw.call("meta/agent_memory/recall", {**params, "query_text": q})
            for i, q in enumerate(queries):
                names = ("sqlite", "postgres") if i % 2 == 0 else ("postgres", "sqlite")
                for name in names:
                    t0 = time.perf_counter()
                    gateways[name].call("meta/agent_memory/recall", {**params, "query_text": q})
                    times[f"{name} stdio"].append((time.perf_counter() - t0) * 1000)
        finally:
            for gw in gateways.values():
                gw.close()
    table = Table(
        title=f"contextual recall: one identity of {per_identity:,} records, realm of {identities * per_identity:,}"
        f" ({n} queries, interleaved)"
    )
    for col in ("path", "p50 ms", "p99 ms", "p50 vs SQLite"):
        table.add_column(col, justify="right")
    for path, values in times.items():
        base = statistics.median(times[path.replace("postgres", "sqlite")])
        table.add_row(
            path,
            f"{statistics.median(values):.2f}",
            f"{percentile(values, 0.99):.2f}",
            f"{statistics.median(values) / base:.2f}x",
        )
    console.print(table)


# -- several gateways -----------------------------------------------------------------------------


def fleet_round(dsn: str, gateways: int, clients: int, seconds: float) -> tuple[float, list[float], int]:
    """(aggregate remember/s, recall latencies in ms, errors) of ``clients`` threads against
    ``gateways`` gateways on one fresh schema, for ``seconds``."""
    with fresh_schema(dsn) as schema_dsn, tempfile.TemporaryDirectory(dir=OUT) as tmp:
        config = config_file(Path(tmp), schema_dsn, "fleet")
        served = [HttpGateway(Path(tmp) / f"state-{g}", config) for g in range(gateways)]
        remembered = [0] * clients
        recalls: list[list[float]] = [[] for _ in range(clients)]
        errors = [0] * clients
        start = threading.Barrier(clients + 1)
        stop = threading.Event()

        def client(c: int) -> None:
            corpus = Corpus(seed=100 + c)
            url = served[c % gateways].url
            identity = f"agent:{c:02d}"
            with httpx.Client(timeout=60) as http:
                start.wait()
                while not stop.is_set():
                    title, body = corpus.record_text()
                    try:
                        rpc(
                            http,
                            url,
                            "meta/agent_memory/remember",
                            {"identity": identity, "title": title, "body": body},
                        )
                        remembered[c] += 1
                        query = "what about " + " ".join(body.rstrip(".").split()[:4]) + "?"
                        t0 = time.perf_counter()
                        rpc(
                            http, url, "meta/agent_memory/recall", {"identity": identity, "query_text": query}
                        )
                        recalls[c].append((time.perf_counter() - t0) * 1000)
                    except (RuntimeError, httpx.HTTPError, json.JSONDecodeError):
                        errors[c] += 1

        threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
        for t in threads:
            t.start()
        start.wait()
        t0 = time.perf_counter()
        time.sleep(seconds)
        stop.set()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - t0
        for gw in served:
            gw.close()
        return sum(remembered) / elapsed, [x for per in recalls for x in per], sum(errors)


def bench_fleet(dsn: str, clients: int, seconds: float, rounds: int) -> None:
    results: dict[int, list[tuple[float, list[float], int]]] = {1: [], 2: []}
    for r in range(rounds):
        for gateways in (1, 2) if r % 2 == 0 else (2, 1):
            with console.status(f"fleet round {r + 1}/{rounds}: {gateways} gateway(s), {clients} clients"):
                results[gateways].append(fleet_round(dsn, gateways, clients, seconds))
    table = Table(
        title=f"{clients} HTTP clients, each remembering then recalling, {seconds:.0f} s a round ({rounds} rounds)"
    )
    for col in ("gateways", "remember/s (rounds)", "median", "recall p50 ms", "recall p99 ms", "errors"):
        table.add_column(col, justify="right")
    for gateways, runs in results.items():
        rates = [rate for rate, _, _ in runs]
        latencies = [x for _, lat, _ in runs for x in lat]
        table.add_row(
            str(gateways),
            " / ".join(f"{x:,.0f}" for x in rates),
            f"{statistics.median(rates):,.0f}",
            f"{statistics.median(latencies):.2f}",
            f"{percentile(latencies, 0.99):.2f}",
            str(sum(e for _, _, e in runs)),
        )
    console.print(table)
    one, two = (statistics.median(r for r, _, _ in results[g]) for g in (1, 2))
    console.print(f"2 gateways / 1 gateway aggregate remember/s: {two / one:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dsn", default="postgresql://127.0.0.1:5432/test")
    parser.add_argument("--remembers", type=int, default=2_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--identities", type=int, default=10)
    parser.add_argument("--per-identity", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--only", choices=("remember", "recall", "fleet"), action="append")
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    parts = args.only or ["remember", "recall", "fleet"]
    if "remember" in parts:
        bench_remember(args.dsn, args.remembers, args.rounds)
    if "recall" in parts:
        bench_recall(args.dsn, args.identities, args.per_identity, args.queries)
    if "fleet" in parts:
        bench_fleet(args.dsn, args.clients, args.seconds, args.rounds)


if __name__ == "__main__":
    main()
