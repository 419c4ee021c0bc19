"""Benchmark: ``meta/memory/index`` throughput with a full ledger, against the disk's physical limit.

Every index rewrites the whole ledger file (stage, fsync, rename, directory fsync), so with 4,096
retained assertions (~1.7 MB) the cost of an index is bounded below by writing that many bytes
durably. This script measures, in one run and on one filesystem:

(a) in-process ``Ledger.index`` (parser included) persisted through ``LocalJsonBackend``;
(b) the physical limit: a plain write + fsync + rename of the same number of bytes, repeated
    (and, for reference, the same plus the directory fsync the ledger also does);
(c) with ``--stdio``, ``meta/memory/index`` round trips through ``meta_gateway stdio``.

Blocks of (a), (b) and (c) are interleaved so that disk drift affects them alike. Run::

    python benchmarks/ledger_index.py [--rounds 300] [--stdio]
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from meta_memory.clock import SystemClock
from meta_memory.ledger import (
    MAX_RETAINED_ASSERTIONS,
    Assertion,
    Ledger,
    LedgerSnapshot,
    LocalJsonBackend,
    parse_index_params,
)
from meta_memory.ledger.model import format_assertion_id
from meta_memory.storage.layout import StateLayout

TARGET_CALLS_PER_S = 200.0
TARGET_RATIO = 1.5
REPLY_TIMEOUT_S = 30.0


@dataclass
class Series:
    """Per-operation wall times, in seconds."""

    name: str
    samples: list[float] = field(default_factory=list)

    def timed(self, operation: Callable[..., object], *args: Any, **kwargs: Any) -> None:
        started = time.perf_counter()
        operation(*args, **kwargs)
        self.samples.append(time.perf_counter() - started)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.samples) * 1000

    @property
    def p90_ms(self) -> float:
        return statistics.quantiles(self.samples, n=10)[-1] * 1000

    @property
    def per_second(self) -> float:
        return 1000 / self.median_ms


def _fact(i: int, chars: int) -> str:
    stem = f"assertion {i}: production deploys of service {i % 97} require an approval from on-call; "
    return (stem * (chars // len(stem) + 1))[:chars]


def index_params(i: int, fact_chars: int) -> dict[str, Any]:
    return {
        "entity": f"identity:agent-{i % 512:04d}",
        "topic": f"deployment-{i % 64}",
        "store": "knowledge_graph",
        "fact": _fact(i, fact_chars),
        "metadata": {"source": "benchmark", "sequence": i},
    }


def full_snapshot(fact_chars: int) -> LedgerSnapshot:
    """A ledger already at the retention cap, as it would be after 4,096 indexes."""
    assertions = []
    for i in range(MAX_RETAINED_ASSERTIONS):
        params = index_params(i, fact_chars)
        assertions.append(
            Assertion(
                assertion_id=format_assertion_id(i),
                entity=params["entity"],
                topic=params["topic"],
                store=params["store"],
                fact=params["fact"],
                metadata_json=json.dumps(params["metadata"]),
                indexed_at_ms=1_700_000_000_000 + i,
            )
        )
    return LedgerSnapshot(assertions=tuple(assertions), next_sequence=MAX_RETAINED_ASSERTIONS)


def seed_state_dir(state_dir: Path, fact_chars: int) -> int:
    """Write a full ledger file into ``state_dir``; returns its size in bytes."""
    layout = StateLayout.at(state_dir)
    backend = LocalJsonBackend.for_layout(layout)
    ledger = Ledger(clock=SystemClock(), backend=backend, snapshot=full_snapshot(fact_chars))
    ledger.index(parse_index_params(index_params(MAX_RETAINED_ASSERTIONS, fact_chars)))
    return layout.ledger_path.stat().st_size


def index_once(ledger: Ledger, params: dict[str, Any]) -> None:
    """What ``meta/memory/index`` does in process: the one validator, then the ledger."""
    ledger.index(parse_index_params(params))


def physical_write(directory: Path, data: bytes, *, sync_directory: bool) -> None:
    """The floor: the same bytes, written and made durable the plainest way."""
    stage, target = directory / "physical.tmp", directory / "physical.json"
    fd = os.open(stage, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(stage, target)
    if sync_directory:
        dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


# ---------------------------------------------------------------------------------------------------
# bench_over_stdio: the real gateway as a subprocess, one JSON-RPC line per request.
# ---------------------------------------------------------------------------------------------------


class StdioGateway:
    """``meta_gateway stdio --state-dir DIR``: JSON-RPC 2.0, one object per line each way."""

    def __init__(self, state_dir: Path, command: list[str] | None = None) -> None:
        argv = command or _gateway_command()
        self._process = subprocess.Popen(
            [*argv, "stdio", "--state-dir", str(state_dir)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            bufsize=1,
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        # A reader thread lets every wait have a deadline: a hung gateway fails the run, not hangs it.
        self._reader = threading.Thread(target=self._pump, daemon=True)
        self._reader.start()
        self._next_id = 0
        handshake = json.loads(self._read_line())
        if not isinstance(handshake, dict) or "contract_version" not in handshake:
            raise RuntimeError(f"gateway handshake lacks contract_version: {handshake!r}")
        self.contract_version = handshake["contract_version"]

    def _pump(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _read_line(self) -> str:
        try:
            line = self._lines.get(timeout=REPLY_TIMEOUT_S)
        except queue.Empty:
            raise RuntimeError(f"gateway sent nothing for {REPLY_TIMEOUT_S:.0f} s") from None
        if line is None:
            stderr = self._process.stderr.read() if self._process.stderr else ""
            raise RuntimeError(f"gateway exited (code {self._process.poll()}): {stderr.strip()}")
        return line

    def call(self, method: str, params: dict[str, Any]) -> Any:
        self._next_id += 1
        request = {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params}
        assert self._process.stdin is not None
        self._process.stdin.write(json.dumps(request) + "\n")
        self._process.stdin.flush()
        reply = json.loads(self._read_line())
        if reply.get("id") != self._next_id:
            raise RuntimeError(f"reply id {reply.get('id')!r} does not match request id {self._next_id}")
        if "error" in reply:
            raise RuntimeError(f"{method} failed: {reply['error']}")
        return reply["result"]

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()  # EOF on stdin is the gateway's cue to exit
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(timeout=10)
        self._reader.join(timeout=10)
        for stream in (self._process.stdout, self._process.stderr):
            if stream is not None:
                stream.close()


def _gateway_command() -> list[str]:
    found = shutil.which("meta_gateway")
    return [found] if found else [sys.executable, "-m", "meta_memory.cli"]


def bench_over_stdio(
    state_dir: Path, data: bytes, physical_dir: Path, rounds: int, block: int, fact_chars: int
) -> tuple[Series, Series, str]:
    """Time ``meta/memory/index`` round trips through ``meta_gateway stdio`` on a full ledger.

    ``state_dir`` must already hold the seeded ledger file (:func:`seed_state_dir`): the gateway
    reads it once at boot, which is far quicker than 4,096 index calls. Each request's wall time
    (write the line, gateway parse + index + persist, read the reply line) is one sample; blocks of
    requests alternate with blocks of the physical floor (``data`` written into ``physical_dir``).
    Returns the stdio series, the floor measured alongside it, and the gateway's contract version.
    The gateway is stopped on return.
    """
    stdio = Series("meta/memory/index over meta_gateway stdio")
    floor = Series("physical: write + fsync + rename (alongside stdio)")
    gateway = StdioGateway(state_dir)
    try:
        for chunk in _blocks(rounds, block):
            for i in chunk:
                params = index_params(MAX_RETAINED_ASSERTIONS + 1 + i, fact_chars)
                stdio.timed(gateway.call, "meta/memory/index", params)
            for _ in chunk:
                floor.timed(physical_write, physical_dir, data, sync_directory=False)
        stores = gateway.call("meta/memory/stores", {})
        total = sum(entry["record_count"] for entry in stores["stores"])
        if total != MAX_RETAINED_ASSERTIONS:
            raise RuntimeError(f"gateway ledger holds {total} records, expected {MAX_RETAINED_ASSERTIONS}")
        return stdio, floor, str(gateway.contract_version)
    finally:
        gateway.close()


# ---------------------------------------------------------------------------------------------------


def _blocks(rounds: int, block: int) -> Iterator[range]:
    for start in range(0, rounds, block):
        yield range(start, min(start + block, rounds))


def _ratio_rows(table: Table, label: str, series: Series, floor: Series) -> None:
    ratio = series.median_ms / floor.median_ms
    rate_ok, ratio_ok = series.per_second >= TARGET_CALLS_PER_S, ratio <= TARGET_RATIO
    table.add_row(f"{label} ≥ {TARGET_CALLS_PER_S:.0f} calls/s", f"{series.per_second:.0f}", _yes(rate_ok))
    table.add_row(f"{label} ≤ {TARGET_RATIO}× physical", f"{ratio:.2f}×", _yes(ratio_ok))


def _yes(ok: bool) -> str:
    return "yes" if ok else "no"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=300, help="index calls per series (default 300)")
    parser.add_argument("--block", type=int, default=25, help="calls per interleaved block (default 25)")
    parser.add_argument("--fact-chars", type=int, default=112, help="fact length; 112 gives ~1.7 MB")
    parser.add_argument("--dir", type=Path, default=None, help="where to write (default: benchmarks/out)")
    parser.add_argument("--stdio", action="store_true", help="also bench meta_gateway stdio")
    args = parser.parse_args()

    console = Console()
    base = args.dir or Path(__file__).resolve().parent / "out"
    base.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="ledger-index-", dir=base))
    try:
        in_process_dir, physical_dir, stdio_dir = work / "in-process", work / "physical", work / "stdio"
        for directory in (in_process_dir, physical_dir, stdio_dir):
            directory.mkdir()
        size = seed_state_dir(in_process_dir, args.fact_chars)
        layout = StateLayout.at(in_process_dir)
        started = time.perf_counter()
        ledger = Ledger.open(LocalJsonBackend.for_layout(layout), clock=SystemClock())
        load_ms = (time.perf_counter() - started) * 1000
        data = layout.ledger_path.read_bytes()
        console.print(
            f"ledger file {size:,} B ({MAX_RETAINED_ASSERTIONS:,} assertions); "
            f"load (read + validate + encode rows) {load_ms:.0f} ms; under {work}"
        )

        in_process = Series("Ledger.index in process (parse + index + persist)")
        physical = Series("physical: write + fsync + rename")
        physical_dirsync = Series("physical + directory fsync (the ledger's discipline)")
        for block in _blocks(args.rounds, args.block):
            for i in block:
                params = index_params(MAX_RETAINED_ASSERTIONS + 1 + i, args.fact_chars)
                in_process.timed(index_once, ledger, params)
            for _ in block:
                physical.timed(physical_write, physical_dir, data, sync_directory=False)
            for _ in block:
                physical_dirsync.timed(physical_write, physical_dir, data, sync_directory=True)

        over_stdio: tuple[Series, Series, str] | None = None
        if args.stdio:
            seed_state_dir(stdio_dir, args.fact_chars)
            over_stdio = bench_over_stdio(
                stdio_dir, data, physical_dir, args.rounds, args.block, args.fact_chars
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)

    table = Table(
        title=f"meta/memory/index, {MAX_RETAINED_ASSERTIONS:,} retained assertions, {size:,} B file"
    )
    for column in ("series", "median ms", "p90 ms", "calls/s (1/median)", "× physical"):
        table.add_column(column, justify="left" if column == "series" else "right")
    rows = [(in_process, physical), (physical, physical), (physical_dirsync, physical)]
    if over_stdio is not None:
        rows += [(over_stdio[0], over_stdio[1]), (over_stdio[1], over_stdio[1])]
    for series, floor in rows:
        table.add_row(
            series.name,
            f"{series.median_ms:.2f}",
            f"{series.p90_ms:.2f}",
            f"{series.per_second:.0f}",
            f"{series.median_ms / floor.median_ms:.2f}",
        )
    console.print(table)

    targets = Table(title="targets")
    for column in ("target", "measured", "met"):
        targets.add_column(column, justify="left" if column == "target" else "right")
    _ratio_rows(targets, "in-process", in_process, physical)
    if over_stdio is not None:
        _ratio_rows(targets, "stdio", over_stdio[0], over_stdio[1])
        console.print(f"gateway contract_version: {over_stdio[2]}")
    targets.add_row(
        f"physical floor ≥ {TARGET_CALLS_PER_S:.0f} writes/s (is the rate target reachable on this disk?)",
        f"{physical.per_second:.0f}",
        _yes(physical.per_second >= TARGET_CALLS_PER_S),
    )
    console.print(targets)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
