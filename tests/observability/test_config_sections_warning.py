"""A ``--config`` file replaces the built-in default wholesale: one that leaves out ``[agent_memory]``
or ``[memory]`` gets exactly one warning at start saying what that turns off."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import run_stdio

AGENT_MEMORY_OFF = "no [agent_memory], so agent memory is off"
LEDGER_IN_MEMORY = "no [memory], so the assertion ledger is kept in memory only"


@pytest.mark.parametrize(
    ("config", "said"),
    [
        ("[http]\nrequest_timeout_s = 30\n", [AGENT_MEMORY_OFF, LEDGER_IN_MEMORY]),
        ('[memory]\nkind = "local_json"\n', [AGENT_MEMORY_OFF]),
        ("[agent_memory]\n", [LEDGER_IN_MEMORY]),
        ('[memory]\nkind = "local_json"\n[agent_memory]\nenabled = false\n', []),
        (None, []),
    ],
    ids=["neither", "no-agent-memory", "no-ledger", "both-explicit", "built-in-default"],
)
def test_a_config_that_leaves_out_a_default_section_gets_one_warning_naming_what_is_off(
    tmp_path: Path, config: str | None, said: list[str]
) -> None:
    args: list[str] = []
    if config is not None:
        (tmp_path / "meta.toml").write_text(config)
        args = ["--config", str(tmp_path / "meta.toml")]
    ran = run_stdio(tmp_path / "state", *args)
    assert ran.status == 0, ran.stderr
    warnings = [line for line in ran.stderr.splitlines() if " WARNING " in line]
    assert len(warnings) == (1 if said else 0), ran.stderr
    for phrase in (AGENT_MEMORY_OFF, LEDGER_IN_MEMORY):
        assert (phrase in ran.stderr) == (phrase in said), phrase
    if said:
        assert "replaces the built-in default wholesale" in warnings[0]
