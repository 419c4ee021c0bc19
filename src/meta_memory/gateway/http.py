"""The HTTP transport: ``POST /rpc`` (the application surface), ``POST /console/rpc`` (the console
surface), ``GET /openrpc.json`` and ``GET /console/openrpc.json`` (their OpenRPC documents),
``GET /v1/health``, ``GET /metrics`` (Prometheus, metrics.py), the live timeline
``GET /console/timeline/stream`` (SSE), and the web console ``GET /console`` with its assets
under ``/console/static/``.

Every request is followed by the request telemetry (telemetry.py: one log line and its metrics)
and first passes the boundary guards (security.py: Host, Origin, Content-Type, and the
defensive response headers). Both JSON-RPC endpoints, the timeline stream and the metrics then
authenticate the ``Authorization`` header before reading a byte of the body: once a surface has
tokens, a request without a valid one is 401 and nothing runs (401 for a bad token, 400 for a
malformed header). JSON-RPC errors travel with HTTP 200 (the error is in the body); a notification gets
204. Bodies are read up to the dispatcher's request cap and refused past it without buffering
the rest; a client that disconnects mid-body is logged in one line. Runtime calls run in a worker
thread so the event loop never blocks on SQLite or fsync.

An app is not built over a config whose console answers tokenless callers beside application
tokens, unless the config says so on purpose (:func:`check_console_exposure`).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from ..access import AuthenticationFailed, BearerAuthenticator, Principal
from ..config import MetaConfig
from ..console import console_routes
from ..errors import AccessDenied, ConfigError, InvalidParams
from ..runtime import MetaRuntime
from ..timeline import Timeline, event_seq
from .dispatch import CONSOLE, HTTP, SDK, CallContext, Dispatcher, Surface, to_wire_error
from .methods import build_dispatcher, principal_of_value, timeline_visibility
from .metrics import CONTENT_TYPE, GatewayMetrics, metrics_authenticator
from .security import BoundaryPolicy, HttpBoundary
from .telemetry import RECORD_KEY, RequestTelemetry, Telemetry, note_refusal, record_of

__all__ = ["build_app", "check_console_exposure"]

log = logging.getLogger("meta_memory.gateway.http")


class _Oversized(Exception):
    pass


async def _read_capped(request: Request, cap: int) -> bytes:
    """The whole body, at most ``cap`` bytes.

    Raises:
        _Oversized: the body is (or declares itself) longer than ``cap``.
        ClientDisconnect: the client went away before sending all of it.
    """
    declared = request.headers.get("content-length")
    # Only ASCII digits spell a length (``str.isdigit`` also takes ``²``, which ``int`` refuses);
    # more than 18 of them is past any cap, and ``int`` is never asked to read thousands.
    digits = declared.lstrip("0") if declared is not None and declared.isascii() else ""
    if digits.isdigit() and (len(digits) > 18 or int(digits) > cap):
        raise _Oversized()
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > cap:
            raise _Oversized()
        chunks.append(chunk)
    return b"".join(chunks)


def _unauthenticated(exc: AuthenticationFailed) -> Response:
    body = {"jsonrpc": "2.0", "id": None, "error": to_wire_error(exc)}
    return JSONResponse(body, status_code=exc.http_status, headers={"WWW-Authenticate": exc.www_authenticate})


def _authenticate(auth: BearerAuthenticator, request: Request) -> Principal | Response:
    try:
        return auth.authenticate(request.headers.get("authorization"))
    except AuthenticationFailed as exc:
        note_refusal(request.scope, exc.reason)
        return _unauthenticated(exc)


def _context(request: Request, surface: Surface, principal: Principal) -> CallContext:
    record = record_of(request.scope)
    extras = {RECORD_KEY: record} if record is not None else {}
    return CallContext(surface=surface, principal=principal, transport=HTTP, extras=extras)


def _client(request: Request) -> str:
    client = request.client
    return f"{client.host}:{client.port}" if client is not None else "unknown client"


def _rpc_endpoint(
    dispatcher: Dispatcher, surface: Surface, auth: BearerAuthenticator
) -> Callable[[Request], Any]:
    async def endpoint(request: Request) -> Response:
        principal = _authenticate(auth, request)  # before the body is read: a bad credential costs nothing
        if isinstance(principal, Response):
            return principal
        try:
            raw = await _read_capped(request, dispatcher.max_request_bytes)
        except _Oversized:
            note_refusal(request.scope, "body_too_large")
            return JSONResponse(dispatcher.oversized(), status_code=413)
        except ClientDisconnect:
            log.info(
                "%s disconnected before sending the whole request to %s", _client(request), request.url.path
            )
            return Response(status_code=400)  # nobody reads it
        ctx = _context(request, surface, principal)
        reply = await run_in_threadpool(dispatcher.handle_bytes, raw, ctx)
        if reply is None:
            return Response(status_code=204)
        return JSONResponse(reply)

    return endpoint


def _openrpc_endpoint(
    dispatcher: Dispatcher, surface: Surface, auth: BearerAuthenticator
) -> Callable[[Request], Any]:
    """``GET /openrpc.json`` (``/console/openrpc.json``): ``rpc.discover`` of the surface, as the
    caller's credential sees it (the same authentication as the surface's JSON-RPC endpoint)."""

    async def endpoint(request: Request) -> Response:
        principal = _authenticate(auth, request)
        if isinstance(principal, Response):
            return principal
        ctx = _context(request, surface, principal)
        try:
            document = await run_in_threadpool(dispatcher.call, "rpc.discover", None, ctx)
        except Exception as exc:  # the one boundary maps it; nothing internal leaks
            # A caller the rules keep from the document is refused (403), not an outage.
            status = 403 if isinstance(exc, AccessDenied) else 500
            return JSONResponse(
                {"jsonrpc": "2.0", "id": None, "error": to_wire_error(exc)}, status_code=status
            )
        return JSONResponse(document)

    return endpoint


async def _health(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


def _metrics_endpoint(metrics: GatewayMetrics, auth: BearerAuthenticator) -> Callable[[Request], Any]:
    """``GET /metrics``: the Prometheus text, behind the console's tokens or the metrics token."""

    async def endpoint(request: Request) -> Response:
        principal = _authenticate(auth, request)
        if isinstance(principal, Response):
            return principal
        body = await run_in_threadpool(metrics.render)  # the gauges read the stores
        return Response(body, headers={"Content-Type": CONTENT_TYPE})

    return endpoint


_SSE_QUEUE_MAX = 1000
_SSE_KEEPALIVE_S = 15.0


def _sse(envelope: dict[str, Any]) -> str:
    return f"id: {envelope['event_id']}\nevent: {envelope['event_type']}\ndata: {json.dumps(envelope)}\n\n"


def _timeline_stream(
    timeline: Timeline,
    auth: BearerAuthenticator,
    visibility: Callable[[Any], Callable[[dict[str, Any]], bool]],
) -> Callable[[Request], Any]:
    """``GET /console/timeline/stream``: live envelopes as server-sent events.

    With ``Last-Event-ID`` (or ``?after=console-evt-N``) the stored events after it are
    replayed first, so a reconnecting client misses nothing the window still holds. A client
    too slow to drain its queue is disconnected; it reconnects with its last id.
    """

    async def endpoint(request: Request) -> Response:
        principal = _authenticate(auth, request)
        if isinstance(principal, Response):
            return principal
        visible = visibility(principal)
        field, last = "Last-Event-ID", request.headers.get("last-event-id")
        if not last:
            field, last = "after", request.query_params.get("after")
        after = event_seq(last) if last else None
        if last and after is None:  # a cursor no event could have: refused, never read as "from now"
            problem = InvalidParams(f"{field} must be an event_id like 'console-evt-42' when provided")
            return JSONResponse(
                {"jsonrpc": "2.0", "id": None, "error": to_wire_error(problem)}, status_code=400
            )
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue(maxsize=_SSE_QUEUE_MAX)

        def put(envelope: dict[str, Any] | None) -> None:
            try:
                queue.put_nowait(envelope)
            except asyncio.QueueFull:
                queue.get_nowait()  # make room for the end marker: this client is cut off
                queue.put_nowait(None)

        def notify(envelope: dict[str, Any]) -> None:
            loop.call_soon_threadsafe(put, envelope)

        unsubscribe = timeline.subscribe(notify)

        async def events() -> AsyncIterator[str]:
            try:
                seen = 0
                yield ": connected\n\n"
                if after is not None:
                    for stored in await run_in_threadpool(timeline.after, after, _SSE_QUEUE_MAX):
                        seen = event_seq(stored["event_id"]) or seen
                        if visible(stored):
                            yield _sse(stored)
                while True:
                    try:
                        live = await asyncio.wait_for(queue.get(), timeout=_SSE_KEEPALIVE_S)
                    except TimeoutError:
                        yield ": keepalive\n\n"
                        continue
                    if live is None:
                        return
                    if (event_seq(live["event_id"]) or 0) > seen and visible(live):
                        yield _sse(live)
            finally:
                unsubscribe()

        return StreamingResponse(
            events(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    return endpoint


def check_console_exposure(config: MetaConfig) -> str | None:
    """Refuse a console left open to tokenless callers beside application tokens.

    Once ``[[rpc.auth.tokens]]`` holds a token, the application surface answers only its holders;
    a console that still answers without a token (``POST /console/rpc``, the timeline stream, and
    ``GET /metrics`` with no scrape token of its own) would let any process that reaches the port,
    the agent host the memory firewall constrains included, review its own quarantine. So a console
    without ``[[console.auth.tokens]]`` must say what it is: ``[console.auth] allow_anonymous = false``
    closes it, ``= true`` opens it on purpose.

    Returns:
        The warning to log at startup when the console is opened on purpose beside application
        tokens; ``None`` when there is nothing to say.

    Raises:
        ConfigError: application tokens, no console token, and ``allow_anonymous`` unset.
    """
    auth = config.console.auth
    if not config.rpc.auth.tokens or not auth.anonymous_allowed:
        return None
    metrics = " and GET /metrics" if config.metrics.token_sha256 is None else ""
    if auth.allow_anonymous is None:
        raise ConfigError(
            "[[rpc.auth.tokens]] holds application tokens but [[console.auth.tokens]] holds none, so the "
            f"console (POST /console/rpc, GET /console/timeline/stream){metrics} would answer callers "
            "without a token, and any process that reaches the port could review quarantine; configure "
            "[[console.auth.tokens]] (`meta_gateway hash-token`), or set [console.auth] allow_anonymous = "
            "true to open the console on purpose (false closes it)"
        )
    return (
        f"callers without a token reach the console (POST /console/rpc, GET /console/timeline/stream){metrics}: "
        "[console.auth] allow_anonymous = true beside [[rpc.auth.tokens]], so any process that reaches the "
        "port can review quarantine as far as [access] lets the anonymous console"
    )


def build_app(
    runtime: MetaRuntime,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    dispatcher: Dispatcher | None = None,
    on_shutdown: Callable[[], None] | None = None,
) -> Starlette:
    """The ASGI app serving ``runtime`` as bound to ``host``:``port`` (the names and origins the
    boundary accepts derive from them and from ``[http]``). ``dispatcher`` defaults to the
    runtime's own; either way its calls are counted in this app's metrics and logged
    (``app.state.telemetry``).

    Raises:
        ConfigError: the config leaves the console open to tokenless callers beside application
            tokens without saying so (:func:`check_console_exposure`).
    """
    exposure = check_console_exposure(runtime.config)
    if exposure is not None:
        log.warning("%s", exposure)
    metrics = GatewayMetrics(runtime)
    telemetry = Telemetry(metrics)
    dispatcher = (dispatcher or build_dispatcher(runtime)).observed(telemetry)
    console_auth = runtime.console_auth or BearerAuthenticator.for_console(runtime.config.console)
    rpc_auth = runtime.rpc_auth or BearerAuthenticator.for_rpc(runtime.config.rpc)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        metrics.close()
        if on_shutdown is not None:
            on_shutdown()

    routes: list[BaseRoute] = [
        Route("/rpc", _rpc_endpoint(dispatcher, SDK, rpc_auth), methods=["POST"]),
        Route("/console/rpc", _rpc_endpoint(dispatcher, CONSOLE, console_auth), methods=["POST"]),
        Route("/openrpc.json", _openrpc_endpoint(dispatcher, SDK, rpc_auth), methods=["GET"]),
        Route("/console/openrpc.json", _openrpc_endpoint(dispatcher, CONSOLE, console_auth), methods=["GET"]),
        Route("/v1/health", _health, methods=["GET"]),
        Route("/metrics", _metrics_endpoint(metrics, metrics_authenticator(runtime.config)), methods=["GET"]),
    ]
    if runtime.timeline is not None:
        visibility = lambda principal: timeline_visibility(runtime, principal_of_value(principal))  # noqa: E731
        stream = _timeline_stream(runtime.timeline, console_auth, visibility)
        routes.append(Route("/console/timeline/stream", stream, methods=["GET"]))
    # The page itself needs no credential: it holds none, and every call it makes is authenticated.
    # Where the console surface takes calls without a token (none is configured), the page opens
    # the panel without asking for one.
    routes.extend(console_routes(open_console=console_auth.tokenless))
    policy = BoundaryPolicy.build(runtime.config.http, bound_host=host, port=port)
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        middleware=[
            Middleware(RequestTelemetry, telemetry=telemetry),  # outermost: sees every refusal
            Middleware(HttpBoundary, policy=policy, on_refusal=note_refusal),
        ],
    )
    app.state.telemetry = telemetry
    return app
