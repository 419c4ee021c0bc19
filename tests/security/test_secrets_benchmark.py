"""benchmarks/secrets_scan.py runs to the end on its smoke input (as tests/test_benchmarks.py does
for the other scripts): the figures in docs/benchmarks.md stay reproducible. Never how fast."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def test_the_secrets_scan_benchmark_runs_and_refuses_the_whole_corpus() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "secrets_scan.py"), "--smoke"],
        cwd=BENCHMARKS,
        capture_output=True,
        text=True,
        timeout=110,
        env={**os.environ, "COLUMNS": "200"},
        check=False,
    )

    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    assert "Detection on the true-secret corpus" in done.stdout and "100.0%" in done.stdout
    assert "False positives on ordinary text" in done.stdout and "Scan cost of clean text" in done.stdout
