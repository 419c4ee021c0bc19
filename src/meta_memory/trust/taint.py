"""Session-sticky taint, kept in the realm store: which sessions ingested untrusted content, which
ended at a reset boundary, and which identities hold taint no session has taken yet.

This module owns the taint transitions of REFERENCE 4.3 and the ``memory.taint.transition``
events that announce them; the facts themselves are columns of the store's session rows
(:class:`~meta_memory.memory.rows.SessionRow`) and its pending-taint rows, so they survive a
restart and every gateway of a deployment reads the same ones. A session becomes tainted the first
time it ingests untrusted content (a tool result the classifier rejected, provider-native
server-tool content, a message from a tainted or unknown peer session) and stays tainted for its
whole life; compaction does not touch taint. Only a fresh session (``begin`` or ``reset``) starts
clean. Untrusted content reported for an identity with no session named taints every session the
identity has open, or, when none is open, is held as the identity's pending taint, which its next
session takes. A tainted session that ends by expiry (the host did not end it: it may still hold
the context) leaves its taint pending for the identity, so the session the host opens in its
place starts tainted. Nothing else removes a fact: there is no cap and no eviction.

Every change happens in one session transaction (:meth:`SessionTaint.changing`), durable before
the call that made it returns; events are emitted after the transaction commits, exactly once per
transition.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from ..events import EventSink
from ..memory.rows import SessionRow
from ..memory.store import SessionReads, SessionTxn

__all__ = ["TAINT_TRANSITION_EVENT", "SessionTaint", "TaintChange"]

TAINT_TRANSITION_EVENT = "memory.taint.transition"

_TAINTED = "tainted"
_RESET_BOUNDARY = "reset_boundary"
_ROTATED_CLEAN = "rotated_clean"

_Event = tuple[str, dict[str, Any]]


def _transition(identity: str, session_key: str, kind: str, source: str) -> _Event:
    return identity, {"identity": identity, "session_key": session_key, "kind": kind, "source": source}


class TaintChange:
    """The taint transitions of one session transaction. Obtained from
    :meth:`SessionTaint.changing`; every method reads the rows it changes inside the transaction,
    so it acts on what every gateway committed before it."""

    def __init__(self, txn: SessionTxn, out: list[_Event]) -> None:
        self.txn = txn
        self._out = out

    def session(self, key: str) -> SessionRow | None:
        return self.txn.session(key)

    def begin(self, row: SessionRow) -> SessionRow:
        """Store ``row``, a fresh open session. It takes the identity's pending taint, if any
        (and announces ``tainted``); otherwise it starts clean.

        Raises:
            ValueError: the store already holds a session of that key (a key is never reused:
                that would make a tainted session clean).
        """
        if self.txn.session(row.key) is not None:
            raise ValueError(f"session key {row.key} is taken")
        pending = self.txn.take_pending(row.identity)
        if pending is not None:
            row = replace(row, taint=pending)
            self._out.append(_transition(row.identity, row.key, _TAINTED, pending))
        self.txn.put_session(row)
        return row

    def mark_untrusted(self, identity: str, session_key: str | None, source: str) -> bool:
        """Record that untrusted content from ``source`` entered ``identity``'s context.

        With a ``session_key`` (an open session of ``identity``) that session is tainted. Without
        one, every session the identity has open is, or, when none is open, the identity holds
        pending taint for its next one. ``tainted`` is announced only on a session's clean →
        tainted transition; the first source is the one kept.

        Returns:
            Whether the session (for ``None``: the identity's open sessions, or its pending slot)
            is tainted afterwards: always ``True``.
        """
        if session_key is not None:
            row = self.txn.session(session_key)
            if row is None:
                raise LookupError(session_key)
            self._taint(row, source)
            return True
        rows = self.txn.open_sessions_of(identity)
        for row in rows:
            self._taint(row, source)
        if not rows:
            self.txn.hold_pending(identity, source)
        return True

    def mark_peer(self, receiver_key: str, sender_key: str, sender: SessionRow | None) -> bool:
        """A message from the session ``sender_key`` reached the session ``receiver_key``. A tainted
        sender taints the receiver (peer laundering is no way out), and so does a sender whose
        facts are unknown (never opened, purged, another caller's): nothing vouches for it.

        Returns:
            Whether the receiving session is tainted afterwards.
        """
        receiver = self.txn.session(receiver_key)
        if receiver is None:
            raise LookupError(receiver_key)
        if sender is None:
            source = f"peer message from unknown session {sender_key}"
        elif sender.taint is not None and sender.key != receiver.key:
            source = f"peer message from session {sender_key} (tainted by {sender.taint})"
        else:
            return receiver.taint is not None
        return self._taint(receiver, source).taint is not None

    def reset(self, old: SessionRow, new: SessionRow) -> SessionRow:
        """End ``old`` at a reset and begin ``new`` (same identity) clean.

        The old session becomes a reset boundary (``reset_boundary``, announced once): LLM writes
        citing it as evidence quarantine; its taint, if any, is kept. Pending taint the identity
        held was ingested before the reset, so it goes to the old session, not the new one. The
        new session opens clean and ``rotated_clean`` is announced.

        Raises:
            ValueError: the two keys are equal, or the new key is taken.
        """
        if old.key == new.key:
            raise ValueError("reset needs a new session key distinct from the old one")
        if self.txn.session(new.key) is not None:
            raise ValueError(f"session key {new.key} is taken")
        current = self.txn.session(old.key) or old
        pending = self.txn.take_pending(old.identity)
        if pending is not None:
            current = self._taint(current, pending)
        now = self.txn.now_ms()
        if not current.boundary:
            self._out.append(
                _transition(old.identity, old.key, _RESET_BOUNDARY, f"reset to session {new.key}")
            )
        self.txn.put_session(replace(current, boundary=True, ended="reset", ended_at_ms=now))
        self.txn.put_session(new)
        self._out.append(_transition(new.identity, new.key, _ROTATED_CLEAN, f"reset from session {old.key}"))
        return new

    def end(self, key: str, reason: str) -> SessionRow | None:
        """End the open session ``key`` for ``reason`` (``closed`` or ``expired``); its facts stay.
        An expired tainted session leaves its taint pending for the identity. Returns the ended
        row, or ``None`` when the session is not open (nothing changes then)."""
        row = self.txn.session(key)
        if row is None or row.ended is not None:
            return None
        ended = replace(row, ended=reason, ended_at_ms=self.txn.now_ms())
        self.txn.put_session(ended)
        if reason == "expired" and row.taint is not None:
            self.txn.hold_pending(row.identity, f"expired session {row.key} (tainted by {row.taint})")
        return ended

    def _taint(self, row: SessionRow, source: str) -> SessionRow:
        if row.taint is not None:
            return row
        tainted = replace(row, taint=source)
        self.txn.put_session(tainted)
        self._out.append(_transition(row.identity, row.key, _TAINTED, source))
        return tainted


class SessionTaint:
    """Where taint transitions happen and are announced.

    Args:
        events: where ``memory.taint.transition`` events go.
    """

    def __init__(self, events: EventSink) -> None:
        self._events = events

    @contextmanager
    def changing(self, store: SessionReads) -> Iterator[TaintChange]:
        """One session transaction of ``store``; its transitions are announced once it commits
        (none when the block raises)."""
        out: list[_Event] = []
        with store.session_txn() as txn:
            yield TaintChange(txn, out)
        for identity, data in out:
            self._events.emit(TAINT_TRANSITION_EVENT, data, identity=identity)

    @staticmethod
    def taint_for_write(row: SessionRow) -> str | None:
        """The taint an LLM write from the open session ``row`` (as the store read it) carries:
        the session's own, or its identity's pending taint (untrusted content no session has
        taken yet)."""
        return row.taint if row.taint is not None else row.pending
