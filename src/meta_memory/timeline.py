"""The timeline: every emitted event as a standard envelope, persisted (bounded) and streamed.

:class:`Timeline` is the runtime's :class:`~meta_memory.events.EventSink`. Each event gets a
monotonic sequence and the envelope ``{event_id: "console-evt-<seq>", identity, event_type,
timestamp_ms, data}``; it is appended to an :class:`EventLog` (the newest ``capacity`` kept: the
state dir's SQLite file by default, a shared table when several gateways share a database) and
handed to live subscribers (the SSE stream), together with the events a shared log delivers from
other processes. ``query`` pages through the stored window; both reads take a visibility filter
so a caller sees only events it may read.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from .clock import Clock, SystemClock
from .errors import InvalidParams
from .events import EVENT_ID_PREFIX, SYSTEM_IDENTITY

__all__ = [
    "AFTER_SHAPE",
    "DEFAULT_CAPACITY",
    "QUERY_LIMIT_MAX",
    "SEQ_MAX",
    "EventLog",
    "Timeline",
    "TimelineQuery",
    "event_seq",
    "parse_timeline_query",
]

DEFAULT_CAPACITY = 10_000
QUERY_LIMIT_MAX = 500
_PRUNE_EVERY = 256
SEQ_MAX = 2**63 - 1  # SQLite INTEGER, PostgreSQL BIGINT
_SEQ = re.compile(r"[0-9]{1,19}")

Visible = Callable[[dict[str, Any]], bool]
Subscriber = Callable[[dict[str, Any]], None]


AFTER_SHAPE = "after must be an event_id like 'console-evt-42' when provided"


@dataclass(frozen=True)
class TimelineQuery:
    after_seq: int  # 0: from the oldest stored event
    limit: int


def parse_timeline_query(params: Any) -> TimelineQuery:
    """``{after?, limit?}``; -32602 naming the field."""
    if params is not None and not isinstance(params, dict):
        raise InvalidParams("params must be a JSON object")
    p = params or {}
    after = p.get("after")
    after_seq = 0
    if after is not None:
        parsed = event_seq(after) if isinstance(after, str) else None
        if parsed is None:
            raise InvalidParams(AFTER_SHAPE)
        after_seq = parsed
    limit = p.get("limit", 100)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= QUERY_LIMIT_MAX:
        raise InvalidParams(f"limit must be an integer between 1 and {QUERY_LIMIT_MAX}")
    return TimelineQuery(after_seq, limit)


class EventLog(Protocol):
    """Where the timeline's envelopes are kept: the backend's seam."""

    def append(
        self, event_type: str, data: dict[str, Any], identity: str, timestamp_ms: int
    ) -> dict[str, Any]:
        """Store one event under the next sequence and return its envelope."""
        ...

    def after(self, seq: int, limit: int) -> list[dict[str, Any]]:
        """Stored envelopes with a sequence above ``seq``, oldest first."""
        ...

    def prune(self, keep: int) -> None:
        """Keep only about the newest ``keep`` events."""
        ...

    def forget_identity(self, identity: str, realm: str) -> int:
        """Delete ``identity``'s events of ``realm`` (and those naming no realm), leaving no copy
        in the log's storage (a purge); how many."""
        ...

    def watch(self, deliver: Callable[[dict[str, Any]], None]) -> None:
        """Call ``deliver`` with each envelope other processes append to a shared log, from now on."""
        ...

    def close(self) -> None: ...


def event_seq(event_id: str) -> int | None:
    """The sequence number inside ``console-evt-<seq>`` (``None`` if it is not one).

    The sequence is a 64-bit integer in every event log, so a number past it names no event
    that could exist; only ASCII digits count (``str.isdigit`` also takes ``²``, which ``int``
    refuses).
    """
    digits = event_id.removeprefix(EVENT_ID_PREFIX)
    if digits == event_id or not _SEQ.fullmatch(digits):
        return None
    seq = int(digits)
    return seq if seq <= SEQ_MAX else None


class Timeline:
    """A persisted, bounded, thread-safe event sink with live subscribers.

    ``path=None`` keeps the window in memory only (tests, embedded use without a state dir).
    """

    def __init__(
        self, log: EventLog, *, clock: Clock | None = None, capacity: int = DEFAULT_CAPACITY
    ) -> None:
        self._log = log
        self._clock = clock or SystemClock()
        self._capacity = capacity
        self._lock = threading.Lock()
        self._subscribers: list[Subscriber] = []
        self._since_prune = 0
        log.watch(self._deliver)

    # -- the sink --------------------------------------------------------------------------

    def emit(
        self, event_type: str, data: dict[str, Any], *, identity: str = SYSTEM_IDENTITY
    ) -> dict[str, Any]:
        with self._lock:
            event = self._log.append(event_type, data, identity, self._clock.now_ms())
            self._since_prune += 1
            if self._since_prune >= _PRUNE_EVERY:
                self._log.prune(self._capacity)
                self._since_prune = 0
        self._deliver(event)
        return event

    def _deliver(self, event: dict[str, Any]) -> None:
        with self._lock:
            subscribers = list(self._subscribers)
        for notify in subscribers:
            notify(event)

    def subscribe(self, notify: Subscriber) -> Callable[[], None]:
        """Call ``notify`` with every later envelope; returns the unsubscribe function."""
        with self._lock:
            self._subscribers.append(notify)

        def unsubscribe() -> None:
            with self._lock:
                if notify in self._subscribers:
                    self._subscribers.remove(notify)

        return unsubscribe

    # -- reads -----------------------------------------------------------------------------

    def query(self, p: TimelineQuery, *, visible: Visible | None = None) -> dict[str, Any]:
        """``meta/timeline/query {after?, limit?}`` → ``{events, next_after}`` (oldest first).

        ``limit`` applies to stored rows before the visibility filter, so a restricted caller
        may receive fewer; ``next_after`` resumes after the last row examined.
        """
        rows = self.after(p.after_seq, p.limit)
        last = rows[-1]["event_id"] if rows else None
        events = [e for e in rows if visible is None or visible(e)]
        return {"events": events, "next_after": last}

    def after(self, seq: int, limit: int) -> list[dict[str, Any]]:
        return self._log.after(seq, limit)

    def forget_identity(self, identity: str, realm: str) -> int:
        """Delete ``identity``'s events of ``realm`` from the log (a purge); how many."""
        with self._lock:
            return self._log.forget_identity(identity, realm)

    def events(self, event_type: str | None = None) -> list[dict[str, Any]]:
        """Every stored event (oldest first), optionally of one type: a convenience for tests and tools."""
        rows = self.after(0, self._capacity + _PRUNE_EVERY)
        return [e for e in rows if event_type is None or e["event_type"] == event_type]

    def close(self) -> None:
        with self._lock:
            self._subscribers.clear()
        self._log.close()
