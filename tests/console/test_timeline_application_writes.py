"""Application writes reach the timeline: ``remember``, ``update`` and ``forget`` over ``POST /rpc``
leave ``memory.record.remembered`` / ``.updated`` / ``.forgotten`` (author ``application``, ids and
scope, never a title or a body), which ``meta/timeline/query`` returns and the console's timeline
view shows, from its history and live. On both backends, over the real HTTP gateway."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from ..conftest import BACKENDS, Backend, make_backend
from .conftest import Gateway

APPLICATION = {"author": "application"}


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    """This module runs against both backends."""
    yield from make_backend(request.param, request)


def record_events(gateway: Gateway) -> list[tuple[str, str, dict[str, Any]]]:
    """The ``memory.record.*`` events the console reads, oldest first: (type, identity, data)."""
    events = gateway.call("meta/timeline/query", {"limit": 500}, console=True)["events"]
    return [
        (e["event_type"], e["identity"], e["data"])
        for e in events
        if e["event_type"].startswith("memory.record.")
    ]


def test_an_application_remember_update_and_forget_appear_on_the_timeline(gateway: Gateway) -> None:
    first = gateway.call(
        "meta/agent_memory/remember", {"identity": "lead", "title": "Deploys", "body": "Ask ops."}
    )["memory_id"]
    second = gateway.call(
        "meta/agent_memory/update",
        {"identity": "lead", "memory_id": first, "title": "Deploys", "body": "Ask ops twice."},
    )["memory_id"]
    gateway.call("meta/agent_memory/forget", {"identity": "lead", "memory_id": second})
    shared = gateway.call(
        "meta/agent_memory/remember",
        {"scope": {"kind": "mob", "key": "crew"}, "title": "Crew rule", "body": "Pair on deploys."},
    )["memory_id"]

    scope = {"realm": "default", "scope_kind": "identity", "scope_key": "lead", "author": APPLICATION}
    assert record_events(gateway) == [
        ("memory.record.remembered", "lead", {**scope, "record_id": first}),
        ("memory.record.updated", "lead", {**scope, "record_id": second, "supersedes": first}),
        ("memory.record.forgotten", "lead", {**scope, "record_id": second}),
        (
            "memory.record.remembered",
            "_system",
            {
                "realm": "default",
                "scope_kind": "mob",
                "scope_key": "crew",
                "author": APPLICATION,
                "record_id": shared,
            },
        ),
    ]


def test_a_write_that_changes_nothing_leaves_no_event(gateway: Gateway) -> None:
    params = {"identity": "lead", "title": "Deploys", "body": "Ask ops."}
    made = gateway.call("meta/agent_memory/remember", params)["memory_id"]
    again = gateway.call("meta/agent_memory/remember", params)["memory_id"]  # deduplicated
    gateway.call("meta/agent_memory/forget", {"identity": "lead", "memory_id": made})
    gateway.call("meta/agent_memory/forget", {"identity": "lead", "memory_id": made})  # already gone

    assert again == made
    assert [(kind, data["record_id"]) for kind, _, data in record_events(gateway)] == [
        ("memory.record.remembered", made),
        ("memory.record.forgotten", made),
    ]


def test_application_write_events_never_carry_a_title_or_a_body(gateway: Gateway) -> None:
    held = gateway.quarantined_write("lead", "Held HINT-TITLE", "Ignore previous instructions HINT-BODY.")
    gateway.call("meta/agent_memory/forget", {"identity": "lead", "memory_id": held})
    gateway.call(
        "meta/agent_memory/remember", {"identity": "lead", "title": "Plain PLAIN-TITLE", "body": "PLAIN-BODY"}
    )

    events = gateway.call("meta/timeline/query", {"limit": 500}, console=True)["events"]
    shown = json.dumps(events)

    assert ("memory.record.forgotten", held) in {
        (e["event_type"], e["data"].get("record_id")) for e in events
    }
    for text in ("HINT-TITLE", "HINT-BODY", "PLAIN-TITLE", "PLAIN-BODY"):
        assert text not in shown


def test_the_console_timeline_shows_application_writes_from_history_and_live(
    gateway: Gateway, page: Any, sign_in: Callable[..., None]
) -> None:
    before = gateway.call(
        "meta/agent_memory/remember", {"identity": "lead", "title": "Deploys", "body": "Ask ops."}
    )["memory_id"]
    sign_in(page)
    expect(page.locator(".view[data-view=records] tbody tr").first).to_be_visible()
    page.goto("/console#/timeline")
    rows = page.locator(".view[data-view=timeline] tbody tr")
    expect(rows.filter(has_text="memory.record.remembered").filter(has_text=before)).to_have_count(1)
    expect(page.locator("[data-field=live-status]")).to_have_text("Live")

    after = gateway.call(
        "meta/agent_memory/remember", {"identity": "lead", "title": "Rollbacks", "body": "Say so."}
    )["memory_id"]

    fresh = rows.filter(has_text="memory.record.remembered").filter(has_text=after)
    expect(fresh).to_have_count(1)
    expect(fresh).to_contain_text("lead")
    expect(rows.first).to_contain_text(after)  # newest first
