"""The typed Python API has the calls: ``propose_agent_memory`` on the application side and
``console.proposals`` / ``proposal`` / ``decide_proposal`` on the console, the same through the
in-process handle and through ``MetaClient`` over a real ``meta_gateway serve``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from meta_memory import Meta, MetaApi
from meta_memory.client import MetaClient
from meta_memory.errors import ProposalReviewRefused

from ...clients.conftest import APP_TOKEN, CONSOLE_TOKEN, gateway_config, serve

SQLITE_ONLY = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)  # each way in is one surface


@pytest.fixture(params=["in_process", "http_client"])
def api(request: pytest.FixtureRequest, tmp_path: Path, backend: object) -> Iterator[MetaApi]:
    if request.param == "in_process":
        with Meta.builder().persistent_state(tmp_path / "state").agent_memory().build() as meta:
            yield meta
        return
    for served in serve(tmp_path / "state", gateway_config(), tmp_path / "serve.log"):
        with MetaClient.connect(served.url, token=APP_TOKEN, console_token=CONSOLE_TOKEN) as client:
            yield client


@SQLITE_ONLY
def test_a_proposal_is_queued_read_and_accepted_through_the_typed_api(api: Any) -> None:
    made = api.propose_agent_memory(
        {"kind": "mob", "key": "crew"}, title="Freeze", body="No deploys in December."
    )
    [row] = api.console.proposals()["proposals"]
    detail = api.console.proposal(made["proposal_id"])["proposal"]

    done = api.console.decide_proposal(
        made["proposal_id"], "accept", expected_content_hash=detail["content_hash"], rationale="agreed"
    )

    assert row["proposal_id"] == made["proposal_id"] and detail["body"] == "No deploys in December."
    assert (done["outcome"], done["proposal"]["scope_key"]) == ("accepted", "crew")
    with pytest.raises(ProposalReviewRefused) as refused:
        api.console.decide_proposal(made["proposal_id"], "reject", expectedContentHash=detail["content_hash"])
    assert refused.value.reason == "already_decided"
