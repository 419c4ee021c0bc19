"""``meta/memory/proposals/decide`` over the ASGI app, on both backends: an accept commits into the
mob through the validator, a reject rejects, both bound to the content hash, audited with the
authenticated reviewer, replayed byte for byte, and refused once decided otherwise."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from meta_memory.clock import ManualClock
from meta_memory.errors import ProposalReviewRefused
from meta_memory.memory.records import ScopeKind, Status, Trust, content_hash

from ...conftest import Backend
from .conftest import DECIDE, Floor, floor_config, serve


def test_an_accept_commits_the_proposal_into_its_mob_as_the_operator_at_agent_observed_trust(
    floor: Floor,
) -> None:
    proposal_id = floor.propose("Staging resets nightly", "The staging database resets at 02:00 UTC.")

    done = floor.decide(proposal_id, "accept", rationale="matches the runbook")

    assert done["outcome"] == "accepted" and done["proposal"]["status"] == "accepted"
    record = floor.record(done["record"]["memory_id"])
    assert (record.scope.kind, record.scope.key, record.status) == (ScopeKind.MOB, "crew", Status.ACTIVE)
    assert record.body == "The staging database resets at 02:00 UTC."
    assert (record.provenance.author.kind, record.trust) == ("operator", Trust.AGENT_OBSERVED)
    assert record.derived_from == (proposal_id,) and not record.ever_quarantined
    assert [r["memory_id"] for r in floor.mob_records()] == [record.id]
    assert proposal_id not in floor.listed()  # decided: no longer open


def test_a_reject_writes_no_record_and_leaves_the_proposal_rejected(floor: Floor) -> None:
    proposal_id = floor.propose("Freeze", "No deploys in December.")

    done = floor.decide(proposal_id, "reject", rationale="not a crew rule")

    assert (done["outcome"], done["record"], done["proposal"]["status"]) == ("rejected", None, "rejected")
    assert floor.mob_records() == []
    assert floor.status(proposal_id) == "rejected"


def test_the_decision_records_the_authenticated_reviewer_never_a_name_from_the_request(floor: Floor) -> None:
    proposal_id = floor.propose("Freeze", "No deploys in December.")

    done = floor.decide(proposal_id, "accept", subject="bob")

    review = done["decision"]["review"]
    assert review["reviewer"] == {"kind": "console", "principal": "bob"}
    assert review["expected_content_hash"] == content_hash("Freeze", "No deploys in December.")
    refused = floor.refused(lambda: floor.decide(proposal_id, "accept", reviewer="mallory"))
    assert refused.code == -32602 and "reviewer" in refused.message  # no such param


def test_a_stale_content_hash_is_refused_without_telling_the_proposal_s_hash(floor: Floor) -> None:
    proposal_id = floor.propose("Freeze", "No deploys in December.")
    before = floor.audit_count()

    refused = floor.refused(lambda: floor.decide(proposal_id, "accept", expected="0" * 64))

    assert isinstance(refused, ProposalReviewRefused) and refused.reason == "content_mismatch"
    assert refused.code == -32043
    assert refused.data is not None and refused.data["kind"] == "memory_proposal_review_refused"
    assert refused.data["reason"] == "content_mismatch" and "expected_content_hash" in refused.message
    assert content_hash("Freeze", "No deploys in December.") not in json.dumps(
        [refused.message, refused.data]
    )
    assert floor.status(proposal_id) == "pending" and floor.audit_count() == before


class TickingClock(ManualClock):
    """Every read is a millisecond later: each place a decision reads the clock gets its own time."""

    def now_ms(self) -> int:
        self.advance(1)
        return super().now_ms()


@pytest.fixture
def ticking(tmp_path: Path, backend: Backend) -> Iterator[Floor]:
    with serve(tmp_path / "state", floor_config(), backend, TickingClock()) as served:
        yield served


@pytest.mark.parametrize("verdict", ["accept", "reject"])
def test_a_replayed_decision_is_the_original_byte_for_byte_and_writes_nothing(
    ticking: Floor, verdict: str
) -> None:
    proposal_id = ticking.propose("Freeze", "No deploys in December.")
    first = ticking.decide(proposal_id, verdict, rationale="checked")
    written = ticking.audit_count()

    again = ticking.decide(proposal_id, verdict, rationale="said twice", subject="bob")

    assert again["outcome"] == f"already_{first['outcome']}"
    assert json.dumps(again["decision"]) == json.dumps(first["decision"])
    assert ticking.audit_count() == written
    seq = int(first["decision"]["audit_token"].removeprefix("audit-"))
    with ticking.db() as conn:
        (at_ms,) = conn.execute("SELECT at_ms FROM audit WHERE seq = ?", (seq,)).fetchone()
    assert first["decision"]["decided_at_ms"] == at_ms  # the time the audit row holds
    assert len(ticking.events("memory.proposal.verdict")) == 1  # a replay emits nothing


def test_the_other_verdict_after_a_decision_is_refused_as_already_decided(floor: Floor) -> None:
    proposal_id = floor.propose("Freeze", "No deploys in December.")
    floor.decide(proposal_id, "reject")

    refused = floor.refused(lambda: floor.decide(proposal_id, "accept"))

    assert refused.code == -32043 and refused.data is not None
    assert (refused.data["reason"], refused.data["verdict"], refused.data["status"]) == (
        "already_decided",
        "reject",
        "rejected",
    )
    assert floor.mob_records() == []


def test_a_proposal_the_steward_rejected_is_refused_to_an_operator(floor: Floor) -> None:
    floor.decide(floor.propose("Freeze", "No deploys in December."), "accept")
    proposal_id = floor.propose("Freeze", "No deploys in December.")
    report = floor.rpc("meta/memory/steward/dream", {"realm": "default"})
    assert [(o["target"], o["outcome"]) for o in report["outcomes"]] == [
        (proposal_id, "rejected")
    ]  # a duplicate

    refused = floor.refused(lambda: floor.decide(proposal_id, "accept"))

    assert refused.data is not None and (refused.data["reason"], refused.data["status"]) == (
        "already_decided",
        "rejected",
    )
    assert "steward" in refused.message


def test_a_held_proposal_stays_listed_with_its_status_and_can_be_decided(floor: Floor) -> None:
    proposal_id = floor.propose("Staging resets nightly", "At 02:00 UTC.")
    report = floor.rpc("meta/memory/steward/dream", {"realm": "default"})
    assert [o["outcome"] for o in report["outcomes"]] == ["held"]  # the deterministic reviewer holds it

    row = floor.listed()[proposal_id]
    assert (row["status"], row["content_hash"]) == (
        "held",
        content_hash("Staging resets nightly", "At 02:00 UTC."),
    )
    assert "body" not in row
    assert floor.decide(proposal_id, "accept", expected=row["content_hash"])["outcome"] == "accepted"
    assert floor.listed() == {}


def test_an_accept_emits_the_promotion_and_the_verdict_never_the_reviewer_or_rationale(floor: Floor) -> None:
    proposal_id = floor.propose("Freeze", "No deploys in December.")

    done = floor.decide(proposal_id, "accept", rationale="secret sauce of the decision")

    record_id = done["record"]["memory_id"]
    [promoted] = floor.events("memory.record.promoted")
    assert promoted["data"] == {
        "realm": "default",
        "record_id": record_id,
        "source_record_id": None,
        "scope_kind": "mob",
        "scope_key": "crew",
        "proposal_id": proposal_id,
        "gated": False,
    }
    [verdict] = floor.events("memory.proposal.verdict")
    assert verdict["data"] == {
        "realm": "default",
        "proposal_id": proposal_id,
        "verdict": "accept",
        "outcome": "accepted",
        "record_id": record_id,
    }
    assert "alice" not in json.dumps([promoted, verdict]) and "sauce" not in json.dumps([promoted, verdict])


def test_accepting_content_the_mob_already_holds_commits_no_second_record(floor: Floor) -> None:
    kept = floor.decide(floor.propose("Freeze", "No deploys in December."), "accept")["record"]
    proposal_id = floor.propose("Freeze", "No deploys in December.", identity="lead")

    done = floor.decide(proposal_id, "accept")

    assert (done["outcome"], done["record"]["memory_id"]) == ("accepted", kept["memory_id"])
    assert [r["memory_id"] for r in floor.mob_records()] == [kept["memory_id"]]


def test_a_secret_in_the_rationale_refuses_the_decision_and_writes_nothing(floor: Floor) -> None:
    proposal_id = floor.propose("Freeze", "No deploys in December.")

    refused = floor.refused(lambda: floor.decide(proposal_id, "reject", rationale="key AKIAABCDEFGHIJKLMNOP"))

    assert refused.code == -32602 and refused.data is not None and refused.data["rule"] == "secret-detected"
    assert floor.status(proposal_id) == "pending"


def test_an_unknown_proposal_is_an_unknown_record_and_no_realm_is_created(floor: Floor) -> None:
    params = {"proposal_id": "prop-nope", "verdict": "accept", "expected_content_hash": "0" * 64}
    for extra in ({}, {"realm": "elsewhere"}):
        refused = floor.refused(lambda: floor.console(DECIDE, {**params, **extra}))  # noqa: B023
        assert (refused.code, refused.message) == (-32001, "unknown proposal 'prop-nope'")
    assert floor.runtime.agent_memory is not None and not floor.runtime.agent_memory.has_realm("elsewhere")


def test_the_method_is_served_on_the_console_only(floor: Floor) -> None:
    proposal_id = floor.propose("Freeze", "No deploys in December.")
    params = {"proposal_id": proposal_id, "verdict": "accept", "expected_content_hash": "0" * 64}

    refused = floor.refused(lambda: floor.rpc(DECIDE, params))

    assert (refused.code, refused.message) == (-32601, "Method not found")
    assert DECIDE not in floor.rpc("meta/capabilities")["methods"]
    assert DECIDE in floor.console("meta/capabilities")["methods"]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"verdict": "hold"}, "verdict"),
        ({"verdict": None}, "verdict"),
        ({"expected_content_hash": "AB" * 32}, "expected_content_hash"),
        ({"expected_content_hash": None}, "expected_content_hash"),
        ({"proposal_id": "  "}, "proposal_id"),
        ({"proposal_id": None}, "proposal_id"),
        ({"rationale": "x" * 4097}, "rationale"),
        ({"rationale": 5}, "rationale"),
        ({"realm": ""}, "realm"),
    ],
)
def test_bad_params_are_refused_naming_the_field(floor: Floor, params: dict[str, object], field: str) -> None:
    base = {"proposal_id": "prop-x", "verdict": "accept", "expected_content_hash": "0" * 64}
    sent = {k: v for k, v in {**base, **params}.items() if v is not None}

    refused = floor.refused(lambda: floor.console(DECIDE, sent))

    assert refused.code == -32602 and refused.message.startswith(field)
