"""A gateway with no console token (the quickstart's) serves a console that opens without a
sign-in, as its console surface answers without a token; one with tokens still asks for one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from meta_memory.config import load_config_dict
from meta_memory.runtime import MetaRuntime

from .conftest import DEADLINE_S, VIEWPORT, _serve


@pytest.fixture
def open_gateway(tmp_path: Path) -> Iterator[str]:
    config = load_config_dict({"memory": {"kind": "local_json"}, "agent_memory": {"enabled": True}})
    runtime = MetaRuntime.open(tmp_path / "state", config)
    server, thread, url = _serve(runtime)
    try:
        yield url
    finally:
        server.should_exit = True
        thread.join(timeout=DEADLINE_S)
        runtime.close()


def test_without_console_tokens_the_console_opens_on_the_records(browser: Any, open_gateway: str) -> None:
    import httpx

    body = {"identity": "lead:main", "title": "Deploy policy", "body": "Deploys need ops."}
    call = {"jsonrpc": "2.0", "id": 1, "method": "meta/agent_memory/remember", "params": body}
    assert "result" in httpx.post(f"{open_gateway}/rpc", json=call).json()
    context = browser.new_context(viewport=VIEWPORT, base_url=open_gateway)
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        tab.goto("/console")
        expect(tab.locator("#signin")).to_be_hidden()
        expect(tab.locator(".view[data-view=records] tbody tr")).to_have_count(1)
        expect(tab.locator(".view[data-view=records] tbody tr").first).to_contain_text("Deploy policy")
        expect(tab.locator("#signout")).to_be_hidden()
        assert tab.evaluate("sessionStorage.getItem('meta-console-token')") is None
    finally:
        context.close()
    assert errors == []


def test_with_console_tokens_the_console_still_asks_for_one(page: Any) -> None:
    expect(page.locator("#signin")).to_be_visible()
    expect(page.locator("#app")).to_be_hidden()
