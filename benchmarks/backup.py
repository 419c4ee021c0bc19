"""What a live backup costs: its duration, and the latency of the writes a gateway serves meanwhile.

Run: ``python benchmarks/backup.py [--records 100000] [--baseline-s 5]``. It fills a realm of
``--records`` records in process (the benchmark's generated text), starts ``meta_gateway serve``
on it, and keeps one writer remembering records over HTTP, one acknowledged write at a time. It
times the writes for ``--baseline-s`` seconds with nothing else running (the baseline, same run),
then runs ``meta_gateway backup`` and times the writes while it runs. It prints the backup's
duration, its size, and the writes' p50 / p99 before and during it, with the ratio.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from conftest import free_port, gateway_command, wait_until_listening  # noqa: E402
from meta_memory import Meta  # noqa: E402

WORDS = [
    "deploy",
    "review",
    "budget",
    "harbor",
    "espresso",
    "grinder",
    "friday",
    "oslo",
    "cello",
    "garden",
    "invoice",
    "meeting",
]


def fill(state: Path, records: int) -> float:
    started = time.monotonic()
    with Meta.builder().persistent_state(state).memory().agent_memory().build() as meta:
        for n in range(records):
            words = " ".join(WORDS[(n * 7 + k) % len(WORDS)] for k in range(8))
            meta.remember_agent_memory(f"agent-{n % 50}", title=f"Note {n}", body=f"Record {n}: {words}.")
    return time.monotonic() - started


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--baseline-s", type=float, default=5.0)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="meta-backup-bench-"))
    try:
        state = work / "state"
        filled = fill(state, args.records)
        config = work / "meta.toml"
        config.write_text('[memory]\nkind = "local_json"\n\n[agent_memory]\nrecall = "lexical"\n')
        port = free_port()
        proc = subprocess.Popen(
            [
                gateway_command(),
                "serve",
                "--state-dir",
                str(state),
                "--config",
                str(config),
                "--port",
                str(port),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_until_listening(proc, port)
            base = f"http://127.0.0.1:{port}"
            latencies: list[tuple[float, float]] = []  # (started, seconds)
            stop = threading.Event()

            def write() -> None:
                with httpx.Client() as client:
                    n = 0
                    while not stop.is_set():
                        n += 1
                        body = {
                            "jsonrpc": "2.0",
                            "id": n,
                            "method": "meta/agent_memory/remember",
                            "params": {
                                "identity": "writer",
                                "title": f"Live {n}",
                                "body": f"Live write {n}.",
                            },
                        }
                        started = time.monotonic()
                        client.post(f"{base}/rpc", json=body, timeout=60).raise_for_status()
                        latencies.append((started, time.monotonic() - started))

            writer = threading.Thread(target=write)
            writer.start()
            time.sleep(1.0)  # warm
            baseline_from = time.monotonic()
            time.sleep(args.baseline_s)
            began = time.monotonic()
            done = subprocess.run(
                [gateway_command(), "backup", "--state-dir", str(state), "--to", str(work / "backup")],
                capture_output=True,
                text=True,
            )
            ended = time.monotonic()
            stop.set()
            writer.join()
            if done.returncode != 0:
                raise SystemExit(done.stderr)
        finally:
            proc.terminate()
            proc.wait(timeout=60)
        before = [s for at, s in latencies if baseline_from <= at < began]
        during = [s for at, s in latencies if began <= at < ended]
        size = sum(p.stat().st_size for p in (work / "backup").rglob("*") if p.is_file())
        print(
            f"realm of {args.records:,} records (filled in {filled:.0f} s); backup: {ended - began:.2f} s, {size:,} bytes"
        )
        for name, values in (("before (baseline)", before), ("during the backup", during)):
            print(
                f"writes {name}: {len(values)} acknowledged, p50 {statistics.median(values) * 1e3:.2f} ms, "
                f"p99 {percentile(values, 0.99) * 1e3:.2f} ms"
            )
        print(
            f"during/before: p50 {statistics.median(during) / statistics.median(before):.2f}x, "
            f"p99 {percentile(during, 0.99) / percentile(before, 0.99):.2f}x"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
