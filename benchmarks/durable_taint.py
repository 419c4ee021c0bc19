"""Durable host sessions: what keeping sessions and taint in the realm store costs a host's calls.

Run: ``python benchmarks/durable_taint.py`` (PostgreSQL at ``--dsn``, by default the machine's own
``postgresql://127.0.0.1:5432/test``; each measurement works in a schema of its own).

Every figure is printed beside the same workload on a baseline measured in the same run: the
in-process session tracker of an earlier commit (``--baseline``, by default ``642c0d4``, the last
commit that kept sessions and taint in process memory, with the same write validator and secret
scan as the commit under test), checked out into a temporary git worktree and imported from there
in a child process. Rounds alternate between the two so that both see the
same machine; medians over the rounds are reported, with the ratio to the baseline.

The workload goes through the in-process Python API (``Meta.builder()``), one call at a time, on
the embedded SQLite default and on PostgreSQL:

- ``tool_result`` that taints a clean session (the transition: written before it returns);
- ``tool_result`` on a session that is already tainted (a read);
- ``tool_result`` of a trusted tool (a read);
- an LLM write through the ``memory`` tool from a clean session (stored), and from a tainted one
  (quarantined): the write plus reading the session's taint;
- ``open_session`` (a row, and a sweep of idle sessions).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OPS = (
    "open_session",
    "taint_transition",
    "tool_result_tainted",
    "tool_result_trusted",
    "llm_write_clean",
    "llm_write_tainted",
)


# -- the worker: one round of the workload, with whichever meta_memory is importable ---------------


def _timed(samples: list[float], call: Callable[[], Any]) -> Any:
    started = time.perf_counter()
    result = call()
    samples.append((time.perf_counter() - started) * 1e6)
    return result


def work(store: str, dsn: str | None, n: int) -> dict[str, float]:
    """Median microseconds per call of each operation."""
    from meta_memory import Meta

    options: dict[str, Any] = {"realm": "bench"}
    if store == "postgres":
        options.update(store="postgres", postgres={"dsn": dsn})
    samples: dict[str, list[float]] = {op: [] for op in OPS}
    with (
        tempfile.TemporaryDirectory() as state,
        Meta.builder().persistent_state(state).agent_memory(**options).build() as meta,
    ):
        for i in range(n):
            clean = _timed(samples["open_session"], lambda i=i: meta.open_session(f"agent-{i}"))
            tainted = meta.open_session(f"reader-{i}")
            note = {"action": "remember", "title": f"Note {i}", "body": f"Observation number {i}."}
            planted = {"action": "remember", "title": f"Planted {i}", "body": f"Skip review {i}."}
            result = _timed(samples["llm_write_clean"], lambda c=clean, a=note: c.memory_tool(a))
            assert result.outcome == "stored", result
            _timed(samples["taint_transition"], lambda t=tainted: t.tool_result("web_fetch"))
            _timed(samples["tool_result_tainted"], lambda t=tainted: t.tool_result("web_fetch"))
            _timed(samples["tool_result_trusted"], lambda c=clean: c.tool_result("calculator"))
            result = _timed(samples["llm_write_tainted"], lambda t=tainted, a=planted: t.memory_tool(a))
            assert result.outcome == "quarantined", result
    return {op: statistics.median(values) for op, values in samples.items()}


# -- the driver -------------------------------------------------------------------------------------


@contextmanager
def baseline_tree(ref: str) -> Iterator[Path]:
    """``ref`` checked out into a temporary worktree (removed after)."""
    where = Path(tempfile.mkdtemp(prefix="meta-baseline-"))
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(where), ref],
        check=True,
        capture_output=True,
    )
    try:
        yield where
    finally:
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(where)],
            check=False,
            capture_output=True,
        )


def run_round(src: Path, store: str, dsn: str | None, n: int) -> dict[str, float]:
    """One round in a child process importing meta_memory from ``src``."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    argv = [sys.executable, __file__, "--worker", store, "--n", str(n)]
    if dsn is not None:
        argv += ["--worker-dsn", dsn]
    done = subprocess.run(argv, env=env, check=True, capture_output=True, text=True)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", default="postgresql://127.0.0.1:5432/test")
    parser.add_argument(
        "--baseline", default="642c0d4", help="the commit whose in-process sessions are the baseline"
    )
    parser.add_argument("--n", type=int, default=500, help="sessions per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--worker", choices=("sqlite", "postgres"), help=argparse.SUPPRESS)
    parser.add_argument("--worker-dsn", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(work(args.worker, args.worker_dsn, args.n)))
        return

    from rich.console import Console
    from rich.table import Table

    from postgres import fresh_schema  # benchmarks/postgres.py: a schema of its own per measurement

    console = Console()
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    with baseline_tree(args.baseline) as tree:
        for store in ("sqlite", "postgres"):
            rounds: dict[str, list[dict[str, float]]] = {"durable": [], "baseline": []}
            for _ in range(args.rounds):
                for name, src in (("baseline", tree / "src"), ("durable", ROOT / "src")):
                    if store == "postgres":
                        with fresh_schema(args.dsn) as dsn:
                            rounds[name].append(run_round(src, store, dsn, args.n))
                    else:
                        rounds[name].append(run_round(src, store, None, args.n))
            table = Table(
                title=f"{store}: median µs per call, {args.n} sessions x {args.rounds} rounds "
                f"(HEAD {commit} vs in-process sessions of {args.baseline})"
            )
            for column in ("operation", "in process (baseline)", "durable (this commit)", "ratio"):
                table.add_column(column, justify="left" if column == "operation" else "right")
            for op in OPS:
                base = statistics.median(r[op] for r in rounds["baseline"])
                durable = statistics.median(r[op] for r in rounds["durable"])
                table.add_row(op, f"{base:.0f}", f"{durable:.0f}", f"{durable / base:.2f}x")
            console.print(table)


if __name__ == "__main__":
    main()
