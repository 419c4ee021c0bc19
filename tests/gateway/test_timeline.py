"""The timeline: persisted envelopes, meta/timeline/query paging, and the live SSE stream, on either
backend (a realm file's ``events`` table, or PostgreSQL's)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from meta_memory.clock import ManualClock
from meta_memory.config import DEFAULT_CONFIG, load_config_dict
from meta_memory.errors import InvalidParams
from meta_memory.gateway.http import build_app
from meta_memory.runtime import MetaRuntime
from meta_memory.sdk import MetaHandle

from ..conftest import BACKENDS, Backend, make_backend


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    yield from make_backend(request.param, request)


def _open(state_dir: Path, clock: ManualClock, backend: Backend) -> MetaRuntime:
    return MetaRuntime.open(state_dir, load_config_dict(backend.config(DEFAULT_CONFIG)), clock=clock)


def test_events_are_standard_envelopes_persisted_across_restart(
    state_dir: Path, clock: ManualClock, backend: Backend
) -> None:
    with _open(state_dir, clock, backend) as rt:
        rt.events.emit(
            "memory.conflict.signal", {"realm": "default", "entity": "e", "topic": "t", "reason": None}
        )
    with _open(state_dir, clock, backend) as rt:
        handle = MetaHandle(rt)
        (event,) = handle.call("meta/timeline/query")["events"]
        assert event == {
            "event_id": "console-evt-1",
            "identity": "_system",
            "event_type": "memory.conflict.signal",
            "timestamp_ms": clock.now_ms(),
            "data": {"realm": "default", "entity": "e", "topic": "t", "reason": None},
        }
        assert rt.events.emit("x.y", {})["event_id"] == "console-evt-2"  # the sequence resumes


def test_query_pages_with_after_and_limit(runtime: MetaRuntime, handle: MetaHandle) -> None:
    for i in range(5):
        runtime.events.emit("memory.test", {"i": i})
    first = handle.call("meta/timeline/query", {"limit": 2})
    assert [e["data"]["i"] for e in first["events"]] == [0, 1]
    rest = handle.call("meta/timeline/query", {"after": first["next_after"], "limit": 10})
    assert [e["data"]["i"] for e in rest["events"]] == [2, 3, 4]
    assert handle.call("meta/timeline/query", {"after": rest["next_after"]}) == {
        "events": [],
        "next_after": None,
    }


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"after": "evt-1"}, "after must be an event_id like 'console-evt-42' when provided"),
        ({"after": 3}, "after must be an event_id like 'console-evt-42' when provided"),
        ({"limit": 0}, "limit must be an integer between 1 and 500"),
        ({"limit": 501}, "limit must be an integer between 1 and 500"),
        ({"limit": True}, "limit must be an integer between 1 and 500"),
        ([1], "params must be a JSON object"),
    ],
)
def test_bad_query_params_name_the_field(handle: MetaHandle, params: object, message: str) -> None:
    with pytest.raises(InvalidParams) as bad:
        handle.call("meta/timeline/query", params)  # type: ignore[arg-type]
    assert bad.value.message == message


def _non_blank(lines: Iterator[str]) -> Iterator[str]:
    return (line for line in lines if line)


def test_the_sse_stream_delivers_a_live_event_and_replays_after_last_event_id(runtime: MetaRuntime) -> None:
    assert runtime.timeline is not None
    app = build_app(runtime)
    runtime.events.emit("memory.before", {"n": 1})
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        with client.stream("GET", "/console/timeline/stream") as stream:
            lines = _non_blank(stream.iter_lines())
            assert next(lines) == ": connected"
            runtime.events.emit("memory.write.quarantined", {"realm": "default", "author": {}, "reason": "r"})
            frame = [next(lines) for _ in range(3)]
        assert frame[0] == "id: console-evt-2"
        assert frame[1] == "event: memory.write.quarantined"
        assert json.loads(frame[2].removeprefix("data: "))["data"]["reason"] == "r"
        with client.stream(
            "GET", "/console/timeline/stream", headers={"Last-Event-ID": "console-evt-1"}
        ) as stream:
            lines = _non_blank(stream.iter_lines())
            assert next(lines) == ": connected"
            assert next(lines) == "id: console-evt-2"  # replayed from the stored window
