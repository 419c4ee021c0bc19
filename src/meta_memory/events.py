"""Timeline events: the standard envelope and the sink subsystems emit into.

Subsystems call :meth:`EventSink.emit` with an event type, the affected identity and a
data object; the sink stamps the envelope (``console-evt-<seq>``, timestamp). The bundled
:class:`MemoryEventSink` keeps a bounded window in memory; the persisted, access-filtered
timeline with SSE fan-out builds on the same protocol.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

from .clock import Clock, SystemClock

__all__ = ["EVENT_ID_PREFIX", "SYSTEM_IDENTITY", "EventSink", "MemoryEventSink", "envelope"]

SYSTEM_IDENTITY = "_system"


EVENT_ID_PREFIX = "console-evt-"


def envelope(
    seq: int, event_type: str, data: dict[str, Any], identity: str, timestamp_ms: int
) -> dict[str, Any]:
    """The standard timeline envelope (REFERENCE 5.4)."""
    return {
        "event_id": f"{EVENT_ID_PREFIX}{seq}",
        "identity": identity,
        "event_type": event_type,
        "timestamp_ms": timestamp_ms,
        "data": data,
    }


class EventSink(Protocol):
    def emit(
        self, event_type: str, data: dict[str, Any], *, identity: str = SYSTEM_IDENTITY
    ) -> dict[str, Any]:
        """Record one event and return its envelope."""
        ...


class MemoryEventSink:
    """A bounded in-memory timeline with optional subscribers (thread-safe)."""

    def __init__(self, *, capacity: int = 4096, clock: Clock | None = None) -> None:
        self._events: deque[dict[str, Any]] = deque(maxlen=capacity)
        self._seq = 0
        self._lock = threading.Lock()
        self._clock = clock or SystemClock()
        self._subscribers: list[Callable[[dict[str, Any]], None]] = []

    def emit(
        self, event_type: str, data: dict[str, Any], *, identity: str = SYSTEM_IDENTITY
    ) -> dict[str, Any]:
        with self._lock:
            self._seq += 1
            event = envelope(self._seq, event_type, data, identity, self._clock.now_ms())
            self._events.append(event)
            subscribers = list(self._subscribers)
        for notify in subscribers:
            notify(event)
        return event

    def subscribe(self, notify: Callable[[dict[str, Any]], None]) -> None:
        with self._lock:
            self._subscribers.append(notify)

    def events(self, event_type: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            return [e for e in self._events if event_type is None or e["event_type"] == event_type]
