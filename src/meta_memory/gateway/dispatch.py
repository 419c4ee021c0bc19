"""The JSON-RPC 2.0 dispatcher and the single exception-to-wire boundary.

Both transports (stdio JSON lines and HTTP) hand raw request bytes to
:meth:`Dispatcher.handle_bytes` and write back what it returns. Envelope checks, method
lookup per surface, parsing the params into the method's typed request, authorization, the
call, and error mapping happen here and nowhere else:
:func:`to_wire_error` is the only place an exception becomes a wire error, and no
traceback or third-party text ever leaves through it. A dispatcher given a
:class:`CallObserver` reports every call it answers (method, outcome, time) and every message
it refuses unread to it, from here alone: that is where a server's metrics and request log
lines come from (telemetry.py).
"""

from __future__ import annotations

import copy
import json
import logging
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import (
    InternalError,
    InvalidParams,
    InvalidRequest,
    MetaError,
    MethodNotFound,
    ParseError,
    ReadOnly,
)
from ..text import text_problem
from .signatures import Params, Schema

__all__ = [
    "CONSOLE",
    "HTTP",
    "IN_PROCESS",
    "MCP",
    "SDK",
    "STDIO",
    "CallContext",
    "CallObserver",
    "Dispatcher",
    "Method",
    "Surface",
    "Transport",
    "to_wire_error",
    "wire_code",
]

log = logging.getLogger("meta_memory.gateway")

Surface = str  # "sdk" (stdio, POST /rpc, the Python handle: the application surface) or "console"
SDK: Surface = "sdk"
CONSOLE: Surface = "console"

# How a call arrived. stdio, MCP and in-process calls come from the parent process that owns
# the runtime (the trusted channel); HTTP calls come from the network, authenticated or not.
Transport = str
IN_PROCESS: Transport = "in_process"
STDIO: Transport = "stdio"
MCP: Transport = "mcp"  # an MCP server's tool calls on a runtime of its own process
HTTP: Transport = "http"

Handler = Callable[[Any, "CallContext"], Any]
Parser = Callable[[Any], Any]


def _unparsed(params: Any) -> Any:
    return params


@dataclass(frozen=True)
class Method:
    """One entry of the method table: ``parse`` turns the wire params into the typed request
    (raising -32602 naming the field) before anything else sees them; ``handler`` gets the
    request. Every method of the runtime's table has a parser of its own."""

    name: str
    handler: Handler
    parse: Parser = _unparsed
    surfaces: frozenset[Surface] = frozenset({SDK, CONSOLE})
    mutating: bool = False
    # Advertised in meta/capabilities only while this says so (None: always).
    available: Callable[[], bool] | None = None
    # The signature: every key the parser reads (any other is refused before it runs), and the
    # result's shape; the OpenRPC document and docs/api.md are generated from them.
    params: Params | None = None
    result: Schema | None = None
    summary: str = ""


@dataclass(frozen=True)
class CallContext:
    """Who is calling, through which surface and over which transport. ``principal`` is the
    authenticated caller of an HTTP surface (``None`` on the trusted channels)."""

    surface: Surface
    principal: Any = None
    transport: Transport = IN_PROCESS
    extras: Mapping[str, Any] = field(default_factory=dict)

    @property
    def remote(self) -> bool:
        return self.transport == HTTP


class CallObserver(Protocol):
    """What a dispatcher tells about the traffic it handles (telemetry.py's ``Telemetry``)."""

    def call_done(
        self, method: str | None, ctx: CallContext, elapsed_s: float, result: Any, error: BaseException | None
    ) -> None:
        """A request was answered: ``method`` as sent (``None`` when the envelope had none),
        ``result`` or the ``error`` that :func:`to_wire_error` maps."""

    def refused(self, ctx: CallContext, reason: str) -> None:
        """A message was refused without being read (``reason``: ``body_too_large``)."""


def wire_code(exc: BaseException) -> int:
    """The JSON-RPC error code :func:`to_wire_error` gives ``exc``."""
    return exc.code if isinstance(exc, MetaError) else InternalError.code


def to_wire_error(exc: BaseException) -> dict[str, Any]:
    """Map any exception to a JSON-RPC error object. The one boundary; never leaks internals."""
    if isinstance(exc, MetaError):
        error: dict[str, Any] = {"code": exc.code, "message": exc.message}
        if exc.data is not None:
            error["data"] = exc.data
        return error
    log.error("internal error while handling a request", exc_info=exc)
    return {"code": InternalError.code, "message": "Internal error"}


def _response(request_id: Any, *, result: Any = None, error: dict[str, Any] | None = None) -> dict[str, Any]:
    if error is not None:
        return {"jsonrpc": "2.0", "id": request_id, "error": error}
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def _valid_id(value: Any) -> bool:
    # A non-finite float (``1e400`` parses as inf) has no JSON spelling, so it could not be echoed.
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or (isinstance(value, str | int) and not isinstance(value, bool))


def _reject_constant(name: str) -> Any:
    # NaN / Infinity / -Infinity are Python extensions, not JSON; echoing them would break the wire.
    raise ValueError(f"{name} is not valid JSON")


# One decoder for every request: ``json.loads`` with keyword arguments builds a new one per call,
# half of its cost for a small request.
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def _parse(raw: bytes) -> Any:
    """``json.loads(raw, parse_constant=_reject_constant)``, step for step."""
    return _DECODER.decode(raw.decode(json.detect_encoding(raw), "surrogatepass"))


class Dispatcher:
    """Parse, validate, route and answer JSON-RPC 2.0 requests for one runtime."""

    def __init__(
        self,
        methods: Mapping[str, Method],
        *,
        max_request_bytes: int = 4 * 1024 * 1024,
        console_read_only: bool = False,
        authorize: Callable[[Method, Any, CallContext], None] | None = None,
        observer: CallObserver | None = None,
    ) -> None:
        self._methods = dict(methods)
        self.max_request_bytes = max_request_bytes
        self.console_read_only = console_read_only
        # Who may call what (console access rules, an application key's realm confinement), judged
        # on the parsed request.
        self._authorize = authorize
        self._observer = observer

    def observed(self, observer: CallObserver) -> Dispatcher:
        """This dispatcher (the same methods and rules), reporting to ``observer``."""
        twin = copy.copy(self)
        twin._observer = observer
        return twin

    def method_names(self, surface: Surface) -> list[str]:
        return sorted(name for name, m in self._methods.items() if surface in m.surfaces)

    def handle_bytes(self, raw: bytes, ctx: CallContext) -> dict[str, Any] | None:
        """Answer one request document; ``None`` for a notification."""
        if len(raw) > self.max_request_bytes:
            return self.oversized(ctx)
        started = time.perf_counter()
        try:
            payload = _parse(raw)
        except json.JSONDecodeError as exc:  # where: the line and column of the first fault
            where = f"{exc.msg} at line {exc.lineno}, column {exc.colno}"
            return self._envelope_error(ParseError(), ctx, started, detail=where)
        except (ValueError, RecursionError):
            return self._envelope_error(ParseError(), ctx, started)
        return self.handle_payload(payload, ctx, started=started)

    def oversized(self, ctx: CallContext | None = None) -> dict[str, Any]:
        """The answer to a message over the request cap (refused unread, for ``ctx``'s observer)."""
        if ctx is not None and self._observer is not None:
            self._observer.refused(ctx, "body_too_large")
        error = to_wire_error(InvalidRequest())
        error["data"] = {"detail": f"request exceeds {self.max_request_bytes} bytes"}
        return _response(None, error=error)

    def handle_payload(
        self, payload: Any, ctx: CallContext, *, started: float | None = None
    ) -> dict[str, Any] | None:
        started = time.perf_counter() if started is None else started
        if isinstance(payload, list):
            detail = "batch requests are not supported; send one request per message"
            return self._envelope_error(InvalidRequest(), ctx, started, detail=detail)
        if not isinstance(payload, dict):
            return self._envelope_error(InvalidRequest(), ctx, started)
        request_id = payload.get("id")
        is_notification = "id" not in payload
        if (
            payload.get("jsonrpc") != "2.0"
            or not isinstance(payload.get("method"), str)
            or not _valid_id(request_id)
        ):
            echoed = request_id if _valid_id(request_id) else None
            return self._envelope_error(InvalidRequest(), ctx, started, request_id=echoed)
        try:
            result = self.call(payload["method"], payload.get("params"), ctx, started=started)
        except Exception as exc:  # the boundary: everything becomes a wire error
            return None if is_notification else _response(request_id, error=to_wire_error(exc))
        return None if is_notification else _response(request_id, result=result)

    def _envelope_error(
        self,
        exc: MetaError,
        ctx: CallContext,
        started: float,
        *,
        detail: str | None = None,
        request_id: Any = None,
    ) -> dict[str, Any]:
        """The answer to a message that is no request we can call; observed without a method."""
        if self._observer is not None:
            self._observer.call_done(None, ctx, time.perf_counter() - started, None, exc)
        error = to_wire_error(exc)
        if detail is not None:
            error["data"] = {"detail": detail}
        return _response(request_id, error=error)

    def call(self, name: str, params: Any, ctx: CallContext, *, started: float | None = None) -> Any:
        """Call a method by name on ``ctx.surface``; raises library errors. ``started``: the
        ``time.perf_counter()`` the request arrived at (default: now), for the observer."""
        if self._observer is None:
            return self._call(name, params, ctx)
        started = time.perf_counter() if started is None else started
        try:
            result = self._call(name, params, ctx)
        except BaseException as exc:
            self._observer.call_done(name, ctx, time.perf_counter() - started, None, exc)
            raise
        self._observer.call_done(name, ctx, time.perf_counter() - started, result, None)
        return result

    def _call(self, name: str, params: Any, ctx: CallContext) -> Any:
        method = self._methods.get(name)
        if method is None or ctx.surface not in method.surfaces:
            raise MethodNotFound(data={"detail": f"no method {name!r} here (rpc.discover lists them)"})
        if method.mutating and ctx.surface == CONSOLE and self.console_read_only:
            raise ReadOnly()
        _require_text(params, "params")
        if method.params is not None:
            method.params.refuse_unknown(params)
        request = method.parse(params)
        if self._authorize is not None:
            self._authorize(method, request, ctx)
        return method.handler(request, ctx)


def _require_text(value: Any, path: str) -> None:
    """Refuse lone surrogates (legal as JSON escapes, not encodable as UTF-8) and NUL characters
    (meaningless in any field, and no database text column can hold one) anywhere in params."""
    problem = text_problem(value, path)
    if problem is not None:
        raise InvalidParams(problem)
