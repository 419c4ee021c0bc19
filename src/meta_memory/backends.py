"""Which storage backend a configuration chooses, and its parts: the factory of realm stores, the
timeline's event log and the doctor's checks.

This is the one module that picks a backend by ``agent_memory.store``; the runtime and the CLI ask
it, and nothing in the domain imports a backend.
"""

from __future__ import annotations

from pathlib import Path

from .clock import Clock
from .config import MetaConfig
from .memory.sqlite.doctor import SqliteDoctor
from .memory.sqlite.event_log import SqliteEventLog
from .memory.sqlite.factory import SqliteStoreFactory
from .memory.store import RealmStoreFactory
from .storage.doctor import StoreDoctor
from .storage.layout import StateLayout
from .timeline import EventLog

__all__ = ["event_log", "store_doctor", "store_factory"]


def store_factory(
    config: MetaConfig, layout: StateLayout, root: Path, *, clock: Clock, serving: bool
) -> RealmStoreFactory:
    """The realm stores of agent memory."""
    return SqliteStoreFactory(layout, root, config.agent_memory, clock=clock, serving=serving)


def event_log(config: MetaConfig, layout: StateLayout) -> EventLog:
    """Where the timeline keeps its events."""
    return SqliteEventLog(layout.event_log_path)


def store_doctor(config: MetaConfig) -> StoreDoctor:
    """The backend's part of ``meta_gateway doctor`` and ``meta/storage/doctor``."""
    return SqliteDoctor()
