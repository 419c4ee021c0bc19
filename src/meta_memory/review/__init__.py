"""Review of quarantined memory: the rules of a decision (rules.py, on any realm store's unit of
work) and the operator's decision over the console (decide.py); the steward's dream decides through
the same rules."""

from __future__ import annotations

from .decide import DecideParams, QuarantineReview, parse_decide_params
from .rules import PROMOTION_EXPIRY_MS, ReviewOutcome, receipt, review_in_txn, review_quarantined

__all__ = [
    "PROMOTION_EXPIRY_MS",
    "DecideParams",
    "QuarantineReview",
    "ReviewOutcome",
    "parse_decide_params",
    "receipt",
    "review_in_txn",
    "review_quarantined",
]
