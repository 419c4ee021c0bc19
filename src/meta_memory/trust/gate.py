"""The write gate: decides whether one memory write (or one batch) lands quarantined, and says so.

This module owns the write posture of REFERENCE 4.4 (``agent_memory.llm_writes``) and the
``memory.write.quarantined`` event. Non-LLM principals (application, operator) are never quarantined.
Under ``"quarantined"`` every LLM-authored write is, except a steward's review batch, which is the review
that posture defers to. Under ``"observed"`` an agent's write quarantines when its session is tainted.
Under either posture any LLM-authored write, the steward's included, quarantines when a session it cites
as evidence is tainted or was left by a reset. The decision is made once per batch and applies to every
create and supersede in it; the caller stores the records ``quarantined`` with the returned reason.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import ConfigError
from ..events import SYSTEM_IDENTITY, EventSink
from ..memory.records import Author
from .taint import TaintTracker

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
    """The store-seam gate every memory write passes, whoever issues it.

    Args:
        tracker: the session taint facts.
        events: where ``memory.write.quarantined`` goes.
        llm_writes: the posture, ``"observed"`` or ``"quarantined"``.

    Raises:
        ConfigError: ``llm_writes`` is not a known posture.
    """

    def __init__(self, tracker: TaintTracker, events: EventSink, *, llm_writes: str) -> None:
        if llm_writes not in LLM_WRITES_POSTURES:
            raise ConfigError(f"llm_writes must be one of: observed, quarantined (got {llm_writes!r})")
        self._tracker = tracker
        self._events = events
        self.llm_writes = llm_writes

    def quarantine_reason(
        self,
        *,
        author: Author,
        session_key: str | None,
        evidence_sessions: Sequence[str] = (),
        steward_review: bool = False,
    ) -> str | None:
        """Why this write must land quarantined, or ``None`` if it may be stored normally. Emits nothing.

        ``steward_review`` exempts a batch from the ``"quarantined"`` posture only when the author is
        a steward; the evidence rules still apply to it.
        """
        if not author.is_llm:
            return None
        if self.llm_writes == "quarantined" and not (steward_review and author.kind == _STEWARD):
            return QUARANTINED_POLICY_REASON
        if isinstance(evidence_sessions, str):
            raise TypeError("evidence_sessions must be a sequence of session keys, not a string")
        if author.kind == _AGENT:
            if author.identity is not None:
                source = self._tracker.taint_for_write(author.identity, session_key)
            else:
                source = None if session_key is None else self._tracker.taint_of(session_key)
            if source is not None:
                return f"session tainted by {source}"
        for evidence_key in evidence_sessions:
            source = self._tracker.taint_of(evidence_key)
            if source is not None:
                return f"evidence session {evidence_key} tainted by {source}"
            if self._tracker.is_reset_boundary(evidence_key):
                return f"evidence session {evidence_key} is a reset boundary"
        return None

    def decide(
        self,
        *,
        realm: str,
        author: Author,
        session_key: str | None,
        evidence_sessions: Sequence[str] = (),
        steward_review: bool = False,
    ) -> str | None:
        """Gate one write or batch: return the quarantine reason, or ``None`` to store it normally.
        A reason is also emitted as ``memory.write.quarantined``."""
        reason = self.quarantine_reason(
            author=author,
            session_key=session_key,
            evidence_sessions=evidence_sessions,
            steward_review=steward_review,
        )
        if reason is not None:
            emit_quarantined(self._events, realm=realm, author=author, reason=reason)
        return reason
