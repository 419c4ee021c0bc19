"""Who may decide a proposal on the console: the write grant of its scope (``mob.memory.commit``,
or ``agent.memory.admin`` for operator scope) and its read grant (``mob.memory.read``,
``operator.memory.read``); a read-only console decides nothing; ``meta/memory/panel/proposal``
shows the body only to a caller who may read the scope."""

from __future__ import annotations

from pathlib import Path

import pytest

from meta_memory.clock import ManualClock

from ...conftest import Backend
from .conftest import DECIDE, Floor, floor_config, serve


@pytest.mark.parametrize(
    ("subject", "action"),
    [
        ("rita", "mob.memory.commit"),  # reads the mob, commits nothing
        ("carl", "mob.memory.read"),  # commits, but may not read what it would decide
        ("olga", "mob.memory.commit"),  # an operator administrator, not a mob's
    ],
)
def test_a_mob_proposal_needs_commit_and_read_on_the_mob(floor: Floor, subject: str, action: str) -> None:
    proposal_id = floor.propose("Freeze", "No deploys in December.")
    before = floor.audit_count()

    refused = floor.refused(lambda: floor.decide(proposal_id, "accept", subject=subject))

    assert (refused.code, refused.data) == (
        -32030,
        {"kind": "access_denied", "action": action, "resource": proposal_id},
    )
    assert floor.status(proposal_id) == "pending" and floor.audit_count() == before


def test_an_operator_proposal_needs_admin_and_operator_read(floor: Floor) -> None:
    made = floor.rpc(
        "meta/agent_memory/propose",
        {
            "scope": {"kind": "operator", "key": "acme"},
            "title": "Billing",
            "body": "Invoices go out monthly.",
        },
    )
    proposal_id = made["proposal_id"]

    denied = floor.refused(lambda: floor.decide(proposal_id, "accept", subject="carl"))
    done = floor.decide(proposal_id, "accept", subject="olga")

    assert denied.data is not None and denied.data["action"] == "agent.memory.admin"
    assert done["outcome"] == "accepted"
    assert floor.record(done["record"]["memory_id"]).scope.key == "acme"


def test_a_read_only_console_refuses_a_decision_and_does_not_offer_it(
    tmp_path: Path, backend: Backend, clock: ManualClock
) -> None:
    config = floor_config()
    config["console"]["read_only"] = True
    with serve(tmp_path / "state", config, backend, clock) as floor:
        proposal_id = floor.propose("Freeze", "No deploys in December.")
        digest = floor.read(proposal_id)["content_hash"]  # the panel still reads

        refused = floor.refused(
            lambda: floor.console(
                DECIDE, {"proposal_id": proposal_id, "verdict": "accept", "expected_content_hash": digest}
            )
        )

        assert (refused.code, refused.data) == (-32010, {"kind": "read_only"})
        assert DECIDE not in floor.console("meta/capabilities")["methods"]
        assert floor.status(proposal_id) == "pending"


def test_a_proposal_s_body_is_read_only_by_who_may_read_its_scope(floor: Floor) -> None:
    proposal_id = floor.propose("Freeze", "No deploys in December.")

    shown = floor.console("meta/memory/panel/proposal", {"proposal_id": proposal_id}, subject="rita")
    denied = floor.refused(lambda: floor.read(proposal_id, subject="olga"))
    unknown = floor.refused(lambda: floor.read("prop-nope"))

    assert (shown["realm"], shown["proposal"]["body"]) == ("default", "No deploys in December.")
    assert shown["proposal"]["status"] == "pending" and shown["proposal"]["body_bytes"] == 23
    assert (denied.code, denied.data) == (
        -32030,
        {"kind": "access_denied", "action": "mob.memory.read", "resource": proposal_id},
    )
    assert (unknown.code, unknown.message) == (-32001, "unknown proposal 'prop-nope'")


def test_the_open_proposals_listing_shows_each_caller_the_scopes_it_reads(floor: Floor) -> None:
    mob = floor.propose("Freeze", "No deploys in December.")
    operator = floor.rpc(
        "meta/agent_memory/propose",
        {"scope": {"kind": "operator", "key": "acme"}, "title": "Billing", "body": "Monthly."},
    )["proposal_id"]

    assert set(floor.listed(subject="alice")) == {mob, operator}
    assert set(floor.listed(subject="rita")) == {mob}
    assert set(floor.listed(subject="olga")) == {operator}


def test_a_proposal_naming_no_mob_or_operator_is_refused_closed(floor: Floor) -> None:
    with floor.db() as conn:  # a damaged row: no path writes identity-scoped proposals
        conn.execute(
            "INSERT INTO proposals (proposal_id, scope_kind, scope_key, kind, title, description, body, tags, "
            "author, status, tainted, created_at_ms, updated_at_ms) VALUES ('prop-odd', 'identity', 'lead', "
            "'fact', 'Odd', '', 'Odd body.', '[]', '{\"author\": \"operator\"}', 'pending', ?, 1, 1)",
            (False,),
        )
    digest = floor.read("prop-odd", subject="root")["content_hash"]

    denied = floor.refused(lambda: floor.decide("prop-odd", "accept", expected=digest, subject="rita"))
    refused = floor.refused(lambda: floor.decide("prop-odd", "accept", expected=digest, subject="root"))

    assert denied.data == {"kind": "access_denied", "action": "agent.memory.admin", "resource": "prop-odd"}
    assert (
        refused.code == -32043 and refused.data is not None and refused.data["reason"] == "unsupported_scope"
    )
