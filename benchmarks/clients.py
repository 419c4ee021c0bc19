"""What the clients cost over the bare wire, and how fast export and import move records.

Run: ``python benchmarks/clients.py [--calls 2000] [--records 5000] [--repeat 3]``. Every figure is
printed beside a baseline measured in the same run:

- ``remember`` and contextual ``recall``, one call at a time, through ``MetaClient`` over stdio and
  over HTTP, beside the same JSON-RPC requests written by hand (JSON lines read back with
  ``readline`` on a child of its own; ``httpx`` posts to the same server): the client's overhead;
- ``AsyncMetaClient`` over HTTP with 8 calls in flight, beside the sync client one at a time;
- ``meta_gateway export`` and ``import`` of a state dir's records (records/s, each command a
  process of its own), beside writing the same records with ``remember`` through the in-process
  handle.

Medians of ``--repeat`` runs; the machine is shared, so read the ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table

from meta_memory import Meta
from meta_memory.client import AsyncMetaClient, MetaClient

console = Console()
GATEWAY = str(Path(sys.executable).with_name("meta_gateway"))
WORDS = [
    "deploy",
    "window",
    "approval",
    "ops",
    "release",
    "rollback",
    "schedule",
    "incident",
    "review",
    "budget",
    "policy",
    "owner",
]


def body(i: int) -> str:
    return f"Note {i}: the {WORDS[i % len(WORDS)]} of team {i % 97} follows the {WORDS[(i * 7) % len(WORDS)]} rule."


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def served(state_dir: Path) -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [GATEWAY, "serve", "--state-dir", str(state_dir), "--port", str(port), "--log-level", "warning"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(60)


def timed(calls: int, one: Callable[[int], object]) -> float:
    """Calls per second of ``one(i)`` for ``i`` in ``range(calls)``."""
    start = time.perf_counter()
    for i in range(calls):
        one(i)
    return calls / (time.perf_counter() - start)


def request(method: str, params: dict[str, Any], i: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}).encode()


def remember_params(i: int, identity: str) -> dict[str, Any]:
    return {"identity": identity, "title": f"Note {i}", "body": body(i)}


def recall_params(i: int, identity: str) -> dict[str, Any]:
    return {"identity": identity, "query_text": f"what is the {WORDS[i % len(WORDS)]} rule of team {i % 97}?"}


def bench_stdio(calls: int, base: Path) -> dict[str, float]:
    """JSON lines written and read by hand on one child, and the client on another (fresh dirs both)."""
    raw_proc = subprocess.Popen(
        [GATEWAY, "stdio", "--state-dir", str(base / "stdio-raw")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert raw_proc.stdin is not None and raw_proc.stdout is not None
    stdin, stdout = raw_proc.stdin, raw_proc.stdout
    stdout.readline()  # the handshake

    def raw(method: str, params: dict[str, Any], i: int) -> None:
        stdin.write(request(method, params, i) + b"\n")
        stdin.flush()
        assert b'"result"' in stdout.readline()

    out: dict[str, float] = {}
    client = MetaClient.spawn(state_dir=base / "stdio-client")
    try:
        out["raw remember"] = timed(
            calls, lambda i: raw("meta/agent_memory/remember", remember_params(i, "raw"), i)
        )
        out["client remember"] = timed(
            calls, lambda i: client.remember_agent_memory("client", title=f"Note {i}", body=body(i))
        )
        out["raw recall"] = timed(
            calls, lambda i: raw("meta/agent_memory/recall", recall_params(i, "raw"), i)
        )
        out["client recall"] = timed(
            calls, lambda i: client.call("meta/agent_memory/recall", recall_params(i, "client"))
        )
    finally:
        client.close()
        stdin.close()
        raw_proc.wait(60)
    return out


def bench_http(calls: int, url: str) -> dict[str, float]:
    out: dict[str, float] = {}
    with httpx.Client(base_url=url, timeout=30) as http, MetaClient.connect(url) as client:
        headers = {"Content-Type": "application/json"}

        def raw(method: str, params: dict[str, Any], i: int) -> None:
            assert "result" in http.post("/rpc", content=request(method, params, i), headers=headers).json()

        out["raw remember"] = timed(
            calls, lambda i: raw("meta/agent_memory/remember", remember_params(i, "raw"), i)
        )
        out["client remember"] = timed(
            calls, lambda i: client.remember_agent_memory("client", title=f"Note {i}", body=body(i))
        )
        out["raw recall"] = timed(
            calls, lambda i: raw("meta/agent_memory/recall", recall_params(i, "raw"), i)
        )
        out["client recall"] = timed(
            calls, lambda i: client.call("meta/agent_memory/recall", recall_params(i, "client"))
        )
        out["sync recall, 1 in flight"] = out["client recall"]
    out["async recall, 8 in flight"] = asyncio.run(bench_async(calls, url))
    return out


async def bench_async(calls: int, url: str) -> float:
    client = await AsyncMetaClient.connect(url)
    try:
        queue = list(range(calls))

        async def worker() -> None:
            while queue:
                i = queue.pop()
                await client.call("meta/agent_memory/recall", recall_params(i, "client"))

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(8)))
        return calls / (time.perf_counter() - start)
    finally:
        await client.close()


def bench_transfer(records: int, base: Path) -> dict[str, float]:
    source = base / "source"
    start = time.perf_counter()
    with Meta.builder().persistent_state(source).memory().agent_memory().build() as meta:
        for i in range(records):
            meta.remember_agent_memory(f"user:{i % 50}", title=f"Note {i}", body=body(i), tags=["bench"])
    written = records / (time.perf_counter() - start)
    export = base / "export.jsonl"
    start = time.perf_counter()
    subprocess.run(
        [GATEWAY, "export", "--state-dir", str(source), "-o", str(export)], check=True, capture_output=True
    )
    exported = records / (time.perf_counter() - start)
    start = time.perf_counter()
    subprocess.run(
        [GATEWAY, "import", str(export), "--state-dir", str(base / "target")], check=True, capture_output=True
    )
    imported = records / (time.perf_counter() - start)
    return {"remember in process (baseline)": written, "export": exported, "import": imported}


def median_of(runs: list[dict[str, float]]) -> dict[str, float]:
    return {key: statistics.median(run[key] for run in runs) for key in runs[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--records", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    stdio_runs, http_runs, transfer_runs = [], [], []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            base = Path(tmp)
            stdio_runs.append(bench_stdio(args.calls, base))
            with served(base / "http") as url:
                http_runs.append(bench_http(args.calls, url))
            transfer_runs.append(bench_transfer(args.records, base))
    stdio, http, transfer = median_of(stdio_runs), median_of(http_runs), median_of(transfer_runs)

    table = Table(title=f"Client overhead: calls/s, median of {args.repeat} ({args.calls} calls each)")
    for column in ("transport", "method", "bare wire", "client", "client / bare"):
        table.add_column(column, justify="right" if column != "transport" and column != "method" else "left")
    for name, figures in (("stdio", stdio), ("HTTP", http)):
        for method in ("remember", "recall"):
            bare, ours = figures[f"raw {method}"], figures[f"client {method}"]
            table.add_row(name, method, f"{bare:,.0f}", f"{ours:,.0f}", f"{ours / bare:.2f}x")
    console.print(table)
    sync, concurrent = http["sync recall, 1 in flight"], http["async recall, 8 in flight"]
    console.print(
        f"AsyncMetaClient over HTTP, 8 recalls in flight: {concurrent:,.0f}/s vs the sync client one at a "
        f"time {sync:,.0f}/s ({concurrent / sync:.2f}x)"
    )
    baseline = transfer["remember in process (baseline)"]
    console.print(
        f"export {transfer['export']:,.0f} records/s, import {transfer['import']:,.0f} records/s "
        f"({args.records} records, each command a process of its own), vs remember in process {baseline:,.0f}/s"
    )


if __name__ == "__main__":
    main()
