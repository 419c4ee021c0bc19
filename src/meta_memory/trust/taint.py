"""Session-sticky taint: which sessions ingested untrusted content, and which ended at a reset boundary.

This module owns the taint facts of REFERENCE 4.3 and the ``memory.taint.transition`` events that
announce them. A session becomes tainted the first time it ingests untrusted content (a tool result or
error the classifier rejected, provider-native server-tool content, or a message from a tainted peer
session) and stays tainted for its whole life: nothing here clears it, and compaction has no method at
all because it does not touch taint. Only a fresh context, a new session key from ``begin_session`` or
``reset``, starts clean. Facts are keyed by session key and outlive the session (``end_session`` forgets
nothing) because LLM writes that cite an old session as evidence still need them; they are capped at
``max_tracked`` sessions, the oldest-inserted evicted first. Untrusted content reported for an identity
with no session attributed (``session_key=None``) taints every session that identity has open, or, when
none is open, is held as identity-level pending taint that the identity's next session inherits. Every
state change happens under one lock before the call returns, so a write gated right after the marking
call already sees it; events are emitted after the lock is released, exactly once per transition.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError, InvalidParams
from ..events import EventSink

__all__ = [
    "DEFAULT_MAX_TRACKED",
    "TAINT_TRANSITION_EVENT",
    "TaintTracker",
]

TAINT_TRANSITION_EVENT = "memory.taint.transition"
DEFAULT_MAX_TRACKED = 4096
"""REFERENCE 4.3: tracked tainted (and reset-boundary) sessions are capped at 4096."""

_TAINTED = "tainted"
_RESET_BOUNDARY = "reset_boundary"
_ROTATED_CLEAN = "rotated_clean"


@dataclass
class _SessionFacts:
    taint: str | None = None
    boundary: bool = False


_Event = tuple[str, dict[str, Any]]


class TaintTracker:
    """Thread-safe session-sticky taint facts for every identity of one runtime.

    Args:
        events: where ``memory.taint.transition`` events go.
        max_tracked: how many sessions with a taint or reset-boundary fact are remembered (also the
            cap on identities holding pending taint); the oldest-inserted is evicted past it.

    Raises:
        ConfigError: ``max_tracked`` is not a positive integer.
    """

    def __init__(self, events: EventSink, *, max_tracked: int = DEFAULT_MAX_TRACKED) -> None:
        if isinstance(max_tracked, bool) or not isinstance(max_tracked, int) or max_tracked < 1:
            raise ConfigError(f"max_tracked must be a positive integer (got {max_tracked!r})")
        self._events = events
        self._max_tracked = max_tracked
        self._lock = threading.Lock()
        # Insertion-ordered so eviction drops the session that became tracked first.
        self._facts: OrderedDict[str, _SessionFacts] = OrderedDict()
        self._pending: OrderedDict[str, str] = OrderedDict()
        # identity -> its open session keys (insertion-ordered dict used as an ordered set).
        self._open: dict[str, dict[str, None]] = {}
        self._owner: dict[str, str] = {}

    # -- lifecycle -------------------------------------------------------------------------------

    def begin_session(self, identity: str, session_key: str) -> None:
        """Open a fresh session for ``identity``. It starts clean unless the key already carries a
        taint fact (taint is sticky per key) or the identity holds pending taint, which transfers to
        it and emits ``tainted``."""
        out: list[_Event] = []
        with self._lock:
            self._open_session(identity, session_key)
            pending = self._pending.pop(identity, None)
            if pending is not None:
                self._taint(identity, session_key, pending, out)
        self._emit(out)

    def reset(self, identity: str, old_session_key: str, new_session_key: str) -> None:
        """Rotate ``identity`` from ``old_session_key`` to a fresh ``new_session_key``.

        The old session is closed and becomes a reset boundary (``reset_boundary``, once): LLM writes
        citing it as evidence quarantine. Its taint, if any, is kept. Pending taint the identity
        held was ingested before the reset, so it belongs to the old context, not the new one. The
        new session opens clean and ``rotated_clean`` is emitted, unless its key already carries a
        taint fact, which no reset can clear.

        Raises:
            InvalidParams: the two keys are equal.
        """
        if old_session_key == new_session_key:
            raise InvalidParams("reset needs a new session key distinct from the old one")
        out: list[_Event] = []
        with self._lock:
            pending = self._pending.pop(identity, None)
            if pending is not None:
                self._taint(identity, old_session_key, pending, out)
            facts = self._facts.get(old_session_key)
            if facts is None:
                facts = self._track(old_session_key)
            if not facts.boundary:
                facts.boundary = True
                out.append(
                    self._transition(
                        identity, old_session_key, _RESET_BOUNDARY, f"reset to session {new_session_key}"
                    )
                )
            self._close_session(old_session_key)
            self._open_session(identity, new_session_key)
            if self._taint_of(new_session_key) is None:
                out.append(
                    self._transition(
                        identity, new_session_key, _ROTATED_CLEAN, f"reset from session {old_session_key}"
                    )
                )
        self._emit(out)

    def end_session(self, session_key: str) -> None:
        """Close a session. Its taint and reset-boundary facts are kept for evidence checks."""
        with self._lock:
            self._close_session(session_key)

    # -- marking ---------------------------------------------------------------------------------

    def mark_untrusted(self, identity: str, session_key: str | None, source: str) -> bool:
        """Record that untrusted content from ``source`` entered ``identity``'s context.

        With a ``session_key`` that session is tainted. Without one, every session the identity has
        open is tainted (the content cannot be attributed more precisely), or, when none is open, the
        identity holds pending taint for its next session. ``tainted`` is emitted only on a session's
        clean → tainted transition; the first source is the one remembered.

        Returns:
            Whether the session (for ``None``: the identity's open sessions, or its pending slot) is
            tainted after the call.
        """
        out: list[_Event] = []
        with self._lock:
            if session_key is not None:
                self._taint(identity, session_key, source, out)
                tainted = self._taint_of(session_key) is not None
            elif open_keys := list(self._open.get(identity, ())):
                for key in open_keys:
                    self._taint(identity, key, source, out)
                tainted = all(self._taint_of(key) is not None for key in open_keys)
            else:
                self._hold_pending(identity, source)
                tainted = identity in self._pending
        self._emit(out)
        return tainted

    def mark_peer_message(self, identity: str, session_key: str, sender_session_key: str) -> bool:
        """A message from ``sender_session_key`` reached ``identity``'s ``session_key``: if the sender's
        session is tainted, the receiver becomes tainted too (peer laundering is not a way out).

        Returns:
            Whether the receiving session is tainted after the call.
        """
        out: list[_Event] = []
        with self._lock:
            sender_taint = self._taint_of(sender_session_key)
            if sender_taint is not None and sender_session_key != session_key:
                source = f"peer message from session {sender_session_key} (tainted by {sender_taint})"
                self._taint(identity, session_key, source, out)
            tainted = self._taint_of(session_key) is not None
        self._emit(out)
        return tainted

    # -- queries ---------------------------------------------------------------------------------

    def taint_of(self, session_key: str) -> str | None:
        """The source that tainted ``session_key``, or ``None`` while it is clean (or was evicted)."""
        with self._lock:
            return self._taint_of(session_key)

    def is_reset_boundary(self, session_key: str) -> bool:
        """Whether ``session_key`` was left by a ``reset`` (and is still tracked)."""
        with self._lock:
            facts = self._facts.get(session_key)
            return facts is not None and facts.boundary

    def pending_taint_of(self, identity: str) -> str | None:
        """The source of ``identity``'s pending (not yet session-attributed) taint, if any."""
        with self._lock:
            return self._pending.get(identity)

    def taint_for_write(self, identity: str, session_key: str | None) -> str | None:
        """The taint an LLM write by ``identity`` from ``session_key`` carries, or ``None``.

        A write from a named session carries that session's taint, or else the identity's pending
        taint (untrusted content it ingested before any session was attributed). A write naming no
        session carries the pending taint or the taint of any session the identity has open.
        """
        with self._lock:
            if session_key is not None and (taint := self._taint_of(session_key)) is not None:
                return taint
            if (pending := self._pending.get(identity)) is not None:
                return pending
            if session_key is None:
                for key in self._open.get(identity, ()):
                    if (taint := self._taint_of(key)) is not None:
                        return taint
            return None

    # -- internals (callers hold the lock) -------------------------------------------------------

    def _taint_of(self, session_key: str) -> str | None:
        facts = self._facts.get(session_key)
        return None if facts is None else facts.taint

    def _track(self, session_key: str) -> _SessionFacts:
        facts = _SessionFacts()
        self._facts[session_key] = facts
        while len(self._facts) > self._max_tracked:
            self._facts.popitem(last=False)
        return facts

    def _taint(self, identity: str, session_key: str, source: str, out: list[_Event]) -> None:
        facts = self._facts.get(session_key)
        if facts is None:
            facts = self._track(session_key)
        elif facts.taint is not None:
            return
        facts.taint = source
        out.append(self._transition(identity, session_key, _TAINTED, source))

    def _hold_pending(self, identity: str, source: str) -> None:
        if identity in self._pending:
            return
        self._pending[identity] = source
        while len(self._pending) > self._max_tracked:
            self._pending.popitem(last=False)

    def _open_session(self, identity: str, session_key: str) -> None:
        previous_owner = self._owner.get(session_key)
        if previous_owner is not None and previous_owner != identity:
            self._close_session(session_key)
        self._owner[session_key] = identity
        self._open.setdefault(identity, {})[session_key] = None

    def _close_session(self, session_key: str) -> None:
        identity = self._owner.pop(session_key, None)
        if identity is None:
            return
        keys = self._open.get(identity)
        if keys is not None:
            keys.pop(session_key, None)
            if not keys:
                del self._open[identity]

    @staticmethod
    def _transition(identity: str, session_key: str, kind: str, source: str) -> _Event:
        data = {"identity": identity, "session_key": session_key, "kind": kind, "source": source}
        return identity, data

    def _emit(self, out: list[_Event]) -> None:
        for identity, data in out:
            self._events.emit(TAINT_TRANSITION_EVENT, data, identity=identity)
