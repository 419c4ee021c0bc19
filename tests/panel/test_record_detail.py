"""``meta/memory/panel/record``: one record with its body and hash, its supersede chain (visible links
only, at most 32) and its injection-ledger usage (rows whose identity the caller may read, at most 50);
-32001 for an unknown id, -32030 naming the governing action for a denial."""

from __future__ import annotations

from typing import Any

import pytest

from meta_memory.access import Principal
from meta_memory.memory.records import ScopeKind
from meta_memory.memory.rows import InjectionRow

from .conftest import AUDITOR, BLIND, LEADS, OUTSIDER, RED, REVIEWER, ROOT, Bench


def chain(result: dict[str, Any]) -> list[tuple[str, str]]:
    return [(link["memory_id"], link["relation"]) for link in result["chain"]]


def update(bench: Bench, identity: str, memory_id: str, title: str) -> str:
    bench.tick()
    params = {"identity": identity, "memory_id": memory_id, "title": title, "body": f"{title}: details."}
    return str(bench.sdk("meta/agent_memory/update", params)["memory_id"])


def test_a_record_comes_with_its_body_and_content_hash(bench: Bench) -> None:
    made = bench.remember("lead", "Deploys", "Deploys need approval.")

    result = bench.panel("record", {"memory_id": made})

    record = result["record"]
    assert (record["id"], record["body"], record["body_bytes"]) == (made, "Deploys need approval.", 22)
    assert record["content_hash"] == bench.store().get(made).content_hash  # type: ignore[union-attr]
    assert result["realm"] == "default" and result["realms"] == ["default"]
    assert chain(result) == [(made, "self")] and result["injections"] == []


@pytest.mark.parametrize("params", [{"memory_id": "mem-nope"}, {"memory_id": "MADE", "realm": "other"}])
def test_an_unknown_memory_id_is_an_unknown_memory_record(bench: Bench, params: dict[str, str]) -> None:
    made = bench.remember("lead", "Deploys")
    bench.remember("lead", "Elsewhere", realm="other")
    params = {k: made if v == "MADE" else v for k, v in params.items()}

    refused = bench.refusal("record", params)

    assert refused.code == -32001
    assert refused.message == f"unknown memory record '{params['memory_id']}'"


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({}, "memory_id"),
        ({"memory_id": "  "}, "memory_id"),
        ({"memory_id": 5}, "memory_id"),
        ({"memory_id": "m", "realm": ""}, "realm"),
        (None, "params"),
        ([], "params"),
    ],
)
def test_bad_params_are_refused_naming_the_field(bench: Bench, params: Any, field: str) -> None:
    refused = bench.refusal("record", params)

    assert refused.code == -32602 and field in refused.message


def test_a_denial_names_the_governing_action_and_the_record(bench: Bench) -> None:
    scout = bench.remember("scout", "Scout note")
    lead = bench.remember("lead", "Lead note")
    held = bench.quarantine("lead", "Held")
    mob = bench.put("default", ScopeKind.MOB, "ops", "Mob note").id
    operator = bench.put("default", ScopeKind.OPERATOR, "acme", "Operator note").id
    realm = bench.put("default", ScopeKind.REALM, "", "Realm note").id
    cases: list[tuple[Principal, str, str]] = [
        (LEADS, scout, "agent.memory.read"),
        (BLIND, lead, "agent.view"),
        (LEADS, held, "memory.quarantine.review"),
        (LEADS, mob, "mob.memory.read"),
        (AUDITOR, operator, "operator.memory.read"),
        (LEADS, realm, "agent.memory.read"),
        (AUDITOR, scout, "agent.memory.read"),
    ]

    for principal, memory_id, action in cases:
        denied = bench.refusal("record", {"memory_id": memory_id}, principal)
        assert denied.code == -32030
        assert denied.message == f"access denied: {action}"
        assert denied.data == {"kind": "access_denied", "action": action, "resource": memory_id}


def test_the_chain_lists_ancestors_committed_successors_and_trailing_claimants(bench: Bench) -> None:
    first = bench.remember("lead", "Deploys v1")
    second = update(bench, "lead", first, "Deploys v2")
    third = update(bench, "lead", second, "Deploys v3")
    claimant = bench.quarantine("lead", "Deploys v4?", memory_id=third)

    result = bench.panel("record", {"memory_id": second}, RED)

    assert chain(result) == [
        (first, "ancestor"),
        (second, "self"),
        (third, "successor"),
        (claimant, "claimant"),
    ]
    assert all("body" not in link for link in result["chain"])


def test_the_chain_shows_only_the_links_the_caller_may_read(bench: Bench) -> None:
    first = bench.remember("lead", "Deploys v1")
    second = update(bench, "lead", first, "Deploys v2")
    bench.quarantine("lead", "Deploys v3?", memory_id=second)

    assert chain(bench.panel("record", {"memory_id": first}, LEADS)) == [
        (first, "self"),
        (second, "successor"),
    ]


def test_a_released_update_joins_the_chain_as_a_committed_successor(bench: Bench) -> None:
    first = bench.remember("lead", "Deploys v1")
    claimant = bench.quarantine("lead", "Deploys v2", memory_id=first)
    successor = bench.decide(claimant, "release", identity="lead")["successor"]["memory_id"]

    assert chain(bench.panel("record", {"memory_id": first}, LEADS)) == [
        (first, "self"),
        (successor, "successor"),
    ]
    assert chain(bench.panel("record", {"memory_id": successor}, LEADS)) == [
        (first, "ancestor"),
        (successor, "self"),
    ]


def test_the_chain_holds_at_most_32_links_nearest_the_record(bench: Bench) -> None:
    versions = [bench.remember("lead", "Version 0")]
    for i in range(1, 41):
        versions.append(update(bench, "lead", versions[-1], f"Version {i}"))

    middle = bench.panel("record", {"memory_id": versions[20]})["chain"]
    newest = bench.panel("record", {"memory_id": versions[40]})["chain"]

    assert [link["memory_id"] for link in middle] == versions[5:37]
    assert [link["memory_id"] for link in newest] == versions[9:41]


def test_injections_list_only_rows_whose_identity_the_caller_may_read(bench: Bench) -> None:
    mob = bench.put("default", ScopeKind.MOB, "ops", "Mob note").id
    bench.store().record_injections(
        [
            InjectionRow(mob, "lead", "sess-1", "build", 1_000),
            InjectionRow(mob, "scout", "sess-2", "turn", 2_000),
            InjectionRow(mob, "analyst", None, "build", 3_000),
        ]
    )

    def identities(principal: Principal) -> list[str]:
        return [row["identity"] for row in bench.panel("record", {"memory_id": mob}, principal)["injections"]]

    assert identities(REVIEWER) == ["analyst", "scout", "lead"]
    assert identities(AUDITOR) == ["analyst", "lead"]


def test_injections_are_the_newest_50_with_session_surface_and_time(bench: Bench) -> None:
    made = bench.remember("lead", "Deploys")
    for _ in range(55):  # a session injects a record once: each build is a new session
        bench.tick()
        bench.sdk("meta/session/build_context", {"session_key": bench.session("lead")})

    rows = bench.panel("record", {"memory_id": made}, LEADS)["injections"]

    assert len(rows) == 50
    assert [r["at_ms"] for r in rows] == sorted((r["at_ms"] for r in rows), reverse=True)
    assert rows[0] == {
        "realm": "default",
        "record_id": made,
        "identity": "lead",
        "session_key": None,
        "surface": "build",
        "at_ms": bench.clock.now_ms(),
    }


def test_a_released_original_is_reviewer_only_while_its_successor_is_ordinary_memory(bench: Bench) -> None:
    original = bench.quarantine("lead", "Deploy window")
    successor = bench.decide(original, "release", identity="lead")["successor"]["memory_id"]

    assert (
        bench.refusal("record", {"memory_id": original}, LEADS).data["action"] == "memory.quarantine.review"
    )  # type: ignore[index]
    assert bench.panel("record", {"memory_id": original}, RED)["record"]["status"]["status"] == "tombstoned"
    shown = bench.panel("record", {"memory_id": successor}, LEADS)["record"]
    assert shown["ever_quarantined"] is True and shown["body"] == "Deploy window: details."


def test_a_forgotten_quarantined_write_stays_reviewer_only(bench: Bench) -> None:
    forgotten = bench.quarantine("lead", "Planted")
    bench.sdk("meta/agent_memory/forget", {"identity": "lead", "memory_id": forgotten})

    assert bench.refusal("record", {"memory_id": forgotten}, LEADS).code == -32030
    assert bench.panel("record", {"memory_id": forgotten}, RED)["record"]["id"] == forgotten


def test_without_realm_the_first_realm_holding_the_id_that_the_caller_may_read_is_shown(bench: Bench) -> None:
    bench.put("alpha", ScopeKind.IDENTITY, "scout", "Twin", memory_id="mem-twin")
    bench.put("beta", ScopeKind.IDENTITY, "lead", "Twin", memory_id="mem-twin")

    assert bench.panel("record", {"memory_id": "mem-twin"}, ROOT)["realm"] == "alpha"
    assert bench.panel("record", {"memory_id": "mem-twin"}, LEADS)["realm"] == "beta"
    assert bench.panel("record", {"memory_id": "mem-twin", "realm": "beta"}, LEADS)["realms"] == ["beta"]
    denied = bench.refusal("record", {"memory_id": "mem-twin"}, OUTSIDER)
    assert denied.data == {"kind": "access_denied", "action": "agent.memory.read", "resource": "mem-twin"}
