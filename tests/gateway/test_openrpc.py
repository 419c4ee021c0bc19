"""The API's signatures: ``rpc.discover`` / ``GET /openrpc.json`` describe each surface, every method
refuses a key it does not take, every declared key is one its parser reads, and docs/api.md is
the document's current rendering."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from meta_memory import Meta
from meta_memory.errors import InvalidParams, MetaError
from meta_memory.gateway.dispatch import CONSOLE, SDK, CallContext
from meta_memory.gateway.methods import build_dispatcher, build_methods
from meta_memory.gateway.openrpc import api_markdown, reference_methods
from meta_memory.runtime import MetaRuntime

ROOT = Path(__file__).resolve().parents[2]
PROBE = "zz_not_a_param"


class Tracking(dict[str, Any]):
    """A params object that remembers which keys a parser asked for, however it asked."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.asked: set[str] = set()

    def get(self, key: Any, default: Any = None) -> Any:
        self.asked.add(key)
        return super().get(key, default)

    def __getitem__(self, key: Any) -> Any:
        self.asked.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            self.asked.add(key)
        return super().__contains__(key)


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[MetaRuntime]:
    from meta_memory.config import load_config_dict

    config = load_config_dict({"memory": {"kind": "local_json"}, "agent_memory": {}})
    with MetaRuntime.open(tmp_path / "state", config) as rt:
        yield rt


def test_every_method_of_the_table_has_a_signature(runtime: MetaRuntime) -> None:
    unsigned = sorted(
        name for name, m in build_methods(runtime).items() if m.params is None or m.result is None
    )
    assert unsigned == []


def _tracked_read(runtime: MetaRuntime, name: str) -> set[str]:
    method = build_methods(runtime)[name]
    assert method.params is not None
    params = Tracking(method.params.example or {})
    method.parse(params)
    return params.asked


# Keys a parser reads only on a branch the method's example does not take.
BRANCHES = {"meta/session/tool_result": {"identity"}}


def test_every_declared_param_is_read_by_its_parser_and_nothing_else_is(runtime: MetaRuntime) -> None:
    for name, method in build_methods(runtime).items():
        assert method.params is not None
        if not method.params.fields:
            continue
        assert method.params.example is not None, f"{name} has params but no example"
        asked = _tracked_read(runtime, name) | BRANCHES.get(name, set())
        assert asked == set(method.params.names), name


def test_the_tracking_probe_sees_a_parser_that_ignores_a_declared_key(runtime: MetaRuntime) -> None:
    # The oracle works: recall's parser asks for `query_terms`; a params object without tracking
    # of `get` would miss it, and the assertion above would then fail on recall.
    assert "query_terms" in _tracked_read(runtime, "meta/agent_memory/recall")


def _example_params(method: Any) -> dict[str, Any]:
    return dict(method.params.example or {})


@pytest.mark.parametrize("surface", [SDK, CONSOLE])
def test_every_method_refuses_an_unknown_param_naming_it(runtime: MetaRuntime, surface: str) -> None:
    dispatcher = build_dispatcher(runtime)
    ctx = CallContext(surface)
    document = dispatcher.call("rpc.discover", None, ctx)
    methods = build_methods(runtime)
    assert len(document["methods"]) > 5
    for described in document["methods"]:
        params = {**_example_params(methods[described["name"]]), PROBE: 1}
        with pytest.raises(InvalidParams) as refused:
            dispatcher.call(described["name"], params, ctx)
        assert f"unknown param '{PROBE}'" in refused.value.message, described["name"]
        assert refused.value.data is not None and refused.value.data["unknown"] == [PROBE]


def test_a_misspelt_param_gets_the_name_it_was_meant_to_be(tmp_path: Path) -> None:
    with Meta.builder().persistent_state(tmp_path / "state").agent_memory().build() as meta:
        with pytest.raises(InvalidParams) as refused:
            meta.call("meta/agent_memory/recall", {"identity": "lead", "tagz": ["ops"], "query_text": "x"})
        assert refused.value.message == "unknown param 'tagz' (did you mean 'tags'?)"
        with pytest.raises(InvalidParams) as limit:
            meta.call("meta/agent_memory/recall", {"identity": "lead", "limit": 3})
        assert limit.value.message.startswith("unknown param 'limit'")
        assert "max_entries" in json.dumps(limit.value.data)


def test_ledger_refusals_keep_the_ledger_prefix(runtime: MetaRuntime) -> None:
    dispatcher = build_dispatcher(runtime)
    with pytest.raises(InvalidParams) as refused:
        dispatcher.call(
            "meta/memory/index", {"entity": "e", "topic": "t", "fact": "f", "fcat": 1}, CallContext(SDK)
        )
    assert refused.value.message == "Invalid params: unknown param 'fcat' (did you mean 'fact'?)"


def _described(document: dict[str, Any]) -> list[str]:
    assert document["openrpc"].startswith("1.")
    for method in document["methods"]:
        assert method["paramStructure"] == "by-name"
        assert {"name", "params", "result"} <= set(method)
        for param in method["params"]:
            assert {"name", "required", "schema"} <= set(param)
    return [m["name"] for m in document["methods"]]


def test_discover_describes_exactly_what_capabilities_offers_on_each_surface(runtime: MetaRuntime) -> None:
    dispatcher = build_dispatcher(runtime)
    for surface in (SDK, CONSOLE):
        ctx = CallContext(surface)
        offered = dispatcher.call("meta/capabilities", None, ctx)["methods"]
        assert _described(dispatcher.call("rpc.discover", None, ctx)) == offered
    sdk = _described(dispatcher.call("rpc.discover", {}, CallContext(SDK)))
    assert "meta/memory/index" in sdk and "meta/memory/panel/records" not in sdk


def test_the_documents_are_served_over_http_behind_each_surfaces_tokens(
    http_gateway: Callable[..., TestClient], rpc: Callable[..., dict[str, Any]]
) -> None:
    import hashlib

    def digest(token: str) -> str:
        return hashlib.sha256(token.encode()).hexdigest()

    config = {
        "memory": {"kind": "local_json"},
        "agent_memory": {},
        "rpc": {"auth": {"tokens": [{"token_sha256": digest("app-token"), "subject": "app"}]}},
        "console": {"auth": {"tokens": [{"token_sha256": digest("ops-token"), "subject": "ops"}]}},
    }
    with http_gateway(config=config) as client:
        assert client.get("/openrpc.json").status_code == 401
        assert (
            client.get("/console/openrpc.json", headers={"Authorization": "Bearer app-token"}).status_code
            == 401
        )
        app = client.get("/openrpc.json", headers={"Authorization": "Bearer app-token"})
        console = client.get("/console/openrpc.json", headers={"Authorization": "Bearer ops-token"})
        assert app.status_code == console.status_code == 200
        over_rpc = client.post(
            "/rpc",
            json={"jsonrpc": "2.0", "id": 1, "method": "rpc.discover"},
            headers={"Authorization": "Bearer app-token"},
        ).json()["result"]
        assert app.json() == over_rpc
        assert "meta/memory/panel/records" in _described(console.json())
        assert "meta/memory/panel/records" not in _described(app.json())


def test_docs_api_md_is_the_current_rendering_of_the_method_table() -> None:
    committed = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    assert committed == api_markdown(reference_methods()), (
        "docs/api.md is stale: run `python -m meta_memory.gateway.openrpc > docs/api.md`"
    )


def test_the_signature_check_runs_before_any_side_effect(tmp_path: Path) -> None:
    with Meta.builder().persistent_state(tmp_path / "state").agent_memory().build() as meta:
        note = {"identity": "lead", "title": "Deploys", "body": "Deploys need approval.", "tagz": ["ops"]}
        with pytest.raises(MetaError):
            meta.call("meta/agent_memory/remember", note)
        assert meta.recall_agent_memory("lead", selection="always") == []
