"""Refused decisions: -32043 ``memory_quarantine_review_refused`` with its ``reason``, and nothing written.

``secret_detected``, ``content_mismatch``, ``successor_conflict``, ``not_quarantined`` (active records,
plain forgets, the opposite verdict, non-identity scopes, released successors) and ``stale_update``.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from meta_memory.memory.records import Author, Scope, ScopeKind, Status
from meta_memory.memory.validator import CreateOp, TombstoneOp, WriteBatch

IDENTITY = "lead"
AWS_KEY = "AKIAABCDEFGHIJKLMNOP"
KIND = "memory_quarantine_review_refused"


def assert_refused(error, reason: str) -> None:
    assert error.code == -32043
    assert error.data["kind"] == KIND
    assert error.data["reason"] == reason


@pytest.mark.parametrize(
    ("field", "secret", "secret_class"),
    [
        ("body", AWS_KEY, "aws-access-key-id"),
        ("title", AWS_KEY, "aws-access-key-id"),
        ("body", "ghp_" + "a1B2" * 9, "github-token"),
        ("body", "api_key = 'abcd1234efgh5678ijkl'", "credential-assignment"),
    ],
)
def test_content_matching_a_secret_pattern_is_never_released_but_can_be_tombstoned(
    desk, field, secret, secret_class
) -> None:
    origin = desk.quarantine("Deploy key", "Deploys use a key.")
    # The validator refuses secrets at write time, so the stored row is rewritten behind it.
    if field == "body":
        digest = desk.rewrite(origin.id, body=f"Deploys use {secret}.")
    else:
        digest = desk.rewrite(origin.id, title=f"Key {secret}", body=origin.body)
    before = desk.audit_count()

    error = desk.refusal(origin.id, "release", expected=digest)

    assert_refused(error, "secret_detected")
    assert error.data["class"] == secret_class
    assert secret not in error.message and secret not in str(error.data)
    assert desk.audit_count() == before
    assert desk.record(origin.id).status is Status.QUARANTINED
    assert desk.store.get(f"{origin.id}-released") is None
    assert desk.events() == []

    assert desk.decide(origin.id, "tombstone", expected=digest)["outcome"] == "tombstoned"
    assert desk.record(origin.id).status is Status.TOMBSTONED


@pytest.mark.parametrize("verdict", ["release", "tombstone"])
def test_a_hash_other_than_the_content_the_reviewer_read_is_refused(desk, verdict) -> None:
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    read = origin.content_hash
    desk.rewrite(origin.id, body="Deploys happen on Fridays.")  # changed after the reviewer read it

    error = desk.refusal(origin.id, verdict, expected=read)

    assert_refused(error, "content_mismatch")
    assert desk.record(origin.id).status is Status.QUARANTINED
    assert desk.refusal(origin.id, verdict, expected="0" * 64).data["reason"] == "content_mismatch"
    assert desk.events() == []


def test_a_row_already_holding_the_successor_id_without_review_evidence_is_a_successor_conflict(desk) -> None:
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    squatter = replace(origin, id=f"{origin.id}-released", status=Status.ACTIVE, quarantine_reason=None)
    desk.store.commit(WriteBatch("default", Author("application"), (CreateOp(squatter),)))
    before = desk.audit_count()

    error = desk.refusal(origin.id, "release")

    assert_refused(error, "successor_conflict")
    assert desk.audit_count() == before
    assert desk.record(origin.id).status is Status.QUARANTINED
    assert desk.decide(origin.id, "tombstone")["outcome"] == "tombstoned"


@pytest.mark.parametrize("verdict", ["release", "tombstone"])
def test_an_active_record_is_not_quarantined(desk, verdict) -> None:
    active = desk.meta.remember_agent_memory(IDENTITY, title="Editor", body="Lead uses vim.")

    error = desk.refusal(active.memory_id, verdict)

    assert_refused(error, "not_quarantined")
    assert desk.record(active.memory_id).status is Status.ACTIVE


@pytest.mark.parametrize("forgetter", ["application", "agent"])
@pytest.mark.parametrize("verdict", ["release", "tombstone"])
def test_a_record_tombstoned_by_a_plain_forget_is_not_reported_as_reviewed(
    observed_desk, forgetter, verdict
) -> None:
    desk = observed_desk
    tainted = desk.meta.open_session(IDENTITY)
    tainted.tool_result("web_fetch")
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.", session=tainted)
    if forgetter == "application":
        assert desk.meta.forget_agent_memory(IDENTITY, origin.id).deleted
    else:  # the agent itself, from a clean session (a tainted one may not forget)
        forgot = desk.meta.open_session(IDENTITY).memory_tool({"action": "forget", "memory_id": origin.id})
        assert not forgot.is_error, forgot
    assert desk.record(origin.id).status is Status.TOMBSTONED

    error = desk.refusal(origin.id, verdict)

    assert_refused(error, "not_quarantined")
    assert desk.store.get(f"{origin.id}-released") is None
    assert desk.events() == []


@pytest.mark.parametrize(("first", "second"), [("release", "tombstone"), ("tombstone", "release")])
def test_the_opposite_verdict_after_a_decision_is_not_quarantined(desk, first, second) -> None:
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    desk.decide(origin.id, first)
    before = desk.audit_count()

    error = desk.refusal(origin.id, second)

    assert_refused(error, "not_quarantined")
    assert desk.audit_count() == before
    assert len(desk.events()) == 1


@pytest.mark.parametrize("kind", [ScopeKind.MOB, ScopeKind.OPERATOR, ScopeKind.REALM])
@pytest.mark.parametrize("verdict", ["release", "tombstone"])
def test_mob_operator_and_realm_scoped_quarantine_stays_with_the_steward(desk, kind, verdict) -> None:
    template = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    scope = Scope(kind, "default", "" if kind is ScopeKind.REALM else "crew")
    shared = replace(template, id="mem-shared", scope=scope)
    desk.store.commit(WriteBatch("default", Author("steward", run_id="run-1"), (CreateOp(shared),)))

    error = desk.refusal("mem-shared", verdict)

    assert_refused(error, "not_quarantined")
    assert desk.record("mem-shared").status is Status.QUARANTINED


@pytest.mark.parametrize("verdict", ["release", "tombstone"])
def test_a_released_successor_is_not_quarantined_and_not_reported_as_a_replay(desk, verdict) -> None:
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    desk.decide(origin.id, "release")
    before = desk.audit_count()

    error = desk.refusal(f"{origin.id}-released", verdict)

    assert_refused(error, "not_quarantined")
    assert desk.audit_count() == before
    assert desk.record(f"{origin.id}-released").status is Status.ACTIVE


@pytest.mark.parametrize("gone", ["forgotten", "replaced", "missing"])
def test_releasing_an_update_whose_earlier_version_is_gone_is_a_stale_update(desk, gone) -> None:
    prior = desk.meta.remember_agent_memory(IDENTITY, title="Editor", body="Lead uses vim.")
    update = desk.quarantine_update(prior.memory_id, "Editor", "Lead uses emacs.")
    if gone == "forgotten":
        desk.meta.forget_agent_memory(IDENTITY, prior.memory_id)
    elif gone == "replaced":
        desk.meta.update_agent_memory(IDENTITY, prior.memory_id, title="Editor", body="Lead uses nano.")
    else:
        with desk.db() as conn:
            conn.execute("UPDATE records SET supersedes = 'mem-vanished' WHERE id = ?", (update.id,))
    before = desk.audit_count()

    error = desk.refusal(update.id, "release")

    assert_refused(error, "stale_update")
    assert desk.audit_count() == before
    assert desk.store.get(f"{update.id}-released") is None
    assert desk.decide(update.id, "tombstone")["outcome"] == "tombstoned"


def test_a_release_the_store_validator_refuses_writes_nothing(desk) -> None:
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    digest = desk.rewrite(origin.id, body="   ")  # blank: no write may hold it
    before = desk.audit_count()

    with pytest.raises(Exception) as refused:
        desk.decide(origin.id, "release", expected=digest)

    assert getattr(refused.value, "code", None) == -32602
    assert refused.value.data == {"kind": "memory_write_refused", "rule": "field-invalid"}
    assert desk.audit_count() == before
    assert desk.record(origin.id).status is Status.QUARANTINED
    assert desk.store.get(f"{origin.id}-released") is None
    assert desk.events() == []


def test_a_record_already_tombstoned_by_another_writer_is_not_quarantined_for_either_verdict(desk) -> None:
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    tombstone = TombstoneOp(origin.id, origin.scope)
    desk.store.commit(WriteBatch("default", Author("steward", run_id="run-1"), (tombstone,)))

    for verdict in ("release", "tombstone"):
        assert_refused(desk.refusal(origin.id, verdict), "not_quarantined")
