"""Review of quarantined memory: the operator's decision today; the steward and gated promotions build on it."""

from __future__ import annotations

from .decide import DecideParams, QuarantineReview, parse_decide_params

__all__ = ["DecideParams", "QuarantineReview", "parse_decide_params"]
