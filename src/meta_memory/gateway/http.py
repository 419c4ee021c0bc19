"""The HTTP transport: ``POST /rpc`` (whole surface), ``POST /console/rpc`` (console surface),
``GET /v1/health``.

JSON-RPC errors travel with HTTP 200 (the error is in the body); a notification gets 204.
Bodies are read up to the dispatcher's request cap and refused past it without buffering the
rest. Runtime calls run in a worker thread so the event loop never blocks on SQLite or fsync.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .dispatch import CONSOLE, SDK, CallContext, Dispatcher, Surface

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


def _rpc_endpoint(dispatcher: Dispatcher, surface: Surface) -> Callable[[Request], Any]:
    async def endpoint(request: Request) -> Response:
        raw = await _read_capped(request, dispatcher.max_request_bytes)
        if raw is None:
            return JSONResponse(dispatcher.oversized())
        ctx = CallContext(surface=surface)
        reply = await run_in_threadpool(dispatcher.handle_bytes, raw, ctx)
        if reply is None:
            return Response(status_code=204)
        return JSONResponse(reply)

    return endpoint


async def _health(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


def build_app(dispatcher: Dispatcher, *, on_shutdown: Callable[[], None] | None = None) -> Starlette:
    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        if on_shutdown is not None:
            on_shutdown()

    return Starlette(
        routes=[
            Route("/rpc", _rpc_endpoint(dispatcher, SDK), methods=["POST"]),
            Route("/console/rpc", _rpc_endpoint(dispatcher, CONSOLE), methods=["POST"]),
            Route("/v1/health", _health, methods=["GET"]),
        ],
        lifespan=lifespan,
    )
