"""Review of quarantined memory and of proposals: the rules of a quarantine decision (rules.py, on
any realm store's unit of work), the operator's decision over the console (decide.py), and the
operator's decision on a proposal with the application's own proposals (proposals.py); the
steward's dream decides through the same rules."""

from __future__ import annotations

from .decide import DecideParams, QuarantineReview, parse_decide_params
from .proposals import (
    ProposalDecideParams,
    ProposalOutcome,
    ProposalReview,
    ProposeParams,
    parse_proposal_decide_params,
    parse_propose_params,
)
from .rules import PROMOTION_EXPIRY_MS, ReviewOutcome, receipt, review_in_txn, review_quarantined

__all__ = [
    "PROMOTION_EXPIRY_MS",
    "DecideParams",
    "ProposalDecideParams",
    "ProposalOutcome",
    "ProposalReview",
    "ProposeParams",
    "QuarantineReview",
    "ReviewOutcome",
    "parse_decide_params",
    "parse_proposal_decide_params",
    "parse_propose_params",
    "receipt",
    "review_in_txn",
    "review_quarantined",
]
