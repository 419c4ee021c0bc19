"""Logging never waits for stderr: records go through a bounded queue to one writer thread, a
record that finds the queue full is dropped and counted (and the count logged once the writer
catches up, and on ``/metrics``), and stopping writes out everything queued. ``serve`` keeps
answering with its stderr piped and never read, uvicorn's lines included."""

from __future__ import annotations

import io
import logging
import subprocess
import threading
from pathlib import Path

import httpx

from meta_memory.config import DEFAULT_CONFIG, load_config_dict
from meta_memory.gateway.metrics import GatewayMetrics
from meta_memory.logs import WRITER_THREAD, LogSink, dropped_log_lines, uvicorn_log_config
from meta_memory.runtime import MetaRuntime

from ..conftest import free_port, gateway_command, wait_until_listening

DEADLINE_S = 60.0


class HeldStream(io.StringIO):
    """stderr as a host that stops reading it makes it: a write blocks until released."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Event()
        self.released = threading.Event()

    def fileno(self) -> int:
        raise io.UnsupportedOperation("no descriptor: written as a stream")

    def write(self, text: str) -> int:
        self.entered.set()
        assert self.released.wait(DEADLINE_S), "the test never released the stream"
        return super().write(text)


def _record(n: int) -> logging.LogRecord:
    return logging.LogRecord("meta_memory.test", logging.INFO, __file__, 1, "line %d", (n,), None)


def _writer_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == WRITER_THREAD and t.is_alive()]


def test_a_full_queue_drops_and_counts_and_the_writer_says_so_once_it_catches_up() -> None:
    stream = HeldStream()
    sink = LogSink(stream, maxsize=10)
    handler = sink.handler(logging.Formatter("%(message)s"))
    sink.start()
    before = dropped_log_lines()
    handler.handle(_record(0))
    assert stream.entered.wait(DEADLINE_S)  # the writer holds record 0, stuck in the write
    for n in range(1, 101):
        handler.handle(_record(n))  # returns at once: 10 wait in the queue, 90 are dropped
    assert dropped_log_lines() - before == 90
    stream.released.set()
    assert sink.stop(DEADLINE_S)
    lines = stream.getvalue().splitlines()
    assert lines[:11] == [f"line {n}" for n in range(11)]
    assert len(lines) == 12 and "90 log line(s) dropped: stderr was not read fast enough" in lines[11]
    assert _writer_threads() == []


def test_stopping_writes_out_every_queued_line_in_order_and_ends_the_thread() -> None:
    stream = io.StringIO()
    sink = LogSink(stream)
    handler = sink.handler(logging.Formatter("%(levelname)s %(message)s"))
    sink.start()
    for n in range(2000):
        handler.handle(_record(n))
    assert sink.stop(DEADLINE_S)
    assert stream.getvalue().splitlines() == [f"INFO line {n}" for n in range(2000)]
    assert "dropped" not in stream.getvalue()
    assert _writer_threads() == []


def test_stopping_gives_up_within_its_timeout_on_a_stderr_nobody_reads() -> None:
    stream = HeldStream()
    sink = LogSink(stream, maxsize=2)
    handler = sink.handler(logging.Formatter("%(message)s"))
    sink.start()
    for n in range(5):
        handler.handle(_record(n))
    assert stream.entered.wait(DEADLINE_S)
    assert sink.stop(timeout_s=0.2) is False  # an exit is not held up by the stuck write
    stream.released.set()  # let the thread finish, so the test leaves none behind
    assert sink.stop(DEADLINE_S)
    assert _writer_threads() == []


def test_metrics_count_the_dropped_log_lines(tmp_path: Path) -> None:
    stream = HeldStream()
    sink = LogSink(stream, maxsize=1)
    handler = sink.handler(logging.Formatter("%(message)s"))
    sink.start()
    handler.handle(_record(0))
    assert stream.entered.wait(DEADLINE_S)
    for n in range(1, 5):
        handler.handle(_record(n))
    stream.released.set()
    assert sink.stop(DEADLINE_S)
    with MetaRuntime.open(tmp_path / "state", load_config_dict(dict(DEFAULT_CONFIG))) as runtime:
        metrics = GatewayMetrics(runtime)
        text = metrics.render().decode()
        metrics.close()
    assert f"meta_log_lines_dropped_total {float(dropped_log_lines())}" in text
    assert dropped_log_lines() >= 3


def test_uvicorn_s_lines_take_the_queue_too() -> None:
    for fmt in ("text", "json"):
        handlers = uvicorn_log_config(fmt)["handlers"]
        assert {h["class"] for h in handlers.values()} == {"meta_memory.logs.StderrQueueHandler"}
        assert all("stream" not in h for h in handlers.values())


def test_serve_keeps_answering_with_stderr_piped_and_never_read(tmp_path: Path) -> None:
    port = free_port()
    proc = subprocess.Popen(
        [gateway_command(), "serve", "--state-dir", str(tmp_path / "state"), "--port", str(port)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,  # never read: a request line and an access line per request fill it
    )
    try:
        wait_until_listening(proc, port)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=DEADLINE_S) as client:
            for _ in range(1500):  # about 300 KB of log lines, several times a pipe's buffer
                assert client.get("/v1/health").status_code == 200
    finally:
        proc.terminate()
        status = proc.wait(timeout=DEADLINE_S)
        assert proc.stderr is not None
        proc.stderr.close()
    assert status == 0
