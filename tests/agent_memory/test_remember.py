"""``meta/agent_memory/remember``: result shape, normalization, every parameter error, secrets,
duplicates, and where each realm's records land on disk."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from meta_memory import InvalidParams, MetaHandle, WriteRefused
from meta_memory.clock import ManualClock

from ..conftest import SQLITE_ONLY, Backend

REMEMBER = "meta/agent_memory/remember"
# Fake secrets are assembled from fragments so no provider-shaped literal sits in the source.
AWS_KEY = "AK" + "IA" + "IOSFODNN7EXAMPLE"
GITHUB_TOKEN = "gh" + "p_" + "a1B2" * 9
PRIVATE_KEY = "-----BEGIN " + "RSA PRIVATE KEY-----\nMIIEow\n-----END " + "RSA PRIVATE KEY-----"
CREDENTIAL = "api" + "_key = " + "s3cr3tVALUE0123456789"


def _remember(handle: MetaHandle, **overrides: Any) -> dict[str, Any]:
    params = {"identity": "alice", "title": "Deploys", "body": "Deploys need approval.", **overrides}
    return dict(handle.call(REMEMBER, {k: v for k, v in params.items() if v is not ...}))


def _count(sql: Any, path: Path, table: str) -> int:
    # A write refused before the realm was first opened leaves no realm file at all.
    return int(sql(path, f"SELECT count(*) FROM {table}")[0][0]) if path.exists() else 0


def test_remember_returns_the_record_shape_with_clock_timestamps(
    handle: MetaHandle, clock: ManualClock
) -> None:
    result = _remember(handle, tags=["ops"])
    assert set(result) == {
        "memory_id",
        "title",
        "body",
        "tags",
        "created_at_ms",
        "updated_at_ms",
        "scope_kind",
        "scope_key",
    }
    assert (result["scope_kind"], result["scope_key"]) == ("identity", "alice")
    assert result["memory_id"].startswith("mem-")
    assert (result["title"], result["body"], result["tags"]) == ("Deploys", "Deploys need approval.", ["ops"])
    assert result["created_at_ms"] == result["updated_at_ms"] == clock.now_ms()


def test_remember_collapses_title_whitespace_trims_body_and_normalizes_tags(handle: MetaHandle) -> None:
    record = handle.remember_agent_memory(
        "alice",
        title="  Deploy \t\n  windows   on\u00a0Fridays ",
        body="\n  Only after 10:00.\n\n  Ask first.  \n",
        tags=[" Ops ", "ops", "B", "a", "OPS"],
    )
    assert record.title == "Deploy windows on Fridays"
    assert record.body == "Only after 10:00.\n\n  Ask first."
    assert record.tags == ("a", "b", "ops")
    assert handle.recall_agent_memory("alice", selection="always") == [record]


def test_remember_without_tags_stores_an_empty_tag_list(handle: MetaHandle) -> None:
    assert _remember(handle)["tags"] == []
    assert _remember(handle, title="Other", tags=None)["tags"] == []


_TOO_MANY_TAGS = [f"t{i}" for i in range(33)]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"identity": ...}, "identity must be a valid non-empty string"),
        ({"identity": ""}, "identity must be a valid non-empty string"),
        ({"identity": "   "}, "identity must be a valid non-empty string"),
        ({"identity": 7}, "identity must be a valid non-empty string"),
        ({"identity": " alice"}, "identity must be a valid non-empty string"),
        ({"identity": "ali\nce"}, "identity must be a valid non-empty string"),
        ({"realm": ""}, "realm must be a non-empty string when provided"),
        ({"realm": "  "}, "realm must be a non-empty string when provided"),
        ({"realm": 3}, "realm must be a non-empty string when provided"),
        ({"title": ...}, "title must be a non-empty string"),
        ({"title": " \n\t "}, "title must be a non-empty string"),
        ({"title": ["x"]}, "title must be a non-empty string"),
        ({"body": ...}, "body must be a non-empty string"),
        ({"body": "   "}, "body must be a non-empty string"),
        ({"body": 1}, "body must be a non-empty string"),
        ({"title": "a" * 201}, "title must be at most 200 bytes"),
        ({"title": "é" * 100 + "a"}, "title must be at most 200 bytes"),
        ({"title": "€" * 67}, "title must be at most 200 bytes"),
        ({"body": "x" * 65537}, "body must be at most 65536 bytes"),
        ({"body": "é" * 32768 + "x"}, "body must be at most 65536 bytes"),
        ({"tags": "ops"}, "tags must be an array when provided"),
        ({"tags": {"a": 1}}, "tags must be an array when provided"),
        ({"tags": ["ok", "  "]}, "tags must contain only non-empty strings"),
        ({"tags": ["ok", ""]}, "tags must contain only non-empty strings"),
        ({"tags": ["ok", 5]}, "tags must contain only non-empty strings"),
        ({"tags": _TOO_MANY_TAGS}, "tags must contain at most 32 entries"),
        ({"tags": ["t" * 65]}, "tags must be at most 64 bytes"),
        ({"tags": ["é" * 32 + "t"]}, "tags must be at most 64 bytes"),
    ],
)
def test_remember_refuses_each_bad_parameter_with_the_reference_message(
    handle: MetaHandle, overrides: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidParams) as refused:
        _remember(handle, **overrides)
    assert refused.value.code == -32602
    assert refused.value.message == message


def test_remember_refuses_params_that_are_not_an_object(handle: MetaHandle) -> None:
    with pytest.raises(InvalidParams, match=r"^params must be a JSON object$"):
        handle.call(REMEMBER, ["alice"])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "overrides",
    [
        {"title": "a" * 200},
        {"title": "é" * 100},
        {"title": "€" * 66 + "ab"},
        {"title": "  " + "a" * 100 + "   \n  " + "b" * 99 + "  "},  # 200 bytes once collapsed
        {"body": "x" * 65536},
        {"body": "é" * 32768},
        {"body": "\n  " + "x" * 65536 + "  \n"},  # 65536 bytes once trimmed
        {"tags": [f"t{i}" for i in range(32)]},
        {"tags": ["t" * 64, "é" * 32]},
        {"tags": [f"t{i % 20}" for i in range(32)]},
    ],
)
def test_remember_accepts_values_exactly_at_each_limit(handle: MetaHandle, overrides: dict[str, Any]) -> None:
    result = _remember(handle, **overrides)
    assert (
        handle.recall_agent_memory("alice", selection="always", max_entries=64)[0].memory_id
        == result["memory_id"]
    )


@pytest.mark.parametrize(
    ("field", "value", "secret_class"),
    [
        ("body", f"the key is {AWS_KEY} in prod", "aws-access-key-id"),
        ("title", f"token {GITHUB_TOKEN}", "github-token"),
        ("body", PRIVATE_KEY, "private-key"),
        ("body", f"config: {CREDENTIAL}", "credential-assignment"),
        ("tags", ["ok", f"token {GITHUB_TOKEN}"], "github-token"),
        pytest.param(
            "tags",
            [AWS_KEY],
            "aws-access-key-id",
        ),
    ],
)
def test_remember_refuses_each_secret_class_and_stores_nothing(
    handle: MetaHandle, state_dir: Path, sql: Any, field: str, value: Any, secret_class: str
) -> None:
    with pytest.raises(WriteRefused) as refused:
        _remember(handle, **{field: value})
    assert refused.value.code == -32602
    assert refused.value.data == {"kind": "memory_write_refused", "rule": "secret-detected"}
    assert secret_class in refused.value.message
    assert AWS_KEY not in refused.value.message and GITHUB_TOKEN not in refused.value.message
    realm_file = state_dir / "agent-memory" / "default.sqlite3"
    assert _count(sql, realm_file, "records") == 0
    assert _count(sql, realm_file, "audit") == 0
    assert handle.recall_agent_memory("alice", selection="always") == []


def test_remembering_an_exact_duplicate_returns_the_same_record_and_writes_nothing(
    handle: MetaHandle, clock: ManualClock, state_dir: Path, backend: Backend
) -> None:
    first = handle.remember_agent_memory("alice", title="Deploy   rule", body="Ask first.", tags=["ops"])
    clock.advance(5_000)
    again = handle.remember_agent_memory("alice", title="Deploy rule", body="  Ask first.\n", tags=["other"])
    assert again == first
    assert backend.stored(state_dir, "SELECT count(*) FROM records") == [(1,)]
    assert backend.stored(state_dir, "SELECT op, record_id FROM audit") == [("create", first.memory_id)]


def test_the_same_content_for_another_identity_is_a_new_record(handle: MetaHandle) -> None:
    alice = handle.remember_agent_memory("alice", title="Deploy rule", body="Ask first.")
    bob = handle.remember_agent_memory("bob", title="Deploy rule", body="Ask first.")
    assert bob.memory_id != alice.memory_id
    assert handle.recall_agent_memory("bob", selection="always") == [bob]
    assert handle.recall_agent_memory("alice", selection="always") == [alice]


def test_remembering_forgotten_content_again_creates_a_new_active_record(handle: MetaHandle) -> None:
    first = handle.remember_agent_memory("alice", title="Deploy rule", body="Ask first.")
    assert handle.forget_agent_memory("alice", first.memory_id).deleted
    again = handle.remember_agent_memory("alice", title="Deploy rule", body="Ask first.")
    assert again.memory_id != first.memory_id
    assert handle.recall_agent_memory("alice", selection="always") == [again]


@SQLITE_ONLY
def test_the_default_realm_is_default_and_each_realm_is_its_own_file(
    handle: MetaHandle, state_dir: Path, sql: Any
) -> None:
    in_default = handle.remember_agent_memory("alice", title="Plain", body="In the default realm.")
    in_team = handle.remember_agent_memory("alice", title="Team", body="In the team realm.", realm="team/α")
    root = state_dir / "agent-memory"
    # enc(): keep [A-Za-z0-9_-], every other byte of the UTF-8 as %XX (uppercase hex).
    team_file = root / "team%2F%CE%B1.sqlite3"
    assert sorted(p.name for p in root.glob("*.sqlite3")) == ["default.sqlite3", team_file.name]
    assert sql(root / "default.sqlite3", "SELECT id FROM records") == [(in_default.memory_id,)]
    assert sql(team_file, "SELECT id FROM records") == [(in_team.memory_id,)]
    assert handle.recall_agent_memory("alice", selection="always") == [in_default]
    assert handle.recall_agent_memory("alice", selection="always", realm="default") == [in_default]
    assert handle.recall_agent_memory("alice", selection="always", realm="team/α") == [in_team]


def test_remembered_records_survive_a_restart(open_handle: Any) -> None:
    handle = open_handle()
    saved = [handle.remember_agent_memory("alice", title=f"Fact {i}", body=f"Body {i}.") for i in range(3)]
    handle.close()
    reopened = open_handle()
    assert sorted(reopened.recall_agent_memory("alice", selection="always"), key=lambda r: r.title) == saved
