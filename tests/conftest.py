"""Shared fixtures: real state directories, a controllable clock, and a booted runtime."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from meta_memory.clock import ManualClock
from meta_memory.config import DEFAULT_CONFIG, load_config_dict
from meta_memory.runtime import MetaRuntime
from meta_memory.sdk import MetaHandle


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture
def runtime(state_dir: Path, clock: ManualClock) -> Iterator[MetaRuntime]:
    rt = MetaRuntime.open(state_dir, load_config_dict(DEFAULT_CONFIG), clock=clock)
    yield rt
    rt.close()


@pytest.fixture
def handle(runtime: MetaRuntime) -> MetaHandle:
    """The in-process Python handle over the runtime fixture (closed with it)."""
    return MetaHandle(runtime)
