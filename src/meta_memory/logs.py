"""Where the process's log lines go and how they look: text (the default) or one JSON object per line.

The CLI configures logging once per command (``--log-format``, ``META_LOG_FORMAT`` or ``[logging]
format``); everything below logs through the standard library. In the JSON format each line is an
object with ``time`` (ISO 8601, UTC), ``level``, ``logger`` and ``message``, plus the request
fields the gateway attaches to its one line per request (:data:`REQUEST_FIELDS`) and, for an
error with a traceback, ``exception``. Only those fields are written: a log record's other
attributes (a third party's ``extra``, a request's arguments) never reach the line.

No log call ever waits for stderr. Every record is formatted where it is logged and handed to a
bounded queue (:class:`DroppingQueueHandler`, the stdlib ``QueueHandler``), which one writer
thread (:class:`LogSink`, the stdlib ``QueueListener``) drains to stderr. A host that spawns the
gateway with stderr piped and never reads it fills the pipe, which blocks only that thread: once
the queue is full further records are dropped and counted, and when the writer catches up it
writes one line saying how many were lost (also ``meta_log_lines_dropped_total`` on
``/metrics``). uvicorn's own lines take the same queue. At exit the queue is written out, within
:data:`STOP_TIMEOUT_S` (a stderr nobody reads can hold nothing up).
"""

from __future__ import annotations

import atexit
import copy
import io
import json
import logging
import logging.handlers
import os
import queue
import sys
import threading
import time
from datetime import UTC, datetime
from typing import IO, Any

__all__ = [
    "FORMATS",
    "QUEUE_MAX",
    "REQUEST_FIELDS",
    "STOP_TIMEOUT_S",
    "TEXT_FORMAT",
    "WRITER_THREAD",
    "DroppingQueueHandler",
    "JsonFormatter",
    "LogSink",
    "StderrQueueHandler",
    "configure_logging",
    "dropped_log_lines",
    "log_sink",
    "stop_logging",
    "uvicorn_log_config",
]

FORMATS = ("text", "json")
QUEUE_MAX = 10_000  # records waiting for stderr; past it they are dropped and counted
STOP_TIMEOUT_S = 5.0  # how long an exit waits for the queue to reach stderr
WRITER_THREAD = "meta-log-writer"
DROPPED_MESSAGE = "%d log line(s) dropped: stderr was not read fast enough"
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# What a request's log line carries beside the message (gateway/telemetry.py sets them).
REQUEST_FIELDS = (
    "request_id",
    "surface",
    "method",
    "outcome",
    "duration_ms",
    "http_method",
    "path",
    "status",
)


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line."""

    def format(self, record: logging.LogRecord) -> str:
        stamp = datetime.fromtimestamp(record.created, UTC)
        line: dict[str, Any] = {
            "time": stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name in REQUEST_FIELDS:
            value = record.__dict__.get(name)
            if value is not None:
                line[name] = value
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)


class _StderrWriter(logging.Handler):
    """Writes ready-made lines to stderr, from the writer thread only. A stream with a file
    descriptor is written through a duplicate of it with ``os.write``, holding no lock of the
    stream's that the interpreter's exit would wait for; any other stream (a test's capture) is
    written as a stream."""

    def __init__(self, stream: IO[str]) -> None:
        super().__init__()
        self.setFormatter(logging.Formatter("%(message)s"))
        self.stream = stream
        self._encoding = getattr(stream, "encoding", None) or "utf-8"
        self._fd: int | None = None

    def open(self) -> None:
        """Take a descriptor of the stream's own, if it has one (before the thread writes)."""
        try:
            self.stream.flush()  # what was written before goes first
            self._fd = os.dup(self.stream.fileno())
        except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
            self._fd = None

    def release(self) -> None:
        """Give the descriptor back (once the thread has ended: nothing is writing to it)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def handle(self, record: logging.LogRecord) -> bool:
        # Without the handler's lock: only the writer thread writes, and ``logging.shutdown`` at
        # exit takes that lock, so a write stuck in a pipe nobody reads must not be holding it.
        if not self.filter(record):
            return False
        self.emit(record)
        return True

    def emit(self, record: logging.LogRecord) -> None:
        line = self.format(record) + "\n"
        try:
            if self._fd is None:
                self.stream.write(line)
                self.stream.flush()
                return
            data = line.encode(self._encoding, "backslashreplace")
            while data:
                data = data[os.write(self._fd, data) :]
        except (OSError, ValueError):
            pass  # stderr is gone (a closed pipe or stream): there is nowhere left to say so

    def flush(self) -> None:
        pass  # every line is written whole by emit


class DroppingQueueHandler(logging.handlers.QueueHandler):
    """The stdlib ``QueueHandler`` on a :class:`LogSink`'s bounded queue: the record is
    formatted here, by this handler's formatter, and a record that finds the queue full is
    dropped and counted instead of waiting (``put_nowait``)."""

    def __init__(self, sink: LogSink) -> None:
        super().__init__(sink.queue)
        self.sink = sink

    def enqueue(self, record: logging.LogRecord) -> None:
        try:
            self.queue.put_nowait(record)
        except queue.Full:
            self.sink.note_dropped()


class _Listener(logging.handlers.QueueListener):
    """The stdlib ``QueueListener``, on a named daemon thread, saying what was dropped each time
    it has written out the queue."""

    def __init__(self, sink: LogSink, writer: _StderrWriter) -> None:
        super().__init__(sink.queue, writer)
        self.sink = sink

    def start(self) -> None:
        self._thread = threading.Thread(target=self._write_out, name=WRITER_THREAD, daemon=True)
        self._thread.start()

    def _write_out(self) -> None:
        while (record := self.sink.queue.get()) is not None:  # None: stop
            self.handle(record)

    def handle(self, record: logging.LogRecord) -> None:
        super().handle(record)
        if self.sink.queue.empty():  # caught up: a good moment to tell what was lost meanwhile
            self.sink.report_dropped()

    @property
    def running(self) -> bool:
        return self._thread is not None

    def stop_within(self, timeout_s: float) -> bool:
        """Write out the queue and end the thread, waiting at most ``timeout_s``; whether it ended."""
        thread = self._thread
        if thread is None:
            return True
        deadline = time.monotonic() + timeout_s
        try:
            self.sink.queue.put(None, timeout=timeout_s)  # a full queue frees room as it drains
        except queue.Full:
            return False
        thread.join(max(0.0, deadline - time.monotonic()))
        if thread.is_alive():
            return False
        self._thread = None
        return True


_dropped_total = 0  # every sink's drops, for the life of the process
_dropped_lock = threading.Lock()


class LogSink:
    """The process's one way to stderr: a bounded queue of formatted records and the thread that
    writes them. Records that find the queue full are dropped and counted; :meth:`report_dropped`
    writes the count once the writer has caught up."""

    def __init__(self, stream: IO[str], *, maxsize: int = QUEUE_MAX) -> None:
        self.stream = stream
        self.queue: queue.Queue[logging.LogRecord | None] = queue.Queue(maxsize)
        self.formatter: logging.Formatter = logging.Formatter(TEXT_FORMAT)  # for its own lines
        self._writer = _StderrWriter(stream)
        self._listener = _Listener(self, self._writer)
        self._lock = threading.Lock()
        self._unreported = 0

    def handler(self, formatter: logging.Formatter) -> DroppingQueueHandler:
        handler = DroppingQueueHandler(self)
        handler.setFormatter(formatter)
        return handler

    @property
    def running(self) -> bool:
        return self._listener.running

    def start(self) -> None:
        if not self._listener.running:
            self._writer.open()
            self._listener.start()

    def stop(self, timeout_s: float = STOP_TIMEOUT_S) -> bool:
        """Write out what is queued (and the count of what was dropped) and end the writer thread,
        within ``timeout_s``. Returns whether everything was written; ``False`` leaves the
        thread, stuck in a write, to the process's exit."""
        if not self._listener.stop_within(timeout_s):
            return False  # the descriptor stays open: the stuck write is still using it
        self.report_dropped()
        self._writer.release()
        return True

    def note_dropped(self) -> None:
        global _dropped_total
        with self._lock:
            self._unreported += 1
        with _dropped_lock:
            _dropped_total += 1

    def report_dropped(self) -> None:
        """One line saying how many records were dropped since the last such line (if any)."""
        with self._lock:
            count, self._unreported = self._unreported, 0
        if count and logging.getLogger(__name__).isEnabledFor(logging.WARNING):
            record = logging.LogRecord(
                __name__, logging.WARNING, __file__, 0, DROPPED_MESSAGE, (count,), None
            )
            record.msg, record.args = self.formatter.format(record), None
            self._writer.handle(record)


class StderrQueueHandler(DroppingQueueHandler):
    """A :class:`DroppingQueueHandler` on the process's sink (:func:`log_sink`), for logging
    configs that name a handler class (uvicorn's)."""

    def __init__(self) -> None:
        super().__init__(log_sink())


_sink: LogSink | None = None
_sink_lock = threading.Lock()


def log_sink() -> LogSink:
    """The process's running sink, started on ``sys.stderr`` if there is none."""
    global _sink
    with _sink_lock:
        if _sink is None or _sink.stream is not sys.stderr:
            if _sink is not None:
                _sink.stop()
            if _sink is None:  # once: it runs before logging's own shutdown (registered earlier)
                atexit.register(stop_logging)
            _sink = LogSink(sys.stderr)
        _sink.start()
        return _sink


def stop_logging(timeout_s: float = STOP_TIMEOUT_S) -> bool:
    """Write out every queued record and end the writer thread (each command does on its way
    out, and the process at exit); :func:`configure_logging` starts it again. Returns whether
    everything reached stderr within ``timeout_s``."""
    with _sink_lock:
        sink = _sink
    return True if sink is None else sink.stop(timeout_s)


def dropped_log_lines() -> int:
    """How many log records this process dropped because stderr was not read fast enough."""
    with _dropped_lock:
        return _dropped_total


def configure_logging(level: str, fmt: str = "text") -> None:
    """Send every log record at ``level`` or above to stderr in ``fmt`` (``text`` or ``json``),
    through the bounded queue (:class:`LogSink`), replacing whatever handler the root logger had
    (so a command may reconfigure once its config file is read). Python warnings are log records
    too, so that they never write to stderr themselves."""
    formatter = JsonFormatter() if fmt == "json" else logging.Formatter(TEXT_FORMAT)
    sink = log_sink()
    sink.formatter = formatter
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(sink.handler(formatter))
    root.setLevel(getattr(logging, level.upper()))
    logging.captureWarnings(True)


def uvicorn_log_config(fmt: str) -> dict[str, Any]:
    """uvicorn's logging config for ``fmt``: its own lines on stderr through the queue (its
    default writes them itself, access lines to stdout). In JSON the access log is off: the
    gateway writes one line per request itself (gateway/telemetry.py), and uvicorn's other lines
    are objects like every other."""
    config: dict[str, Any] = copy.deepcopy(_uvicorn_default())
    for handler in config["handlers"].values():  # through the queue, like every other line
        handler.pop("stream", None)
        handler["class"] = f"{__name__}.StderrQueueHandler"
    if fmt == "json":
        config["formatters"] = {"json": {"()": f"{__name__}.JsonFormatter"}}
        for handler in config["handlers"].values():
            handler["formatter"] = "json"
        config["loggers"]["uvicorn.access"] = {"handlers": [], "level": "WARNING", "propagate": False}
    return config


def _uvicorn_default() -> dict[str, Any]:
    import uvicorn.config

    default: dict[str, Any] = uvicorn.config.LOGGING_CONFIG
    return default
