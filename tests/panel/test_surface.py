"""The eleven methods on the wire: console surface only, unconfigured without agent memory, advertised to
callers who could use them, entry gates, params refused naming the field, ``realms`` in every result,
and ``POST /console/rpc`` with a bearer token."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from meta_memory.access import Principal
from meta_memory.errors import MetaError
from meta_memory.gateway.dispatch import CONSOLE, CallContext
from meta_memory.gateway.http import build_app
from meta_memory.panel import PANEL_METHODS

from .conftest import (
    AUDITOR,
    AUDITOR_TOKEN,
    LEADS,
    OUTSIDER,
    PANEL,
    RED,
    ROOT,
    Bench,
    access_config,
    open_bench,
)

VERBS = [name.removeprefix(PANEL) for name in PANEL_METHODS]
REALM_LEVEL = ["dreams", "dream_runs", "audit_verdicts", "overview", "proposals", "injections", "harvests"]
DETAILS = {"record": {"memory_id": "mem-x"}, "proposal": {"proposal_id": "prop-x"}}  # one item each
LISTINGS = [v for v in VERBS if v not in DETAILS]


def test_there_are_exactly_eleven_panel_methods() -> None:
    assert sorted(VERBS) == sorted(["records", *DETAILS, "quarantine", *REALM_LEVEL])


@pytest.mark.parametrize("verb", VERBS)
def test_each_method_is_served_on_the_console_surface_only(bench: Bench, verb: str) -> None:
    with pytest.raises(MetaError) as refused:
        bench.sdk(PANEL + verb, {"memory_id": "mem-x"})

    assert refused.value.code == -32601


def test_without_agent_memory_the_panel_is_not_configured_and_not_advertised(tmp_path: Path) -> None:
    config = access_config()
    config["agent_memory"] = {"enabled": False}
    bench = open_bench(tmp_path / "state", config)
    try:
        for verb in VERBS:
            refused = bench.refusal(verb, DETAILS.get(verb, {}))
            assert (refused.code, refused.message) == (-32601, "memory panel is not configured")
        advertised = bench.call("meta/capabilities")["methods"]
        assert not any(name.startswith(PANEL) for name in advertised)
    finally:
        bench.runtime.close()


def test_capabilities_advertise_each_method_only_to_callers_who_could_use_it(bench: Bench) -> None:
    def advertised(principal: Principal) -> set[str]:
        methods = bench.call("meta/capabilities", None, principal)["methods"]
        return {name.removeprefix(PANEL) for name in methods if name.startswith(PANEL)}

    assert advertised(ROOT) == set(VERBS)
    assert advertised(AUDITOR) == {"records", *DETAILS, *REALM_LEVEL}
    assert advertised(RED) == {"records", *DETAILS, "quarantine"}
    assert advertised(LEADS) == {"records", *DETAILS}
    assert advertised(OUTSIDER) == {"records", *DETAILS}


@pytest.mark.parametrize("verb", REALM_LEVEL)
def test_realm_level_reads_need_an_unscoped_read_grant(bench: Bench, verb: str) -> None:
    denied = bench.refusal(verb, {}, LEADS)

    assert denied.code == -32030
    assert denied.data == {"kind": "access_denied", "action": "agent.memory.read", "resource": None}


@pytest.mark.parametrize("verb", LISTINGS)
def test_every_listing_names_the_realms_it_covered(bench: Bench, verb: str) -> None:
    bench.remember("lead", "Note", realm="beta")
    bench.remember("lead", "Note", realm="alpha")

    assert bench.panel(verb, {})["realms"] == ["alpha", "beta"]
    assert bench.panel(verb, {"realm": "beta"})["realms"] == ["beta"]
    assert bench.panel(verb, {"realm": "gamma"})["realms"] == []


@pytest.mark.parametrize("verb", VERBS)
@pytest.mark.parametrize("params", [[], "records", 5])
def test_params_that_are_not_an_object_are_refused(bench: Bench, verb: str, params: Any) -> None:
    refused = bench.refusal(verb, params)

    assert (refused.code, refused.message) == (-32602, "params must be a JSON object")


@pytest.mark.parametrize("verb", [v for v in LISTINGS if v != "overview"])
@pytest.mark.parametrize(("params", "field"), [({"limit": "5"}, "limit"), ({"realm": 3}, "realm")])
def test_bad_listing_params_are_refused_naming_the_field(
    bench: Bench, verb: str, params: dict[str, Any], field: str
) -> None:
    refused = bench.refusal(verb, params)

    assert refused.code == -32602 and refused.message.startswith(field)


def test_overview_takes_no_limit(bench: Bench) -> None:
    for identity in ("lead", "scout", "analyst"):
        bench.remember(identity, "Note")

    assert len(bench.panel("overview", {})["scopes"]) == 3
    refused = bench.refusal("overview", {"limit": 1})
    assert refused.code == -32602 and "unknown param 'limit'" in refused.message


def test_a_read_only_console_still_serves_the_panel(tmp_path: Path) -> None:
    config = access_config()
    config["console"]["read_only"] = True
    bench = open_bench(tmp_path / "state", config)
    try:
        made = bench.remember("lead", "Note")
        assert bench.panel("record", {"memory_id": made})["record"]["id"] == made
        assert len(bench.call("meta/capabilities")["methods"]) >= len(VERBS)
    finally:
        bench.runtime.close()


def test_the_panel_answers_on_post_console_rpc_for_a_bearer_token(bench: Bench) -> None:
    lead = bench.remember("lead", "Lead note")
    bench.remember("scout", "Scout note")
    app = build_app(bench.runtime, dispatcher=bench.dispatcher)

    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        body = {"jsonrpc": "2.0", "id": 1, "method": PANEL + "records", "params": {}}
        answer = client.post(
            "/console/rpc", json=body, headers={"Authorization": f"Bearer {AUDITOR_TOKEN}"}
        ).json()
        anonymous = client.post("/console/rpc", json=body).json()

    assert [r["memory_id"] for r in answer["result"]["records"]] == [lead]
    assert anonymous["result"]["records"] == []


def test_the_caller_is_the_principal_on_the_call_context(bench: Bench) -> None:
    bench.remember("lead", "Note")

    as_nobody = bench.dispatcher.call(PANEL + "records", {}, CallContext(CONSOLE, principal=None))

    assert as_nobody["records"] == []  # anonymous: no grant matches
    assert len(bench.panel("records", {}, AUDITOR)["records"]) == 1
