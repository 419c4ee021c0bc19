"""Expiry: the upkeep's sweep that deletes records whose ``expires_at_ms`` has come.

A record written with ``expires_at_ms`` (or ``ttl_ms``) is judged by every read from that moment:
recall, injection and the manifest never return it, ``list`` and ``get`` show it as ``expired``
(memory/recall/provider.py, memory/manage.py). This sweep then deletes it, with its lineage and
derived data, as a purge would (memory/purge.py; on SQLite without rewriting the files, which a
purge does), on the process's upkeep thread every :data:`SWEEP_EVERY_S` seconds for every open
realm, sooner while a realm has more than one batch due. The receipt is the realm's ``purge``
audit row (``by.kind`` ``expiry``) and a ``memory.expired`` timeline event with its count.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ..events import SYSTEM_IDENTITY
from .purge import EXPIRY_BATCH
from .upkeep import UpkeepWorker

if TYPE_CHECKING:
    from .service import AgentMemory

__all__ = ["EXPIRED_EVENT", "SWEEP_EVERY_S", "ExpirySweep"]

_log = logging.getLogger("meta_memory.expiry")

EXPIRED_EVENT = "memory.expired"
SWEEP_EVERY_S = 30.0
_AGAIN_S = 0.5  # a realm had a whole batch due: the next one soon, other upkeep in between


class ExpirySweep:
    """The upkeep task of one :class:`~meta_memory.memory.service.AgentMemory`."""

    def __init__(self, memory: AgentMemory, worker: UpkeepWorker | None = None) -> None:
        self._memory = memory
        self._worker = worker or UpkeepWorker.shared()
        self._closed = False

    def start(self) -> None:
        self._worker.schedule(self, SWEEP_EVERY_S)

    def close(self) -> None:
        self._closed = True
        self._worker.cancel(self)

    def run_upkeep(self) -> None:
        if self._closed:
            return
        more = self.sweep()
        if not self._closed:
            self._worker.schedule(self, _AGAIN_S if more else SWEEP_EVERY_S)

    def sweep(self) -> bool:
        """Delete what has expired in every open realm (one batch each); whether a realm had more."""
        memory = self._memory
        more = False
        for realm, store in memory.open_stores():
            try:
                receipt = store.expire_due(memory.clock.now_ms())
            except Exception as exc:  # a store failing now (its database down) is tried next time
                _log.warning(
                    "expiry sweep of realm %r failed, tried again in %.0f s: %s", realm, SWEEP_EVERY_S, exc
                )
                continue
            if receipt is None or not receipt.records:
                continue
            memory.events.emit(
                EXPIRED_EVENT,
                {"realm": realm, "receipt_id": receipt.receipt_id, "records": len(receipt.records)},
                identity=SYSTEM_IDENTITY,
            )
            more |= len(receipt.records) >= EXPIRY_BATCH
        return more
