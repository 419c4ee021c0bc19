"""The storage census (REFERENCE 8): what each storage slot of a runtime resolved to, as
``meta/status``, ``meta/capabilities`` and ``meta/storage/doctor`` report it. A slot has a class
(``durable``: meant to survive a restart; ``scratch``: in memory by design) and a resolution
(``persistent``; ``declared_ephemeral``, a deliberate choice not to persist; ``non_persistent``).
This runtime persists agent memory and the event log (the timeline) in its storage backend: the
state dir's SQLite files by default, or a PostgreSQL database. The required domains it has no feature for (continuity, console,
metadata, blobs, schedule) are listed ``non_persistent`` with the detail ``not provided by this
runtime`` rather than left out, so a reader sees that nothing of theirs survives a restart and
why; host sessions and gating state are ``scratch``; the assertion ledger is not a slot
(REFERENCE 10.17). With no blob store at all, ``blob_durability`` is ``"none"`` (upstream's
``persistent_disk | declared_ephemeral | custom`` all describe a blob store that exists; its
consumers pass unknown values through), ``blob_store_persistent`` is false, and
``session_store_incremental`` is null because no session store is persisted.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from .layout import REALM_DB_SUFFIX, StateLayout

__all__ = [
    "AGENT_MEMORY_DISABLED",
    "BLOB_DURABILITY_NONE",
    "CALLER_EVENT_SINK",
    "NOT_PROVIDED",
    "NOT_PROVIDED_DOMAINS",
    "REQUIRED_DOMAINS",
    "Resolution",
    "SlotClass",
    "StorageCensus",
    "StorageSlot",
    "count_realm_files",
    "runtime_census",
]

SlotClass = Literal["durable", "scratch"]
Resolution = Literal["persistent", "declared_ephemeral", "non_persistent"]

BLOB_DURABILITY_NONE = "none"
NOT_PROVIDED = "not provided by this runtime"
# REFERENCE 8's required provider domains, in its order.
REQUIRED_DOMAINS = ("continuity", "event_log", "console", "metadata", "blobs", "agent_memory", "schedule")
NOT_PROVIDED_DOMAINS = ("continuity", "console", "metadata", "blobs", "schedule")


@dataclass(frozen=True)
class StorageSlot:
    """One storage domain's resolution. ``degraded`` marks a store that failed to open and left
    its feature disabled; a feature that is off or absent by design is not degraded."""

    domain: str
    durability_class: SlotClass
    resolution: Resolution
    backend: str
    degraded: bool = False
    detail: str | None = None

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {
            "domain": self.domain,
            "class": self.durability_class,
            "resolution": self.resolution,
            "backend": self.backend,
            "degraded": self.degraded,
        }
        if self.detail is not None:
            wire["detail"] = self.detail
        return wire


@dataclass(frozen=True)
class StorageCensus:
    """The ``storage`` object: blob and session-store facts plus the per-slot census."""

    slots: tuple[StorageSlot, ...]
    blob_durability: str = BLOB_DURABILITY_NONE
    blob_store_persistent: bool = False
    session_store_incremental: bool | None = None

    def slot(self, domain: str) -> StorageSlot | None:
        return next((s for s in self.slots if s.domain == domain), None)

    def to_wire(self) -> dict[str, Any]:
        return {
            "blob_durability": self.blob_durability,
            "blob_store_persistent": self.blob_store_persistent,
            "session_store_incremental": self.session_store_incremental,
            "slots": [slot.to_wire() for slot in self.slots],
        }

    def summary(self) -> str:
        """One line for people: what persists, what does not."""
        persistent = [f"{s.domain} ({s.backend})" for s in self.slots if s.resolution == "persistent"]
        absent = [s.domain for s in self.slots if s.detail == NOT_PROVIDED]
        others = [
            f"{s.domain} {s.resolution}"
            for s in self.slots
            if s.resolution != "persistent" and s.detail != NOT_PROVIDED
        ]
        parts = [f"persistent: {', '.join(persistent) or 'none'}"]
        if others:
            parts.append(f"not persisted: {', '.join(others)}")
        if absent:
            parts.append(f"not provided: {', '.join(absent)}")
        return "; ".join(parts)


def count_realm_files(root: Path) -> int | None:
    """How many realm files (decodable ``<realm>.sqlite3`` names) ``root`` holds; ``None`` if unlisted."""
    try:
        names = [p.name for p in root.iterdir()] if root.is_dir() else []
    except OSError:
        return None
    return sum(
        1 for n in names if n.endswith(REALM_DB_SUFFIX) and StateLayout.realm_from_db_name(n) is not None
    )


AGENT_MEMORY_DISABLED = StorageSlot(
    "agent_memory",
    "durable",
    "non_persistent",
    "disabled",
    detail="agent memory is not enabled (configure [agent_memory])",
)
CALLER_EVENT_SINK = StorageSlot(
    "event_log",
    "durable",
    "declared_ephemeral",
    "caller-provided event sink",
    detail="events go to the sink passed to MetaRuntime.open; no event log is written",
)


def runtime_census(*, agent_memory: StorageSlot, event_log: StorageSlot) -> StorageCensus:
    """The census of a runtime whose backend resolved agent memory and the event log to these slots
    (:data:`AGENT_MEMORY_DISABLED`, :data:`CALLER_EVENT_SINK` when it has neither)."""
    slots = [
        StorageSlot("continuity", "durable", "non_persistent", "none", detail=NOT_PROVIDED),
        event_log,
        StorageSlot("console", "durable", "non_persistent", "none", detail=NOT_PROVIDED),
        StorageSlot("metadata", "durable", "non_persistent", "none", detail=NOT_PROVIDED),
        StorageSlot("blobs", "durable", "non_persistent", "none", detail=NOT_PROVIDED),
        agent_memory,
        StorageSlot("schedule", "durable", "non_persistent", "none", detail=NOT_PROVIDED),
        StorageSlot(
            "host_sessions",
            "scratch",
            "declared_ephemeral",
            "in-process",
            detail="meta/session/* sessions live in memory; a restart ends them (memory records stay)",
        ),
        StorageSlot(
            "gating",
            "scratch",
            "declared_ephemeral",
            "in-process",
            detail="pending approvals and the gating audit live in memory; a restart forgets them",
        ),
    ]
    return StorageCensus(tuple(slots))
