"""``--log-format json`` (and ``[logging] format``): every stderr line of a real gateway is one JSON
object, each request has one line with its id, surface, method, duration and outcome, and no body,
token or record text ever reaches the log. The text format stays as it was."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from meta_memory.access import hash_token
from meta_memory.logs import JsonFormatter

from .conftest import APP_TOKEN, TOKENS_TOML, Gateway, request, run_stdio

BODY = "zebras-sing-at-midnight-4711"  # a record's text that must never be logged
REQUESTS = "meta_memory.gateway.requests"


def _objects(stderr: str) -> list[dict[str, Any]]:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert lines
    objects = [json.loads(line) for line in lines]  # every line, or the test fails here
    for obj in objects:
        assert {"time", "level", "logger", "message"} <= obj.keys(), obj
        assert datetime.fromisoformat(obj["time"]).utcoffset() == UTC.utcoffset(None), obj
    return objects


def test_serve_writes_one_json_object_per_line_and_never_a_body_or_a_token(
    serve: Callable[..., Gateway],
) -> None:
    gateway = serve("--log-format", "json", config=TOKENS_TOML)
    params = {"identity": "lead:main", "title": "Night song", "body": BODY}
    assert "result" in gateway.rpc("meta/agent_memory/remember", params, token=APP_TOKEN)
    assert gateway.post("meta/agent_memory/remember", params, token="a-wrong-token-9").status_code == 401
    stderr = gateway.stop()

    for secret in (BODY, APP_TOKEN, hash_token(APP_TOKEN), "a-wrong-token-9", "Night song"):
        assert secret not in stderr
    objects = _objects(stderr)
    lines = [o for o in objects if o["logger"] == REQUESTS]
    assert [(o["surface"], o.get("method"), o["outcome"], o["status"]) for o in lines] == [
        ("rpc", "meta/agent_memory/remember", "ok", 200),
        ("rpc", None, "invalid_token", 401),
    ]
    for line in lines:
        assert re.fullmatch(r"[0-9a-f]{12}", line["request_id"]) and line["duration_ms"] >= 0
        assert line["level"] == "info" and line["http_method"] == "POST" and line["path"] == "/rpc"
    assert len({o["request_id"] for o in lines}) == 2
    assert any(o["logger"].startswith("uvicorn") for o in objects)  # uvicorn's own lines are objects too


def test_stdio_writes_json_lines_for_each_request_on_stderr_only(tmp_path: Path) -> None:
    remember = request("meta/agent_memory/remember", {"identity": "a", "title": "t", "body": BODY})
    lines = [remember, request("meta/nope", id=2)]
    ran = run_stdio(tmp_path / "state", "--log-format", "json", "--log-requests", lines=lines)
    assert ran.status == 0 and BODY in ran.stdout  # the reply carries it; the log must not
    assert BODY not in ran.stderr
    lines = [o for o in _objects(ran.stderr) if o["logger"] == REQUESTS]
    assert [(o["surface"], o["method"], o["outcome"]) for o in lines] == [
        ("stdio", "meta/agent_memory/remember", "ok"),
        ("stdio", "unknown", "-32601"),
    ]
    assert all("status" not in o and "path" not in o for o in lines)


def test_the_config_can_choose_json_and_the_flag_overrides_it(tmp_path: Path) -> None:
    config = tmp_path / "meta.toml"
    config.write_text('[memory]\nkind = "local_json"\n[agent_memory]\n[logging]\nformat = "json"\n')
    by_config = run_stdio(
        tmp_path / "a", "--config", str(config), "--log-requests", lines=[request("meta/status")]
    )
    assert [o["method"] for o in _objects(by_config.stderr) if o["logger"] == REQUESTS] == ["meta/status"]
    by_flag = run_stdio(tmp_path / "b", "--config", str(config), "--log-format", "text")
    assert by_flag.stderr.strip() and not by_flag.stderr.lstrip().startswith("{")


def test_the_default_text_format_is_unchanged(tmp_path: Path) -> None:
    ran = run_stdio(tmp_path / "state", "--log-requests", lines=[request("meta/status")])
    first, *rest = ran.stderr.splitlines()
    assert re.fullmatch(
        r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} INFO meta_memory\.runtime: runtime ready on .*", first
    )
    assert any(
        re.search(r" INFO meta_memory\.gateway\.requests: stdio meta/status -> ok in [0-9.]+ ms \[", line)
        for line in rest
    )


def test_the_json_formatter_writes_only_its_own_fields() -> None:
    record = logging.LogRecord("x", logging.WARNING, __file__, 1, "hello %s", ("world",), None)
    record.__dict__.update({"body": BODY, "authorization": "Bearer t", "method": "meta/status"})
    line = json.loads(JsonFormatter().format(record))
    assert line.keys() == {"time", "level", "logger", "message", "method"}
    assert line["message"] == "hello world" and line["level"] == "warning"


def test_a_control_character_in_a_path_cannot_forge_a_line_of_a_text_log(
    app_client: Callable[..., TestClient], caplog: pytest.LogCaptureFixture
) -> None:
    client = app_client()
    with caplog.at_level(logging.INFO, logger=REQUESTS):
        assert client.get("/x%0a2026-01-01 00:00:00,000 INFO meta_memory.runtime: forged").status_code == 404
    [line] = [r.getMessage() for r in caplog.records if r.name == REQUESTS]
    assert "\n" not in line and "/x\\x0a2026" in line and line.startswith("http GET ")
