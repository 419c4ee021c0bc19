"""The Proposals view in headless Chromium against a real gateway: an open proposal is read in
full (its body shown before any decision), then accepted or rejected after a confirmation bound to
its content hash; a refusal is shown in the page."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from playwright.sync_api import expect

from meta_memory.memory.records import content_hash

from .conftest import Gateway

SignIn = Callable[..., None]
Shoot = Callable[[Any, str], None]


def _propose(gateway: Gateway, title: str, body: str) -> str:
    params = {"scope": {"kind": "mob", "key": "crew"}, "title": title, "body": body}
    return str(gateway.call("meta/agent_memory/propose", params)["proposal_id"])


def _open_review(page: Any, proposal_id: str) -> Any:
    page.get_by_role("link", name="Proposals").click()
    row = page.locator(f"tr[data-proposal-id='{proposal_id}']")
    row.get_by_role("button", name="Review").click()
    return row


def test_accepting_a_proposal_shows_its_body_first_and_commits_it_into_the_mob(
    page: Any, gateway: Gateway, sign_in: SignIn, screenshot: Shoot
) -> None:
    accepted = _propose(gateway, "Staging resets nightly", "The staging database resets at 02:00 UTC.")
    _propose(gateway, "Freeze", "No deploys in December.")
    sign_in(page)

    row = _open_review(page, accepted)
    expect(page.locator(".review-row [data-field=body]")).to_have_text(
        "The staging database resets at 02:00 UTC."
    )
    screenshot(page, "proposals")
    page.locator(".review-row").get_by_role("button", name="Accept").click()
    digest = content_hash("Staging resets nightly", "The staging database resets at 02:00 UTC.")
    expect(page.locator("#confirm-hash")).to_have_text(f"Bound to content hash {digest}")
    page.get_by_label("Rationale").fill("matches the runbook")
    page.locator("#confirm").get_by_role("button", name="Accept").click()

    expect(page.get_by_role("status")).to_contain_text("Accepted into mob: crew as mem-")
    expect(row).to_have_count(0)
    expect(page.locator(".view[data-view=proposals] tbody tr[data-proposal-id]")).to_have_count(1)
    mob = gateway.call("meta/memory/panel/records", {"scope": "mob", "scope_key": "crew"}, console=True)
    assert [r["title"] for r in mob["records"]] == ["Staging resets nightly"]
    detail = gateway.call("meta/memory/panel/proposal", {"proposal_id": accepted}, console=True)
    assert detail["proposal"]["status"] == "accepted"


def test_rejecting_a_proposal_after_cancelling_once_writes_nothing_to_the_mob(
    page: Any, gateway: Gateway, sign_in: SignIn
) -> None:
    rejected = _propose(gateway, "Freeze", "No deploys in December.")
    sign_in(page)
    row = _open_review(page, rejected)

    page.locator(".review-row").get_by_role("button", name="Reject").click()
    page.locator("#confirm").get_by_role("button", name="Cancel").click()
    expect(row).to_have_count(1)  # cancelled: still open
    page.locator(".review-row").get_by_role("button", name="Reject").click()
    page.locator("#confirm").get_by_role("button", name="Reject").click()

    expect(page.get_by_role("status")).to_contain_text("Rejected: “Freeze”")
    expect(page.locator(".view[data-view=proposals] .empty")).to_have_text("No proposals waiting")
    assert gateway.call("meta/memory/panel/records", {"scope": "mob"}, console=True)["records"] == []
    detail = gateway.call("meta/memory/panel/proposal", {"proposal_id": rejected}, console=True)
    assert detail["proposal"]["status"] == "rejected"


def test_a_decision_refused_by_the_gateway_is_explained_in_the_page(
    page: Any, gateway: Gateway, sign_in: SignIn
) -> None:
    proposal_id = _propose(gateway, "Freeze", "No deploys in December.")
    sign_in(page)
    _open_review(page, proposal_id)
    expect(page.locator(".review-row [data-field=body]")).to_have_text("No deploys in December.")
    # Someone else decides it while the page shows it.
    digest = content_hash("Freeze", "No deploys in December.")
    decide = {"proposal_id": proposal_id, "verdict": "reject", "expected_content_hash": digest}
    gateway.call("meta/memory/proposals/decide", decide, console=True)

    page.locator(".review-row").get_by_role("button", name="Accept").click()
    page.locator("#confirm").get_by_role("button", name="Accept").click()

    expect(page.locator(".review-row [role=alert]")).to_contain_text("Refused (already_decided)")
    assert gateway.call("meta/memory/panel/records", {"scope": "mob"}, console=True)["records"] == []
