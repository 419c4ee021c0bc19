"""Fixtures of the LangGraph store tests: a real runtime on a real state dir, on a clock that
moves only when told to (so ``created_at`` / ``updated_at`` and newest-first order are exact)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from meta_memory import Meta, MetaHandle
from meta_memory.clock import ManualClock
from meta_memory.integrations.langgraph import MetaStore

DEADLINE_S = 60.0


@pytest.fixture
def meta(tmp_path: Path, clock: ManualClock) -> Iterator[MetaHandle]:
    with (
        Meta.builder().persistent_state(tmp_path / "state").memory().agent_memory().clock(clock).build() as h
    ):
        yield h


@pytest.fixture
def store(meta: MetaHandle) -> MetaStore:
    return MetaStore(meta)
