"""The README's first screens run in order on one machine, as a new user runs them: the quickstart
gateway serves ``.meta/state`` (the README's own command, in a fresh working directory), and while
it serves, the in-process example and the clients' example run beside it, the clients against it
(the README's URL pointed at this gateway's port), each with a state dir of its own, so none is
refused for a state dir another runtime holds; and what the clients' example lists by tag is the
record it just wrote."""

from __future__ import annotations

import ast
import asyncio
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ..conftest import free_port, gateway_command, wait_until_listening

README = Path(__file__).resolve().parents[2] / "README.md"
TEXT = README.read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.*?)```", TEXT, flags=re.DOTALL)


def _first(marker: str) -> str:
    return next(block for block in BLOCKS if marker in block)


def test_the_quickstart_then_the_in_process_and_client_examples_run_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    quickstart = re.search(r"```sh\npip install \. && (meta_gateway serve [^\n]*)\n```", TEXT)
    assert quickstart, "the README's first command installs and serves"
    serve = quickstart.group(1).split()
    port = free_port()
    monkeypatch.chdir(tmp_path)
    gateway = subprocess.Popen(
        [gateway_command(), *serve[1:], "--port", str(port)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until_listening(gateway, port)
        in_process = _first("Meta.builder()")
        namespace: dict[str, Any] = {"__name__": "readme"}
        exec(compile(in_process, "README.md", "exec"), namespace)
        assert namespace["hits"], "the in-process example's recall found nothing"

        clients = _first("MetaClient.connect(").replace("http://127.0.0.1:8765", f"http://127.0.0.1:{port}")
        code = compile(clients, "README.md", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        namespace = {"__name__": "readme"}
        pending = eval(code, namespace)  # a coroutine: the example awaits at its top level
        if pending is not None:
            asyncio.run(pending)
        assert [r.title for r in namespace["page"].records] == ["Deploy policy"]
        assert namespace["hits"], "the clients' example's recall found nothing"
        assert {p.name for p in (tmp_path / ".meta").iterdir()} >= {"state", "app-state", "child-state"}
    finally:
        gateway.terminate()
        gateway.wait(timeout=30)
