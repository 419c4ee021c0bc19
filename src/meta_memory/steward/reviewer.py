"""The reviewer seam of a dream: the :class:`Reviewer` protocol, the error a reviewer raises when it
cannot answer, and the bundled :class:`DeterministicReviewer`.

A reviewer only judges. It has no tools and writes nothing: the steward applies its verdicts through
the store validator and the quarantine review, so a reviewer that is wrong (or poisoned) can at worst
waste its verdicts, never break a store rule.
"""

from __future__ import annotations

from typing import Protocol

from ..errors import InternalError
from ..memory.records import RecordKind
from ..memory.secrets import find_secret_in_record
from .model import (
    DreamInput,
    DreamVerdicts,
    OpenLoopEscalation,
    ProposalVerdict,
    QuarantineVerdict,
)

__all__ = ["DeterministicReviewer", "Reviewer", "ReviewerError"]


class ReviewerError(InternalError):
    """The reviewer could not produce a usable verdict (unreachable endpoint, malformed answer).

    A dream that meets it holds everything and reports the message; nothing is raised to its caller.
    """


class Reviewer(Protocol):
    """Judges one dream's input. ``name`` is recorded with the run."""

    @property
    def name(self) -> str: ...

    def review(self, dream: DreamInput) -> DreamVerdicts:
        """Return verdicts for (some of) the input.

        Raises:
            ReviewerError: no usable answer; the dream holds everything.
        """
        ...


class DeterministicReviewer:
    """The default reviewer: rules it can check mechanically, and ``hold`` for everything else.

    Rules, in order, per quarantined record:

    1. Content matching a secret class is tombstoned (a secret is never released; tombstone is the
       only exit the store offers it).
    2. Content identical (same content hash) to an *active* record of the same scope is tombstoned
       as a duplicate: the active copy already carries it.
    3. A record of kind ``open_loop`` is escalated (an ``open_loop_escalated`` nudge) and held.
    4. Everything else is held.

    Per proposal: an exact duplicate of active content in its target scope is rejected; everything
    else is held for a model or an operator (it accepts nothing, since it cannot verify a claim).
    Harvests get no verdict (they stay pending). It reports no contradictions and no usage verdicts.
    It never releases and never promotes.
    """

    @property
    def name(self) -> str:
        return "deterministic"

    def review(self, dream: DreamInput) -> DreamVerdicts:
        quarantine: list[QuarantineVerdict] = []
        escalations: list[OpenLoopEscalation] = []
        for item in dream.quarantined:
            r = item.record
            hit = find_secret_in_record(r)
            if hit is not None:
                why = f"content matches secret class '{hit[1]}'; a secret is never released"
                quarantine.append(QuarantineVerdict(r.id, "tombstone", why))
            elif item.duplicate_of is not None:
                why = f"exact duplicate of active record {item.duplicate_of}"
                quarantine.append(QuarantineVerdict(r.id, "tombstone", why))
            elif r.kind is RecordKind.OPEN_LOOP:
                escalations.append(OpenLoopEscalation(r.id))
                quarantine.append(QuarantineVerdict(r.id, "hold", "open loop: escalated for an operator"))
            else:
                quarantine.append(QuarantineVerdict(r.id, "hold", "cannot be judged mechanically"))
        proposals = [
            ProposalVerdict(
                p.proposal_id,
                "reject" if p.duplicate_of is not None else "hold",
                f"exact duplicate of active record {p.duplicate_of}"
                if p.duplicate_of is not None
                else "cannot be verified mechanically",
            )
            for p in dream.proposals
        ]
        return DreamVerdicts(
            quarantine=tuple(quarantine),
            proposals=tuple(proposals),
            open_loop_escalations=tuple(escalations),
        )
