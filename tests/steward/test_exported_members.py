from __future__ import annotations

import meta_memory.steward as steward_package
from meta_memory.steward import ReviewerError, VerdictFormatError, parse_verdicts


def test_the_steward_package_exports_exactly_its_public_surface() -> None:
    assert sorted(steward_package.__all__) == [
        "AUDIT_ACTIONS",
        "AuditVerdicts",
        "Contradiction",
        "DeterministicReviewer",
        "DreamInput",
        "DreamParams",
        "DreamReport",
        "DreamVerdicts",
        "HARVESTS_MAX",
        "HARVEST_RECORDS_MAX",
        "HarvestItem",
        "HarvestVerdict",
        "ItemOutcome",
        "NO_MOB_PARTITION",
        "OpenAICompatibleReviewer",
        "OpenLoopEscalation",
        "PROMOTE_PROPOSAL_ACTION",
        "PROMOTE_QUARANTINE_ACTION",
        "PROPOSALS_MAX",
        "Promotions",
        "ProposalItem",
        "ProposalVerdict",
        "QUARANTINE_MAX",
        "QuarantineItem",
        "QuarantineVerdict",
        "ResolveParams",
        "Reviewer",
        "ReviewerError",
        "Steward",
        "StewardScheduler",
        "USAGE_SAMPLE_MAX",
        "UsageVerdict",
        "VerdictFormatError",
        "VerdictResolution",
        "parse_cadence",
        "parse_dream_params",
        "parse_resolve_params",
        "parse_verdicts",
        "reviewer_from_config",
    ]
    assert all(hasattr(steward_package, name) for name in steward_package.__all__)


def test_the_reference_limits_of_one_dream() -> None:
    assert (steward_package.QUARANTINE_MAX, steward_package.PROPOSALS_MAX, steward_package.HARVESTS_MAX) == (
        16,
        32,
        4,
    )


def test_a_reviewer_error_is_an_internal_error_of_the_one_tree() -> None:
    from meta_memory.errors import InternalError

    assert issubclass(ReviewerError, InternalError)


def test_parse_verdicts_reads_every_key_and_refuses_half_valid_objects() -> None:
    verdicts = parse_verdicts(
        {
            "quarantine_verdicts": [{"record_id": " m1 ", "verdict": "hold"}],
            "proposal_verdicts": [{"proposal_id": "p1", "verdict": "accept", "rationale": "ok"}],
            "harvest_verdicts": [{"record_id": "m2", "verdict": "keep", "target_mob": "crew"}],
            "contradictions": [{"reason": "r"}],
            "open_loop_escalations": [{"record_id": "m3"}],
            "usage_verdicts": [{"record_id": "m4", "verdict": "dead_weight"}],
        }
    )
    assert verdicts.quarantine[0].record_id == "m1"
    assert verdicts.harvests[0].target_mob == "crew"
    assert (verdicts.contradictions[0].entity, verdicts.contradictions[0].record_ids) == (None, ())
    for bad in (
        {"quarantine_verdicts": {"record_id": "m"}},
        {"proposal_verdicts": [{"proposal_id": "", "verdict": "accept"}]},
        {"contradictions": [{"reason": "r", "record_ids": [1]}]},
        {"usage_verdicts": [{"record_id": "m", "verdict": "useful"}]},
    ):
        try:
            parse_verdicts(bad)
        except VerdictFormatError:
            continue
        raise AssertionError(f"accepted {bad}")
