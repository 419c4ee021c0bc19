"""The ``memory`` tool run through a host session: every action, every tool error the LLM can read,
secrets, de-duplication, the recall payload, propose_to_mob, the tool definitions, and
``recorder_tool = false``. Argument parsing alone is tested in tests/recorder."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from meta_memory import CapabilityUnavailable, InvalidParams, MetaHandle
from meta_memory.memory.records import Record

NOTE = {"action": "remember", "title": "Deploy policy", "body": "Deploys need ops approval."}


def stored(meta: MetaHandle, memory_id: str) -> Record:
    assert meta.runtime.agent_memory is not None
    record = meta.runtime.agent_memory.store("default").get(memory_id)
    assert record is not None
    return record


def test_remember_stores_an_agent_authored_observation_in_the_agents_own_scope(
    meta: MetaHandle, id_of: Callable[..., str]
) -> None:
    session = meta.open_session("alice")

    result = session.memory_tool(
        {**NOTE, "tags": ["Ops", "ops"], "kind": "procedure", "description": "Policy."}
    )

    assert (result.is_error, result.outcome) == (False, "stored")
    record = stored(meta, id_of(result))
    assert record.provenance.author.to_wire() == {"author": "agent", "identity": "alice"}
    assert record.scope.to_wire() == {"scope": "identity", "realm": "default", "identity": "alice"}
    assert (record.trust.value, record.kind.value, record.tags, record.description) == (
        "agent_observed",
        "procedure",
        ("ops",),
        "Policy.",
    )
    assert [e.session_id for e in record.provenance.evidence] == [session.key]


@pytest.mark.parametrize(
    ("extra", "tags", "verification"),
    [
        ({"epistemic": "operator_said"}, ("epistemic:operator_said",), None),
        (
            {"epistemic": "verified_claim", "verification_evidence": "ran the deploy checklist"},
            (),
            {"checked": "agent", "evidence": ["ran the deploy checklist"]},
        ),
    ],
)
def test_epistemic_claims_are_recorded_but_never_raise_the_trust_tier(
    meta: MetaHandle,
    id_of: Callable[..., str],
    extra: dict[str, Any],
    tags: tuple[str, ...],
    verification: Any,
) -> None:
    result = meta.open_session("alice").memory_tool({**NOTE, **extra})

    record = stored(meta, id_of(result))
    assert record.trust.value == "agent_observed"
    assert record.tags == tags
    claim = record.provenance.verification
    assert (claim.to_wire() if claim is not None else None) == verification


def test_an_identical_active_write_is_deduplicated(meta: MetaHandle, id_of: Callable[..., str]) -> None:
    session = meta.open_session("alice")
    first = session.memory_tool(NOTE)

    again = session.memory_tool(
        {**NOTE, "title": "  Deploy   policy ", "body": " Deploys need ops approval.\n"}
    )

    assert again.content == f"Already remembered as {id_of(first)}; nothing new was stored."
    assert (again.is_error, again.outcome) == (False, "stored")
    assert len(meta.recall_agent_memory("alice", selection="always")) == 1


def test_update_supersedes_the_agents_own_record(meta: MetaHandle, id_of: Callable[..., str]) -> None:
    session = meta.open_session("alice")
    prior = id_of(session.memory_tool(NOTE))

    result = session.memory_tool(
        {**NOTE, "action": "update", "memory_id": prior, "body": "Deploys need two approvals."}
    )

    assert result.content == f"Updated memory {prior} as {id_of(result)}."
    assert result.outcome == "stored"
    assert stored(meta, prior).status.value == "superseded"
    assert [r.body for r in meta.recall_agent_memory("alice", selection="always")] == [
        "Deploys need two approvals."
    ]


def test_forget_tombstones_the_agents_own_record(meta: MetaHandle, id_of: Callable[..., str]) -> None:
    session = meta.open_session("alice")
    memory_id = id_of(session.memory_tool(NOTE))

    result = session.memory_tool({"action": "forget", "memory_id": memory_id})

    assert (result.content, result.is_error, result.outcome) == (f"Forgot memory {memory_id}.", False, "none")
    assert session.memory_tool({"action": "recall"}).content == "No matching memory records."


def test_recall_returns_a_json_array_of_the_agents_active_records(
    meta: MetaHandle, id_of: Callable[..., str]
) -> None:
    session = meta.open_session("alice")
    assert session.memory_tool({"action": "recall"}).content == "No matching memory records."
    deploys = id_of(session.memory_tool({**NOTE, "tags": ["ops"]}))
    session.memory_tool({"action": "remember", "title": "Lunch", "body": "Tacos on Fridays."})
    meta.remember_agent_memory("bob", title="Deploy policy", body="Bob's deploys are different.")

    contextual = session.memory_tool({"action": "recall", "query_text": "how do deploys work?"})
    assert stored(meta, deploys).usage.explicit_recall_count == 1
    newest = json.loads(session.memory_tool({"action": "recall", "max_entries": 1000}).content)
    one = json.loads(session.memory_tool({"action": "recall", "max_entries": 1}).content)

    assert (contextual.is_error, contextual.outcome) == (False, "none")
    [record] = json.loads(contextual.content)
    assert record == {
        "memory_id": deploys,
        "title": "Deploy policy",
        "body": "Deploys need ops approval.",
        "tags": ["ops"],
        "updated_at_ms": stored(meta, deploys).updated_at_ms,
        "scope": "identity",
        "score": 1.0,  # the only match is the best
    }
    assert sorted(r["title"] for r in newest) == ["Deploy policy", "Lunch"]
    assert {r["score"] for r in newest} == {None}  # the newest, by no query: unscored
    assert len(one) == 1


def test_propose_to_mob_queues_a_pending_proposal_carrying_the_sessions_taint(meta: MetaHandle) -> None:
    clean, tainted = meta.open_session("alice", mob="team"), meta.open_session("bob", mob="team")
    tainted.tool_result("web_fetch")

    results = [s.memory_tool({**NOTE, "action": "propose_to_mob"}) for s in (clean, tainted, tainted)]

    assert meta.runtime.agent_memory is not None
    rows = {p.proposal_id: p for p in meta.runtime.agent_memory.store("default").pending_proposals(100)}
    assert len(rows) == 3  # the same content twice in one millisecond is still two proposals
    for result, (identity, taint) in zip(
        results, [("alice", False), ("bob", True), ("bob", True)], strict=True
    ):
        assert (result.is_error, result.outcome) == (False, "none")
        proposal_id = result.content.split(" as ")[1].split(";")[0]
        assert (
            result.content == f"Proposed to mob team as {proposal_id}; a steward or operator must commit it."
        )
        row = rows[proposal_id]
        assert (row.scope_kind, row.scope_key, row.status, row.tainted) == (
            "mob",
            "team",
            "pending",
            taint,
        )
        assert row.author == {"author": "agent", "identity": identity}
    assert meta.recall_agent_memory("alice", selection="always") == []


def test_propose_to_mob_without_a_mob_is_a_tool_error(meta: MetaHandle) -> None:
    result = meta.open_session("alice").memory_tool({**NOTE, "action": "propose_to_mob"})

    assert (result.content, result.is_error, result.outcome) == (
        "propose_to_mob needs a mob context; this session has no mob",
        True,
        "none",
    )


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({**NOTE, "password": "x"}, "unknown field 'password' (allowed: action, title, body"),
        ({"action": "remember", "body": "b"}, '`title` is required for action "remember"'),
        ({"action": "remember", "title": "t"}, '`body` is required for action "remember"'),
        ({"action": "update", "title": "t", "body": "b"}, '`memory_id` is required for action "update"'),
        ({"action": "forget"}, '`memory_id` is required for action "forget"'),
        ({"title": "t", "body": "b"}, "`action` is required"),
        ({"action": "delete_all"}, "action must be one of: remember, update, forget, recall, propose_to_mob"),
        ({**NOTE, "epistemic": "verified_claim"}, "`verification_evidence` is required"),
        ({**NOTE, "title": "t" * 201}, "title must be at most 200 bytes"),
        ({"action": "recall", "max_entries": 0}, "max_entries must be an integer >= 1"),
        ("not json", "arguments must be a JSON object"),
        ([NOTE], "arguments must be a JSON object"),
        ({"action": "forget", "memory_id": "mem-missing"}, "memory mem-missing was not found in your scope"),
    ],
)
def test_malformed_calls_come_back_as_tool_errors_naming_the_field(
    meta: MetaHandle, arguments: Any, message: str
) -> None:
    result = meta.call(
        "meta/session/memory_tool", {"session_key": meta.open_session("alice").key, "arguments": arguments}
    )

    assert result["is_error"] is True and result["outcome"] == "none"
    assert message in result["content"]
    assert meta.recall_agent_memory("alice", selection="always") == []


def test_arguments_given_as_json_text_are_accepted(meta: MetaHandle) -> None:
    result = meta.open_session("alice").memory_tool(json.dumps(NOTE))

    assert result.outcome == "stored"


def test_an_agent_cannot_update_or_forget_another_identitys_record(meta: MetaHandle) -> None:
    theirs = meta.remember_agent_memory("bob", title="Bob's note", body="Only bob may change this.")
    session = meta.open_session("alice")

    updated = session.memory_tool({**NOTE, "action": "update", "memory_id": theirs.memory_id})
    forgot = session.memory_tool({"action": "forget", "memory_id": theirs.memory_id})

    assert (
        updated.is_error
        and updated.content == f"record '{theirs.memory_id}' does not belong to the requested scope"
    )
    assert forgot.is_error and forgot.content == f"memory {theirs.memory_id} was not found in your scope"
    assert [r.body for r in meta.recall_agent_memory("bob", selection="always")] == [
        "Only bob may change this."
    ]


SECRETS = [
    pytest.param("aws-access-key-id", {"body": "Key AKIAIOSFODNN7EXAMPLE for the bucket."}, id="aws"),
    pytest.param("github-token", {"body": "token ghp_" + "a1B2" * 9}, id="github"),
    pytest.param(
        "private-key",
        {"body": "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----"},
        id="pem",
    ),
    pytest.param("credential-assignment", {"body": 'api_key = "abcd1234efgh5678ijkl"'}, id="assignment"),
    pytest.param("credential-assignment", {"title": "auth_token: abcdefgh12345678xyz"}, id="in-title"),
    pytest.param("github-token", {"description": "github_pat_" + "x1" * 11}, id="in-description"),
    pytest.param("aws-access-key-id", {"tags": ["ASIAABCDEFGHIJKLMNOP"]}, id="in-tag"),
]


@pytest.mark.parametrize(("secret_class", "fields"), SECRETS)
@pytest.mark.parametrize("tainted", [False, True])
def test_secrets_are_refused_as_tool_errors_and_never_stored_even_quarantined(
    meta: MetaHandle, secret_class: str, fields: dict[str, Any], tainted: bool
) -> None:
    session = meta.open_session("alice", mob="team")
    if tainted:
        session.tool_result("web_fetch")

    results = [
        session.memory_tool({**NOTE, "action": action, **fields}) for action in ("remember", "propose_to_mob")
    ]

    for result in results:
        assert (result.is_error, result.outcome) == (True, "none")
        assert f"matches secret class '{secret_class}'" in result.content
    assert meta.runtime.agent_memory is not None
    store = meta.runtime.agent_memory.store("default")
    assert store.pending_proposals(100) == []
    assert store.audit_rows() == []


def test_the_tool_definitions_come_in_json_schema_openai_and_anthropic_shapes(meta: MetaHandle) -> None:
    [mcp] = meta.memory_tool_definitions()
    [openai] = meta.memory_tool_definitions("openai")
    [anthropic] = meta.memory_tool_definitions("anthropic")
    [responses] = meta.memory_tool_definitions("openai_responses")

    schema = mcp["inputSchema"]
    assert mcp["name"] == "memory" and schema["additionalProperties"] is False
    assert schema["properties"]["action"]["enum"] == [
        "remember",
        "update",
        "forget",
        "recall",
        "propose_to_mob",
    ]
    assert openai == {
        "type": "function",
        "function": {
            "name": "memory",
            "description": mcp["description"],
            "parameters": schema,
            "strict": False,
        },
    }
    assert anthropic == {"name": "memory", "description": mcp["description"], "input_schema": schema}
    assert (responses["type"], responses["name"], responses["parameters"]) == ("function", "memory", schema)


@pytest.mark.parametrize("fmt", ["gemini", [], {"openai": True}], ids=["unknown", "array", "object"])
def test_an_unknown_tool_definition_format_is_invalid_params(meta: MetaHandle, fmt: Any) -> None:
    # An array or an object used to reach the boundary as an internal error (unhashable).
    with pytest.raises(InvalidParams, match="format must be one of") as caught:
        meta.memory_tool_definitions(fmt)

    assert caught.value.code == -32602


def test_recorder_tool_off_removes_the_tool_and_refuses_its_calls(
    open_meta: Callable[..., MetaHandle],
) -> None:
    meta = open_meta(recorder_tool=False)
    session = meta.open_session("alice")

    assert [meta.memory_tool_definitions(f) for f in ("json_schema", "openai", "anthropic")] == [[], [], []]
    with pytest.raises(CapabilityUnavailable) as caught:
        session.memory_tool(NOTE)
    assert caught.value.code == -32004
    assert "recorder_tool = false" in caught.value.message
    assert session.tool_result("web_fetch")["tainted"] is True  # the rest of the session still works
    assert "meta/session/memory_tool" not in meta.call("meta/capabilities")["methods"]
