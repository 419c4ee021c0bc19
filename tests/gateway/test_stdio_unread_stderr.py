"""A host that pipes the gateway's stderr and never reads it (the default of many process APIs)
must not block it: 10,000 pipelined calls with the pipe never drained finish, per-request lines
off (the default on stdio) and on (``--log-level debug``, where only the bounded log queue, which
drops rather than waits, keeps the gateway going)."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path

import pytest

from .conftest import gateway_command

CALLS = 10_000
DEADLINE_S = 300.0  # generous on a shared two-core machine; a hang fails at it instead of forever


def _pipelined(state_dir: Path, *flags: str) -> tuple[list[dict[str, object]], subprocess.Popen[bytes]]:
    """Write CALLS requests from one thread while another reads the replies; stderr is a pipe
    nobody reads. Returns the replies and the process (still running: stdin is left open)."""
    proc = subprocess.Popen(
        [*gateway_command(), "stdio", "--state-dir", str(state_dir), *flags],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,  # never read
    )
    assert proc.stdin is not None and proc.stdout is not None
    replies: list[dict[str, object]] = []
    stdout = proc.stdout

    def read() -> None:
        stdout.readline()  # the handshake
        for _ in range(CALLS):
            line = stdout.readline()
            if not line:
                return
            replies.append(json.loads(line))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()

    def write() -> None:
        assert proc.stdin is not None
        for i in range(CALLS):
            # Mostly cheap reads, so the pipe's filling is what the test measures; every hundredth
            # a ledger write (each one rewrites and fsyncs the ledger file).
            if i % 100:
                message = {"jsonrpc": "2.0", "id": i, "method": "meta/status"}
            else:
                params = {"entity": f"svc-{i}", "topic": "owner", "fact": f"team {i}"}
                message = {"jsonrpc": "2.0", "id": i, "method": "meta/memory/index", "params": params}
            proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    writer.join(DEADLINE_S)
    reader.join(DEADLINE_S)
    if reader.is_alive() or writer.is_alive():
        proc.kill()
        pytest.fail(f"the gateway stopped answering after {len(replies)} of {CALLS} calls")
    return replies, proc


@pytest.mark.parametrize("flags", [(), ("--log-level", "debug")], ids=["default", "debug"])
def test_ten_thousand_calls_finish_with_stderr_piped_and_never_read(
    tmp_path: Path, flags: tuple[str, ...]
) -> None:
    replies, proc = _pipelined(tmp_path / "state", *flags)
    try:
        assert len(replies) == CALLS
        assert [r["id"] for r in replies] == list(range(CALLS))
        assert all("result" in r for r in replies), next(r for r in replies if "result" not in r)
    finally:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        proc.stdin.close()  # EOF: a clean shutdown, which must not wait on the unread pipe forever
        assert proc.wait(timeout=DEADLINE_S) == 0
        proc.stdout.close()
        proc.stderr.close()


def test_a_read_stderr_gets_every_request_line_at_debug_and_none_by_default(tmp_path: Path) -> None:
    lines = [json.dumps({"jsonrpc": "2.0", "id": i, "method": "meta/status"}) for i in range(50)]
    stdin = ("\n".join(lines) + "\n").encode()
    runs = {
        name: subprocess.run(
            [*gateway_command(), "stdio", "--state-dir", str(tmp_path / name), *flags],
            input=stdin,
            capture_output=True,
            timeout=DEADLINE_S,
        )
        for name, flags in (
            ("default", []),
            ("debug", ["--log-level", "debug"]),
            ("flag", ["--log-requests"]),
        )
    }
    for run in runs.values():
        assert run.returncode == 0 and run.stdout.count(b"\n") == 51
    requests = {
        name: run.stderr.decode().count("meta_memory.gateway.requests: stdio meta/status")
        for name, run in runs.items()
    }
    assert requests == {"default": 0, "debug": 50, "flag": 50}  # at a clean exit nothing queued is lost
    assert "dropped" not in runs["debug"].stderr.decode()
