"""The runtime-owned assertion ledger: the in-memory authority over assertions and conflict signals,
the index algorithm of REFERENCE §2.2 (ids, retention, conflict upsert, persist-or-roll-back), query
(§2.3), per-store counts (§2.4), and the conflict look-ups gating uses. Persistence is delegated to a
:class:`LedgerBackend`; without one the ledger lives in memory only.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from ..clock import Clock
from .model import (
    MAX_RETAINED_ASSERTIONS,
    STORES,
    Assertion,
    ConflictKey,
    ConflictSignal,
    IndexRequest,
    IndexResult,
    LedgerSnapshot,
    QueryRequest,
    QueryResult,
    StoreInfo,
    StoresResult,
    ascii_lower,
    canonical_token,
    format_assertion_id,
    next_sequence,
)

__all__ = ["Ledger", "LedgerBackend"]


class LedgerBackend(Protocol):
    """Where a ledger's state lives between runs.

    The backend encodes each immutable record once (:meth:`encode_assertion`,
    :meth:`encode_conflict`); the ledger keeps those rows beside the records, so a persist hands over
    ready-made rows in file order and never re-serializes the whole state.
    """

    def load(self) -> LedgerSnapshot:
        """Read the stored state once, at boot. Raises ``StorageRefused`` when it cannot be used."""
        ...

    def encode_assertion(self, assertion: Assertion) -> bytes: ...

    def encode_conflict(self, signal: ConflictSignal) -> bytes: ...

    def persist(self, assertion_rows: Sequence[bytes], conflict_rows: Sequence[bytes]) -> None:
        """Durably replace the stored state. Raises ``MemoryBackendUnavailable`` on failure."""
        ...


def _no_encoding(record: Assertion | ConflictSignal) -> bytes:
    return b""


@dataclass(frozen=True, slots=True)
class _State:
    """One committed ledger state. Never mutated: an index builds the next one beside it, so the
    previous state *is* the rollback snapshot and readers never see an unpersisted write."""

    assertions: tuple[Assertion, ...]
    assertion_rows: tuple[bytes, ...]
    conflict_keys: tuple[ConflictKey, ...]  # sorted: the map order upstream persists and queries in
    conflicts: tuple[ConflictSignal, ...]
    conflict_rows: tuple[bytes, ...]
    next_sequence: int


class Ledger:
    """Assertions and conflict signals, held in memory and persisted whole on every index.

    Thread-safe: one lock serializes index calls (mutation and persist); queries read the latest
    committed state without taking it.
    """

    def __init__(
        self,
        *,
        clock: Clock,
        backend: LedgerBackend | None = None,
        snapshot: LedgerSnapshot | None = None,
    ) -> None:
        """Build a ledger from ``snapshot`` (default: empty). Use :meth:`open` to load from a backend."""
        self._clock = clock
        self._backend = backend
        self._encode_assertion = backend.encode_assertion if backend is not None else _no_encoding
        self._encode_conflict = backend.encode_conflict if backend is not None else _no_encoding
        self._lock = threading.Lock()
        start = snapshot if snapshot is not None else LedgerSnapshot()
        conflicts = tuple(sorted(start.conflicts, key=lambda signal: signal.key))
        self._state = _State(
            assertions=start.assertions,
            assertion_rows=tuple(self._encode_assertion(a) for a in start.assertions),
            conflict_keys=tuple(signal.key for signal in conflicts),
            conflicts=conflicts,
            conflict_rows=tuple(self._encode_conflict(signal) for signal in conflicts),
            next_sequence=start.next_sequence,
        )

    @classmethod
    def open(cls, backend: LedgerBackend, *, clock: Clock) -> Ledger:
        """Load the backend's state (once; the ledger is the authority from then on).

        Raises:
            StorageRefused: the stored state is unusable or the backend's health check failed.
        """
        return cls(clock=clock, backend=backend, snapshot=backend.load())

    # -- index -------------------------------------------------------------------------------------

    def index(self, request: IndexRequest) -> IndexResult:
        """Record a fact, a conflict signal, or both, then persist the whole ledger.

        Raises:
            MemoryBackendUnavailable: the persist failed; the ledger is exactly as it was before.
        """
        with self._lock:
            state = self._state
            now = self._clock.now_ms()
            assertion_id: str | None = None
            if request.fact is not None:
                assertion_id = format_assertion_id(state.next_sequence)
                assertion = Assertion(
                    assertion_id,
                    request.entity,
                    request.topic,
                    request.store,
                    request.fact,
                    request.metadata_json,
                    now,
                )
                # Evict from the front: the oldest assertions go first once past the cap.
                drop = max(0, len(state.assertions) + 1 - MAX_RETAINED_ASSERTIONS)
                state = replace(
                    state,
                    assertions=(*state.assertions[drop:], assertion),
                    assertion_rows=(*state.assertion_rows[drop:], self._encode_assertion(assertion)),
                    next_sequence=next_sequence(state.next_sequence),
                )
            if request.conflict:
                signal = ConflictSignal(
                    request.entity, request.topic, request.store, request.conflict_reason, now
                )
                state = self._upsert_conflict(state, signal)
            if self._backend is not None:
                self._backend.persist(state.assertion_rows, state.conflict_rows)
            self._state = state
        return IndexResult(
            request.entity,
            request.topic,
            request.store,
            assertion_id,
            self._first_conflict(state, request.entity, request.topic) is not None,
        )

    def _upsert_conflict(self, state: _State, signal: ConflictSignal) -> _State:
        keys, key = state.conflict_keys, signal.key
        at = bisect_left(keys, key)
        # Replacing keeps one signal per key; a new key is inserted where map order puts it.
        end = at + 1 if at < len(keys) and keys[at] == key else at
        return replace(
            state,
            conflict_keys=(*keys[:at], key, *keys[end:]),
            conflicts=(*state.conflicts[:at], signal, *state.conflicts[end:]),
            conflict_rows=(
                *state.conflict_rows[:at],
                self._encode_conflict(signal),
                *state.conflict_rows[end:],
            ),
        )

    # -- reads -------------------------------------------------------------------------------------

    def query(self, request: QueryRequest) -> QueryResult:
        """Exact canonical filters, then the optional substring ``query`` (REFERENCE §2.3)."""
        state = self._state
        entity, topic, store, needle = request.entity, request.topic, request.store, request.query
        assertions = tuple(
            a
            for a in state.assertions
            if (entity is None or a.entity == entity)
            and (topic is None or a.topic == topic)
            and (store is None or a.store == store)
            and (needle is None or needle in a.entity or needle in a.topic or needle in ascii_lower(a.fact))
        )
        conflicts = tuple(
            c
            for c in state.conflicts
            if (entity is None or c.entity == entity)
            and (topic is None or c.topic == topic)
            and (store is None or c.store == store)
            and (
                needle is None
                or needle in c.entity
                or needle in c.topic
                or (c.reason is not None and needle in ascii_lower(c.reason))
            )
        )
        return QueryResult(assertions, conflicts)

    def stores(self) -> StoresResult:
        """Assertions plus conflict signals per store, always the five stores in fixed order."""
        state = self._state
        counts = Counter(a.store for a in state.assertions)
        counts.update(c.store for c in state.conflicts)
        return StoresResult(tuple(StoreInfo(store, counts[store]) for store in STORES))

    def conflict_for(self, entity: str | None, topic: str | None) -> ConflictSignal | None:
        """The first signal (in key order) for this entity and topic, in any store.

        Inputs are canonicalized here, so gating can pass raw strings. With only an entity (or only a
        topic) any signal with that entity (or topic) matches; with neither, nothing does.
        """
        state = self._state
        canonical_entity = canonical_token(entity) if entity is not None else None
        canonical_topic = canonical_token(topic) if topic is not None else None
        if canonical_entity is not None:
            return self._first_conflict(state, canonical_entity, canonical_topic)
        if canonical_topic is not None:
            return next((c for c in state.conflicts if c.topic == canonical_topic), None)
        return None

    def has_conflicts(self) -> bool:
        return bool(self._state.conflicts)

    @staticmethod
    def _first_conflict(state: _State, entity: str, topic: str | None) -> ConflictSignal | None:
        # Keys are sorted, so every key starting with (entity[, topic]) sits in one run from here.
        prefix: tuple[str, ...] = (entity,) if topic is None else (entity, topic)
        at = bisect_left(state.conflict_keys, prefix)
        if at < len(state.conflict_keys) and state.conflict_keys[at][: len(prefix)] == prefix:
            return state.conflicts[at]
        return None
