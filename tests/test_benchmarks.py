"""Every script in benchmarks/ runs to the end on a small input: a benchmark that no longer runs
against the code it measures is a figure nobody can reproduce. This checks that each completes
and prints its result, never how fast (docs/benchmarks.md has the figures)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from .conftest import Backend

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
DEADLINE_S = 300


def _run(script: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *args],
        cwd=BENCHMARKS,
        capture_output=True,
        text=True,
        timeout=DEADLINE_S,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return done.stdout


def test_the_ledger_benchmark_runs(tmp_path: Path) -> None:
    out = _run("ledger_index.py", "--rounds", "5", "--block", "5", "--dir", str(tmp_path), "--stdio")
    assert "meta/memory/index over meta_gateway stdio" in out and "stdio ≥ 200 calls/s" in out


def test_the_firewall_benchmark_runs_and_contains_every_attack() -> None:
    assert "attacks contained: 27/27, benign writes stored: 9/9" in _run("firewall_poisoning.py")


def test_the_recall_quality_benchmark_runs() -> None:
    out = _run("recall_quality/evaluate.py")
    assert "held-out" in out and "Per-query cost" in out


def test_the_agent_memory_benchmark_runs() -> None:
    out = _run(
        "agent_memory.py", "--identities", "2", "--per-identity", "150", "--queries", "20",
        "--remembers", "40", "--repeat", "1",
    )  # fmt: skip
    assert "contextual recall" in out and "remember over stdio" in out


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_the_postgres_benchmark_runs(backend: Backend) -> None:
    assert backend.dsn is not None
    base, _, _ = backend.dsn.partition("?")
    try:
        out = _run(
            "postgres.py", "--dsn", base, "--remembers", "20", "--rounds", "1", "--identities", "2",
            "--per-identity", "120", "--queries", "20", "--clients", "2", "--seconds", "1",
        )  # fmt: skip
    finally:
        with psycopg.connect(base, autocommit=True) as admin:  # the fixture's schema, kept by design
            admin.execute("DROP SCHEMA IF EXISTS bench_recall_2x120 CASCADE")
    assert "2 gateways / 1 gateway aggregate remember/s" in out and "contextual recall" in out


def test_the_clients_benchmark_runs() -> None:
    out = _run("clients.py", "--calls", "30", "--records", "40", "--repeat", "1")
    assert "client / bare" in out and "AsyncMetaClient over HTTP" in out and "import" in out


def test_the_hybrid_recall_benchmark_runs() -> None:
    out = _run(
        "hybrid.py",
        "--records",
        "60",
        "--queries",
        "20",
        "--remembers",
        "40",
        "--repeat",
        "1",
        "--settle",
        "1",
    )
    assert "hybrid  p50" in out and "after a remember of its own" in out
    assert "embedding throughput" in out and "remember over stdio" in out


def test_the_hybrid_recall_quality_benchmark_runs() -> None:
    out = _run("recall_quality/hybrid.py", "--smoke")
    assert "hybrid" in out and "lexical" in out


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_the_durable_taint_benchmark_runs(backend: Backend) -> None:
    """Against HEAD as its own baseline: a shallow clone holds no older commit to compare with."""
    assert backend.dsn is not None
    base, _, _ = backend.dsn.partition("?")
    out = _run("durable_taint.py", "--dsn", base, "--n", "10", "--rounds", "1", "--baseline", "HEAD")
    assert "taint_transition" in out and "llm_write_tainted" in out and "postgres: median" in out


def test_the_secrets_scan_benchmark_runs_and_refuses_the_whole_corpus() -> None:
    out = _run("secrets_scan.py", "--smoke")
    assert "Detection on the true-secret corpus" in out and "100.0%" in out
    assert "False positives on ordinary text" in out and "Scan cost of clean text" in out


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_the_team_recall_benchmark_runs_on_both_backends(backend: Backend) -> None:
    assert backend.dsn is not None
    base, _, _ = backend.dsn.partition("?")
    out = _run("team_recall.py", "--dsn", base, "--records", "150", "--queries", "20")
    rows = [line for line in out.splitlines() if "│ identity + mob" in line]
    assert len(rows) == 2 and "sqlite" in rows[0] and "postgres" in rows[1], out


def test_the_embedding_runtime_benchmark_runs() -> None:
    out = _run("embedding_runtime.py", "--records", "20", "--queries", "5")
    assert "query_p50_ms" in out and "numpy/onnxruntime" in out


def test_the_backup_benchmark_runs() -> None:
    out = _run("backup.py", "--records", "300", "--baseline-s", "0.5")
    assert "backup:" in out and "during/before: p50" in out


def test_the_purge_benchmark_runs() -> None:
    out = _run(
        "purge.py", "--identities", "2", "--per-identity", "40", "--forget", "10", "--baseline-s", "0.2"
    )
    assert (
        "purge of an identity with 40 records in a realm of 80" in out
        and "forget one record at a time" in out
    )
