"""Every Python example the README shows for the in-process handle runs as printed, on a fresh state
dir, and spells its keywords in snake_case. A block that builds its own handle runs in a temporary
working directory (its ``.meta/state`` lands there); a fragment that uses ``meta`` runs beside a
handle on a temporary state dir, with the placeholders it names given values. Blocks that import
more than the package (a client's, an adapter's) are left to their own suites."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from meta_memory import Meta

README = Path(__file__).resolve().parents[2] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.DOTALL)
# The handle's own examples import from the package alone (a client's or an adapter's import more).
IN_PROCESS = [
    block
    for block in BLOCKS
    if all(
        line.startswith("from meta_memory import ")
        for line in re.findall(r"^(?:from|import) .*", block, re.M)
    )
]
# The fragments' stand-ins: what a host's agent loop would have in hand.
PLACEHOLDERS = {
    "user_message": "who approves a production deploy?",
    "llm_tool_call_arguments": {"action": "remember", "title": "Deploys", "body": "Ops approves deploys."},
}


def test_the_readme_shows_in_process_examples_beside_others() -> None:
    assert len(IN_PROCESS) >= 2
    assert len(BLOCKS) > len(IN_PROCESS)


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block-{n}" for n in range(len(BLOCKS))])
def test_each_readme_python_example_spells_its_keywords_in_snake_case(block: str) -> None:
    assert re.findall(r"\b[a-z]+[A-Z]\w*=", block) == []


@pytest.mark.parametrize("block", IN_PROCESS, ids=[f"block-{n}" for n in range(len(IN_PROCESS))])
def test_each_in_process_readme_example_runs(
    block: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code = compile(block, "README.md", "exec")
    namespace: dict[str, Any] = {"__name__": "readme"}
    if "Meta.builder()" in block:
        exec(code, namespace)
    else:
        with Meta.builder().persistent_state(tmp_path / "state").agent_memory().build() as meta:
            # Another agent's session, whose messages the host delivers into this one.
            peer = meta.open_session("assistant:research").key
            namespace.update(PLACEHOLDERS, meta=meta, other_agent_session_key=peer)
            exec(code, namespace)
    if "memory_tool(" in block:  # the LLM wrote after a web fetch: stored, held for review
        assert (namespace["result"].is_error, namespace["result"].outcome) == (False, "quarantined")
    if "hits" in namespace:
        assert namespace["hits"], "the example's recall found nothing"
