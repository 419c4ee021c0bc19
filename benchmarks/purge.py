"""What erasing an identity costs: ``meta/agent_memory/purge {identity, all: true}`` on a realm of
several identities, beside what the same run measures for the alternatives and the writes meanwhile.

Run: ``python benchmarks/purge.py [--identities 10] [--per-identity 10000] [--dsn postgresql://...]``.
It fills one realm with ``--identities`` identities of ``--per-identity`` records each (the
benchmark's generated text, in process), then, with one writer remembering records for another
identity one acknowledged write at a time:

- times the writes for ``--baseline-s`` seconds with nothing else running (baseline, same run);
- purges the first identity (every one of its records, its recall-index entries and, on SQLite,
  the rewrite of the realm's files), timing it and the writes that wait meanwhile;
- times ``forget`` of ``--forget`` records of the second identity, one call each (a tombstone: the
  text stays), as the per-record cost of the API a purge replaces.

Without ``--dsn`` the realm is an SQLite state dir (the embedded default); with it, a schema of
its own in that database, dropped at the end.
"""

from __future__ import annotations

import argparse
import secrets
import shutil
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from meta_memory import Meta

WORDS = ["deploy", "review", "budget", "harbor", "espresso", "grinder", "friday", "oslo", "cello", "garden"]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def build(state: Path, dsn: str | None) -> Any:
    builder = Meta.builder().persistent_state(state).memory()
    config: dict[str, Any] = {"store": "postgres", "postgres": {"dsn": dsn}} if dsn else {}
    return builder.agent_memory(**config).build()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--identities", type=int, default=10)
    parser.add_argument("--per-identity", type=int, default=10_000)
    parser.add_argument("--forget", type=int, default=1_000)
    parser.add_argument("--baseline-s", type=float, default=3.0)
    parser.add_argument("--dsn", default=None, help="PostgreSQL: purge there instead of an SQLite state dir.")
    args = parser.parse_args()
    assert args.identities >= 2, "the second identity's records are forgotten for the baseline"

    root = Path(tempfile.mkdtemp(prefix="meta-purge-bench-"))
    schema = None
    dsn = args.dsn
    if dsn:
        import psycopg

        schema = f"bench_{secrets.token_hex(4)}"
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute(f"CREATE SCHEMA {schema}")
        dsn = f"{dsn}{'&' if '?' in dsn else '?'}options=-csearch_path%3D{schema}"
    try:
        run(root / "state", dsn, args)
    finally:
        shutil.rmtree(root, ignore_errors=True)
        if schema is not None:
            import psycopg

            with psycopg.connect(args.dsn, autocommit=True) as admin:
                admin.execute(f"DROP SCHEMA {schema} CASCADE")


def run(state: Path, dsn: str | None, args: argparse.Namespace) -> None:
    backend = "PostgreSQL" if dsn else "SQLite"
    total = args.identities * args.per_identity
    with build(state, dsn) as meta:
        started = time.monotonic()
        for n in range(total):
            words = " ".join(WORDS[(n * 7 + k) % len(WORDS)] for k in range(8))
            meta.remember_agent_memory(
                f"agent-{n % args.identities}", title=f"Note {n}", body=f"Record {n}: {words}."
            )
        fill_s = time.monotonic() - started
        print(f"{backend}: filled {total:,} records ({args.identities} identities) in {fill_s:.1f} s")

        latencies: list[tuple[float, float]] = []  # (sent at, seconds to its acknowledgement)
        stop = threading.Event()

        def write() -> None:
            n = 0
            while not stop.is_set():
                n += 1
                began = time.monotonic()
                meta.remember_agent_memory("writer", title=f"Write {n}", body=f"A write during the run {n}.")
                latencies.append((began, time.monotonic() - began))

        writer = threading.Thread(target=write)
        writer.start()
        try:
            time.sleep(args.baseline_s)
            purge_began = time.monotonic()
            receipt = meta.purge_agent_memory("agent-0", all=True)
            purge_ended = time.monotonic()
            time.sleep(0.2)
        finally:
            stop.set()
            writer.join()
        before = [s for at, s in latencies if at + s < purge_began]
        # Sent before the purge ended and acknowledged after it began: the writes it held up.
        during = [s for at, s in latencies if at < purge_ended and at + s > purge_began]
        purge_s = purge_ended - purge_began
        assert len(receipt.records) == args.per_identity, len(receipt.records)

        forgotten = 0
        spent = 0.0
        while forgotten < args.forget:  # a forgotten record leaves the active listing
            page = meta.list_agent_memory("agent-1", limit=min(200, args.forget - forgotten)).records
            if not page:
                break
            started = time.monotonic()
            for record in page:
                meta.forget_agent_memory("agent-1", record.memory_id)
            spent += time.monotonic() - started
            forgotten += len(page)
        forget_s = spent / max(1, forgotten)

    print(
        f"purge of an identity with {args.per_identity:,} records in a realm of {total:,}: "
        f"{purge_s:.2f} s ({args.per_identity / purge_s:,.0f} records/s)"
    )
    print(
        f"baseline, same run: forget one record at a time {forget_s * 1000:.2f} ms each "
        f"({args.per_identity * forget_s:.1f} s for {args.per_identity:,}, leaving the text); "
        f"filling the realm took {fill_s / total * 1000:.2f} ms a record"
    )
    if before and during:
        print(
            f"writes of another identity: p50 {statistics.median(before) * 1000:.2f} ms / "
            f"p99 {percentile(before, 0.99) * 1000:.2f} ms before; during the purge "
            f"{len(during)} in flight, longest {max(during) * 1000:.0f} ms "
            f"(the purge holds the realm's write lock while it deletes and rewrites)"
        )


if __name__ == "__main__":
    main()
