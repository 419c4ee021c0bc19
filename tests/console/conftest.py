"""Console fixtures: a real gateway (uvicorn in a thread, on a socket of its own) with console
tokens and the strict ``llm_writes = "quarantined"`` posture, and headless Chromium from Debian's
``chromium`` package driven by Playwright (never a browser Playwright downloads).

The browser tests run wherever ``/usr/bin/chromium`` exists; in CI (``CI`` set) a missing browser
fails them instead of skipping, so ``.ci/run`` must install it.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from meta_memory.access import hash_token
from meta_memory.config import load_config_dict
from meta_memory.gateway.http import build_app
from meta_memory.gateway.server import DeadlineH11Protocol
from meta_memory.runtime import MetaRuntime

from ..conftest import Backend

CHROMIUM = Path("/usr/bin/chromium")
TOKEN = "console-test-token"
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1280, "height": 800}
DEADLINE_S = 20.0


@dataclass
class Gateway:
    """A served gateway: its base URL and JSON-RPC helpers over both surfaces."""

    url: str
    runtime: MetaRuntime
    client: httpx.Client = field(init=False)

    def __post_init__(self) -> None:
        self.client = httpx.Client(base_url=self.url, timeout=DEADLINE_S)

    def call(self, method: str, params: Any = None, *, console: bool = False) -> Any:
        path = "/console/rpc" if console else "/rpc"
        headers = {"Authorization": f"Bearer {TOKEN}"} if console else {}
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}
        reply = self.client.post(path, json=body, headers=headers).json()
        assert "result" in reply, reply
        return reply["result"]

    def quarantined_write(self, identity: str, title: str, body: str) -> str:
        """An LLM write through a host session; the strict posture quarantines it. Returns its id."""
        key = self.call("meta/session/open", {"identity": identity})["session_key"]
        arguments = {"action": "remember", "title": title, "body": body}
        written = self.call("meta/session/memory_tool", {"session_key": key, "arguments": arguments})
        assert written["outcome"] == "quarantined", written
        queue = self.call("meta/memory/panel/quarantine", console=True)["records"]
        return str(next(r["memory_id"] for r in queue if r["title"] == title))


def _serve(runtime: MetaRuntime) -> tuple[uvicorn.Server, threading.Thread, str]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    host, port = sock.getsockname()
    app = build_app(runtime, host=host, port=port, on_shutdown=runtime.close)
    config = uvicorn.Config(
        app, log_level="warning", lifespan="on", timeout_graceful_shutdown=1, http=DeadlineH11Protocol
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + DEADLINE_S
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise AssertionError("the gateway did not start")
        time.sleep(0.02)
    return server, thread, f"http://{host}:{port}"


@pytest.fixture
def gateway(tmp_path: Path, backend: Backend) -> Iterator[Gateway]:
    """On the embedded SQLite default; a module that overrides ``backend`` runs on both."""
    config = load_config_dict(
        backend.config(
            {
                "memory": {"kind": "local_json"},
                "agent_memory": {"enabled": True, "llm_writes": "quarantined"},
                "console": {"auth": {"tokens": [{"token_sha256": hash_token(TOKEN), "subject": "ops"}]}},
            }
        )
    )
    runtime = MetaRuntime.open(tmp_path / "state", config)
    server, thread, url = _serve(runtime)
    gw = Gateway(url, runtime)
    try:
        yield gw
    finally:
        gw.client.close()
        server.should_exit = True
        thread.join(timeout=DEADLINE_S)
        runtime.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    # Module-scoped, not session: the sync API keeps an event loop running in this thread while it
    # is open, which would break every later test that runs a loop of its own (tests/mcp/).
    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing: .ci/run installs Debian's chromium before the tests")
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)")
    from playwright.sync_api import expect, sync_playwright

    # expect() waits 5 s by default, independently of the context's timeout for actions: a loaded
    # CI machine can take longer to render a view.
    expect.set_options(timeout=DEADLINE_S * 1000)
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any, gateway: Gateway) -> Iterator[Any]:
    """A fresh tab (empty session storage) at the console's sign-in form."""
    context = browser.new_context(viewport=VIEWPORT, base_url=gateway.url)
    context.set_default_timeout(DEADLINE_S * 1000)
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    # Console errors too (a Content-Security-Policy violation lands here), but not the browser's
    # own note of a refused request, which the sign-in test provokes on purpose.
    tab.on(
        "console",
        lambda msg: (
            errors.append(msg.text)
            if msg.type == "error" and "Failed to load resource" not in msg.text
            else None
        ),
    )
    tab.goto("/console")
    yield tab
    context.close()
    assert errors == [], f"uncaught errors in the page: {errors}"


@pytest.fixture
def sign_in() -> Callable[..., None]:
    def sign(tab: Any, token: str = TOKEN) -> None:
        tab.get_by_label("Console token").fill(token)
        tab.get_by_role("button", name="Sign in").click()

    return sign


@pytest.fixture
def screenshot() -> Callable[[Any, str], None]:
    """Save a view under ``$META_CONSOLE_SCREENSHOTS`` (the README's images: ``docs/images``)."""
    target = os.environ.get("META_CONSOLE_SCREENSHOTS")

    def shoot(tab: Any, name: str) -> None:
        if target:
            Path(target).mkdir(parents=True, exist_ok=True)
            tab.screenshot(path=str(Path(target) / f"console-{name}.png"))

    return shoot
