"""The ``release`` verdict: the ``<id>-released`` successor, the kept original, recall, quarantined
updates released as supersedes, the permanent ``agent_observed`` cap, and session taint left alone."""

from __future__ import annotations

from dataclasses import replace

import pytest

from meta_memory.errors import WriteRefused
from meta_memory.memory.records import Author, Status, Trust
from meta_memory.memory.validator import CreateOp, WriteBatch

IDENTITY = "lead"


def test_release_creates_an_active_released_successor_at_agent_observed_derived_from_the_original(
    desk,
) -> None:
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    desk.clock.advance(5_000)

    desk.decide(origin.id, "release")

    successor = desk.record(f"{origin.id}-released")
    assert successor.status is Status.ACTIVE
    assert successor.trust is Trust.AGENT_OBSERVED
    assert successor.derived_from == (origin.id,)
    assert successor.ever_quarantined is True
    assert successor.quarantine_reason is None
    assert successor.supersedes is None
    assert (successor.scope, successor.title, successor.body) == (origin.scope, origin.title, origin.body)
    assert successor.content_hash == origin.content_hash
    assert successor.created_at_ms == origin.created_at_ms + 5_000


def test_release_tombstones_the_original_but_keeps_its_body_provenance_and_creation_time(desk) -> None:
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.", tags=["ops"])
    desk.clock.advance(60_000)

    desk.decide(origin.id, "release")

    kept = desk.record(origin.id)
    assert kept.status is Status.TOMBSTONED
    assert (kept.title, kept.body, kept.tags, kept.description) == (
        origin.title,
        origin.body,
        origin.tags,
        origin.description,
    )
    assert kept.provenance == origin.provenance
    assert kept.created_at_ms == origin.created_at_ms
    assert kept.quarantine_reason == origin.quarantine_reason
    assert (kept.content_hash, kept.ever_quarantined) == (origin.content_hash, True)


def test_the_successor_is_recalled_and_the_original_never_is(desk) -> None:
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    assert desk.meta.recall_agent_memory(IDENTITY, query_text="when do deploys happen?") == []

    desk.decide(origin.id, "release")

    for selection in ("contextual", "always"):
        recalled = desk.meta.recall_agent_memory(IDENTITY, selection=selection, query_text="deploys tuesdays")
        assert [r.memory_id for r in recalled] == [f"{origin.id}-released"]
    text, injected = desk.meta.open_session(IDENTITY).build_context()
    assert injected == [f"{origin.id}-released"]
    assert text is not None and origin.id not in text.replace(f"{origin.id}-released", "")


def test_a_quarantined_update_is_released_as_a_supersede_so_only_one_version_stays_active(desk) -> None:
    prior = desk.meta.remember_agent_memory(IDENTITY, title="Editor", body="Lead uses vim.")
    update = desk.quarantine_update(prior.memory_id, "Editor", "Lead uses emacs.")
    assert (update.status, update.supersedes) == (Status.QUARANTINED, prior.memory_id)
    assert desk.record(prior.memory_id).status is Status.ACTIVE

    answer = desk.decide(update.id, "release")

    successor = desk.record(f"{update.id}-released")
    assert (successor.status, successor.supersedes, successor.derived_from) == (
        Status.ACTIVE,
        prior.memory_id,
        (update.id,),
    )
    replaced = desk.record(prior.memory_id)
    assert (replaced.status, replaced.superseded_by) == (Status.SUPERSEDED, successor.id)
    assert answer["successor"]["supersedes"] == prior.memory_id
    recalled = desk.meta.recall_agent_memory(IDENTITY, selection="always", max_entries=64)
    assert [r.body for r in recalled] == ["Lead uses emacs."]


def test_the_successor_stays_agent_observed_through_a_later_application_update(desk) -> None:
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    desk.decide(origin.id, "release")
    successor_id = f"{origin.id}-released"

    updated = desk.meta.update_agent_memory(
        IDENTITY, successor_id, title="Deploy window", body="Deploys: Wed."
    )

    assert updated.supersedes == successor_id
    assert desk.record(updated.memory_id).trust is Trust.AGENT_OBSERVED
    assert desk.record(successor_id).status is Status.SUPERSEDED
    assert desk.record(successor_id).ever_quarantined is True


@pytest.mark.parametrize("trust", [Trust.AGENT_VERIFIED, Trust.APPLICATION, Trust.OPERATOR])
@pytest.mark.parametrize("link", ["derived_from", "supersedes", "via_a_later_update", "after_a_forget"])
def test_a_write_above_agent_observed_descending_from_the_successor_is_refused(desk, trust, link) -> None:
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    desk.decide(origin.id, "release")
    parent = f"{origin.id}-released"
    if link == "via_a_later_update":
        parent = desk.meta.update_agent_memory(IDENTITY, parent, title="Deploy window", body="Wed.").memory_id
    if link == "after_a_forget":
        assert desk.meta.forget_agent_memory(IDENTITY, parent).deleted
    template = desk.record(parent)
    crafted = replace(
        template,
        id="mem-crafted",
        title="Deploy window (promoted)",
        trust=trust,
        status=Status.ACTIVE,
        ever_quarantined=False,
        derived_from=(parent,) if link != "supersedes" else (),
        supersedes=parent if link == "supersedes" else None,
    )

    with pytest.raises(WriteRefused) as refused:
        desk.store.commit(WriteBatch("default", Author("operator"), (CreateOp(crafted),)))

    assert refused.value.rule == "tier-ceiling"
    assert desk.store.get("mem-crafted") is None


def test_a_decision_leaves_session_taint_alone_so_later_writes_of_that_session_quarantine_again(
    observed_desk,
) -> None:
    session = observed_desk.meta.open_session(IDENTITY)
    session.tool_result("web_fetch")
    origin = observed_desk.quarantine("Shell", "Lead uses zsh.", session=session)
    row = observed_desk.store.session(session.key)
    assert row is not None and row.taint == "tool web_fetch"

    decision = observed_desk.decide(origin.id, "release")["decision"]

    assert decision["review"]["quarantine_reason"] == "session tainted by tool web_fetch"
    assert observed_desk.store.session(session.key) == row
    again = observed_desk.quarantine("Pager", "Lead carries the pager.", session=session)
    assert again.quarantine_reason == "session tainted by tool web_fetch"
    clean = observed_desk.meta.open_session(IDENTITY).memory_tool(
        {"action": "remember", "title": "Desk", "body": "Lead sits by the window."}
    )
    assert clean.outcome == "stored"  # a fresh session was clean all along: the decision tainted nothing
