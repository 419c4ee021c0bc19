"""Team memory end to end over real gateways (``meta_gateway serve`` processes, real HTTP, on both
backends): the roster decides which mob a session may act in; a member's proposal, held by a
dream, is listed and accepted by an operator on the console, and reaches the other member's next
turn labelled ``scope="mob"``; a non-member, and under access control a member without
``mob.memory.read``, never sees it; a retirement close queues an exit interview."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from meta_memory.access import hash_token

from ..conftest import Backend
from .serving import Gateway

OPS = "ops-console-token"
ROSTER = """
[[roster]]
identity = "lead:main"
mob = "crew"

[[roster]]
identity = "scout:1"
mob = "crew"

[[roster]]
identity = "other:1"
mob = "others"

[[console.auth.tokens]]
token_sha256 = "{ops}"
subject = "ops"
"""
ACCESS = """
[access]
enabled = true
admins = ["ops"]

[[access.rules]]
id = "crew-proposes"
subjects = ["lead:main", "scout:1"]
actions = ["mob.memory.propose"]

[[access.rules]]
id = "lead-reads-the-crew"
subjects = ["lead:main"]
actions = ["mob.memory.read"]
"""
PROPOSAL = {
    "action": "propose_to_mob",
    "title": "Staging resets nightly",
    "body": "The staging database is reset every night at 02:00 UTC.",
}
QUESTION = "When is the staging database reset?"


def _config(backend: Backend, *extra: str) -> str:
    store = backend.store_config()
    lines = ["[agent_memory]"]
    if store:
        lines += [
            f'store = "{store["store"]}"',
            "[agent_memory.postgres]",
            f"dsn = {json.dumps(store['postgres']['dsn'])}",
        ]
    lines += [
        "[agent_memory.steward]",
        "enabled = true",
        'cadence = "*/1d"  # on, without a dream during the test',
    ]
    return "\n".join(lines) + ROSTER.format(ops=hash_token(OPS)) + "".join(extra)


def _open(gateway: Gateway, identity: str, mob: str | None = None) -> str:
    params: dict[str, Any] = {"identity": identity}
    if mob is not None:
        params["mob"] = mob
    key: str = gateway.result("meta/session/open", params)["session_key"]
    return key


def _propose_and_accept(gateway: Gateway) -> str:
    """scout:1 proposes to the crew, a dream holds it, ops accepts it; the record's id."""
    scout = _open(gateway, "scout:1", "crew")
    proposed = gateway.result("meta/session/memory_tool", {"session_key": scout, "arguments": PROPOSAL})
    assert proposed["content"].startswith("Proposed to mob crew as prop-"), proposed

    gateway.result("meta/memory/steward/dream", {}, token=OPS, console=True)  # the rules hold it
    [listed] = gateway.result("meta/memory/panel/proposals", {}, token=OPS, console=True)["proposals"]
    assert (listed["scope_kind"], listed["scope_key"], listed["status"]) == ("mob", "crew", "held")

    decided = gateway.result(
        "meta/memory/proposals/decide",
        {
            "proposal_id": listed["proposal_id"],
            "verdict": "accept",
            "expected_content_hash": listed["content_hash"],
            "rationale": "the whole crew uses staging",
        },
        token=OPS,
        console=True,
    )
    assert decided["outcome"] == "accepted", decided
    assert decided["decision"]["review"]["reviewer"] == {"kind": "console", "principal": "ops"}
    memory_id: str = decided["record"]["memory_id"]
    return memory_id


def _turn(gateway: Gateway, identity: str) -> dict[str, Any]:
    turn: dict[str, Any] = gateway.result(
        "meta/session/turn", {"session_key": _open(gateway, identity), "message": QUESTION}
    )
    return turn


def test_a_session_is_opened_only_in_a_mob_the_roster_gives_its_identity(
    tmp_path: Path, start: Callable[..., Gateway], backend: Backend
) -> None:
    gateway = start(tmp_path / "state", _config(backend))
    for identity, mob in (("scout:1", "typo-mob"), ("other:1", "crew"), ("stranger", "crew")):
        refused = gateway.call("meta/session/open", {"identity": identity, "mob": mob})
        assert refused["error"]["code"] == -32602, refused
        assert f"mob '{mob}'" in refused["error"]["message"] and identity in refused["error"]["message"]
    assert _open(gateway, "scout:1", "crew")


def test_an_accepted_proposal_reaches_the_other_members_next_turn_and_no_one_else(
    tmp_path: Path, start: Callable[..., Gateway], backend: Backend
) -> None:
    gateway = start(tmp_path / "state", _config(backend))
    memory_id = _propose_and_accept(gateway)

    turn = _turn(gateway, "lead:main")
    assert turn["injected"] == [memory_id]
    assert 'scope="mob"' in turn["text"] and "02:00 UTC" in turn["text"]
    recalled = gateway.result("meta/agent_memory/recall", {"identity": "lead:main", "query_text": QUESTION})
    assert [(r["memory_id"], r["scope_kind"], r["scope_key"]) for r in recalled["records"]] == [
        (memory_id, "mob", "crew")
    ]
    assert gateway.result("meta/memory/panel/proposals", {}, token=OPS, console=True)["proposals"] == []

    assert _turn(gateway, "other:1") == {"text": QUESTION, "injected": []}
    nothing = gateway.result("meta/agent_memory/recall", {"identity": "other:1", "query_text": QUESTION})
    assert nothing["records"] == []


def test_under_access_control_a_member_without_mob_memory_read_never_sees_it(
    tmp_path: Path, start: Callable[..., Gateway], backend: Backend
) -> None:
    gateway = start(tmp_path / "state", _config(backend, ACCESS))
    memory_id = _propose_and_accept(gateway)

    assert _turn(gateway, "lead:main")["injected"] == [memory_id]
    assert _turn(gateway, "scout:1") == {"text": QUESTION, "injected": []}  # proposes, may not read
    for identity in ("scout:1", "other:1"):
        recalled = gateway.result("meta/agent_memory/recall", {"identity": identity, "query_text": QUESTION})
        assert recalled["records"] == []
    tool = gateway.result(
        "meta/session/memory_tool",
        {"session_key": _open(gateway, "scout:1"), "arguments": {"action": "recall", "query_text": QUESTION}},
    )
    assert tool["content"] == "No matching memory records."

    # Nor can an identity outside the rules propose, even in its own mob.
    other = _open(gateway, "other:1", "others")
    refused = gateway.result("meta/session/memory_tool", {"session_key": other, "arguments": PROPOSAL})
    assert refused["is_error"] and "mob.memory.propose" in refused["content"], refused


def test_a_retirement_close_queues_an_exit_interview_listed_on_the_console(
    tmp_path: Path, start: Callable[..., Gateway], backend: Backend
) -> None:
    gateway = start(tmp_path / "state", _config(backend))
    gateway.result(
        "meta/agent_memory/remember", {"identity": "scout:1", "title": "VPN", "body": "Use the new VPN."}
    )
    key = _open(gateway, "scout:1", "crew")

    assert gateway.result("meta/session/close", {"session_key": key, "cause": "retired"}) == {
        "closed": True,
        "harvest": "queued",
    }
    harvests = gateway.result("meta/memory/panel/harvests", {}, token=OPS, console=True)["harvests"]
    assert [(h["identity"], h["session_key"], h["cause"]) for h in harvests] == [("scout:1", key, "retired")]
