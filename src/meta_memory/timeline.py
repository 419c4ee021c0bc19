"""The timeline: every emitted event as a standard envelope, persisted (bounded) and streamed.

:class:`Timeline` is the runtime's :class:`~meta_memory.events.EventSink`. Each event gets a
monotonic sequence and the envelope ``{event_id: "console-evt-<seq>", identity, event_type,
timestamp_ms, data}``; it is written to the state dir's event log (SQLite, the newest
``capacity`` kept) and handed to live subscribers (the SSE stream). ``query`` pages through the
stored window; both reads take a visibility filter so a caller sees only events it may read.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .clock import Clock, SystemClock
from .errors import InvalidParams, StoreCorrupt
from .events import EVENT_ID_PREFIX, SYSTEM_IDENTITY, envelope

__all__ = ["DEFAULT_CAPACITY", "QUERY_LIMIT_MAX", "Timeline", "TimelineQuery", "event_seq", "parse_timeline_query"]

log = logging.getLogger("meta_memory.timeline")

DEFAULT_CAPACITY = 10_000
QUERY_LIMIT_MAX = 500
_PRUNE_EVERY = 256

Visible = Callable[[dict[str, Any]], bool]
Subscriber = Callable[[dict[str, Any]], None]


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
            raise InvalidParams("after must be an event_id like 'console-evt-42' when provided")
        after_seq = parsed
    limit = p.get("limit", 100)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= QUERY_LIMIT_MAX:
        raise InvalidParams(f"limit must be an integer between 1 and {QUERY_LIMIT_MAX}")
    return TimelineQuery(after_seq, limit)


def event_seq(event_id: str) -> int | None:
    """The sequence number inside ``console-evt-<seq>`` (``None`` if it is not one)."""
    digits = event_id.removeprefix(EVENT_ID_PREFIX)
    if digits == event_id or not digits.isdigit():
        return None
    return int(digits)


class Timeline:
    """A persisted, bounded, thread-safe event sink with live subscribers.

    ``path=None`` keeps the window in memory only (tests, embedded use without a state dir).
    """

    def __init__(
        self, path: Path | None, *, clock: Clock | None = None, capacity: int = DEFAULT_CAPACITY
    ) -> None:
        self._clock = clock or SystemClock()
        self._capacity = capacity
        self._lock = threading.Lock()
        self._subscribers: list[Subscriber] = []
        target = str(path) if path is not None else ":memory:"
        try:
            self._db = sqlite3.connect(target, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = NORMAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY, identity TEXT NOT NULL, "
                "event_type TEXT NOT NULL, timestamp_ms INTEGER NOT NULL, data TEXT NOT NULL)"
            )
            (last,) = self._db.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()
        except sqlite3.DatabaseError as exc:
            log.error("event log %s cannot be opened: %s", target, exc)
            raise StoreCorrupt(f"event log {target} cannot be opened as an SQLite event log") from exc
        self._seq = int(last)
        self._since_prune = 0

    # -- the sink --------------------------------------------------------------------------

    def emit(
        self, event_type: str, data: dict[str, Any], *, identity: str = SYSTEM_IDENTITY
    ) -> dict[str, Any]:
        with self._lock:
            self._seq += 1
            event = envelope(self._seq, event_type, data, identity, self._clock.now_ms())
            self._db.execute(
                "INSERT INTO events (seq, identity, event_type, timestamp_ms, data) VALUES (?, ?, ?, ?, ?)",
                (
                    self._seq,
                    identity,
                    event_type,
                    event["timestamp_ms"],
                    json.dumps(data, separators=(",", ":")),
                ),
            )
            self._since_prune += 1
            if self._since_prune >= _PRUNE_EVERY:
                self._db.execute("DELETE FROM events WHERE seq <= ?", (self._seq - self._capacity,))
                self._since_prune = 0
            subscribers = list(self._subscribers)
        for notify in subscribers:
            notify(event)
        return event

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
        with self._lock:
            rows = self._db.execute(
                "SELECT seq, identity, event_type, timestamp_ms, data FROM events WHERE seq > ? ORDER BY seq LIMIT ?",
                (seq, limit),
            ).fetchall()
        return [
            envelope(s, event_type, json.loads(data), identity, ts)
            for s, identity, event_type, ts, data in rows
        ]

    def events(self, event_type: str | None = None) -> list[dict[str, Any]]:
        """Every stored event (oldest first), optionally of one type: a convenience for tests and tools."""
        rows = self.after(0, self._capacity + _PRUNE_EVERY)
        return [e for e in rows if event_type is None or e["event_type"] == event_type]

    def close(self) -> None:
        with self._lock:
            self._subscribers.clear()
            self._db.close()
