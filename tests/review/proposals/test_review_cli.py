"""``meta_gateway review proposals | proposal | accept | reject`` in a real subprocess, directly on a
state dir no runtime holds: the same calls the console makes, bound to the content hash, with the
local user recorded as the reviewer."""

from __future__ import annotations

import getpass
import json
import os
import subprocess
from pathlib import Path

import pytest

from meta_memory.config import DEFAULT_CONFIG, load_config_dict
from meta_memory.gateway.dispatch import SDK, CallContext
from meta_memory.gateway.methods import build_dispatcher
from meta_memory.memory.records import content_hash
from meta_memory.runtime import MetaRuntime

from ...conftest import gateway_command

DEADLINE_S = 60
SQLITE_ONLY = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)  # a state dir of its own


def review(state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("META_")}
    return subprocess.run(
        [gateway_command(), "review", *args, "--state-dir", str(state)],
        capture_output=True,
        text=True,
        env=env,
        timeout=DEADLINE_S,
    )


def _proposed(state: Path, *titles: str) -> list[str]:
    """Proposals the application queues, on a runtime closed again before the CLI opens the dir."""
    with MetaRuntime.open(state, load_config_dict(DEFAULT_CONFIG)) as runtime:
        dispatcher = build_dispatcher(runtime)
        return [
            dispatcher.call(
                "meta/agent_memory/propose",
                {"scope": {"kind": "mob", "key": "crew"}, "title": title, "body": f"{title}: the body."},
                CallContext(SDK),
            )["proposal_id"]
            for title in titles
        ]


@SQLITE_ONLY
def test_review_lists_shows_and_accepts_a_proposal_bound_to_its_hash(tmp_path: Path, backend: object) -> None:
    state = tmp_path / "state"
    freeze, window = _proposed(state, "Freeze", "Window")

    listing = review(state, "proposals", "--json")
    assert listing.returncode == 0, listing.stderr
    assert sorted(row["proposal_id"] for row in json.loads(listing.stdout)) == sorted([freeze, window])
    shown = review(state, "proposal", freeze)
    digest = content_hash("Freeze", "Freeze: the body.")
    assert "Freeze: the body." in shown.stdout and f"--hash {digest}" in shown.stdout

    stale = review(state, "accept", freeze, "--hash", "0" * 64)
    assert stale.returncode == 2 and "--hash" in stale.stderr and "Traceback" not in stale.stderr

    accepted = review(state, "accept", freeze, "--hash", digest, "--rationale", "runbook", "--json")
    assert accepted.returncode == 0, accepted.stderr
    answer = json.loads(accepted.stdout)
    assert answer["outcome"] == "accepted"
    assert answer["decision"]["review"]["reviewer"] == {
        "kind": "console",
        "principal": f"local:{getpass.getuser()}",
    }

    rejected = review(state, "reject", window, "--hash", content_hash("Window", "Window: the body."))
    assert rejected.returncode == 0 and f"{window} rejected (rejected)." in rejected.stdout
    assert json.loads(review(state, "proposals", "--json").stdout) == []
