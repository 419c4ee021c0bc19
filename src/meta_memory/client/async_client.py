""":class:`AsyncMetaClient`: :class:`~meta_memory.client.MetaClient`'s methods as coroutines
(httpx's async client, or an asyncio child process speaking JSON lines)."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeVar

import httpx

from ..api import CONSOLE_SURFACE, AsyncConsole, AsyncMetaApi, Call
from ..errors import CapabilityUnavailable, error_from_wire
from .sync_client import config_file, http_reply
from .transport import (
    CLOSE_GRACE_S,
    DEFAULT_TIMEOUT_S,
    SPAWN_TIMEOUT_S,
    MetaConnectionError,
    MetaTimeoutError,
    envelope,
    gateway_argv,
    raise_for_reply,
)

__all__ = ["AsyncMetaClient"]

R = TypeVar("R")
_PATHS = {"sdk": "/rpc", CONSOLE_SURFACE: "/console/rpc"}
_LINE_LIMIT = 64 * 1024 * 1024  # a reply line (a large recall) may be far past asyncio's 64 KiB default


class _Channel(Protocol):
    async def send(self, surface: str, method: str, params: Mapping[str, Any] | None) -> Any: ...

    async def close(self) -> None: ...


class _HttpChannel:
    def __init__(self, url: str, token: str | None, console_token: str | None, timeout_s: float) -> None:
        self._tokens = {"sdk": token, CONSOLE_SURFACE: console_token}
        self._http = httpx.AsyncClient(base_url=url.rstrip("/"), timeout=timeout_s)

    async def send(self, surface: str, method: str, params: Mapping[str, Any] | None) -> Any:
        _, body = envelope(method, params)
        headers = {"Content-Type": "application/json"}
        token = self._tokens[surface]
        if token:
            headers["Authorization"] = f"Bearer {token}"
        try:
            response = await self._http.post(_PATHS[surface], content=body, headers=headers)
        except httpx.TimeoutException as exc:
            raise MetaTimeoutError(f"no reply to {method} within the client's timeout") from exc
        except httpx.TransportError as exc:
            raise MetaConnectionError(f"cannot reach the gateway at {self._http.base_url}: {exc}") from exc
        return http_reply(response)

    async def close(self) -> None:
        await self._http.aclose()


class _StdioChannel:
    def __init__(self, timeout_s: float, holder: tempfile.TemporaryDirectory[str] | None) -> None:
        self._timeout_s = timeout_s
        self._holder = holder
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._stderr_tail: collections.deque[str] = collections.deque(maxlen=20)
        self._write_lock = asyncio.Lock()
        self._closed = False
        self._proc: asyncio.subprocess.Process | None = None
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self, argv: list[str]) -> None:
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                limit=_LINE_LIMIT,
            )
        except OSError as exc:
            if self._holder is not None:  # no child will read the config it holds
                self._holder.cleanup()
            raise MetaConnectionError(f"cannot start the gateway ({argv[0]}): {exc.strerror or exc}") from exc
        assert self._proc.stdout is not None and self._proc.stderr is not None
        self._tasks.append(asyncio.create_task(self._drain_stderr(self._proc.stderr)))
        try:
            first = await asyncio.wait_for(self._proc.stdout.readline(), SPAWN_TIMEOUT_S)
        except TimeoutError:
            await self.close()
            raise MetaTimeoutError(f"the gateway did not start within {SPAWN_TIMEOUT_S:.0f} s") from None
        if not first:
            await self._proc.wait()
            await asyncio.sleep(0)  # let the stderr drain see the refusal
            error = self._exited()
            await self.close()
            raise error
        try:
            handshake = json.loads(first)
        except ValueError:
            handshake = None
        if isinstance(handshake, dict) and "error" in handshake:  # a refusal at boot, typed
            await self.close()
            raise error_from_wire(handshake["error"])
        self._tasks.append(asyncio.create_task(self._read(self._proc.stdout)))

    def _exited(self) -> MetaConnectionError:
        status = self._proc.returncode if self._proc is not None else None
        said = " ".join(
            line.strip() for line in self._stderr_tail if line.strip().startswith("meta_gateway:")
        )
        what = "the gateway exited" + (f" with status {status}" if status is not None else "")
        return MetaConnectionError(f"{what}: {said}" if said else what)

    async def _drain_stderr(self, stream: asyncio.StreamReader) -> None:
        while line := await stream.readline():
            self._stderr_tail.append(line.decode("utf-8", "replace"))

    async def _read(self, stream: asyncio.StreamReader) -> None:
        while raw := await stream.readline():
            try:
                message = json.loads(raw)
            except ValueError:
                continue
            key = message.get("id") if isinstance(message, dict) else None
            future = self._pending.pop(key, None) if isinstance(key, int) else None
            if future is not None and not future.done():
                future.set_result(message)
        if self._proc is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._proc.wait(), CLOSE_GRACE_S)
        error = self._exited()
        for future in list(self._pending.values()):
            if not future.done():
                future.set_exception(error)
        self._pending.clear()

    async def send(self, surface: str, method: str, params: Mapping[str, Any] | None) -> Any:
        if surface != "sdk":
            raise CapabilityUnavailable(
                "the console surface is reachable over HTTP only (AsyncMetaClient.connect with console_token=...)"
            )
        proc = self._proc
        if proc is None or proc.stdin is None or self._closed or proc.returncode is not None:
            raise self._exited()
        request_id, body = envelope(method, params)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            async with self._write_lock:
                proc.stdin.write(body + b"\n")
                await proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError, OSError):
            self._pending.pop(request_id, None)
            raise self._exited() from None
        try:
            reply = await asyncio.wait_for(future, self._timeout_s)
        except TimeoutError:
            self._pending.pop(request_id, None)
            raise MetaTimeoutError(f"no reply to {method} within {self._timeout_s:g} s") from None
        return raise_for_reply(reply)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        proc = self._proc
        if proc is not None:
            if proc.stdin is not None:
                proc.stdin.close()  # the gateway's clean shutdown: end of input
            try:
                await asyncio.wait_for(proc.wait(), CLOSE_GRACE_S)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._holder is not None:
            self._holder.cleanup()


class AsyncMetaClient(AsyncMetaApi):
    """The typed API of a running gateway, as coroutines. Build one with ``await``
    :meth:`connect` or :meth:`spawn`; close it (or use ``async with``).

    Its methods are :class:`~meta_memory.api.AsyncMetaApi`'s, with the results and errors of
    :class:`~meta_memory.client.MetaClient`'s (the transport's errors included).

    Attributes:
        max_retries: how many times an idempotent read is retried after a connection error or a
            timeout (writes never are).
    """

    def __init__(self, channel: _Channel, *, max_retries: int = 1) -> None:
        self._channel = channel
        self.max_retries = max_retries

    @classmethod
    async def connect(
        cls,
        url: str,
        *,
        token: str | None = None,
        console_token: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        max_retries: int = 1,
    ) -> AsyncMetaClient:
        """A client of the gateway serving ``url`` (``meta_gateway serve``) over HTTP.

        Args:
            url: the gateway's base URL (``http://127.0.0.1:8765``).
            token: the bearer token for ``POST /rpc`` (one of ``[[rpc.auth.tokens]]``).
            console_token: the bearer token for :attr:`console` (one of ``[[console.auth.tokens]]``).
            timeout: seconds to wait for each reply.
            max_retries: retries of an idempotent read after a connection error or a timeout.

        Returns:
            The client; nothing is sent until the first call.
        """
        return cls(_HttpChannel(url, token, console_token, timeout), max_retries=max_retries)

    @classmethod
    async def spawn(
        cls,
        *,
        state_dir: str | os.PathLike[str],
        config: str | os.PathLike[str] | Mapping[str, Any] | None = None,
        command: str | Sequence[str] | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        max_retries: int = 1,
    ) -> AsyncMetaClient:
        """Start ``meta_gateway stdio`` on ``state_dir`` as a child process, which holds the state
        dir until :meth:`close`. Its channel carries the application surface only.

        Args:
            state_dir: the state directory the child serves.
            config: a TOML config file's path, or a mapping in the same shape (written to a
                private temporary file); ``None``: the gateway's embedded default.
            command: the gateway's command line (default: the ``meta_gateway`` beside this
                interpreter, else the one on ``PATH``).
            timeout: seconds to wait for each reply.
            max_retries: retries of an idempotent read after a connection error or a timeout.

        Returns:
            The client, once the child has answered its handshake.

        Raises:
            MetaConnectionError: the child could not start or exited (its refusal is in the message).
            MetaTimeoutError: the child did not answer its handshake in time.
            MetaError: the child refused to boot (the typed error it wrote).
        """
        path, holder = config_file(config)
        channel = _StdioChannel(timeout, holder)
        await channel.start(gateway_argv(command, state_dir, path))
        return cls(channel, max_retries=max_retries)

    async def _invoke(self, call: Call[R]) -> R:
        attempts = 1 + (self.max_retries if call.idempotent else 0)
        for attempt in range(attempts):
            try:
                return call.read(await self._channel.send(call.surface, call.method, call.params))
            except MetaConnectionError:
                if attempt + 1 == attempts:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    @property
    def console(self) -> AsyncConsole:
        """The console surface (``POST /console/rpc`` with the ``console_token``)."""
        return AsyncConsole(self)

    async def close(self) -> None:
        """Close the connection; a spawned child gets end of input and is waited for (then killed)."""
        await self._channel.close()

    async def __aenter__(self) -> AsyncMetaClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
