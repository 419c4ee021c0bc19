"""The scripted poisoned-page example runs as documented and shows the write contained."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "poisoned_web_page.py"


def test_the_poisoned_web_page_example_quarantines_the_planted_instruction(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )

    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr == ""
    first, _, later = done.stdout.partition("== Session 2")
    assert "host    tool_result('web_fetch') -> {'trusted': False, 'tainted': True}" in first
    assert "memory -> outcome=stored" in first
    assert "memory -> outcome=quarantined" in first
    assert "QUARANTINED pending review (session tainted by tool web_fetch)" in " ".join(first.split())
    assert "memory.write.quarantined: session tainted by tool web_fetch" in first
    assert "hunter2" not in later and "pre-approved" not in later
    assert "The user prefers bullet-point summaries." in later
    assert "[mem-token: <nonce>]" in later
    assert done.stdout.rstrip().endswith(
        "the planted instruction was quarantined and never injected; the clean memory was kept."
    )
