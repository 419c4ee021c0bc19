"""The console's routes in process: the shell, its security headers and assets (no browser)."""

from __future__ import annotations

from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from meta_memory import __version__
from meta_memory.config import DEFAULT_CONFIG, load_config_dict
from meta_memory.console import CONSOLE_VIEWS, render_shell
from meta_memory.gateway.http import build_app
from meta_memory.runtime import MetaRuntime


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    runtime = MetaRuntime.open(tmp_path / "state", load_config_dict(DEFAULT_CONFIG))
    with TestClient(
        build_app(runtime, on_shutdown=runtime.close), base_url="http://127.0.0.1:8765"
    ) as test_client:
        yield test_client


def test_the_shell_is_served_with_a_strict_content_security_policy(client: TestClient) -> None:
    response = client.get("/console")

    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    csp = response.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "default-src 'none'" in csp and "frame-ancestors 'none'" in csp
    assert response.headers["x-content-type-options"] == "nosniff"
    assert f'src="/console/static/console.js?v={__version__}"' in response.text
    for route, label in CONSOLE_VIEWS:
        assert f'<a href="#/{route}" data-view="{route}">{label}</a>' in response.text


def test_the_assets_are_served_with_their_types(client: TestClient) -> None:
    script = client.get("/console/static/console.js")
    style = client.get("/console/static/console.css")
    icon = client.get("/console/static/favicon.svg")
    missing = client.get("/console/static/nope.js")

    assert script.status_code == style.status_code == icon.status_code == 200
    assert "javascript" in script.headers["content-type"]
    assert style.headers["content-type"].startswith("text/css")
    assert icon.headers["content-type"].startswith("image/svg+xml")
    assert missing.status_code == 404


def test_a_trailing_slash_redirects_to_the_console(client: TestClient) -> None:
    response = client.get("/console/", follow_redirects=False)

    assert (response.status_code, response.headers["location"]) == (308, "/console")


def test_the_script_never_writes_markup_from_data() -> None:
    script = resources.files("meta_memory.console").joinpath("static/console.js").read_text()

    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert sink not in script, sink


def test_the_shell_template_leaves_no_placeholder_unfilled() -> None:
    assert "{{" not in render_shell()
