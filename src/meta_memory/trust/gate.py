"""The write gate: decides whether one memory write (or one batch) lands quarantined, and says so.

This module owns the write posture of REFERENCE 4.4 (``agent_memory.llm_writes``) and the
``memory.write.quarantined`` event. Non-LLM principals (application, operator) are never quarantined.
Under ``"quarantined"`` every LLM-authored write is, except a steward's review batch, which is the review
that posture defers to. Under ``"observed"`` an agent's write quarantines when its session is tainted.
Under either posture any LLM-authored write, the steward's included, quarantines when a session it cites
as evidence is tainted, was left by a reset, or is unknown to the store. The decision is made once per batch and applies to every
create and supersede in it; the caller stores the records ``quarantined`` with the returned reason.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import ConfigError
from ..events import SYSTEM_IDENTITY, EventSink
from ..memory.records import Author
from ..memory.rows import SessionRow

__all__ = [
    "LLM_WRITES_POSTURES",
    "QUARANTINED_POLICY_REASON",
    "WRITE_QUARANTINED_EVENT",
    "WriteGate",
    "emit_quarantined",
]

WRITE_QUARANTINED_EVENT = "memory.write.quarantined"
QUARANTINED_POLICY_REASON = "llm_writes=quarantined policy"
LLM_WRITES_POSTURES = ("observed", "quarantined")

_AGENT = "agent"
_STEWARD = "steward"


def emit_quarantined(events: EventSink, *, realm: str, author: Author, reason: str) -> None:
    """Emit ``memory.write.quarantined{realm, author, reason}`` for one quarantined write or batch,
    on the author's identity (``_system`` for authors without one)."""
    events.emit(
        WRITE_QUARANTINED_EVENT,
        {"realm": realm, "author": author.to_wire(), "reason": reason},
        identity=author.identity or SYSTEM_IDENTITY,
    )


class WriteGate:
    """The gate every LLM memory write passes, whoever issues it. It decides from facts the caller
    read from the realm store (the writing session's taint, the evidence sessions' rows); it
    reads and stores nothing itself.

    Args:
        events: where ``memory.write.quarantined`` goes.
        llm_writes: the posture, ``"observed"`` or ``"quarantined"``.

    Raises:
        ConfigError: ``llm_writes`` is not a known posture.
    """

    def __init__(self, events: EventSink, *, llm_writes: str) -> None:
        if llm_writes not in LLM_WRITES_POSTURES:
            raise ConfigError(f"llm_writes must be one of: observed, quarantined (got {llm_writes!r})")
        self._events = events
        self.llm_writes = llm_writes

    def quarantine_reason(
        self,
        *,
        author: Author,
        taint: str | None = None,
        evidence: Sequence[tuple[str, SessionRow | None]] = (),
        steward_review: bool = False,
    ) -> str | None:
        """Why this write must land quarantined, or ``None`` if it may be stored normally. Emits nothing.

        Args:
            author: who writes; only LLM authors are ever quarantined.
            taint: the source of the taint the writing agent's session carries
                (:meth:`~meta_memory.trust.taint.SessionTaint.taint_for_write`), ``None`` if clean.
            evidence: each session the write cites as evidence, with its row (``None`` when the
                store knows no such session: it cannot vouch for it, so the write quarantines).
            steward_review: exempts a batch from the ``"quarantined"`` posture only when the
                author is a steward; the evidence rules still apply to it.
        """
        if not author.is_llm:
            return None
        if self.llm_writes == "quarantined" and not (steward_review and author.kind == _STEWARD):
            return QUARANTINED_POLICY_REASON
        if isinstance(evidence, str):
            raise TypeError("evidence must be a sequence of (session key, row) pairs, not a string")
        if author.kind == _AGENT and taint is not None:
            return f"session tainted by {taint}"
        for evidence_key, row in evidence:
            if row is None:
                return f"evidence session {evidence_key} is unknown"
            if row.taint is not None:
                return f"evidence session {evidence_key} tainted by {row.taint}"
            if row.boundary:
                return f"evidence session {evidence_key} is a reset boundary"
        return None

    def decide(
        self,
        *,
        realm: str,
        author: Author,
        taint: str | None = None,
        evidence: Sequence[tuple[str, SessionRow | None]] = (),
        steward_review: bool = False,
    ) -> str | None:
        """Gate one write or batch: return the quarantine reason, or ``None`` to store it normally.
        A reason is also emitted as ``memory.write.quarantined``."""
        reason = self.quarantine_reason(
            author=author, taint=taint, evidence=evidence, steward_review=steward_review
        )
        if reason is not None:
            emit_quarantined(self._events, realm=realm, author=author, reason=reason)
        return reason
