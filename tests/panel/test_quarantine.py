"""``meta/memory/panel/quarantine``: the review grant is the entry gate, queued rows are body-free and
newest created first, and rows and pending gated promotions are still filtered by their scope."""

from __future__ import annotations

from typing import Any

from meta_memory.memory.records import ScopeKind, Status

from .conftest import AUDITOR, LEADS, OUTSIDER, RED, REVIEWER, ROOT, Bench


def ids(result: dict[str, Any]) -> list[str]:
    return [r["memory_id"] for r in result["records"]]


def promote(
    bench: Bench,
    pending_id: str,
    record_id: str,
    *,
    scope_key: str = "ops",
    proposal_id: str | None = None,
    status: str = "pending",
    realm: str = "default",
) -> None:
    """A gated-promotion mapping row and its staged batch (the steward fills these; no API yet)."""
    bench.tick()
    with bench.db(realm) as conn:
        conn.execute(
            "INSERT INTO promotions (pending_id, stage_token, record_id, scope_kind, scope_key, rationale, status, "
            "proposal_id, created_at_ms, resolved_at_ms) VALUES (?, ?, ?, 'mob', ?, 'worth sharing', ?, ?, ?, NULL)",
            (
                pending_id,
                f"stage-{pending_id}",
                record_id,
                scope_key,
                status,
                proposal_id,
                bench.clock.now_ms(),
            ),
        )
        conn.execute(
            "INSERT INTO stage_batches (stage_token, batch, created_at_ms) VALUES (?, '{}', ?)",
            (f"stage-{pending_id}", bench.clock.now_ms()),
        )


def test_the_queue_needs_a_review_grant_on_some_resource(bench: Bench) -> None:
    for principal in (LEADS, AUDITOR, OUTSIDER):
        denied = bench.refusal("quarantine", {}, principal)
        assert denied.code == -32030 and denied.data["action"] == "memory.quarantine.review"  # type: ignore[index]

    assert bench.panel("quarantine", {}, RED) == {"records": [], "pending_promotions": [], "realms": []}


def test_queued_rows_are_body_free_and_newest_created_first(bench: Bench) -> None:
    older = bench.quarantine("lead", "Older", "an older planted note")
    newer = bench.quarantine("lead", "Newer", realm="other")
    bench.remember("lead", "Active")

    result = bench.panel("quarantine", {}, RED)

    assert ids(result) == [newer, older]
    assert all("body" not in row for row in result["records"])
    assert result["records"][1]["body_bytes"] == len("an older planted note")
    assert result["records"][1]["quarantine_reason"] == "llm_writes=quarantined policy"
    assert result["realms"] == ["default", "other"]


def test_queued_rows_are_filtered_by_what_the_reviewer_may_read_in_their_scope(bench: Bench) -> None:
    lead = bench.quarantine("lead", "Lead held")
    analyst = bench.quarantine("analyst", "Analyst held")
    scout = bench.quarantine("scout", "Scout held")
    mob = bench.put("default", ScopeKind.MOB, "ops", "Mob held", status=Status.QUARANTINED).id

    assert set(ids(bench.panel("quarantine", {}, RED))) == {lead, analyst}
    assert set(ids(bench.panel("quarantine", {}, REVIEWER))) == {lead, analyst, scout, mob}
    assert set(ids(bench.panel("quarantine", {"realm": "default"}, ROOT))) == {lead, analyst, scout, mob}


def test_a_decided_record_leaves_the_queue(bench: Bench) -> None:
    kept = bench.quarantine("lead", "Kept")
    released = bench.quarantine("lead", "Released")
    discarded = bench.quarantine("lead", "Discarded")
    bench.decide(released, "release", identity="lead")
    bench.decide(discarded, "tombstone", identity="lead")

    assert ids(bench.panel("quarantine", {}, RED)) == [kept]


def test_the_limit_applies_to_the_store_rows_before_the_access_filter(bench: Bench) -> None:
    lead = bench.quarantine("lead", "Lead held")
    bench.quarantine("scout", "Scout held")  # newest, and not RED's to read

    assert ids(bench.panel("quarantine", {"limit": 1}, RED)) == []
    assert ids(bench.panel("quarantine", {"limit": 2}, RED)) == [lead]
    assert len(bench.panel("quarantine", {"limit": 1}, ROOT)["records"]) == 1


def test_pending_promotions_come_without_the_stage_token(bench: Bench) -> None:
    held = bench.quarantine("lead", "Worth sharing")
    promote(bench, "gate-pending-1", held)

    (row,) = bench.panel("quarantine", {}, REVIEWER)["pending_promotions"]

    assert row == {
        "realm": "default",
        "pending_id": "gate-pending-1",
        "record_id": held,
        "scope_kind": "mob",
        "scope_key": "ops",
        "rationale": "worth sharing",
        "status": "pending",
        "created_at_ms": bench.clock.now_ms(),
    }


def test_only_pending_promotions_are_listed_newest_first(bench: Bench) -> None:
    held = bench.quarantine("lead", "Worth sharing")
    promote(bench, "gate-old", held)
    promote(bench, "gate-done", held, status="committed")
    promote(bench, "gate-gone", held, status="expired")
    promote(bench, "gate-new", held)

    listed = bench.panel("quarantine", {}, ROOT)["pending_promotions"]

    assert [p["pending_id"] for p in listed] == ["gate-new", "gate-old"]


def test_pending_promotions_are_filtered_by_their_target_scope_and_their_source(bench: Bench) -> None:
    held = bench.quarantine("lead", "Worth sharing")
    proposal = bench.tool(
        bench.session("scout", mob="ops"), action="propose_to_mob", title="Shared", body="All of us."
    )
    proposal_id = next(w.strip(".,;") for w in proposal["content"].split() if w.startswith("prop-"))
    promote(bench, "gate-record", held)
    promote(bench, "gate-proposal", proposal_id, proposal_id=proposal_id)
    promote(bench, "gate-orphan", "mem-gone")

    def pending(principal: Any) -> set[str]:
        return {p["pending_id"] for p in bench.panel("quarantine", {}, principal)["pending_promotions"]}

    assert pending(REVIEWER) == {"gate-record", "gate-proposal"}
    assert pending(RED) == set()  # RED may review lead, but not read the mob the promotions target


def test_with_access_disabled_the_queue_shows_everything(unguarded: Bench) -> None:
    held = unguarded.quarantine("scout", "Held")
    promote(unguarded, "gate-orphan", "mem-gone")

    result = unguarded.panel("quarantine", {}, OUTSIDER)

    assert ids(result) == [held] and [p["pending_id"] for p in result["pending_promotions"]] == [
        "gate-orphan"
    ]
