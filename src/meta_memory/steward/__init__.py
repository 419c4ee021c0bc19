"""The memory steward (REFERENCE 5.2, 5.3): dream runs that review a realm's quarantined records,
pending proposals and exit-interview harvests through a pluggable :class:`Reviewer`, gated promotions
to mob scope with their ``pending → committed | denied | expired`` lifecycle, and the cadence
scheduler. ``model`` holds the vocabulary, ``reviewer`` the seam and the deterministic default,
``openai_compat`` the chat-completions adapter, ``steward`` the dream, ``verdicts`` how verdicts
apply, ``promotions`` the gate flow, ``staging`` staged batches as JSON, ``scheduler`` the cadence,
``audit_verdicts`` an operator's resolution of the usage audit's verdicts.
Every write goes through a realm store's unit of work (``RealmStore.transaction()``), every read through
its ``StewardReads``: the steward knows no backend.
"""

from __future__ import annotations

from .audit_verdicts import (
    AUDIT_ACTIONS,
    AuditVerdicts,
    ResolveParams,
    VerdictResolution,
    parse_resolve_params,
)
from .model import (
    HARVEST_RECORDS_MAX,
    HARVESTS_MAX,
    PROPOSALS_MAX,
    QUARANTINE_MAX,
    USAGE_SAMPLE_MAX,
    Contradiction,
    DreamInput,
    DreamParams,
    DreamReport,
    DreamVerdicts,
    HarvestItem,
    HarvestVerdict,
    ItemOutcome,
    OpenLoopEscalation,
    ProposalItem,
    ProposalVerdict,
    QuarantineItem,
    QuarantineVerdict,
    UsageVerdict,
    VerdictFormatError,
    parse_dream_params,
    parse_verdicts,
)
from .openai_compat import OpenAICompatibleReviewer, reviewer_from_config
from .promotions import PROMOTE_PROPOSAL_ACTION, PROMOTE_QUARANTINE_ACTION, Promotions
from .reviewer import DeterministicReviewer, Reviewer, ReviewerError
from .scheduler import StewardScheduler, parse_cadence
from .steward import NO_MOB_PARTITION, Steward

__all__ = [
    "AUDIT_ACTIONS",
    "HARVESTS_MAX",
    "HARVEST_RECORDS_MAX",
    "NO_MOB_PARTITION",
    "PROMOTE_PROPOSAL_ACTION",
    "PROMOTE_QUARANTINE_ACTION",
    "PROPOSALS_MAX",
    "QUARANTINE_MAX",
    "USAGE_SAMPLE_MAX",
    "AuditVerdicts",
    "Contradiction",
    "DeterministicReviewer",
    "DreamInput",
    "DreamParams",
    "DreamReport",
    "DreamVerdicts",
    "HarvestItem",
    "HarvestVerdict",
    "ItemOutcome",
    "OpenAICompatibleReviewer",
    "OpenLoopEscalation",
    "Promotions",
    "ProposalItem",
    "ProposalVerdict",
    "QuarantineItem",
    "QuarantineVerdict",
    "ResolveParams",
    "Reviewer",
    "ReviewerError",
    "Steward",
    "StewardScheduler",
    "UsageVerdict",
    "VerdictFormatError",
    "VerdictResolution",
    "parse_cadence",
    "parse_dream_params",
    "parse_resolve_params",
    "parse_verdicts",
    "reviewer_from_config",
]
