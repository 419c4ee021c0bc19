"""Where the process's log lines go and how they look: text (the default) or one JSON object per line.

The CLI configures logging once per command (``--log-format``, ``META_LOG_FORMAT`` or ``[logging]
format``); everything below logs through the standard library. In the JSON format each line is an
object with ``time`` (ISO 8601, UTC), ``level``, ``logger`` and ``message``, plus the request
fields the gateway attaches to its one line per request (:data:`REQUEST_FIELDS`) and, for an
error with a traceback, ``exception``. Only those fields are written: a log record's other
attributes (a third party's ``extra``, a request's arguments) never reach the line.
"""

from __future__ import annotations

import copy
import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any

__all__ = [
    "FORMATS",
    "REQUEST_FIELDS",
    "TEXT_FORMAT",
    "JsonFormatter",
    "configure_logging",
    "uvicorn_log_config",
]

FORMATS = ("text", "json")
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


def configure_logging(level: str, fmt: str = "text") -> None:
    """Send every log record at ``level`` or above to stderr in ``fmt`` (``text`` or ``json``),
    replacing whatever handler the root logger had (so a command may reconfigure once its config
    file is read)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(getattr(logging, level.upper()))
    # In JSON every stderr line must be an object: a Python warning becomes a log record too.
    logging.captureWarnings(fmt == "json")


def uvicorn_log_config(fmt: str) -> dict[str, Any]:
    """uvicorn's logging config for ``fmt``: its own lines on stderr (its default sends access
    lines to stdout). In JSON the access log is off: the gateway writes one line per request itself
    (gateway/telemetry.py), and uvicorn's other lines are objects like every other."""
    config: dict[str, Any] = copy.deepcopy(_uvicorn_default())
    config["handlers"]["access"]["stream"] = "ext://sys.stderr"
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
