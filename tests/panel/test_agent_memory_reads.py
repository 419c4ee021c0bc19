"""``meta/agent_memory/list`` and ``get`` on the console surface: the identity is optional, and every
record is judged by the caller's grants exactly as the panel's ``records`` and ``record`` judge it
(read + view per identity, mob and operator reads, review for quarantined content); pages stay full
past unreadable records. On the application surface the identity is required, and an application
key confined to some realms reads only those."""

from __future__ import annotations

from typing import Any

import pytest

from meta_memory.access import ANONYMOUS, Principal
from meta_memory.errors import AccessDenied, InvalidParams, MetaError, UnknownRecord
from meta_memory.gateway.dispatch import HTTP, SDK, CallContext
from meta_memory.memory.records import ScopeKind, Status

from .conftest import AUDITOR, BLIND, LEADS, OUTSIDER, RED, REVIEWER, ROOT, Bench

LIST = "meta/agent_memory/list"
GET = "meta/agent_memory/get"
HISTORY = "meta/agent_memory/history"
PRINCIPALS = [ROOT, LEADS, RED, AUDITOR, REVIEWER, OUTSIDER, BLIND, ANONYMOUS]


def _populate(bench: Bench) -> dict[str, str]:
    """A realm of every kind of row a grant can tell apart; returns their ids by name."""
    made = {
        "lead": bench.remember("lead", "Lead note"),
        "scout": bench.remember("scout", "Scout note"),
        "analyst": bench.remember("analyst", "Analyst note"),
        "ghost": bench.remember("ghost", "Ghost note"),
        "lead_held": bench.quarantine("lead", "Lead held"),
        "scout_held": bench.quarantine("scout", "Scout held"),
        "mob": bench.put("default", ScopeKind.MOB, "ops", "Mob note").id,
        "operator": bench.put("default", ScopeKind.OPERATOR, "acme", "Operator note").id,
        "realm": bench.put("default", ScopeKind.REALM, "", "Realm note").id,
    }
    for n in range(6):  # interleaved, so that a restricted caller's pages skip rows
        made[f"lead{n}"] = bench.remember("lead", f"Lead more {n}")
        made[f"scout{n}"] = bench.remember("scout", f"Scout more {n}")
    bench.sdk("meta/agent_memory/forget", {"identity": "scout", "memory_id": made["scout0"]})
    return made


def _pages(
    bench: Bench, params: dict[str, Any], principal: Principal, limit: int
) -> tuple[list[str], list[int]]:
    ids: list[str] = []
    sizes: list[int] = []
    cursor: str | None = None
    while True:
        page = bench.call(
            LIST, {**params, "limit": limit, **({"cursor": cursor} if cursor else {})}, principal
        )
        ids.extend(r["memory_id"] for r in page["records"])
        sizes.append(len(page["records"]))
        cursor = page["next_cursor"]
        if cursor is None:
            return ids, sizes


@pytest.mark.parametrize("principal", PRINCIPALS, ids=lambda p: str(p.subject))
def test_the_console_lists_a_realm_exactly_as_the_panel_lets_the_caller_read_it(
    bench: Bench, principal: Principal
) -> None:
    _populate(bench)
    panel_ids: list[str] = []
    cursor = None
    while True:
        page = bench.panel(
            "records", {"realm": "default", **({"cursor": cursor} if cursor else {})}, principal
        )
        panel_ids.extend(r["memory_id"] for r in page["records"])
        if (cursor := page["next_cursor"]) is None:
            break

    ids, sizes = _pages(bench, {"status": "any"}, principal, limit=3)

    assert ids == panel_ids
    assert all(size == 3 for size in sizes[:-1])


def test_grants_decide_which_rows_a_console_caller_lists(bench: Bench) -> None:
    made = _populate(bench)
    leads, _ = _pages(bench, {"status": "any"}, LEADS, limit=2)
    red, _ = _pages(bench, {"status": "any"}, RED, limit=50)

    lead_rows = {made[k] for k in made if k.startswith("lead") and k != "lead_held"}
    assert set(leads) == lead_rows  # read + view on lead; no review, so not its quarantined record
    assert made["lead_held"] in red and made["scout"] not in red  # review on team red only
    assert _pages(bench, {"status": "any"}, OUTSIDER, limit=5) == ([], [0])


def test_naming_an_identity_the_caller_may_not_read_is_denied_as_the_panel_denies_it(bench: Bench) -> None:
    _populate(bench)
    with pytest.raises(AccessDenied) as denied:
        bench.call(LIST, {"identity": "scout"}, LEADS)
    panel = bench.refusal("records", {"identity": "scout"}, LEADS)

    assert denied.value.code == -32030
    assert (denied.value.message, denied.value.data) == (panel.message, panel.data)
    assert [r["scope_key"] for r in bench.call(LIST, {"identity": "lead"}, LEADS)["records"]] == ["lead"] * 7


def test_a_console_get_is_judged_like_the_panels_record(bench: Bench) -> None:
    made = _populate(bench)

    assert bench.call(GET, {"memory_id": made["lead"]}, LEADS)["record"]["body"] == "Lead note: details."
    for memory_id, principal in (
        (made["scout"], LEADS),
        (made["lead_held"], LEADS),
        (made["operator"], AUDITOR),
    ):
        with pytest.raises(AccessDenied) as denied:
            bench.call(GET, {"memory_id": memory_id}, principal)
        panel = bench.refusal("record", {"memory_id": memory_id}, principal)
        assert denied.value.data == panel.data, memory_id
    assert bench.call(GET, {"memory_id": made["lead_held"]}, RED)["record"]["status"] == "quarantined"
    with pytest.raises(UnknownRecord):
        bench.call(GET, {"memory_id": "mem-nowhere"}, ROOT)
    with pytest.raises(UnknownRecord):  # named with another identity: not that identity's record
        bench.call(GET, {"identity": "scout", "memory_id": made["lead"]}, ROOT)


def test_a_successor_the_caller_may_not_read_is_not_named(bench: Bench) -> None:
    prior = bench.remember("lead", "Deploys", "Deploys on Tuesdays.")
    update = bench.quarantine("lead", "Deploys", "Deploys on Fridays.", memory_id=prior)
    bench.decide(update, "release", identity="lead")
    released = f"{update}-released"
    assert bench.call(GET, {"memory_id": prior}, LEADS)["successor"] == released
    bench.sdk("meta/agent_memory/forget", {"identity": "lead", "memory_id": released})
    assert bench.store().get(released).status is Status.TOMBSTONED  # type: ignore[union-attr]

    # A tombstone that was quarantined content needs the review grant: LEADS lacks it, RED has it.
    assert bench.call(GET, {"memory_id": prior}, LEADS)["successor"] is None
    assert bench.call(GET, {"memory_id": prior}, RED)["successor"] == released


def test_a_console_history_withholds_quarantined_content_from_a_caller_without_review(bench: Bench) -> None:
    prior = bench.remember("lead", "Deploys", "Deploys on Tuesdays.")
    update = bench.quarantine("lead", "Deploys", "Deploys on Fridays.", memory_id=prior)
    bench.decide(update, "release", identity="lead")
    released = f"{update}-released"

    def history(principal: Any) -> list[tuple[str, str | None, bool, str | None]]:
        reply = bench.call(HISTORY, {"memory_id": prior}, principal)
        return [(v["memory_id"], v["ended"], v["content_withheld"], v["body"]) for v in reply["versions"]]

    # RED reviews lead's quarantine: every body. LEADS reads lead's memory without review: the
    # quarantined record (now a tombstone of quarantined content) keeps its metadata, not its
    # content; its release is active memory, which LEADS reads.
    assert history(RED) == [
        (prior, "superseded", False, "Deploys on Tuesdays."),
        (update, "released", False, "Deploys on Fridays."),
        (released, None, False, "Deploys on Fridays."),
    ]
    assert history(LEADS) == [
        (prior, "superseded", False, "Deploys on Tuesdays."),
        (update, "released", True, None),
        (released, None, False, "Deploys on Fridays."),
    ]
    withheld = bench.call(HISTORY, {"memory_id": prior}, LEADS)["versions"][1]
    assert (withheld["title"], withheld["tags"], withheld["description"]) == (None, None, None)
    assert len(withheld["content_hash"]) == 64 and withheld["status"] == "tombstoned"
    # A caller who may not read lead's memory at all is refused, as get refuses it.
    for principal in (OUTSIDER, BLIND):
        with pytest.raises(AccessDenied) as denied:
            bench.call(HISTORY, {"memory_id": prior}, principal)
        with pytest.raises(AccessDenied) as by_get:
            bench.call(GET, {"memory_id": prior}, principal)
        assert denied.value.data == by_get.value.data


def test_the_application_surface_requires_the_identity_the_console_does_not(bench: Bench) -> None:
    made = bench.remember("lead", "Lead note")
    for method, params in ((LIST, {}), (GET, {"memory_id": made})):
        with pytest.raises(InvalidParams) as refused:
            bench.sdk(method, params)
        assert refused.value.message == "identity must be a valid non-empty string"
        assert bench.call(method, params, ROOT)["realm"] == "default"


def test_both_methods_are_offered_on_both_surfaces(bench: Bench) -> None:
    console = bench.call("meta/capabilities", None, OUTSIDER)["methods"]
    application = bench.sdk("meta/capabilities", None)["methods"]
    assert {LIST, GET} <= set(console) and {LIST, GET} <= set(application)


def test_a_key_confined_to_a_realm_lists_and_gets_only_there(bench: Bench) -> None:
    own = bench.remember("lead", "Tenant note", realm="tenant-a")
    tenant = CallContext(SDK, principal=Principal("tenant", realms=frozenset({"tenant-a"})), transport=HTTP)

    listed = bench.dispatcher.call(LIST, {"identity": "lead", "realm": "tenant-a"}, tenant)
    assert [r["memory_id"] for r in listed["records"]] == [own]
    assert bench.dispatcher.call(GET, {"identity": "lead", "memory_id": own, "realm": "tenant-a"}, tenant)
    for method, params in ((LIST, {"identity": "lead"}), (GET, {"identity": "lead", "memory_id": own})):
        with pytest.raises(MetaError) as refused:
            bench.dispatcher.call(method, params, tenant)  # the default realm is not the key's
        assert refused.value.code == -32030 and refused.value.data["action"] == "rpc.realm"


def test_the_console_lists_with_access_disabled_everything(unguarded: Bench) -> None:
    made = _populate(unguarded)
    ids, _ = _pages(unguarded, {"status": "any"}, OUTSIDER, limit=4)
    assert set(ids) == set(made.values())
