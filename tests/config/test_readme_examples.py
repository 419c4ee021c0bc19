"""Every TOML config the README shows loads as a valid configuration: an example that the gateway
would refuse at boot is a broken promise on the first page. Placeholders (``"<...>"``) stand in
for a token's hash."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from meta_memory.config import load_config_dict

README = Path(__file__).resolve().parents[2] / "README.md"
BLOCKS = re.findall(r"```toml\n(.*?)```", README.read_text(), flags=re.DOTALL)


def test_the_readme_shows_configs() -> None:
    assert len(BLOCKS) >= 4


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block-{n}" for n in range(len(BLOCKS))])
def test_each_readme_config_loads(block: str) -> None:
    text = re.sub(r'"<[^">]*>"', '"' + "0" * 64 + '"', block)
    load_config_dict(tomllib.loads(text))
