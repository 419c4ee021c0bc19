"""Team memory: what reading a shared scope beside an identity's own costs a recall.

Run: ``python benchmarks/team_recall.py`` (PostgreSQL at ``--dsn``, by default the machine's own
``postgresql://127.0.0.1:5432/test``, in a schema of its own; ``--no-postgres`` for SQLite alone).

One realm holds an identity of ``--records`` records (10,000 by default) and its mob's shared scope
of as many (generated text from the agent-memory benchmark's Zipfian vocabulary); the roster puts
the identity in the mob. The same contextual queries (3 to 6 words of a record of either scope) are
recalled through the API twice, alternating query by query: over the identity's own scope alone
(``scopes = ["identity"]``: the baseline, what a recall cost before shared scopes were read) and
over its own scope and the mob's (the default), after a warm-up of each. Each backend settles
after the fill first, as it does between bursts: SQLite's recall index merges its fresh tier
(``merged``), PostgreSQL's tables are vacuumed as autovacuum would a little later (``settle``). Target:
the shared recall within 1.5x of the identity-only one (p50), on each backend.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from agent_memory import Corpus, fresh_records, percentile
from meta_memory.config import load_config_dict
from meta_memory.memory.params import parse_recall, parse_remember
from meta_memory.runtime import MetaRuntime
from meta_memory.storage.layout import StateLayout

IDENTITY = "lead:main"
MOB = "crew"


def fill(runtime: MetaRuntime, records: int) -> list[str]:
    """``records`` of the identity's own and as many of its mob's; returns some bodies to ask by."""
    memory = runtime.agent_memory
    assert memory is not None
    corpus = Corpus(seed=11)
    bodies: list[str] = []
    for n in range(2 * records):
        title, body = corpus.record_text()
        where: dict[str, Any] = {"identity": IDENTITY} if n % 2 else {"scope": {"kind": "mob", "key": MOB}}
        memory.remember(parse_remember({**where, "title": title, "body": body}, default_realm="default"))
        if n % 97 == 0:
            bodies.append(body)
    return bodies


def settle(dsn: str) -> None:
    """What autovacuum does soon after a bulk fill (the postings and records tables vacuum after
    2% new rows; 20,000 remembers in a row outrun it): the visibility map that lets a recall count
    and read postings from the index alone. Without it both variants read the heap, the shared
    one twice as much."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE postings")
        conn.execute("VACUUM ANALYZE records")


def merged(runtime: MetaRuntime, state: Path) -> None:
    """Wait (at most a minute) for the quiet spell after the fill to merge the recall index's fresh
    tier into its postings, as it does in a realm between bursts: a recall of records still in the
    fresh tier is another figure (docs/benchmarks.md, "Recall right after a burst of writes")."""
    memory = runtime.agent_memory
    assert memory is not None
    memory.recall(
        parse_recall(
            {"identity": IDENTITY, "query_text": "x"},
            default_realm="default",
            default_selection="contextual",
            default_max=8,
        )
    )
    realm_path = StateLayout.at(state).realm_db_path("default")
    deadline = time.monotonic() + 60
    while fresh_records(realm_path) and time.monotonic() < deadline:
        time.sleep(0.05)


def measure(runtime: MetaRuntime, queries: list[str]) -> dict[str, list[float]]:
    memory = runtime.agent_memory
    assert memory is not None
    variants: dict[str, dict[str, Any]] = {"identity only": {"scopes": ["identity"]}, "identity + mob": {}}
    times: dict[str, list[float]] = {name: [] for name in variants}
    for warm in (True, False):
        for q in queries[:50] if warm else queries:
            for name, extra in variants.items():
                params = parse_recall(
                    {"identity": IDENTITY, "query_text": q, **extra},
                    default_realm="default",
                    default_selection="contextual",
                    default_max=8,
                )
                started = time.perf_counter()
                memory.recall(params)
                if not warm:
                    times[name].append((time.perf_counter() - started) * 1000)
    return times


def run(store: dict[str, Any], records: int, n_queries: int) -> dict[str, list[float]]:
    config = load_config_dict({"agent_memory": store, "roster": [{"identity": IDENTITY, "mob": MOB}]})
    with tempfile.TemporaryDirectory() as state, MetaRuntime.open(Path(state), config) as runtime:
        bodies = fill(runtime, records)
        if store.get("store") == "postgres":
            settle(store["postgres"]["dsn"])
        else:
            merged(runtime, Path(state))
        rng = random.Random(3)
        queries = []
        for _ in range(n_queries):
            words = rng.choice(bodies).rstrip(".").split()
            queries.append(
                "what about " + " ".join(rng.sample(words, min(len(words), rng.randint(3, 6)))) + "?"
            )
        return measure(runtime, queries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000, help="records of each scope")
    parser.add_argument("--queries", type=int, default=400)
    parser.add_argument("--dsn", default="postgresql://127.0.0.1:5432/test")
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args()

    from postgres import fresh_schema  # benchmarks/postgres.py: a schema of its own per measurement

    console = Console()
    table = Table(title=f"contextual recall, {args.records:,} own + {args.records:,} mob records, ms")
    for column in ("backend", "scopes", "p50", "p99", "mean", "p50 ratio"):
        table.add_column(column, justify="left" if column in ("backend", "scopes") else "right")
    backends: list[tuple[str, dict[str, Any] | None]] = [("sqlite", {})]
    if not args.no_postgres:
        backends.append(("postgres", None))
    for name, store in backends:
        if store is None:
            with fresh_schema(args.dsn) as dsn:
                times = run({"store": "postgres", "postgres": {"dsn": dsn}}, args.records, args.queries)
        else:
            times = run(store, args.records, args.queries)
        base = percentile(times["identity only"], 0.5)
        for variant, values in times.items():
            p50 = percentile(values, 0.5)
            table.add_row(
                name,
                variant,
                f"{p50:.2f}",
                f"{percentile(values, 0.99):.2f}",
                f"{statistics.mean(values):.2f}",
                f"{p50 / base:.2f}x",
            )
    console.print(table)
    console.print("target: identity + mob within 1.5x of identity only (p50)")


if __name__ == "__main__":
    main()
