"""Bounded resources at the transports, each checked by what the server does, not by the reply alone:
a request whose headers and body have not arrived within ``[http] request_timeout_s`` is dropped
(408, connection closed) while slow handlers and live streams are never cut; a client that
disconnects mid-body is one log line; an oversized body or line is refused without being
buffered: over HTTP the reply comes while the client is still sending, and over stdio the
gateway's peak memory stays far below the line's size."""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import time
from pathlib import Path

import httpx
import pytest

from ..conftest import gateway_command
from .conftest import DEADLINE_S, Served

MiB = 1 << 20
TIMEOUT_S = 1
QUICK = f'[http]\nrequest_timeout_s = {TIMEOUT_S}\n[agent_memory]\nllm_writes = "quarantined"\n'


def _connect(gateway: Served) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", gateway.port), timeout=DEADLINE_S)
    return sock


def _read_all(sock: socket.socket) -> tuple[bytes, float]:
    """Everything the server sends until it closes the connection, and when it closed it."""
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    return received, time.monotonic()


@pytest.mark.parametrize(
    "sent",
    [
        b"",  # a connection that never sends a byte
        b"POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\n",  # headers that never end
        b"POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
    ],
    ids=["silent", "partial headers", "partial body"],
)
def test_a_request_that_does_not_arrive_in_time_is_dropped_and_others_are_served(
    serve: object, sent: bytes
) -> None:
    gateway: Served = serve(QUICK)  # type: ignore[operator]
    with _connect(gateway) as stalled:
        started = time.monotonic()
        stalled.sendall(sent)
        assert "result" in gateway.rpc("meta/status")  # the stall holds no one else up
        received, closed_at = _read_all(stalled)
    assert TIMEOUT_S * 0.9 <= closed_at - started < TIMEOUT_S + 10
    assert received in (
        b"",
        b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
    )
    if sent:
        assert received.startswith(b"HTTP/1.1 408 ")
    gateway.stop()
    assert "Traceback" not in gateway.stderr()


def test_a_request_sent_slowly_but_within_the_deadline_is_answered(serve: object) -> None:
    gateway: Served = serve("[http]\nrequest_timeout_s = 3\n")  # type: ignore[operator]
    body = b'{"jsonrpc": "2.0", "id": 7, "method": "meta/status"}'
    head = f"POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    with _connect(gateway) as sock:
        for piece in (head.encode()[:20], head.encode()[20:], body[:10], body[10:]):
            sock.sendall(piece)
            time.sleep(0.3)
        reply = sock.recv(65536)
    assert reply.startswith(b"HTTP/1.1 200 ") and b'"id":7' in reply


def test_a_live_stream_outlasts_the_request_deadline(serve: object) -> None:
    gateway: Served = serve(QUICK)  # type: ignore[operator]
    with (
        httpx.Client(base_url=gateway.url, timeout=DEADLINE_S) as http,
        http.stream("GET", "/console/timeline/stream") as stream,
    ):
        lines = stream.iter_lines()
        assert next(lines) == ": connected"
        time.sleep(TIMEOUT_S * 2.5)
        key = gateway.rpc("meta/session/open", {"identity": "alice"})["result"]["session_key"]
        arguments = {"action": "remember", "title": "Late", "body": "Written after the deadline passed."}
        gateway.rpc("meta/session/memory_tool", {"session_key": key, "arguments": arguments})
        event = next(line for line in lines if line.startswith("event: "))
    assert event == "event: memory.write.quarantined"


def test_a_client_that_disconnects_mid_body_is_one_log_line(serve: object) -> None:
    gateway: Served = serve()  # type: ignore[operator]
    with _connect(gateway) as sock:
        sock.sendall(
            b"POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 1000\r\n\r\n" + b'{"jsonrpc": "2.0",'
        )
        time.sleep(0.5)
    time.sleep(0.5)
    assert "result" in gateway.rpc("meta/status")
    gateway.stop()
    log = gateway.stderr()
    assert "Traceback" not in log and "ClientDisconnect" not in log
    assert (
        len([line for line in log.splitlines() if "disconnected before sending the whole request" in line])
        == 1
    )


def test_an_oversized_http_body_is_refused_while_the_client_is_still_sending(serve: object) -> None:
    """The reply to a 64 MiB body arrives before the client has sent it: the server stopped
    reading past its 4 MiB cap instead of buffering the rest (which would answer only after)."""
    gateway: Served = serve()  # type: ignore[operator]
    total = 64 * MiB
    for declared in (True, False):
        sock = _connect(gateway)
        framing = f"Content-Length: {total}" if declared else "Transfer-Encoding: chunked"
        sock.sendall(
            f"POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n{framing}\r\n\r\n".encode()
        )
        sent = [0]

        def send_body(sock: socket.socket = sock, declared: bool = declared, sent: list[int] = sent) -> None:
            chunk = b" " * MiB
            framed = chunk if declared else b"%x\r\n" % len(chunk) + chunk + b"\r\n"
            try:
                for _ in range(total // MiB):
                    sock.sendall(framed)
                    sent[0] += MiB
            except OSError:
                pass  # the server closed the connection: nothing more to send

        sender = threading.Thread(target=send_body, daemon=True)
        sender.start()
        reply = sock.recv(65536)
        while b"\r\n\r\n" in reply and not reply.endswith(b"}"):  # the body follows the head
            reply += sock.recv(65536)
        in_flight = sent[0]
        sock.close()
        sender.join(timeout=DEADLINE_S)
        assert reply.startswith(b"HTTP/1.1 413 ") and b'"code":-32600' in reply
        assert in_flight < total // 2, f"the reply came only after {in_flight} of {total} bytes"
    assert "result" in gateway.rpc("meta/status")


def _peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def test_an_oversized_stdio_line_is_drained_without_being_held_in_memory(tmp_path: Path) -> None:
    """A 256 MiB line costs the gateway far less than 256 MiB of memory: it reads the line in
    bounded pieces (a plain readline would hold all of it at once)."""
    proc = subprocess.Popen(
        [gateway_command(), "stdio", "--state-dir", str(tmp_path / "state")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        assert json.loads(proc.stdout.readline())["contract_version"]
        proc.stdin.write(b'{"jsonrpc": "2.0", "id": 1, "method": "meta/status"}\n')
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == 1
        before = _peak_rss_kib(proc.pid)
        proc.stdin.write(b'{"jsonrpc": "2.0", "id": 2, "method": "meta/status", "params": {"pad": "')
        for _ in range(256):
            proc.stdin.write(b"a" * MiB)
        proc.stdin.write(b'"}}\n{"jsonrpc": "2.0", "id": 3, "method": "meta/status"}\n')
        proc.stdin.flush()
        refused, after = json.loads(proc.stdout.readline()), json.loads(proc.stdout.readline())
        grown_mib = (_peak_rss_kib(proc.pid) - before) / 1024
    finally:
        proc.stdin.close()
        proc.wait(timeout=DEADLINE_S)
        proc.stdout.close()
    assert refused["id"] is None and refused["error"]["code"] == -32600
    assert after["id"] == 3 and "result" in after
    assert grown_mib < 48, f"the gateway's peak memory grew by {grown_mib:.0f} MiB for a 256 MiB line"
