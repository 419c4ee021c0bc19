"""The realm-level listings: ``overview``, ``proposals``, ``injections``, ``harvests`` and
``audit_verdicts``, each newest first across realms, ``limit`` applied to the store rows before the
access filter, and each row judged by what it is about."""

from __future__ import annotations

from typing import Any

from meta_memory.memory.records import (
    OPERATOR,
    Provenance,
    Record,
    RecordKind,
    Scope,
    ScopeKind,
    Status,
    Trust,
    content_hash,
)
from meta_memory.memory.rows import InjectionRow
from meta_memory.memory.validator import CreateOp, WriteBatch

from .conftest import AUDITOR, BLIND, OUTSIDER, REVIEWER, ROOT, Bench


def by_scope(result: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {(s["realm"], s["scope_kind"], s["scope_key"]): s for s in result["scopes"]}


def test_overview_counts_statuses_and_body_bytes_per_scope(bench: Bench) -> None:
    kept = bench.remember("lead", "Kept", "12345")
    old = bench.remember("lead", "Old", "abc")
    bench.tick()
    bench.sdk(
        "meta/agent_memory/update", {"identity": "lead", "memory_id": old, "title": "New", "body": "abcd"}
    )
    gone = bench.remember("lead", "Gone", "xy")
    bench.sdk("meta/agent_memory/forget", {"identity": "lead", "memory_id": gone})
    bench.quarantine("lead", "Held", "é")
    bench.put("default", ScopeKind.MOB, "ops", "Mob note", body="mob")
    assert kept

    result = bench.panel("overview", {}, ROOT)

    lead = by_scope(result)[("default", "identity", "lead")]
    assert (lead["active"], lead["superseded"], lead["tombstoned"], lead["quarantined"]) == (2, 1, 1, 1)
    assert lead["body_bytes"] == 5 + 3 + 4 + 2 + 2 and lead["floor_pressure"] is False
    assert by_scope(result)[("default", "mob", "ops")]["active"] == 1
    assert result["floors"] == {"records": 4000, "bytes": 32 * 1024 * 1024}
    assert result["realms"] == ["default"]


def test_overview_lists_only_the_scopes_the_caller_may_read(bench: Bench) -> None:
    for identity in ("lead", "scout", "analyst"):
        bench.remember(identity, "Note")
    bench.put("default", ScopeKind.MOB, "ops", "Mob note")
    bench.put("default", ScopeKind.OPERATOR, "acme", "Operator note")
    bench.put("default", ScopeKind.REALM, "", "Realm note")
    bench.remember("lead", "Elsewhere", realm="other")

    def scopes(principal: Any, params: dict[str, Any] | None = None) -> set[tuple[str, str, str]]:
        return set(by_scope(bench.panel("overview", params or {}, principal)))

    assert scopes(AUDITOR) == {
        ("default", "identity", "lead"),
        ("default", "identity", "analyst"),
        ("default", "mob", "ops"),
        ("default", "realm", ""),
        ("other", "identity", "lead"),
    }
    assert scopes(BLIND) == {("default", "realm", "")}
    assert len(scopes(REVIEWER)) == 7
    assert scopes(REVIEWER, {"realm": "other"}) == {("other", "identity", "lead")}


def _bulk(realm: str, key: str, bodies: list[str], status: Status, at_ms: int) -> list[CreateOp]:
    return [
        CreateOp(
            Record(
                id=f"mem-bulk-{key}-{i}",
                scope=Scope(ScopeKind.MOB, realm, key),
                kind=RecordKind.FACT,
                title=f"Bulk {i}",
                description="",
                body=body,
                tags=(),
                provenance=Provenance(OPERATOR),
                trust=Trust.OPERATOR,
                status=status,
                created_at_ms=at_ms,
                updated_at_ms=at_ms,
                content_hash=content_hash(f"Bulk {i}", body),
                quarantine_reason="bulk" if status is Status.QUARANTINED else None,
            )
        )
        for i, body in enumerate(bodies)
    ]


def test_floor_pressure_starts_at_4000_active_records_or_32_mib_of_bodies(bench: Bench) -> None:
    store = bench.store("big")
    now = bench.clock.now_ms()
    crowd = _bulk("big", "crowd", ["x"] * 4000, Status.ACTIVE, now)
    for start in range(0, 3999, 1000):
        store.commit(WriteBatch("big", OPERATOR, tuple(crowd[start : min(start + 1000, 3999)])))
    # Quarantined bodies count toward bytes and stay out of the recall index, which keeps this quick.
    heavy = _bulk("big", "heavy", ["y" * 65_536] * 511 + ["z" * 65_535, "w"], Status.QUARANTINED, now)
    for start in range(0, 512, 128):
        store.commit(WriteBatch("big", OPERATOR, tuple(heavy[start : start + 128])))

    def pressure() -> tuple[bool, bool]:
        scopes = by_scope(bench.panel("overview", {"realm": "big"}))
        return scopes[("big", "mob", "crowd")]["floor_pressure"], scopes[("big", "mob", "heavy")][
            "floor_pressure"
        ]

    assert pressure() == (False, False)
    store.commit(WriteBatch("big", OPERATOR, (crowd[3999], heavy[512])))
    assert pressure() == (True, True)


def test_proposals_list_metadata_without_bodies_with_the_taint_flag_and_content_hash(bench: Bench) -> None:
    clean = bench.session("lead", mob="ops")
    bench.tool(clean, action="propose_to_mob", title="Clean idea", body="From a clean session.")
    tainted = bench.session("lead", mob="ops")
    bench.sdk("meta/session/tool_result", {"session_key": tainted, "tool_name": "web_fetch"})
    bench.tool(tainted, action="propose_to_mob", title="Tainted idea", body="From a web page.")

    rows = bench.panel("proposals", {}, AUDITOR)["proposals"]

    assert [(r["title"], r["tainted"]) for r in rows] == [("Tainted idea", True), ("Clean idea", False)]
    assert set(rows[0]) == {
        "realm",
        "proposal_id",
        "scope_kind",
        "scope_key",
        "title",
        "kind",
        "author",
        "status",
        "created_at_ms",
        "tainted",
        "content_hash",
    }
    assert rows[0]["content_hash"] == content_hash("Tainted idea", "From a web page.")
    assert (rows[0]["scope_kind"], rows[0]["scope_key"], rows[0]["status"]) == ("mob", "ops", "pending")
    assert rows[0]["author"] == {"author": "agent", "identity": "lead"}
    assert bench.panel("proposals", {}, BLIND)["proposals"] == []  # no mob.memory.read


def test_proposals_leave_the_listing_once_decided(bench: Bench) -> None:
    bench.tool(bench.session("lead", mob="ops"), action="propose_to_mob", title="Idea", body="Body.")
    (row,) = bench.panel("proposals")["proposals"]
    with bench.db() as conn:  # the steward's transition; it has no public call yet
        conn.execute("UPDATE proposals SET status = 'accepted' WHERE proposal_id = ?", (row["proposal_id"],))

    assert bench.panel("proposals")["proposals"] == []


def test_injections_are_newest_first_and_need_both_the_record_and_the_identity(bench: Bench) -> None:
    lead = bench.remember("lead", "Lead note")
    scout = bench.remember("scout", "Scout note")
    operator = bench.put("default", ScopeKind.OPERATOR, "acme", "Operator note").id
    for identity in ("lead", "scout"):
        bench.tick()
        bench.sdk("meta/session/build_context", {"session_key": bench.session(identity)})
    bench.store().record_injections(
        [InjectionRow(operator, "lead", "sess-x", "turn", bench.clock.now_ms() + 1)]
    )

    def rows(principal: Any) -> list[tuple[str, str]]:
        return [
            (r["record_id"], r["identity"]) for r in bench.panel("injections", {}, principal)["injections"]
        ]

    assert rows(REVIEWER) == [(operator, "lead"), (scout, "scout"), (lead, "lead")]
    assert rows(AUDITOR) == [(lead, "lead")]
    newest = bench.panel("injections", {"limit": 1}, ROOT)["injections"][0]
    assert newest == {
        "realm": "default",
        "record_id": operator,
        "identity": "lead",
        "session_key": "sess-x",
        "surface": "turn",
        "at_ms": bench.clock.now_ms() + 1,
    }


def test_the_limit_applies_to_the_store_rows_before_the_access_filter(bench: Bench) -> None:
    bench.remember("lead", "Lead note")
    bench.remember("scout", "Scout note")
    for identity in ("lead", "scout"):  # scout's injection is the newest
        bench.tick()
        bench.sdk("meta/session/build_context", {"session_key": bench.session(identity)})

    assert bench.panel("injections", {"limit": 1}, AUDITOR)["injections"] == []
    assert len(bench.panel("injections", {"limit": 2}, AUDITOR)["injections"]) == 1


def add_harvest(
    bench: Bench,
    identity: str,
    session_key: str,
    retired_at_ms: int,
    *,
    realm: str = "default",
    status: str = "pending",
) -> None:
    """An exit-interview row (the steward's harvest queue; no API fills it yet)."""
    with bench.db(realm) as conn:
        conn.execute(
            "INSERT INTO harvests (identity, session_key, cause, retired_at_ms, status) VALUES (?, ?, 'retired', ?, ?)",
            (identity, session_key, retired_at_ms, status),
        )


def test_harvests_list_pending_exit_interviews_by_identity_newest_first(bench: Bench) -> None:
    bench.remember("lead", "Note")
    bench.remember("lead", "Note", realm="other")
    add_harvest(bench, "lead", "sess-1", 1_000)
    add_harvest(bench, "scout", "sess-2", 3_000)
    add_harvest(bench, "lead", "sess-3", 2_000, realm="other")
    add_harvest(bench, "lead", "sess-4", 4_000, status="completed")

    def rows(principal: Any, **params: Any) -> list[str]:
        return [r["session_key"] for r in bench.panel("harvests", params, principal)["harvests"]]

    assert rows(REVIEWER) == ["sess-2", "sess-3", "sess-1"]
    assert rows(AUDITOR) == ["sess-3", "sess-1"]
    assert rows(AUDITOR, limit=1) == []  # the newest store row is scout's
    assert bench.panel("harvests", {"realm": "other"})["harvests"] == [
        {
            "realm": "other",
            "identity": "lead",
            "session_key": "sess-3",
            "cause": "retired",
            "retired_at_ms": 2_000,
        }
    ]


def test_audit_verdicts_list_open_verdicts_judged_by_their_record(bench: Bench) -> None:
    lead = bench.remember("lead", "Lead note")
    scout = bench.remember("scout", "Scout note")
    with bench.db() as conn:  # the steward's usage-audit verdicts; no API fills them yet
        conn.executemany(
            "INSERT INTO audit_verdicts (run_id, record_id, verdict, rationale, status, created_at_ms) "
            "VALUES ('run-1', ?, ?, ?, ?, ?)",
            [
                (lead, "dead_weight", "never injected", "open", 1_000),
                (scout, "dead_weight", "stale", "open", 2_000),
                ("mem-gone", "unknown", None, "open", 3_000),
                (lead, "load_bearing", None, "resolved", 4_000),
            ],
        )

    verdicts = bench.panel("audit_verdicts", {}, AUDITOR)["verdicts"]

    assert verdicts == [
        {
            "realm": "default",
            "run_id": "run-1",
            "record_id": lead,
            "verdict": "dead_weight",
            "rationale": "never injected",
            "created_at_ms": 1_000,
        }
    ]
    assert [v["record_id"] for v in bench.panel("audit_verdicts", {}, REVIEWER)["verdicts"]] == [scout, lead]
    assert bench.panel("audit_verdicts", {"limit": 1}, AUDITOR)["verdicts"] == []


def test_with_access_disabled_the_listings_hide_nothing(unguarded: Bench) -> None:
    held = unguarded.put("default", ScopeKind.OPERATOR, "acme", "Operator note").id
    with unguarded.db() as conn:
        conn.execute(
            "INSERT INTO audit_verdicts (run_id, record_id, verdict, rationale, status, created_at_ms) "
            "VALUES ('run-1', 'mem-gone', 'unknown', NULL, 'open', 1)"
        )
    add_harvest(unguarded, "ghost", "sess-1", 1)

    assert len(unguarded.panel("overview", {}, OUTSIDER)["scopes"]) == 1
    assert len(unguarded.panel("audit_verdicts", {}, OUTSIDER)["verdicts"]) == 1
    assert len(unguarded.panel("harvests", {}, OUTSIDER)["harvests"]) == 1
    assert held
