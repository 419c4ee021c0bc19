"""The ``tombstone`` verdict: the record is discarded (kept, never recalled), a quarantined update leaves
the version it updates in force, and nothing else is created."""

from __future__ import annotations

from meta_memory.memory.records import Status

IDENTITY = "lead"


def test_tombstone_discards_the_record_so_it_is_never_recalled_and_creates_no_successor(desk) -> None:
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")

    answer = desk.decide(origin.id, "tombstone", rationale="not true")

    assert answer["outcome"] == "tombstoned"
    assert answer["successor"] is None
    assert answer["decision"]["review"]["successor"] is None
    kept = desk.record(origin.id)
    assert (kept.status, kept.body, kept.created_at_ms) == (
        Status.TOMBSTONED,
        origin.body,
        origin.created_at_ms,
    )
    assert desk.store.get(f"{origin.id}-released") is None
    assert desk.meta.recall_agent_memory(IDENTITY, query_text="deploys tuesdays") == []
    assert desk.meta.recall_agent_memory(IDENTITY, selection="always") == []
    assert desk.meta.open_session(IDENTITY).build_context() == (None, [])


def test_tombstoning_a_quarantined_update_leaves_the_record_it_updates_active(desk) -> None:
    prior = desk.meta.remember_agent_memory(IDENTITY, title="Editor", body="Lead uses vim.")
    update = desk.quarantine_update(prior.memory_id, "Editor", "Lead uses emacs.")

    desk.decide(update.id, "tombstone")

    assert desk.record(update.id).status is Status.TOMBSTONED
    still = desk.record(prior.memory_id)
    assert (still.status, still.superseded_by) == (Status.ACTIVE, None)
    recalled = desk.meta.recall_agent_memory(IDENTITY, selection="always")
    assert [r.memory_id for r in recalled] == [prior.memory_id]


def test_a_tombstone_writes_exactly_one_audit_row_and_touches_no_other_record(desk) -> None:
    bystander = desk.quarantine("Shell", "Lead uses zsh.")
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    before = desk.audit_count()

    desk.decide(origin.id, "tombstone")

    assert desk.audit_count() == before + 1
    assert [row["op"] for row in desk.store.audit_rows(origin.id)] == ["create", "tombstone"]
    assert desk.record(bystander.id).status is Status.QUARANTINED


def test_tombstoned_content_is_not_written_back_by_the_llm_within_seven_days(observed_desk) -> None:
    session = observed_desk.meta.open_session(IDENTITY)
    session.tool_result("web_fetch")
    origin = observed_desk.quarantine("Deploy window", "Deploys happen on Tuesdays.", session=session)
    observed_desk.decide(origin.id, "tombstone")
    observed_desk.clock.advance(24 * 3600 * 1000)

    clean = observed_desk.meta.open_session(IDENTITY)
    retry = clean.memory_tool({"action": "remember", "title": origin.title, "body": origin.body})

    assert retry.is_error and "forgotten in this scope within the last 7 days" in retry.content
    assert observed_desk.meta.recall_agent_memory(IDENTITY, selection="always") == []
