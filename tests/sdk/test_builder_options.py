"""The builder methods of REFERENCE 9 beside persistent_state / memory / agent_memory / roster:
``.access_control(path)`` loads an ``[access]`` table from a TOML file, validated at the call, and
the runtime enforces it; ``.console_read_only()`` makes the console refuse every write."""

from __future__ import annotations

from pathlib import Path

import pytest

from meta_memory import Meta
from meta_memory.errors import ConfigError, ReadOnly

ACCESS = """
[access]
enabled = true
admins = ["ops"]
"""


def test_access_control_loads_the_rules_the_runtime_then_enforces(tmp_path: Path) -> None:
    rules = tmp_path / "access.toml"
    rules.write_text(ACCESS)
    builder = Meta.builder().persistent_state(tmp_path / "state").agent_memory().access_control(rules)
    with builder.build() as meta:
        assert meta.runtime.config.access.enabled
        assert meta.runtime.config.access.admins == ("ops",)


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("[access]\nenabled = true\n", "admin"),  # enabled without an admin
        ('[access]\nadmins = ["ops"]\n[console]\nread_only = true\n', "nothing else"),
        ("[access\n", "not TOML"),
    ],
)
def test_a_bad_access_control_file_is_refused_at_the_call_naming_it(
    tmp_path: Path, text: str, named: str
) -> None:
    rules = tmp_path / "access.toml"
    rules.write_text(text)
    with pytest.raises(ConfigError) as refused:
        Meta.builder().access_control(rules)
    assert named in refused.value.message
    with pytest.raises(ConfigError, match="cannot be read"):
        Meta.builder().access_control(tmp_path / "missing.toml")


def test_console_read_only_refuses_the_consoles_writes(tmp_path: Path) -> None:
    builder = Meta.builder().persistent_state(tmp_path / "state").agent_memory()
    with builder.console_read_only().build() as meta:
        note = {"identity": "lead", "title": "Deploys", "body": "Deploys need ops."}
        with pytest.raises(ReadOnly):
            meta.console.call("meta/agent_memory/remember", note)
        assert meta.remember_agent_memory("lead", title="Deploys", body="Deploys need ops.").memory_id
    with Meta.builder().persistent_state(tmp_path / "state").agent_memory().build() as meta:
        assert meta.console.call("meta/agent_memory/remember", note)["memory_id"]
