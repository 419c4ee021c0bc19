""":class:`MetaClient`: the typed API over HTTP (httpx) or a ``meta_gateway stdio`` child."""

from __future__ import annotations

import collections
import contextlib
import json
import os
import select
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Protocol, TypeVar

import httpx

from ..api import CONSOLE_SURFACE, Call, Console, MetaApi
from ..errors import CapabilityUnavailable, error_from_wire
from .transport import (
    CLOSE_GRACE_S,
    DEFAULT_TIMEOUT_S,
    SPAWN_TIMEOUT_S,
    MetaAuthenticationError,
    MetaConnectionError,
    MetaTimeoutError,
    envelope,
    gateway_argv,
    raise_for_reply,
    toml_text,
)

__all__ = ["MetaClient", "config_file", "http_reply"]

R = TypeVar("R")
_PATHS = {"sdk": "/rpc", CONSOLE_SURFACE: "/console/rpc"}


class _Channel(Protocol):
    def send(self, surface: str, method: str, params: Mapping[str, Any] | None) -> Any: ...

    def close(self) -> None: ...


def http_reply(response: httpx.Response) -> Any:
    """A JSON-RPC reply from an HTTP response; a refused credential as :class:`MetaAuthenticationError`."""
    try:
        body = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        body = None
    if response.status_code in (400, 401) and isinstance(body, dict) and "error" in body:
        error = body["error"] if isinstance(body["error"], dict) else {}
        raise MetaAuthenticationError(str(error.get("message", "unauthenticated")), data=error.get("data"))
    if response.status_code == 204:
        return None
    if response.status_code != 200 or body is None:
        raise MetaConnectionError(
            f"the gateway answered HTTP {response.status_code} without a JSON-RPC reply"
        )
    return raise_for_reply(body)


class _HttpChannel:
    def __init__(self, url: str, token: str | None, console_token: str | None, timeout_s: float) -> None:
        self._tokens = {"sdk": token, CONSOLE_SURFACE: console_token}
        self._http = httpx.Client(base_url=url.rstrip("/"), timeout=timeout_s)

    def headers(self, surface: str) -> dict[str, str]:
        token = self._tokens[surface]
        return {"Authorization": f"Bearer {token}"} if token else {}

    def send(self, surface: str, method: str, params: Mapping[str, Any] | None) -> Any:
        _, body = envelope(method, params)
        headers = {"Content-Type": "application/json", **self.headers(surface)}
        try:
            response = self._http.post(_PATHS[surface], content=body, headers=headers)
        except httpx.TimeoutException as exc:
            raise MetaTimeoutError(f"no reply to {method} within the client's timeout") from exc
        except httpx.TransportError as exc:
            raise MetaConnectionError(f"cannot reach the gateway at {self._http.base_url}: {exc}") from exc
        return http_reply(response)

    def close(self) -> None:
        self._http.close()


class _Lines:
    """Lines from a pipe, each read wait bounded (``select`` before every ``os.read``)."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._fd = stream.fileno()
        self._buffer = bytearray()
        self.ended = False

    def next(self, deadline: float) -> bytes | None:
        """The next line, or ``None`` at end of file.

        Raises:
            TimeoutError: no whole line before ``deadline`` (``time.monotonic()``).
        """
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[: end + 1])
                del self._buffer[: end + 1]
                return line
            if self.ended:
                return None
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self._fd], [], [], remaining)[0]:
                raise TimeoutError
            chunk = os.read(self._fd, 1 << 16)
            if not chunk:
                self.ended = True
                continue
            self._buffer += chunk


class _StdioChannel:
    """JSON lines to a child's stdin; each call reads the child's stdout itself until its own reply
    (the gateway answers one line at a time, so calls take turns under a lock; a reply that comes
    after its call timed out is passed over by the next call)."""

    def __init__(
        self, argv: list[str], timeout_s: float, cleanup: tempfile.TemporaryDirectory[str] | None
    ) -> None:
        self._timeout_s = timeout_s
        self._cleanup = cleanup
        self._lock = threading.Lock()
        self._stderr_tail: collections.deque[str] = collections.deque(maxlen=20)
        self._closed = False
        try:
            self._proc = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
        except OSError as exc:
            if cleanup is not None:  # no child will read the config it holds
                cleanup.cleanup()
            raise MetaConnectionError(f"cannot start the gateway ({argv[0]}): {exc.strerror or exc}") from exc
        assert (
            self._proc.stdin is not None and self._proc.stdout is not None and self._proc.stderr is not None
        )
        self._stdin: IO[bytes] = self._proc.stdin
        self._lines = _Lines(self._proc.stdout)
        self._stderr_thread = threading.Thread(
            target=self._drain_stderr, args=(self._proc.stderr,), daemon=True
        )
        self._stderr_thread.start()
        try:
            first = self._lines.next(time.monotonic() + SPAWN_TIMEOUT_S)
        except TimeoutError:
            self.close()
            raise MetaTimeoutError(f"the gateway did not start within {SPAWN_TIMEOUT_S:.0f} s") from None
        if first is None:
            error = self._exited()
            self.close()
            raise error
        handshake = _message(first)
        if isinstance(handshake, dict) and "error" in handshake:  # a refusal at boot, typed
            self.close()
            raise error_from_wire(handshake["error"])

    def _exited(self) -> MetaConnectionError:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(timeout=CLOSE_GRACE_S)
        self._stderr_thread.join(CLOSE_GRACE_S)  # the refusal it printed, read to the end
        status = self._proc.poll()
        said = " ".join(
            line.strip() for line in self._stderr_tail if line.strip().startswith("meta_gateway:")
        )
        what = "the gateway exited" + (f" with status {status}" if status is not None else "")
        return MetaConnectionError(f"{what}: {said}" if said else what)

    def _drain_stderr(self, stream: IO[bytes]) -> None:
        for line in stream:
            self._stderr_tail.append(line.decode("utf-8", "replace"))

    def send(self, surface: str, method: str, params: Mapping[str, Any] | None) -> Any:
        if surface != "sdk":
            raise CapabilityUnavailable(
                "the console surface is reachable over HTTP only (MetaClient.connect with console_token=...)"
            )
        request_id, body = envelope(method, params)
        with self._lock:
            if self._closed or self._lines.ended or self._proc.poll() is not None:
                raise self._exited()
            try:
                self._stdin.write(body + b"\n")
                self._stdin.flush()
            except (BrokenPipeError, OSError, ValueError):
                raise self._exited() from None
            deadline = time.monotonic() + self._timeout_s
            while True:
                try:
                    line = self._lines.next(deadline)
                except TimeoutError:
                    raise MetaTimeoutError(f"no reply to {method} within {self._timeout_s:g} s") from None
                if line is None:
                    raise self._exited()
                reply = _message(line)
                if isinstance(reply, dict) and reply.get("id") == request_id:
                    return raise_for_reply(reply)

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            with contextlib.suppress(OSError):
                self._stdin.close()  # the gateway's clean shutdown: end of input
        try:
            self._proc.wait(timeout=CLOSE_GRACE_S)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._stderr_thread.join(CLOSE_GRACE_S)
        for stream in (self._proc.stdout, self._proc.stderr):
            if stream is not None:
                stream.close()
        if self._cleanup is not None:
            self._cleanup.cleanup()


def _message(line: bytes) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return None


def config_file(config: str | os.PathLike[str] | Mapping[str, Any] | None) -> tuple[Path | None, Any]:
    """A config to hand a child: a path as given, a mapping written to a private temporary file."""
    if config is None:
        return None, None
    if isinstance(config, Mapping):
        holder = tempfile.TemporaryDirectory(prefix="meta-client-")
        path = Path(holder.name) / "config.toml"
        path.write_text(toml_text(config), encoding="utf-8")
        return path, holder
    return Path(config), None


class MetaClient(MetaApi):
    """The typed API of a running gateway. Build one with :meth:`connect` or :meth:`spawn`; close
    it (or use ``with``). Safe to share between threads.

    Its methods are :class:`~meta_memory.api.MetaApi`'s, with the same results and errors as the
    in-process handle's, plus the transport's: :class:`MetaConnectionError` (nothing answered),
    :class:`MetaTimeoutError` (no reply in time; a write may have been applied) and
    :class:`MetaAuthenticationError` (the gateway refused the credential).

    Attributes:
        max_retries: how many times an idempotent read is retried after a connection error or a
            timeout (writes never are).
    """

    def __init__(self, channel: _Channel, *, max_retries: int = 1) -> None:
        self._channel = channel
        self.max_retries = max_retries

    @classmethod
    def connect(
        cls,
        url: str,
        *,
        token: str | None = None,
        console_token: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        max_retries: int = 1,
    ) -> MetaClient:
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
    def spawn(
        cls,
        *,
        state_dir: str | os.PathLike[str],
        config: str | os.PathLike[str] | Mapping[str, Any] | None = None,
        command: str | Sequence[str] | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        max_retries: int = 1,
    ) -> MetaClient:
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
            MetaError: the child refused to boot (the typed error it wrote: ``ConfigError`` as
                ``InvalidParams``, ``StorageRefused``, ...).
        """
        path, holder = config_file(config)
        argv = gateway_argv(command, state_dir, path)
        return cls(_StdioChannel(argv, timeout, holder), max_retries=max_retries)

    def _invoke(self, call: Call[R]) -> R:
        attempts = 1 + (self.max_retries if call.idempotent else 0)
        for attempt in range(attempts):
            try:
                return call.read(self._channel.send(call.surface, call.method, call.params))
            except MetaConnectionError:
                if attempt + 1 == attempts:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    @property
    def console(self) -> Console:
        """The console surface (``POST /console/rpc`` with the ``console_token``)."""
        return Console(self)

    def close(self) -> None:
        """Close the connection; a spawned child gets end of input and is waited for (then killed)."""
        self._channel.close()

    def __enter__(self) -> MetaClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
