"""Gating test fixtures: a manual clock, a real in-memory ledger, and factories that build a
:class:`Gating` and drive it through the one validator, as the JSON-RPC methods do."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from meta_memory.clock import ManualClock
from meta_memory.gating import (
    DecideResult,
    EvaluateResult,
    Gating,
    Resolution,
    parse_decide_params,
    parse_evaluate_params,
)
from meta_memory.ledger import Ledger, parse_index_params

START_MS = 1_700_000_000_000


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(start_ms=START_MS)


@pytest.fixture
def ledger(clock: ManualClock) -> Ledger:
    return Ledger(clock=clock)


@pytest.fixture
def notices() -> list[Resolution]:
    """Every resolution notice the ``gating`` fixture delivered, in order."""
    return []


@pytest.fixture
def gating(ledger: Ledger, clock: ManualClock, notices: list[Resolution]) -> Gating:
    return Gating(ledger, clock, on_resolution=notices.append)


@pytest.fixture
def conflict() -> Callable[..., None]:
    """``conflict(ledger, entity, topic, store=..., reason=...)``: index a conflict signal."""

    def _conflict(ledger: Ledger, entity: str, topic: str, **extra: Any) -> None:
        ledger.index(parse_index_params({"entity": entity, "topic": topic, "conflict": True, **extra}))

    return _conflict


Evaluate = Callable[..., EvaluateResult]
Decide = Callable[..., DecideResult]


@pytest.fixture
def evaluate() -> Evaluate:
    """``evaluate(gating, **params)`` through the validator; ``action`` defaults to ``deploy`` and
    ``actor_id`` to ``worker``."""

    def _evaluate(gating: Gating, **params: Any) -> EvaluateResult:
        return gating.evaluate(parse_evaluate_params({"action": "deploy", "actor_id": "worker", **params}))

    return _evaluate


@pytest.fixture
def decide() -> Decide:
    """``decide(gating, pending_id, decision="approve", **params)`` through the validator; the
    approver defaults to ``operator``."""

    def _decide(
        gating: Gating, pending_id: str | None, decision: str = "approve", **params: Any
    ) -> DecideResult:
        body = {"pending_id": pending_id, "approver_id": "operator", "decision": decision, **params}
        return gating.decide(parse_decide_params(body))

    return _decide


@pytest.fixture
def events() -> Callable[[Gating], list[str]]:
    """``events(gating)``: the event types of the newest audit rows, oldest first."""

    def _events(gating: Gating) -> list[str]:
        return [entry.event_type for entry in gating.audit().entries]

    return _events
