"""The HTTP transport: ``POST /rpc`` (whole surface), ``POST /console/rpc`` (console surface),
``GET /v1/health``, the live timeline ``GET /console/timeline/stream`` (SSE), and the web console
``GET /console`` with its assets under ``/console/static/``.

JSON-RPC errors travel with HTTP 200 (the error is in the body); a notification gets 204.
Bodies are read up to the dispatcher's request cap and refused past it without buffering the
rest. Runtime calls run in a worker thread so the event loop never blocks on SQLite or fsync.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from ..access import AuthenticationFailed
from ..console import console_routes
from ..timeline import Timeline, event_seq
from .dispatch import CONSOLE, SDK, CallContext, Dispatcher, Surface, to_wire_error

__all__ = ["build_app"]


async def _read_capped(request: Request, cap: int) -> bytes | None:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > cap:
        return None
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > cap:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


Authenticate = Callable[[str | None], Any]


def _unauthenticated(exc: AuthenticationFailed) -> Response:
    body = {"jsonrpc": "2.0", "id": None, "error": to_wire_error(exc)}
    return JSONResponse(body, status_code=exc.http_status, headers={"WWW-Authenticate": exc.www_authenticate})


def _rpc_endpoint(
    dispatcher: Dispatcher, surface: Surface, authenticate: Authenticate | None
) -> Callable[[Request], Any]:
    async def endpoint(request: Request) -> Response:
        principal = None
        if authenticate is not None:  # before the body is read: a bad credential costs nothing
            try:
                principal = authenticate(request.headers.get("authorization"))
            except AuthenticationFailed as exc:
                return _unauthenticated(exc)
        raw = await _read_capped(request, dispatcher.max_request_bytes)
        if raw is None:
            return JSONResponse(dispatcher.oversized())
        ctx = CallContext(surface=surface, principal=principal)
        reply = await run_in_threadpool(dispatcher.handle_bytes, raw, ctx)
        if reply is None:
            return Response(status_code=204)
        return JSONResponse(reply)

    return endpoint


async def _health(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


_SSE_QUEUE_MAX = 1000
_SSE_KEEPALIVE_S = 15.0


def _sse(envelope: dict[str, Any]) -> str:
    return f"id: {envelope['event_id']}\nevent: {envelope['event_type']}\ndata: {json.dumps(envelope)}\n\n"


def _timeline_stream(
    timeline: Timeline,
    authenticate: Authenticate | None,
    visibility: Callable[[Any], Callable[[dict[str, Any]], bool]] | None,
) -> Callable[[Request], Any]:
    """``GET /console/timeline/stream``: live envelopes as server-sent events.

    With ``Last-Event-ID`` (or ``?after=console-evt-N``) the stored events after it are
    replayed first, so a reconnecting client misses nothing the window still holds. A client
    too slow to drain its queue is disconnected; it reconnects with its last id.
    """

    async def endpoint(request: Request) -> Response:
        principal = None
        if authenticate is not None:
            try:
                principal = authenticate(request.headers.get("authorization"))
            except AuthenticationFailed as exc:
                return _unauthenticated(exc)
        visible = visibility(principal) if visibility is not None else (lambda _event: True)
        last = request.headers.get("last-event-id") or request.query_params.get("after")
        after = event_seq(last) if last else None
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


def build_app(
    dispatcher: Dispatcher,
    *,
    timeline: Timeline | None = None,
    authenticate: Authenticate | None = None,
    visibility: Callable[[Any], Callable[[dict[str, Any]], bool]] | None = None,
    on_shutdown: Callable[[], None] | None = None,
) -> Starlette:
    """The ASGI app. ``authenticate`` maps a console request's ``Authorization`` header to a
    principal (or raises); ``visibility`` gives a principal's timeline filter."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        if on_shutdown is not None:
            on_shutdown()

    routes: list[BaseRoute] = [
        Route("/rpc", _rpc_endpoint(dispatcher, SDK, None), methods=["POST"]),
        Route("/console/rpc", _rpc_endpoint(dispatcher, CONSOLE, authenticate), methods=["POST"]),
        Route("/v1/health", _health, methods=["GET"]),
    ]
    if timeline is not None:
        stream = _timeline_stream(timeline, authenticate, visibility)
        routes.append(Route("/console/timeline/stream", stream, methods=["GET"]))
    # The page itself needs no credential: it holds none, and every call it makes is authenticated.
    routes.extend(console_routes())
    return Starlette(routes=routes, lifespan=lifespan)
