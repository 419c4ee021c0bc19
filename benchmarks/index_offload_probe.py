"""Probe: what `remember` over stdio would reach with the recall index built by another process.

Not a feature, a measurement for the next design step. Three gateways, interleaved, each run
beside a bare-SQLite baseline measured in the same run (see agent_memory.py):

1. ``inline``: the gateway applying the recall-index backlog itself (``index_worker = "inline"``;
   since this probe, the gateway's default is a helper process, index_worker.py);
2. ``no index``: the same gateway with the backlog never applied (an upper bound);
3. ``offloaded``: (2) plus a separate process that follows the realm file read-only and builds
   the same postings (same analyzer, sorted batches) into a file of its own: the work a sidecar
   indexer would do, competing for the machine's cores like one would;
4. ``offloaded, same file``: as (3), but the helper writes its postings into the realm file
   itself, so its write transactions contend with the gateway's for SQLite's one writer.

    python benchmarks/index_offload_probe.py [--remembers 5000] [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).parent))
import agent_memory as am
from meta_memory.storage.layout import StateLayout

console = Console()

_NO_INDEX_GATEWAY = """
import sys
import meta_memory.memory.sqlite.indexing as indexing
indexing.INDEX_FLUSH_THRESHOLD = 10**12       # never applied inline
indexing.BackgroundIndexer.QUIET_S = 10**9    # nor in quiet spells
from meta_memory.cli import main
sys.exit(main(sys.argv[1:]))
"""


def follow_and_index(source: Path, target: Path, done_file: Path) -> None:
    """The offloaded indexer: index every record of ``source`` into ``target`` as it appears."""
    from meta_memory.memory.recall.analyzer import analyze_record

    while not source.exists():
        time.sleep(0.01)
    time.sleep(0.2)  # the gateway migrates the new file first
    reader = sqlite3.connect(f"file:{source}?mode=ro", uri=True, isolation_level=None)
    writer = sqlite3.connect(target, isolation_level=None)
    writer.execute("PRAGMA busy_timeout = 5000")
    writer.execute("PRAGMA journal_mode = WAL")
    writer.execute("PRAGMA synchronous = NORMAL")
    writer.execute("CREATE TABLE probe_terms (term_id INTEGER PRIMARY KEY, term TEXT NOT NULL UNIQUE)")
    writer.execute(
        "CREATE TABLE probe_postings (scope_id INTEGER, term_id INTEGER, doc INTEGER, tf_title INTEGER, "
        "tf_body INTEGER, tf_tags INTEGER, length INTEGER, PRIMARY KEY (scope_id, term_id, doc)) WITHOUT ROWID"
    )
    term_ids: dict[str, int] = {}
    last = done = 0
    while True:
        try:
            rows = reader.execute(
                "SELECT doc, scope_id, title, body, tags FROM records WHERE doc > ? ORDER BY doc LIMIT 512",
                (last,),
            ).fetchall()
        except sqlite3.OperationalError:
            rows = []
        if not rows:
            time.sleep(0.01)
            continue
        writer.execute("BEGIN IMMEDIATE")
        batch: list[tuple[int, ...]] = []
        for doc, scope_id, title, body, tags in rows:
            analysis = analyze_record(title, body, json.loads(tags))
            for term, (tf_title, tf_body, tf_tags) in analysis.fields.items():
                term_id = term_ids.get(term)
                if term_id is None:
                    term_id = writer.execute("INSERT INTO probe_terms (term) VALUES (?)", (term,)).lastrowid
                    assert term_id is not None
                    term_ids[term] = term_id
                batch.append((scope_id, term_id, doc, tf_title, tf_body, tf_tags, analysis.length))
        batch.sort()
        writer.executemany("INSERT INTO probe_postings VALUES (?, ?, ?, ?, ?, ?, ?)", batch)
        writer.execute("COMMIT")
        last = rows[-1][0]
        done += len(rows)
        done_file.write_text(str(done))


def run(variant: str, n: int, workdir: Path) -> tuple[float, int]:
    """records/s for one variant, and how many records the offloaded indexer had indexed."""
    original = am.subprocess.Popen
    helper: list[subprocess.Popen[bytes]] = []
    done_file = workdir / f"indexed-{variant}-{time.monotonic_ns()}.txt"

    def popen(cmd: list[str], **kw: Any) -> subprocess.Popen[bytes]:
        if variant != "inline" and "stdio" in cmd:
            state = Path(cmd[cmd.index("--state-dir") + 1])
            if variant.startswith("offloaded"):
                realm = StateLayout.at(state).realm_db_path("bench")
                target = realm if variant == "offloaded-same-file" else state.parent / "index.sqlite3"
                helper.append(
                    original(
                        [
                            sys.executable,
                            __file__,
                            "--follow",
                            str(realm),
                            str(target),
                            str(done_file),
                        ]
                    )
                )
            cmd = [sys.executable, "-c", _NO_INDEX_GATEWAY, *cmd[1:]]
        return original(cmd, **kw)

    am.subprocess.Popen = popen  # type: ignore[assignment]
    try:
        rate, _, _ = am.bench_remember_stdio(n, "process", "inline")
    finally:
        am.subprocess.Popen = original  # type: ignore[assignment]
        for proc in helper:
            time.sleep(0.3)  # let it finish the last batch before reading its count
            proc.kill()
            proc.wait()
    indexed = int(done_file.read_text()) if done_file.exists() else 0
    return rate, indexed


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--remembers", type=int, default=5_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--follow", nargs=3, metavar=("SOURCE", "TARGET", "DONE_FILE"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.follow:
        follow_and_index(Path(args.follow[0]), Path(args.follow[1]), Path(args.follow[2]))
        return
    am.OUT.mkdir(exist_ok=True)
    keys = {
        "inline": "inline",
        "no index": "noindex",
        "offloaded": "offloaded",
        "offloaded, same file": "offloaded-same-file",
    }
    results: dict[str, list[tuple[float, float, int]]] = {label: [] for label in keys}
    for _ in range(args.rounds):
        for label, variant in keys.items():
            rate, indexed = run(variant, args.remembers, am.OUT)
            bare = am.bench_bare_sqlite(args.remembers, "process")
            results[label].append((rate, bare, indexed))
    table = Table(title=f"remember over stdio, {args.remembers:,} records, {args.rounds} interleaved rounds")
    for col in (
        "gateway",
        "records/s (rounds)",
        "bare SQLite/s (rounds)",
        "ratio (median)",
        "indexed by helper",
    ):
        table.add_column(col, justify="right")
    for label, runs in results.items():
        ratios = [bare / rate for rate, bare, _ in runs]
        table.add_row(
            label,
            " / ".join(f"{rate:,.0f}" for rate, _, _ in runs),
            " / ".join(f"{bare:,.0f}" for _, bare, _ in runs),
            f"{statistics.median(ratios):.1f}x",
            " / ".join(str(indexed) for _, _, indexed in runs) if label.startswith("offloaded") else "-",
        )
    console.print(table)


if __name__ == "__main__":
    main()
