"""A gateway request's one log line and its metrics: both come from :meth:`Telemetry.finish`.

The dispatcher reports every call it answers and every message it refuses unread
(:class:`~meta_memory.gateway.dispatch.CallObserver`). A stdio, MCP or in-process call is
finished as soon as it is answered. An HTTP request is followed from its arrival to its last
byte by :class:`RequestTelemetry`, the outermost middleware: the dispatcher fills in its method
and outcome, the boundary guards, authentication and the body cap note a refusal on it
(:func:`note_refusal`), and it is finished once the response is sent. So each request is
counted (gateway/metrics.py) and logged once, here.

A line carries the request's id (made here), its surface, the method (a name from the
signature table, else ``unknown``), the outcome (``ok``, the JSON-RPC error code, or the
refusal's reason), its duration and, over HTTP, the method, path and status. Never a body,
params, a header or a token.
"""

from __future__ import annotations

import logging
import re
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..errors import WriteRefused
from .dispatch import CONSOLE, HTTP, MCP, STDIO, CallContext, wire_code
from .signatures import SIGNATURES

if TYPE_CHECKING:
    from .metrics import GatewayMetrics

__all__ = [
    "RECORD_KEY",
    "REQUEST_LOGGER",
    "RequestRecord",
    "RequestTelemetry",
    "Telemetry",
    "method_label",
    "note_refusal",
    "record_of",
    "surface_of",
]

REQUEST_LOGGER = "meta_memory.gateway.requests"
# Where an HTTP request's record travels: in its ASGI scope, and in the CallContext's extras.
RECORD_KEY = "meta.request"
UNKNOWN_METHOD = "unknown"
_MAX_PATH = 200


def method_label(name: str | None) -> str:
    """A method as metrics and logs name it: a declared method, else ``unknown`` (a caller's
    made-up name never becomes a label or reaches the log)."""
    return name if name is not None and name in SIGNATURES else UNKNOWN_METHOD


def surface_of(ctx: CallContext) -> str:
    """``rpc``, ``console``, ``stdio``, ``mcp`` or ``in_process``."""
    if ctx.transport == HTTP:
        return "console" if ctx.surface == CONSOLE else "rpc"
    if ctx.transport == STDIO:
        return "stdio"
    return "mcp" if ctx.transport == MCP else "in_process"


def _surface_of_path(path: str) -> str:
    if path in ("/rpc", "/openrpc.json"):
        return "rpc"
    if path == "/console" or path.startswith("/console/"):
        return "console"
    if path == "/metrics":
        return "metrics"
    return "health" if path == "/v1/health" else "http"


def _shown_path(path: str) -> str:
    # A path is percent-decoded: a %0a in it must not start a forged line of a text log.
    path = path if len(path) <= _MAX_PATH else path[:_MAX_PATH] + "…"
    return re.sub(r"[\x00-\x1f\x7f]", lambda m: f"\\x{ord(m.group()):02x}", path)


# Which results carry records returned by recall, and under what kind.
_RETURNED = {
    "meta/agent_memory/recall": ("recall", "records"),
    "meta/session/build_context": ("injection", "injected"),
    "meta/session/turn": ("injection", "injected"),
}


@dataclass
class RequestRecord:
    """One request, as it is counted and logged."""

    surface: str
    started: float  # time.perf_counter() at arrival
    request_id: str = field(default_factory=lambda: secrets.token_hex(6))
    method: str | None = None  # set once a call was answered (a label: method_label)
    outcome: str | None = None  # "ok" or the JSON-RPC error code
    call_s: float | None = None  # the dispatcher's time for it
    returned: tuple[str, int] | None = None  # (recall | injection, records returned)
    tool_outcome: str | None = None  # meta/session/memory_tool: stored | quarantined | none | error
    write_rule: str | None = None  # WriteRefused.rule
    refusal: str | None = None  # a reason it was refused before any call
    http_method: str | None = None
    path: str | None = None
    status: int | None = None

    def answered(
        self, method: str | None, elapsed_s: float, result: Any, error: BaseException | None
    ) -> None:
        self.method = method_label(method)
        self.call_s = elapsed_s
        if error is not None:
            self.outcome = str(wire_code(error))
            if isinstance(error, WriteRefused):
                self.write_rule = error.rule
            return
        self.outcome = "ok"
        if isinstance(result, Mapping):
            returned = _RETURNED.get(self.method)
            if returned is not None and isinstance(result.get(returned[1]), list):
                self.returned = (returned[0], len(result[returned[1]]))
            elif self.method == "meta/session/memory_tool":
                self.tool_outcome = "error" if result.get("is_error") else str(result.get("outcome"))

    def final_outcome(self) -> str:
        if self.refusal is not None:
            return self.refusal
        if self.outcome is not None:
            return self.outcome
        return "ok" if self.status is None or self.status < 400 else f"http_{self.status}"


class Telemetry:
    """Counts (into ``metrics``, when given) and logs each finished request; a
    :class:`~meta_memory.gateway.dispatch.CallObserver`."""

    def __init__(self, metrics: GatewayMetrics | None = None) -> None:
        self.metrics = metrics
        self._log = logging.getLogger(REQUEST_LOGGER)

    def call_done(
        self, method: str | None, ctx: CallContext, elapsed_s: float, result: Any, error: BaseException | None
    ) -> None:
        record = ctx.extras.get(RECORD_KEY)
        if isinstance(record, RequestRecord):  # an HTTP request: finished with its response
            record.answered(method, elapsed_s, result, error)
            return
        record = RequestRecord(surface_of(ctx), time.perf_counter() - elapsed_s)
        record.answered(method, elapsed_s, result, error)
        self.finish(record)

    def refused(self, ctx: CallContext, reason: str) -> None:
        record = ctx.extras.get(RECORD_KEY)
        if isinstance(record, RequestRecord):
            record.refusal = reason
            return
        record = RequestRecord(surface_of(ctx), time.perf_counter())
        record.refusal = reason
        self.finish(record)

    def timed_out(self) -> None:
        """A request that did not arrive within ``[http] request_timeout_s`` (gateway/server.py;
        the server logs it)."""
        if self.metrics is not None:
            self.metrics.refused("http", "request_timeout")

    def finish(self, record: RequestRecord) -> None:
        """The one place a request is counted and logged."""
        if self.metrics is not None:
            self.metrics.count(record)
        if not self._log.isEnabledFor(logging.INFO):
            return
        duration_ms = round((time.perf_counter() - record.started) * 1000, 3)
        outcome = record.final_outcome()
        what = [record.surface]
        if record.http_method is not None and record.path is not None:
            what += [record.http_method, record.path]
        if record.method is not None:
            what.append(record.method)
        status = f" ({record.status})" if record.status is not None else ""
        self._log.info(
            "%s -> %s%s in %.1f ms [%s]",
            " ".join(what),
            outcome,
            status,
            duration_ms,
            record.request_id,
            extra={
                "request_id": record.request_id,
                "surface": record.surface,
                "method": record.method,
                "outcome": outcome,
                "duration_ms": duration_ms,
                "http_method": record.http_method,
                "path": record.path,
                "status": record.status,
            },
        )


def note_refusal(scope: Scope, reason: str) -> None:
    """Mark the HTTP request of ``scope`` refused for ``reason`` (before any call)."""
    record = scope.get(RECORD_KEY)
    if isinstance(record, RequestRecord):
        record.refusal = reason


def record_of(scope: Scope) -> RequestRecord | None:
    record = scope.get(RECORD_KEY)
    return record if isinstance(record, RequestRecord) else None


class RequestTelemetry:
    """ASGI middleware, outermost: one :class:`RequestRecord` per HTTP request, finished once the
    response has been sent (or the app failed)."""

    def __init__(self, app: ASGIApp, telemetry: Telemetry) -> None:
        self.app = app
        self.telemetry = telemetry

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        record = RequestRecord(
            _surface_of_path(path), time.perf_counter(), http_method=scope["method"], path=_shown_path(path)
        )
        scope[RECORD_KEY] = record

        async def recording(message: Message) -> None:
            if message["type"] == "http.response.start":
                record.status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, recording)
        except BaseException:
            record.status = record.status or 500
            raise
        finally:
            self.telemetry.finish(record)
