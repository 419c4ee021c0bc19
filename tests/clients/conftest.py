"""One protocol, five ways in: the in-process handle, and the sync and async clients over HTTP (a
real ``meta_gateway serve``) and over stdio (a real ``meta_gateway stdio`` child). Each test of the
shared suite runs against every one (``api``); the async clients are driven through a blocking
adapter on an event loop of their own, so the suite's code is the same for all."""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import subprocess
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from meta_memory import Meta
from meta_memory.api import AsyncConsole, AsyncSession
from meta_memory.client import AsyncMetaClient, MetaClient
from meta_memory.client.transport import toml_text

from ..conftest import free_port, gateway_command, wait_until_listening

APP_TOKEN = "app-token-for-the-protocol-suite"
CONSOLE_TOKEN = "console-token-for-the-protocol-suite"
DEADLINE_S = 60.0


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def gateway_config() -> dict[str, Any]:
    """Agent memory with every LLM write quarantined (so review has work), and both surfaces' tokens."""
    return {
        "memory": {"kind": "local_json"},
        "agent_memory": {"llm_writes": "quarantined"},
        "rpc": {"auth": {"tokens": [{"token_sha256": digest(APP_TOKEN), "subject": "suite"}]}},
        "console": {"auth": {"tokens": [{"token_sha256": digest(CONSOLE_TOKEN), "subject": "ops"}]}},
    }


class Served:
    def __init__(self, proc: subprocess.Popen[bytes], url: str, state_dir: Path) -> None:
        self.proc, self.url, self.state_dir = proc, url, state_dir


def serve(state_dir: Path, config: dict[str, Any], log: Path) -> Iterator[Served]:
    """A real ``meta_gateway serve`` on a free port, killed at the end."""
    port = free_port()
    config_path = state_dir.parent / f"{state_dir.name}.toml"
    config_path.write_text(toml_text(config))
    with log.open("wb") as err:
        argv = [gateway_command(), "serve", "--state-dir", str(state_dir), "--config", str(config_path)]
        proc = subprocess.Popen([*argv, "--port", str(port)], stdout=err, stderr=err)
        try:
            wait_until_listening(proc, port)
            yield Served(proc, f"http://127.0.0.1:{port}", state_dir)
        finally:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=DEADLINE_S)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


@pytest.fixture(scope="session")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    base = tmp_path_factory.mktemp("served")
    yield from serve(base / "state", gateway_config(), base / "serve.log")


class EventLoopThread:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()

    def run(self, awaitable: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(awaitable, self.loop).result(DEADLINE_S)

    def stop(self) -> None:
        self.run(self.loop.shutdown_asyncgens())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(DEADLINE_S)
        self.loop.close()


class Blocking:
    """An async client (or its sessions and console) with each coroutine method run to completion."""

    def __init__(self, target: Any, loop: EventLoopThread) -> None:
        self._target = target
        self._loop = loop

    def _wrap(self, value: Any) -> Any:
        if isinstance(value, AsyncSession | AsyncConsole):
            return Blocking(value, self._loop)
        return value

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._target, name)
        if not callable(attr):
            return self._wrap(attr)

        def run(*args: Any, **kwargs: Any) -> Any:
            result = attr(*args, **kwargs)
            if inspect.isawaitable(result):
                result = self._loop.run(result)
            return self._wrap(result)

        return run


@pytest.fixture(scope="session")
def event_loop_thread() -> Iterator[EventLoopThread]:
    loop = EventLoopThread()
    yield loop
    loop.stop()


WAYS = ["in_process", "http", "stdio", "async_http", "async_stdio"]
STDIO_WAYS = {"stdio", "async_stdio"}


@pytest.fixture(scope="session")
def apis(
    tmp_path_factory: pytest.TempPathFactory, served: Served, event_loop_thread: EventLoopThread
) -> Iterator[dict[str, Any]]:
    """Every way in, each opened once for the session (tests keep apart by identity)."""
    base = tmp_path_factory.mktemp("apis")
    config = gateway_config()
    handle = (
        Meta.builder()
        .persistent_state(base / "in-process")
        .memory()
        .agent_memory(llm_writes="quarantined")
        .build()
    )
    http = MetaClient.connect(served.url, token=APP_TOKEN, console_token=CONSOLE_TOKEN)
    stdio = MetaClient.spawn(state_dir=base / "stdio", config=config)
    run = event_loop_thread.run
    async_http = run(AsyncMetaClient.connect(served.url, token=APP_TOKEN, console_token=CONSOLE_TOKEN))
    async_stdio = run(AsyncMetaClient.spawn(state_dir=base / "async-stdio", config=config))
    ways = {
        "in_process": handle,
        "http": http,
        "stdio": stdio,
        "async_http": Blocking(async_http, event_loop_thread),
        "async_stdio": Blocking(async_stdio, event_loop_thread),
    }
    try:
        yield ways
    finally:
        handle.close()
        http.close()
        stdio.close()
        run(async_http.close())
        run(async_stdio.close())


@pytest.fixture(params=WAYS)
def way(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def api(apis: dict[str, Any], way: str) -> Any:
    return apis[way]


@pytest.fixture
def identity() -> str:
    return f"suite:{uuid.uuid4().hex[:12]}"


@pytest.fixture
def fresh() -> Callable[[str], str]:
    return lambda prefix: f"{prefix}-{uuid.uuid4().hex[:8]}"
