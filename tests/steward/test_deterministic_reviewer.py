"""The default reviewer's rules: secrets and exact duplicates of active content are tombstoned, open loops
escalated and held, everything else held; duplicate proposals rejected, the rest held; it never
releases, accepts or promotes."""

from __future__ import annotations

from pathlib import Path

from meta_memory.clock import ManualClock
from meta_memory.memory.params import parse_remember
from meta_memory.memory.records import (
    Author,
    Provenance,
    Record,
    RecordKind,
    Scope,
    Status,
    Trust,
    content_hash,
)
from meta_memory.memory.service import AgentDraft
from meta_memory.runtime import MetaRuntime
from meta_memory.steward import DeterministicReviewer, DreamInput, ProposalItem, QuarantineItem

from .conftest import REALM, config


def quarantined(title: str, body: str, *, kind: RecordKind = RecordKind.FACT) -> Record:
    return Record(
        id=f"mem-{title}",
        scope=Scope.identity(REALM, "lead"),
        kind=kind,
        title=title,
        description="",
        body=body,
        tags=(),
        provenance=Provenance(Author("agent", identity="lead")),
        trust=Trust.AGENT_OBSERVED,
        status=Status.QUARANTINED,
        created_at_ms=1,
        updated_at_ms=1,
        content_hash=content_hash(title, body),
        quarantine_reason="tainted_session",
    )


def proposal(pid: str, duplicate_of: str | None = None) -> ProposalItem:
    return ProposalItem(
        pid, "mob", "crew", "fact", "T", "", "B", (), {"author": "agent"}, "pending", False, 1, duplicate_of
    )


def dream_input(*items: QuarantineItem, proposals: tuple[ProposalItem, ...] = ()) -> DreamInput:
    return DreamInput(REALM, "dream-1", 1, REALM, quarantined=items, proposals=proposals)


def test_the_deterministic_reviewer_applies_its_documented_rules() -> None:
    secret = quarantined("key", "Use ghp_" + "a" * 36 + " to push.")
    dup = quarantined("dup", "Deploys need approval.")
    loop = quarantined("loop", "Ask ops about rotation.", kind=RecordKind.OPEN_LOOP)
    plain = quarantined("plain", "The build is slow on Mondays.")

    verdicts = DeterministicReviewer().review(
        dream_input(
            QuarantineItem(secret),
            QuarantineItem(dup, duplicate_of="mem-active"),
            QuarantineItem(loop),
            QuarantineItem(plain),
            proposals=(proposal("prop-dup", "mem-mob"), proposal("prop-new")),
        )
    )

    assert [(v.record_id, v.verdict) for v in verdicts.quarantine] == [
        (secret.id, "tombstone"),
        (dup.id, "tombstone"),
        (loop.id, "hold"),
        (plain.id, "hold"),
    ]
    assert "github-token" in (verdicts.quarantine[0].rationale or "")
    assert "ghp_" not in str(verdicts)
    assert [e.record_id for e in verdicts.open_loop_escalations] == [loop.id]
    assert [(v.proposal_id, v.verdict) for v in verdicts.proposals] == [
        ("prop-dup", "reject"),
        ("prop-new", "hold"),
    ]
    assert (verdicts.harvests, verdicts.contradictions, verdicts.usage) == ((), (), ())
    assert DeterministicReviewer().name == "deterministic"


def test_the_deterministic_reviewer_never_releases_accepts_or_promotes_anything() -> None:
    items = tuple(QuarantineItem(quarantined(f"r{n}", f"Body number {n}.")) for n in range(16))
    proposals = tuple(proposal(f"prop-{n}") for n in range(32))

    verdicts = DeterministicReviewer().review(dream_input(*items, proposals=proposals))

    assert {v.verdict for v in verdicts.quarantine} == {"hold"}
    assert {v.verdict for v in verdicts.proposals} == {"hold"}


def test_a_runtime_without_a_model_dreams_with_the_deterministic_reviewer(
    tmp_path: Path, clock: ManualClock
) -> None:
    with MetaRuntime.open(tmp_path / "state", config(), clock=clock) as runtime:
        assert runtime.agent_memory is not None and runtime.steward is not None
        memory = runtime.agent_memory
        dup, _ = memory.agent_remember(
            AgentDraft("lead", REALM, "Deploys", "Deploys need approval."),
            quarantine_reason="llm_writes_quarantined",
        )
        memory.remember(
            parse_remember(
                {"identity": "lead", "title": "Deploys", "body": "Deploys need approval."},
                default_realm="default",
            )
        )
        loop, _ = memory.agent_remember(
            AgentDraft("lead", REALM, "Loop", "Ask ops.", kind=RecordKind.OPEN_LOOP),
            quarantine_reason="llm_writes_quarantined",
        )

        report = runtime.steward.dream(REALM)

        assert report.reviewer == "deterministic"
        assert [(o.subject, o.target, o.outcome) for o in report.outcomes] == [
            ("open_loop", loop.id, "escalated"),
            ("quarantine", dup.id, "tombstoned"),
            ("quarantine", loop.id, "held"),
        ]
        stored = memory.store(REALM).get(dup.id)
        assert stored is not None and stored.status is Status.TOMBSTONED
