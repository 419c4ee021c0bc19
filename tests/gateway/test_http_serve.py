"""One real ``meta_gateway serve`` process: it listens, answers, and stops cleanly on SIGTERM."""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ..conftest import free_port, wait_until_listening

DEADLINE_S = 60.0


@pytest.fixture
def served(gateway_argv: list[str], tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    port = free_port()
    with (tmp_path / "stdout.log").open("wb") as out, (tmp_path / "stderr.log").open("wb") as err:
        proc = subprocess.Popen(
            [*gateway_argv, "serve", "--state-dir", str(tmp_path / "state"), "--port", str(port)],
            stdout=out,
            stderr=err,
        )
        try:
            wait_until_listening(proc, port)
            yield proc, f"http://127.0.0.1:{port}"
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=DEADLINE_S)


def test_serve_answers_health_and_rpc_then_exits_0_on_sigterm_with_logs_on_stderr_only(
    served: tuple[subprocess.Popen[bytes], str], tmp_path: Path
) -> None:
    proc, base = served
    with httpx.Client(base_url=base, timeout=DEADLINE_S) as http:
        assert http.get("/v1/health").json() == {"status": "ok"}
        index = {"entity": "Deploy", "topic": "window", "fact": "Tuesdays only"}
        made = http.post(
            "/rpc", json={"jsonrpc": "2.0", "id": 1, "method": "meta/memory/index", "params": index}
        )
        found = http.post(
            "/rpc",
            json={"jsonrpc": "2.0", "id": 2, "method": "meta/memory/query", "params": {"query": "TUESDAYS"}},
        )
    assert [a["assertion_id"] for a in found.json()["result"]["assertions"]] == [
        made.json()["result"]["assertion_id"]
    ]

    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=DEADLINE_S) == 0
    assert (tmp_path / "state" / "memory-ledger-state.json").is_file()
    stderr = (tmp_path / "stderr.log").read_text()
    assert "Application shutdown complete" in stderr and "POST /rpc" in stderr and "Traceback" not in stderr
    assert (tmp_path / "stdout.log").read_bytes() == b""
