from __future__ import annotations

from typing import Any

import pytest

from meta_memory.errors import InvalidParams
from meta_memory.gating import (
    AuditRequest,
    DecideRequest,
    EvaluateRequest,
    PendingRequest,
    parse_audit_params,
    parse_decide_params,
    parse_evaluate_params,
    parse_pending_params,
)

EVALUATE = {"action": "deploy", "actor_id": "worker", "risk_tier": "r3"}
DECIDE = {"pending_id": "gate-pending-v2-x-000001", "approver_id": "lead", "decision": "approve"}
NOT_A_STRING: list[Any] = [None, 1, True, ["x"], {"x": 1}]


def test_evaluate_params_are_trimmed_and_blank_optionals_count_as_absent() -> None:
    request = parse_evaluate_params(
        {
            "action": " deploy ",
            "actor_id": "\tworker ",
            "risk_tier": " R2 ",
            "rationale": "  kept as written  ",
            "requested_approver": "  ",
            "approval_recipient": " ops ",
            "approval_channel": "",
            "approval_timeout_ms": 0,
            "entity": " acme ",
            "topic": " ",
            "unknown_key": "ignored",
        }
    )
    assert request == EvaluateRequest(
        action="deploy",
        actor_id="worker",
        risk_tier="r2",
        rationale="  kept as written  ",
        requested_approver=None,
        approval_recipient="ops",
        approval_channel=None,
        approval_timeout_ms=0,
        entity="acme",
        topic=None,
    )


def test_decide_params_accept_any_case_of_the_decision() -> None:
    request = parse_decide_params({**DECIDE, "decision": " Escalate ", "reason": "why"})
    assert request == DecideRequest("gate-pending-v2-x-000001", "lead", "escalate", "why")


@pytest.mark.parametrize("params", [None, [], "x", 1])
@pytest.mark.parametrize("parse", [parse_evaluate_params, parse_decide_params])
def test_evaluate_and_decide_need_an_object(parse: Any, params: Any) -> None:
    with pytest.raises(InvalidParams, match=r"^Invalid params: params must be a JSON object$"):
        parse(params)


def _evaluate_cases() -> list[tuple[dict[str, Any], str]]:
    cases: list[tuple[dict[str, Any], str]] = []
    for field in ("action", "actor_id"):
        message = f"{field} must be a non-empty string"
        cases.append(({k: v for k, v in EVALUATE.items() if k != field}, message))
        cases += [({**EVALUATE, field: value}, message) for value in ["", "   ", *NOT_A_STRING]]
    tier = "risk_tier must be one of: r0, r1, r2, r3"
    cases.append(({k: v for k, v in EVALUATE.items() if k != "risk_tier"}, tier))
    cases += [({**EVALUATE, "risk_tier": value}, tier) for value in ["", " ", None, 3, True]]
    cases.append(({**EVALUATE, "risk_tier": "r4"}, "risk_tier 'r4' is unsupported (allowed: r0, r1, r2, r3)"))
    cases.append(
        ({**EVALUATE, "risk_tier": "high"}, "risk_tier 'high' is unsupported (allowed: r0, r1, r2, r3)")
    )
    for field, message in [
        ("rationale", "rationale must be a string"),
        ("requested_approver", "requested_approver must be a string"),
        ("approval_recipient", "approval_recipient must be a string"),
        ("approval_channel", "approval_channel must be a string"),
        ("entity", "entity must be a string when provided"),
        ("topic", "topic must be a string when provided"),
    ]:
        cases += [({**EVALUATE, field: value}, message) for value in NOT_A_STRING]
    timeout = "approval_timeout_ms must be a non-negative integer"
    cases += [
        ({**EVALUATE, "approval_timeout_ms": value}, timeout)
        for value in [None, -1, 1000.0, 1.5, "1000", True, 2**64]
    ]
    return cases


@pytest.mark.parametrize(("params", "message"), _evaluate_cases())
def test_every_bad_evaluate_param_is_refused_naming_the_field(params: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidParams) as refused:
        parse_evaluate_params(params)
    assert refused.value.message == "Invalid params: " + message
    assert refused.value.code == -32602


def _decide_cases() -> list[tuple[dict[str, Any], str]]:
    cases: list[tuple[dict[str, Any], str]] = []
    for field in ("pending_id", "approver_id"):
        message = f"{field} must be a non-empty string"
        cases.append(({k: v for k, v in DECIDE.items() if k != field}, message))
        cases += [({**DECIDE, field: value}, message) for value in ["", " ", *NOT_A_STRING]]
    decision = "decision must be one of: approve, reject, escalate"
    cases.append(({k: v for k, v in DECIDE.items() if k != "decision"}, decision))
    cases += [({**DECIDE, "decision": value}, decision) for value in ["", None, 1, False]]
    cases.append(
        (
            {**DECIDE, "decision": "Defer"},
            "decision 'Defer' is unsupported (allowed: approve, reject, escalate)",
        )
    )
    cases += [({**DECIDE, "reason": value}, "reason must be a string") for value in NOT_A_STRING]
    return cases


@pytest.mark.parametrize(("params", "message"), _decide_cases())
def test_every_bad_decide_param_is_refused_naming_the_field(params: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidParams) as refused:
        parse_decide_params(params)
    assert refused.value.message == "Invalid params: " + message


@pytest.mark.parametrize("params", [None, {}, {"anything": 1}])
def test_pending_takes_null_or_any_object(params: Any) -> None:
    assert parse_pending_params(params) == PendingRequest()


@pytest.mark.parametrize("params", [[], "x", 0])
def test_pending_refuses_anything_else(params: Any) -> None:
    with pytest.raises(InvalidParams, match=r"^Invalid params: params must be a JSON object$"):
        parse_pending_params(params)


@pytest.mark.parametrize(
    ("params", "limit"), [(None, 50), ({}, 50), ({"limit": 1}, 1), ({"limit": 500}, 500), ({"x": 0}, 50)]
)
def test_audit_limit_defaults_to_50_and_accepts_1_to_500(params: Any, limit: int) -> None:
    assert parse_audit_params(params) == AuditRequest(limit)


@pytest.mark.parametrize("limit", [0, -1, 501, 2.0, "5", None, True])
def test_audit_refuses_a_limit_outside_1_to_500(limit: Any) -> None:
    with pytest.raises(InvalidParams, match=r"^Invalid params: limit must be an integer between 1 and 500$"):
        parse_audit_params({"limit": limit})


@pytest.mark.parametrize("params", [[], "x", 5])
def test_audit_refuses_params_that_are_not_an_object(params: Any) -> None:
    with pytest.raises(InvalidParams, match=r"^Invalid params: params must be a JSON object$"):
        parse_audit_params(params)
