"""The secret-scanner corpus: true secrets (generated, fake) and ordinary text (written and real).

``true_secrets.jsonl`` is written by ``generate.py`` (a fixed seed), ``ordinary_machine.jsonl`` by
``collect.py`` (this machine's text), ``ordinary_written.txt`` by hand. :func:`true_secrets`,
:func:`ordinary_written` and :func:`ordinary_machine` read them; :func:`echoes` tells whether a
refusal repeats any piece of a secret.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent


def true_secrets() -> list[dict[str, Any]]:
    """Each ``{"class", "spelling", "variant", "text", "secret"}`` of ``true_secrets.jsonl``."""
    with (HERE / "true_secrets.jsonl").open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def ordinary_written() -> list[str]:
    """The hand-written ordinary lines (one text a line)."""
    text = (HERE / "ordinary_written.txt").read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip()]


def ordinary_machine() -> list[dict[str, Any]]:
    """Each ``{"source", "from", "text"}`` paragraph of ``ordinary_machine.jsonl``."""
    with (HERE / "ordinary_machine.jsonl").open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def echoes(message: str, secret: str, secret_class: str) -> bool:
    """Whether ``message`` holds a 6-character piece of ``secret`` (the class's own name aside:
    ``github_pat_...`` shares "github" with ``github-token``)."""
    message = message.replace(secret_class, "")
    return any(secret[i : i + 6] in message for i in range(len(secret) - 5))
