"""``meta/memory/panel/records``: body-free rows, newest updated first, filters, keyset cursors across
realms, pages cut from what the caller may read, and the store-cursor guard."""

from __future__ import annotations

from typing import Any

import pytest

from meta_memory.memory.records import ScopeKind, Status
from meta_memory.memory.sqlite.panel import RecordFilter, RecordKey, RecordsPage
from meta_memory.panel import AgentMemorySource, MemoryPanel, PanelStore, StoreCursorStalled
from meta_memory.panel.params import parse_records_params

from .conftest import AUDITOR, LEADS, OUTSIDER, RED, REVIEWER, ROOT, Bench


def ids(result: dict[str, Any]) -> list[str]:
    return [r["memory_id"] for r in result["records"]]


def test_list_rows_are_body_free_and_carry_body_bytes(bench: Bench) -> None:
    bench.remember("lead", "Deploys", "Deploys need approval — always.")

    (row,) = bench.panel("records")["records"]

    assert "body" not in row and "content_hash" not in row
    assert row["body_bytes"] == len("Deploys need approval — always.".encode())
    assert (row["realm"], row["scope_kind"], row["scope_key"], row["status"]) == (
        "default",
        "identity",
        "lead",
        "active",
    )


def test_records_are_listed_newest_updated_first_with_the_id_breaking_ties(bench: Bench) -> None:
    first = bench.remember("lead", "First")
    second = bench.remember("lead", "Second")
    same_a = bench.put("default", ScopeKind.MOB, "ops", "Tie a", memory_id="mem-tie-a").id
    same_b = bench.put("default", ScopeKind.MOB, "ops", "Tie b", memory_id="mem-tie-b").id

    assert ids(bench.panel("records")) == [same_b, same_a, second, first]


def test_an_update_moves_the_superseded_record_to_its_update_time(bench: Bench) -> None:
    old = bench.remember("lead", "Deploys")
    other = bench.remember("lead", "Other")
    bench.tick()
    bench.sdk(
        "meta/agent_memory/update", {"identity": "lead", "memory_id": old, "title": "Deploys", "body": "v2"}
    )

    listed = bench.panel("records")["records"]

    assert [r["memory_id"] for r in listed][1:] == [old, other]
    assert listed[1]["status"] == "superseded" and listed[1]["superseded_by"] == listed[0]["memory_id"]


def test_filters_narrow_by_realm_scope_scope_key_and_status(bench: Bench) -> None:
    lead = bench.remember("lead", "Lead note")
    scout = bench.remember("scout", "Scout note")
    elsewhere = bench.remember("lead", "Elsewhere", realm="other")
    mob = bench.put("default", ScopeKind.MOB, "ops", "Mob note").id
    bench.sdk("meta/agent_memory/forget", {"identity": "scout", "memory_id": scout})

    assert ids(bench.panel("records", {"realm": "other"})) == [elsewhere]
    assert ids(bench.panel("records", {"scope": "mob"})) == [mob]
    assert ids(bench.panel("records", {"scope": "identity", "scope_key": "lead"})) == [elsewhere, lead]
    assert ids(bench.panel("records", {"status": "tombstoned"})) == [scout]
    assert ids(bench.panel("records", {"realm": "default", "scope_key": "lead", "status": "active"})) == [
        lead
    ]


def test_the_identity_filter_implies_identity_scope(bench: Bench) -> None:
    lead = bench.remember("lead", "Lead note")
    bench.put("default", ScopeKind.MOB, "lead", "A mob that shares the name")

    assert ids(bench.panel("records", {"identity": "lead"})) == [lead]
    assert ids(bench.panel("records", {"identity": "lead", "scope": "identity", "scope_key": "lead"})) == [
        lead
    ]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"scope": "team"}, "scope"),
        ({"scope": 3}, "scope"),
        ({"status": "deleted"}, "status"),
        ({"status": "ACTIVE"}, "status"),
        ({"cursor": "nope"}, "cursor"),
        ({"cursor": "12:"}, "cursor"),
        ({"cursor": ":mem-1"}, "cursor"),
        ({"cursor": "-5:mem-1"}, "cursor"),
        ({"cursor": "1e3:mem-1"}, "cursor"),
        ({"cursor": "99999999999999999999:mem-1"}, "cursor"),
        ({"cursor": 12}, "cursor"),
        ({"limit": "10"}, "limit"),
        ({"limit": 2.5}, "limit"),
        ({"limit": True}, "limit"),
        ({"realm": ""}, "realm"),
        ({"identity": ""}, "identity"),
        ({"identity": "lead", "scope": "mob"}, "identity"),
        ({"identity": "lead", "scope_key": "scout"}, "identity"),
        ({"scope_key": 7}, "scope_key"),
        ([], "params"),
    ],
)
def test_bad_params_are_refused_with_invalid_params_naming_the_field(
    bench: Bench, params: Any, field: str
) -> None:
    refused = bench.refusal("records", params)

    assert refused.code == -32602
    assert field in refused.message


def test_limit_defaults_to_50_and_is_clamped_into_1_to_200(bench: Bench) -> None:
    store = bench.store()
    for i in range(205):
        bench.put("default", ScopeKind.REALM, "", f"Note {i}", at_ms=1_000 + i)
    assert store.get("mem-realm-realm-note-0") is not None

    assert len(bench.panel("records")["records"]) == 50
    assert len(bench.panel("records", {"limit": 1000})["records"]) == 200
    assert len(bench.panel("records", {"limit": 0})["records"]) == 1
    assert len(bench.panel("records", {"limit": -3})["records"]) == 1


def test_null_params_list_everything_with_the_defaults(bench: Bench) -> None:
    made = bench.remember("lead", "Note")

    assert ids(bench.panel("records", None)) == [made]
    assert bench.panel("records", {})["realms"] == ["default"]


def test_without_realm_one_cursor_resumes_every_realm(bench: Bench) -> None:
    made = []
    for i in range(4):
        for realm in ("alpha", "beta", "gamma"):
            made.append(bench.remember("lead", f"Note {i} {realm}", realm=realm))
    newest_first = list(reversed(made))

    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        page = bench.panel("records", {"limit": 5, **({"cursor": cursor} if cursor else {})})
        assert page["realms"] == ["alpha", "beta", "gamma"]
        seen += ids(page)
        pages += 1
        cursor = page["next_cursor"]
        if cursor is None:
            break
        last = page["records"][-1]
        assert cursor == f"{last['updated_at_ms']}:{last['memory_id']}"

    assert seen == newest_first and pages == 3


def test_next_cursor_comes_exactly_when_more_readable_rows_follow(bench: Bench) -> None:
    lead_old = bench.remember("lead", "Lead old")
    lead_new = bench.remember("lead", "Lead new")
    for i in range(5):
        bench.remember("scout", f"Scout {i}")  # newer, and unreadable to LEADS

    page = bench.panel("records", {"limit": 1}, LEADS)
    assert ids(page) == [lead_new] and page["next_cursor"] is not None
    last = bench.panel("records", {"limit": 1, "cursor": page["next_cursor"]}, LEADS)
    assert ids(last) == [lead_old] and last["next_cursor"] is None
    assert bench.panel("records", {"limit": 2}, LEADS)["next_cursor"] is None


def test_a_page_keeps_together_the_rows_two_realms_hold_under_one_id_and_update_time(bench: Bench) -> None:
    bench.put("alpha", ScopeKind.REALM, "", "Older", memory_id="mem-older", at_ms=1_000)
    for realm in ("alpha", "beta"):
        bench.put(realm, ScopeKind.REALM, "", "Twin", memory_id="mem-twin", at_ms=2_000)

    page = bench.panel("records", {"limit": 1})

    assert [(r["realm"], r["memory_id"]) for r in page["records"]] == [
        ("alpha", "mem-twin"),
        ("beta", "mem-twin"),
    ]
    assert page["next_cursor"] == "2000:mem-twin"
    rest = bench.panel("records", {"limit": 1, "cursor": page["next_cursor"]})
    assert ids(rest) == ["mem-older"] and rest["next_cursor"] is None


def test_an_identity_keyed_listing_of_an_identity_the_caller_may_not_read_is_denied(bench: Bench) -> None:
    bench.remember("scout", "Scout note")

    for params in ({"identity": "scout"}, {"scope": "identity", "scope_key": "scout"}):
        denied = bench.refusal("records", params, LEADS)
        assert denied.code == -32030
        assert denied.data == {"kind": "access_denied", "action": "agent.memory.read", "resource": "scout"}
    assert bench.refusal("records", {"identity": "scout"}, AUDITOR).code == -32030
    assert ids(bench.panel("records", {"identity": "lead"}, LEADS)) == []


def test_each_reader_sees_exactly_the_scopes_its_grants_cover(bench: Bench) -> None:
    rows = {
        "lead": bench.remember("lead", "Lead note"),
        "scout": bench.remember("scout", "Scout note"),
        "analyst": bench.remember("analyst", "Analyst note"),
        "mob": bench.put("default", ScopeKind.MOB, "ops", "Mob note").id,
        "operator": bench.put("default", ScopeKind.OPERATOR, "acme", "Operator note").id,
        "realm": bench.put("default", ScopeKind.REALM, "", "Realm note").id,
    }

    def visible(principal: Any) -> set[str]:
        listed = set(ids(bench.panel("records", {}, principal)))
        return {name for name, memory_id in rows.items() if memory_id in listed}

    assert visible(ROOT) == set(rows)
    assert visible(REVIEWER) == set(rows)
    assert visible(LEADS) == {"lead"}
    assert visible(RED) == {"lead", "analyst"}
    assert visible(AUDITOR) == {"lead", "analyst", "mob", "realm"}
    assert visible(OUTSIDER) == set()


def test_an_identity_unknown_to_the_console_is_withheld_while_an_agent_scoped_deny_applies(
    bench: Bench,
) -> None:
    ghost = bench.remember("ghost", "Ghost note")

    assert ids(bench.panel("records", {}, AUDITOR)) == []
    assert ids(bench.panel("records", {}, REVIEWER)) == [ghost]


def test_quarantined_content_needs_the_review_grant_and_a_released_successor_does_not(bench: Bench) -> None:
    held = bench.quarantine("lead", "Held")
    released = bench.quarantine("lead", "Released")
    discarded = bench.quarantine("lead", "Discarded")
    forgotten = bench.quarantine("lead", "Forgotten")
    successor = bench.decide(released, "release", identity="lead")["successor"]["memory_id"]
    bench.decide(discarded, "tombstone", identity="lead")
    bench.sdk("meta/agent_memory/forget", {"identity": "lead", "memory_id": forgotten})

    reviewer_view = set(ids(bench.panel("records", {}, RED)))
    reader_view = set(ids(bench.panel("records", {}, LEADS)))

    assert reviewer_view == {held, released, discarded, forgotten, successor}
    assert reader_view == {successor}


def test_a_store_whose_cursor_does_not_advance_is_refused(bench: Bench) -> None:
    for i in range(3):
        bench.remember("lead", f"Note {i}")
    assert bench.runtime.agent_memory is not None
    real = AgentMemorySource(bench.runtime.agent_memory)

    class Stuck:
        """Serves its first page again whatever cursor it is given."""

        def __init__(self, inner: PanelStore) -> None:
            self.inner = inner
            self.realm = inner.realm

        def records_page(self, where: RecordFilter, after: RecordKey | None, limit: int) -> RecordsPage:
            return self.inner.records_page(where, None, limit)

        def __getattr__(self, name: str) -> Any:
            return getattr(self.inner, name)

    class Source:
        def realms(self) -> list[str]:
            return real.realms()

        def store(self, realm: str) -> Any:
            inner = real.store(realm)
            return Stuck(inner) if inner is not None else None

    panel = MemoryPanel(Source(), bench.runtime.access)
    first = panel.records(parse_records_params({"limit": 1}), ROOT)
    assert first["next_cursor"] is not None

    with pytest.raises(StoreCursorStalled) as refused:
        panel.records(parse_records_params({"limit": 1, "cursor": first["next_cursor"]}), ROOT)
    assert refused.value.code == -32603 and refused.value.data == {
        "kind": "panel_store_refused",
        "realm": "default",
    }


def test_a_store_whose_next_cursor_stands_still_is_refused(bench: Bench) -> None:
    bench.remember("lead", "Note")
    assert bench.runtime.agent_memory is not None
    real = AgentMemorySource(bench.runtime.agent_memory)

    class Standing:
        realm = "default"

        def records_page(self, where: RecordFilter, after: RecordKey | None, limit: int) -> RecordsPage:
            return RecordsPage((), after or (10**12, "mem-z"))

    class Source:
        def realms(self) -> list[str]:
            return real.realms()

        def store(self, realm: str) -> Any:
            return Standing()

    with pytest.raises(StoreCursorStalled):
        MemoryPanel(Source(), bench.runtime.access).records(parse_records_params({"cursor": "5:mem-a"}), ROOT)


def test_with_access_disabled_every_row_is_visible_to_anyone(unguarded: Bench) -> None:
    held = unguarded.quarantine("scout", "Held")
    note = unguarded.put("default", ScopeKind.OPERATOR, "acme", "Operator note").id

    assert set(ids(unguarded.panel("records", {}, OUTSIDER))) == {held, note}


def test_a_realm_without_a_store_lists_nothing_and_creates_no_file(bench: Bench) -> None:
    bench.remember("lead", "Note")
    assert bench.runtime.agent_memory is not None

    result = bench.panel("records", {"realm": "nowhere"})

    assert result == {"records": [], "next_cursor": None, "realms": []}
    root = bench.runtime.agent_memory.root
    assert not any("nowhere" in p.name for p in root.iterdir()) if root.exists() else True
    assert "nowhere" not in bench.runtime.agent_memory.realms()  # no realm was created on either backend


def test_status_filter_lists_quarantined_rows_only_to_reviewers(bench: Bench) -> None:
    held = bench.quarantine("lead", "Held")
    bench.remember("lead", "Plain")

    assert ids(bench.panel("records", {"status": Status.QUARANTINED.value}, RED)) == [held]
    assert ids(bench.panel("records", {"status": "quarantined"}, LEADS)) == []
