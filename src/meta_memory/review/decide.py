"""``meta/memory/quarantine/decide``: parameters, the reviewer, and the verdict event.

The reviewer is taken from the authenticated console principal, never from the caller's
params (without app authentication it records that no principal was known). The
``memory.quarantine.verdict`` event is emitted only after the decision has committed and
names the record, the verdict and any successor, never the reviewer or the rationale.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidParams
from ..events import EventSink
from ..memory.params import parse_identity, parse_realm
from ..memory.service import AgentMemory
from .rules import ReviewOutcome, review_quarantined

__all__ = [
    "RATIONALE_MAX_BYTES",
    "DecideParams",
    "QuarantineReview",
    "parse_content_hash",
    "parse_decide_params",
    "parse_rationale",
]

RATIONALE_MAX_BYTES = 4096
_HEX64 = re.compile(r"[0-9a-f]{64}")


def parse_content_hash(params: dict[str, Any], what: str) -> str:
    """``expected_content_hash``: the hash of ``what`` (``the record you reviewed``) a decision binds
    to, 64 lowercase hex characters.

    Raises:
        InvalidParams: naming the field.
    """
    expected = params.get("expected_content_hash")
    if not isinstance(expected, str) or not _HEX64.fullmatch(expected):
        raise InvalidParams(
            f"expected_content_hash must be the 64-character lowercase hex content hash of {what}"
        )
    return expected


def parse_rationale(params: dict[str, Any]) -> str | None:
    """The optional ``rationale`` of a decision, at most RATIONALE_MAX_BYTES.

    Raises:
        InvalidParams: naming the field.
    """
    rationale = params.get("rationale")
    if rationale is None:
        return None
    if not isinstance(rationale, str):
        raise InvalidParams("rationale must be a string when provided")
    if len(rationale.encode("utf-8", "surrogatepass")) > RATIONALE_MAX_BYTES:
        raise InvalidParams(f"rationale must be at most {RATIONALE_MAX_BYTES} bytes")
    return rationale


@dataclass(frozen=True)
class DecideParams:
    realm: str
    identity: str
    memory_id: str
    verdict: str
    expected_content_hash: str
    rationale: str | None


def parse_decide_params(params: Any, *, default_realm: str) -> DecideParams:
    if not isinstance(params, dict):
        raise InvalidParams("params must be a JSON object")
    identity = parse_identity(params)
    realm = parse_realm(params) or default_realm
    memory_id = params.get("memory_id")
    if not isinstance(memory_id, str) or not memory_id.strip():
        raise InvalidParams("memory_id must be a non-empty string")
    verdict = params.get("verdict")
    if verdict not in ("release", "tombstone"):
        raise InvalidParams(f"verdict must be 'release' or 'tombstone' (got {verdict!r})")
    expected = parse_content_hash(params, "the record you reviewed")
    rationale = parse_rationale(params)
    return DecideParams(realm, identity, memory_id.strip(), verdict, expected, rationale)


class QuarantineReview:
    """Operator (console) and steward decisions on quarantined identity-scoped records."""

    def __init__(self, memory: AgentMemory, events: EventSink) -> None:
        self.memory = memory
        self.events = events

    def decide(self, p: DecideParams, *, reviewer: dict[str, Any], operator: bool = True) -> ReviewOutcome:
        outcome = review_quarantined(
            self.memory.store(p.realm),
            identity=p.identity,
            memory_id=p.memory_id,
            verdict=p.verdict,
            expected_content_hash=p.expected_content_hash,
            rationale=p.rationale,
            reviewer=reviewer,
            operator=operator,
        )
        self.emit_verdict(p, outcome)
        return outcome

    def emit_verdict(self, p: DecideParams, outcome: ReviewOutcome) -> None:
        """``memory.quarantine.verdict`` for a decision that has committed; a replay emits nothing."""
        if outcome.applied:
            self.events.emit(
                "memory.quarantine.verdict",
                {
                    "realm": p.realm,
                    "record_id": p.memory_id,
                    "verdict": p.verdict,
                    "successor": outcome.successor.id if outcome.successor is not None else None,
                },
                identity=p.identity,
            )
