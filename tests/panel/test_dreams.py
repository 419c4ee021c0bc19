"""``meta/memory/panel/dreams`` and ``dream_runs``: the steward's history from its audit rows and its
durable run rows, shown per realm only to a caller who may read every scope the realm names (and, while
the realm holds quarantined content, holds the review grant), with ``withheld_by_access``."""

from __future__ import annotations

import json
from typing import Any

from meta_memory.memory.records import Author, ScopeKind, Status
from meta_memory.review import DecideParams

from .conftest import AUDITOR, BLIND, REVIEWER, ROOT, Bench


def steward(run_id: str) -> Author:
    return Author("steward", run_id=run_id)


def add_run(
    bench: Bench, run_id: str, *, realm: str = "default", started: int | None = None, ops: int = 0
) -> None:
    """A durable dream-run row (the steward fills the table; no API yet)."""
    start = started if started is not None else bench.clock.now_ms()
    with bench.db(realm) as conn:
        conn.execute(
            "INSERT INTO dream_runs (run_id, partition, started_at_ms, completed_at_ms, ops_committed, detail) "
            "VALUES (?, 'realm', ?, ?, ?, ?)",
            (run_id, start, start + 50, ops, json.dumps({"phase": "rank", "ops": ops})),
        )


def run_ids(result: dict[str, Any]) -> list[tuple[str, str]]:
    return [(r["realm"], r["run_id"]) for r in result["runs"]]


def test_dream_summaries_are_reconstructed_from_the_stewards_audit_rows(bench: Bench) -> None:
    bench.remember("lead", "Operator-free note")  # an application write: no run
    a = bench.put("default", ScopeKind.IDENTITY, "lead", "Merged A", author=steward("run-1")).id
    bench.tick(10)
    b = bench.put("default", ScopeKind.IDENTITY, "lead", "Merged B", author=steward("run-1")).id
    held = bench.put(
        "default", ScopeKind.IDENTITY, "lead", "Held", author=steward("run-1"), status=Status.QUARANTINED
    ).id
    bench.tick(10)
    record = bench.store().get(held)
    assert bench.runtime.review is not None and record is not None
    bench.runtime.review.decide(
        DecideParams("default", "lead", held, "release", record.content_hash, "checked"),
        reviewer={"kind": "steward", "run_id": "run-2"},
        operator=False,
    )

    runs = bench.panel("dreams", {}, ROOT)["runs"]

    assert [r["run_id"] for r in runs] == ["run-2", "run-1"]
    first = runs[1]
    assert (first["first_op_at_ms"], first["last_op_at_ms"]) == (
        bench.clock.now_ms() - 20,
        bench.clock.now_ms() - 10,
    )
    assert (first["ops"], first["op_kinds"], first["quarantined_ops"]) == (3, {"create": 3}, 1)
    assert first["memory_ids"] == [a, b, held]
    assert first["rationales"] == ["put Merged A", "put Merged B", "put Held"]
    assert runs[0]["op_kinds"] == {"create": 1, "tombstone": 1} and runs[0]["quarantined_ops"] == 2
    assert runs[0]["rationales"] == ["checked"]


def test_dream_runs_list_the_durable_rows_latest_start_first(bench: Bench) -> None:
    bench.remember("lead", "Note")
    add_run(bench, "run-a", started=1_000, ops=3)
    add_run(bench, "run-b", started=2_000)
    bench.remember("lead", "Elsewhere", realm="other")
    add_run(bench, "run-c", realm="other", started=1_500)

    result = bench.panel("dream_runs", {}, ROOT)

    assert run_ids(result) == [("default", "run-b"), ("other", "run-c"), ("default", "run-a")]
    assert result["runs"][2] == {
        "realm": "default",
        "run_id": "run-a",
        "partition": "realm",
        "started_at_ms": 1_000,
        "completed_at_ms": 1_050,
        "ops_committed": 3,
        "detail": {"phase": "rank", "ops": 3},
    }
    assert result["realms"] == ["default", "other"] and result["withheld_by_access"] is False


def test_a_realms_history_goes_only_to_a_caller_who_may_read_every_scope_it_names(bench: Bench) -> None:
    bench.remember("lead", "Lead note", realm="alpha")
    bench.remember("scout", "Scout note", realm="alpha")  # AUDITOR is denied scout
    add_run(bench, "run-alpha", realm="alpha")
    bench.remember("lead", "Lead note", realm="beta")
    bench.put("beta", ScopeKind.MOB, "ops", "Mob note")
    add_run(bench, "run-beta", realm="beta")

    for verb in ("dreams", "dream_runs"):
        shown = bench.panel(verb, {}, AUDITOR)
        assert shown["withheld_by_access"] is True and shown["realms"] == ["alpha", "beta"]
    assert run_ids(bench.panel("dream_runs", {}, AUDITOR)) == [("beta", "run-beta")]
    assert run_ids(bench.panel("dream_runs", {"realm": "beta"}, AUDITOR)) == [("beta", "run-beta")]
    assert bench.panel("dream_runs", {"realm": "beta"}, AUDITOR)["withheld_by_access"] is False
    assert len(bench.panel("dream_runs", {}, REVIEWER)["runs"]) == 2


def test_while_a_realm_holds_quarantined_content_its_history_needs_the_review_grant(bench: Bench) -> None:
    held = bench.quarantine("lead", "Held")
    bench.decide(held, "release", identity="lead")  # decided, but the realm still holds the evidence
    add_run(bench, "run-1")

    withheld = bench.panel("dream_runs", {}, AUDITOR)
    shown = bench.panel("dream_runs", {}, REVIEWER)

    assert (withheld["runs"], withheld["withheld_by_access"]) == ([], True)
    assert (run_ids(shown), shown["withheld_by_access"]) == ([("default", "run-1")], False)


def test_withheld_by_access_is_set_for_a_withheld_realm_even_without_runs(bench: Bench) -> None:
    bench.remember("scout", "Scout note", realm="quiet")
    bench.remember("lead", "Lead note", realm="busy")
    add_run(bench, "run-busy", realm="busy")

    result = bench.panel("dreams", {}, AUDITOR)

    assert result["withheld_by_access"] is True
    assert bench.panel("dreams", {"realm": "busy"}, AUDITOR)["withheld_by_access"] is False


def test_scopes_named_by_proposals_promotions_and_harvests_count_toward_the_rule(bench: Bench) -> None:
    for realm in ("harvested", "promoted"):
        bench.remember("lead", "Lead note", realm=realm)
    for realm in ("plain", "proposed"):
        bench.put(realm, ScopeKind.REALM, "", "Realm note")
    with bench.db("harvested") as conn:
        conn.execute(
            "INSERT INTO harvests (identity, session_key, cause, retired_at_ms, status) "
            "VALUES ('scout', 'sess-1', 'retired', 1, 'pending')"
        )
    with bench.db("promoted") as conn:
        conn.execute(
            "INSERT INTO promotions (pending_id, stage_token, record_id, scope_kind, scope_key, rationale, status, "
            "proposal_id, created_at_ms, resolved_at_ms) VALUES ('g', 't', 'm', 'operator', 'acme', NULL, "
            "'committed', NULL, 1, 2)"
        )
    bench.tool(
        bench.session("lead", mob="ops", realm="proposed"), action="propose_to_mob", title="T", body="B"
    )

    def withheld(realm: str, principal: Any) -> bool:
        return bool(bench.panel("dreams", {"realm": realm}, principal)["withheld_by_access"])

    assert withheld("harvested", AUDITOR) and withheld("promoted", AUDITOR)  # scout; operator scope
    assert not withheld("proposed", AUDITOR)  # mob "ops" is AUDITOR's to read
    assert withheld("proposed", BLIND) and not withheld("plain", BLIND)  # BLIND has no mob.memory.read
    assert not withheld("harvested", REVIEWER)


def test_dream_limits_default_to_20_and_clamp_to_100(bench: Bench) -> None:
    bench.remember("lead", "Note")
    for i in range(105):
        add_run(bench, f"run-{i:03}", started=1_000 + i)
    for i in range(25):
        bench.tick()
        bench.put("default", ScopeKind.IDENTITY, "lead", f"Dreamt {i}", author=steward(f"dream-{i:02}"))

    assert len(bench.panel("dream_runs")["runs"]) == 20
    assert len(bench.panel("dream_runs", {"limit": 500})["runs"]) == 100
    assert bench.panel("dream_runs", {"limit": 1})["runs"][0]["run_id"] == "run-104"
    assert len(bench.panel("dreams")["runs"]) == 20
    assert bench.panel("dreams", {"limit": 2})["runs"][0]["run_id"] == "dream-24"
