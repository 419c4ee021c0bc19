"""Config fixtures: TOML files written as a user would, loaded through the same path as ``--config``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from meta_memory.config import MetaConfig, load_config_file


@pytest.fixture
def load_toml(tmp_path: Path) -> Callable[[str], MetaConfig]:
    """Write ``text`` to a config file and load it exactly as ``meta_gateway --config FILE`` does."""

    def load(text: str) -> MetaConfig:
        path = tmp_path / "meta.toml"
        path.write_text(text)
        return load_config_file(path)

    return load
