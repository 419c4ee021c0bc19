"""The public surface of the trust package is pinned."""

from __future__ import annotations

import meta_memory.trust as trust


def test_trust_package_exports_exactly_its_public_api() -> None:
    assert sorted(trust.__all__) == [
        "ALWAYS_UNTRUSTED_TOOLS",
        "Classification",
        "ContentTrustPolicy",
        "LLM_WRITES_POSTURES",
        "MCP_QUALIFIED_PREFIX",
        "QUARANTINED_POLICY_REASON",
        "SessionTaint",
        "TAINT_TRANSITION_EVENT",
        "TaintChange",
        "ToolProvenance",
        "WRITE_QUARANTINED_EVENT",
        "WriteGate",
        "classify",
        "emit_quarantined",
    ]
    assert all(hasattr(trust, name) for name in trust.__all__)


def test_the_builtin_names_and_event_types_are_the_reference_values() -> None:
    assert frozenset({"web_search", "web_fetch", "fetch", "http_request"}) == trust.ALWAYS_UNTRUSTED_TOOLS
    assert trust.TAINT_TRANSITION_EVENT == "memory.taint.transition"
    assert trust.WRITE_QUARANTINED_EVENT == "memory.write.quarantined"
    assert trust.QUARANTINED_POLICY_REASON == "llm_writes=quarantined policy"
    assert trust.LLM_WRITES_POSTURES == ("observed", "quarantined")
