from __future__ import annotations

import meta_memory.gating as gating_package


def test_the_gating_package_exports_exactly_its_public_surface() -> None:
    assert sorted(gating_package.__all__) == [
        "APPROVAL_TIMEOUT_DEFAULT_MS",
        "APPROVAL_TIMEOUT_MAX_MS",
        "APPROVAL_TIMEOUT_MIN_MS",
        "AUDIT_LIMIT_DEFAULT",
        "AUDIT_LIMIT_MAX",
        "AuditEntry",
        "AuditPage",
        "AuditRequest",
        "DecideRequest",
        "DecideResult",
        "EvaluateRequest",
        "EvaluateResult",
        "Gating",
        "GatingDecisionRefused",
        "PendingEntry",
        "PendingList",
        "PendingRequest",
        "RETENTION_DEFAULT",
        "REVIEWER_ONLY_ACTIONS",
        "Resolution",
        "ReviewerCheck",
        "clamp_timeout_ms",
        "parse_audit_params",
        "parse_decide_params",
        "parse_evaluate_params",
        "parse_pending_params",
    ]
    assert all(hasattr(gating_package, name) for name in gating_package.__all__)


def test_the_decision_refusal_is_an_invalid_params_error_in_the_one_tree() -> None:
    from meta_memory.errors import InvalidParams, MetaError

    assert issubclass(gating_package.GatingDecisionRefused, InvalidParams)
    assert issubclass(gating_package.GatingDecisionRefused, MetaError)
    assert gating_package.GatingDecisionRefused.code == -32602
