"""Every method's declared result (gateway/signatures.py, the OpenRPC document and docs/api.md)
is what the method returns: a scenario calls every method on a real runtime, and each result must
validate against its declared schema and carry every key the declaration names. A declaration
that drifts from the code (a key renamed, a type changed) fails here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from meta_memory.clock import ManualClock
from meta_memory.config import DEFAULT_CONFIG, load_config_dict
from meta_memory.gateway.dispatch import CONSOLE, SDK, CallContext
from meta_memory.gateway.methods import build_dispatcher
from meta_memory.gateway.signatures import SIGNATURES
from meta_memory.runtime import MetaRuntime


def _missing_keys(schema: dict[str, Any], value: Any) -> list[str]:
    """Declared properties absent from ``value``, at every level the schema describes."""
    if not isinstance(value, dict) or schema.get("type") != "object":
        return []
    missing = [key for key in schema.get("properties", {}) if key not in value]
    for key, sub in schema.get("properties", {}).items():
        if key in value:
            missing += [f"{key}.{m}" for m in _missing_keys(sub, value[key])]
    return missing


def test_every_method_returns_what_its_signature_declares(tmp_path: Path) -> None:
    clock = ManualClock()
    config = load_config_dict({**DEFAULT_CONFIG, "roster": [{"identity": "lead", "mob": "crew"}]})
    runtime = MetaRuntime.open(tmp_path / "state", config, clock=clock)
    dispatcher = build_dispatcher(runtime)
    results: dict[str, Any] = {}

    def call(method: str, params: dict[str, Any] | None = None, *, surface: str = SDK) -> Any:
        result = dispatcher.call(method, params or {}, CallContext(surface))
        results.setdefault(method, result)
        return result

    try:
        call("rpc.discover")
        call("meta/status")
        call("meta/capabilities")
        call("meta/memory/index", {"entity": "deploy", "topic": "window", "fact": "Tuesdays only"})
        call("meta/memory/query", {"query": "deploy"})
        call("meta/memory/stores")
        lead = {"identity": "lead"}
        kept = call(
            "meta/agent_memory/remember",
            # An expiry far off: the result holds the optional expires_at_ms.
            {**lead, "title": "Deploys", "body": "Ops approve.", "tags": ["ops"], "ttl_ms": 10**12},
        )
        call("meta/agent_memory/recall", {**lead, "query_text": "who approves deploys", "max_entries": 8})
        call(
            "meta/agent_memory/update",
            {**lead, "memory_id": kept["memory_id"], "title": "Deploys", "body": "Ops approve every deploy."},
        )
        call("meta/agent_memory/list", {**lead, "limit": 20})
        call("meta/agent_memory/get", {**lead, "memory_id": kept["memory_id"]})
        call("meta/agent_memory/history", {**lead, "memory_id": kept["memory_id"]})
        other = call("meta/agent_memory/remember", {**lead, "title": "Old", "body": "Gone soon."})
        call("meta/agent_memory/forget", {**lead, "memory_id": other["memory_id"]})
        key = call("meta/session/open", {**lead, "mob": "crew"})["session_key"]
        session = {"session_key": key}
        call("meta/session/build_context", session)
        call("meta/session/turn", {**session, "message": "how do deploys get approved?"})
        call("meta/session/tool_definitions", {"format": "openai"})
        call("meta/session/tool_result", {**session, "tool_name": "web_fetch"})
        peer = call("meta/session/open", {"identity": "scout"})["session_key"]
        call("meta/session/peer_message", {**session, "sender_session_key": peer})
        call(
            "meta/session/memory_tool",  # tainted by web_fetch: quarantined
            {**session, "arguments": {"action": "remember", "title": "Seen", "body": "From the web."}},
        )
        call("meta/session/compact", session)
        session = {"session_key": call("meta/session/reset", session)["session_key"]}
        call("meta/session/close", session)
        call("meta/timeline/query", {"limit": 50})
        call("meta/storage/doctor", {"state_dir": str(tmp_path / "state")})
        call("meta/gating/evaluate", {"action": "deploy", "actor_id": "lead", "risk_tier": "r2"})
        gated = call("meta/gating/evaluate", {"action": "deploy", "actor_id": "lead", "risk_tier": "r3"})
        call("meta/gating/pending")
        call(
            "meta/gating/decide",
            {"pending_id": gated["pending_id"], "approver_id": "ops", "decision": "approve"},
        )
        call("meta/gating/audit", {"limit": 20})
        (queued,) = call("meta/memory/panel/quarantine", {}, surface=CONSOLE)["records"]
        seen = call("meta/memory/panel/record", {"memory_id": queued["memory_id"]}, surface=CONSOLE)["record"]
        call(
            "meta/memory/quarantine/decide",
            {
                **lead,
                "memory_id": seen["id"],
                "verdict": "release",
                "expected_content_hash": seen["content_hash"],
            },
            surface=CONSOLE,
        )
        call("meta/memory/steward/dream", {"realm": "default"}, surface=CONSOLE)
        assert runtime.agent_memory is not None
        with runtime.agent_memory.store("default").transaction() as txn:  # a usage audit's verdict
            txn.add_audit_verdicts(
                "dream-1", [(kept["memory_id"], "dead_weight", "never used")], clock.now_ms()
            )
        call(
            "meta/memory/audit_verdicts/resolve",
            {"run_id": "dream-1", "record_id": kept["memory_id"], "action": "acknowledge"},
            surface=CONSOLE,
        )
        crew = {"scope": {"kind": "mob", "key": "crew"}}
        proposed = call(
            "meta/agent_memory/propose", {**crew, "title": "Freeze", "body": "No deploys in December."}
        )
        call("meta/agent_memory/propose", {**crew, "title": "Window", "body": "Deploys go out on Tuesdays."})
        read = call("meta/memory/panel/proposal", {"proposal_id": proposed["proposal_id"]}, surface=CONSOLE)
        call(
            "meta/memory/proposals/decide",
            {
                "proposal_id": proposed["proposal_id"],
                "verdict": "accept",
                "expected_content_hash": read["proposal"]["content_hash"],
            },
            surface=CONSOLE,
        )
        for panel in (
            "dreams",
            "dream_runs",
            "audit_verdicts",
            "overview",
            "proposals",
            "injections",
            "harvests",
        ):
            call(f"meta/memory/panel/{panel}", {}, surface=CONSOLE)
        call("meta/memory/panel/records", {**lead, "limit": 20}, surface=CONSOLE)
        gone = call("meta/agent_memory/remember", {**lead, "title": "Purged", "body": "Erased soon."})
        call("meta/agent_memory/purge", {**lead, "memory_id": gone["memory_id"]})
        call("meta/agent_memory/purge", {"identity": "scout", "all": True}, surface=CONSOLE)
    finally:
        runtime.close()

    problems: dict[str, list[str]] = {}
    for method, result in results.items():
        schema = SIGNATURES[method].result
        errors = [
            f"{'/'.join(map(str, e.path))}: {e.message}"
            for e in Draft202012Validator(schema).iter_errors(result)
        ]
        errors += [f"declared but absent: {key}" for key in _missing_keys(schema, result)]
        if errors:
            problems[method] = errors
    assert problems == {}
    unexercised = sorted(set(SIGNATURES) - set(results))
    assert unexercised == [], f"methods the scenario does not call: {unexercised}"


def test_the_check_sees_a_declared_key_the_code_does_not_return() -> None:
    schema = {
        "type": "object",
        "properties": {
            "run_id": {"type": "string"},
            "diagnosis": {"type": "object", "properties": {"findings": {}}},
        },
    }
    assert _missing_keys(schema, {"run_id": "r", "diagnosis": {}}) == ["diagnosis.findings"]
    assert _missing_keys(schema, {"diagnosis": {"findings": []}}) == ["run_id"]
