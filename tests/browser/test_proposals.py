"""Proposals: one opened through the REST API by an editor is found in the list, its changes read
Record by Record, approved with a comment and merged from the page; the blockers and next hints
shown are the API's."""

from __future__ import annotations

import secrets
from collections.abc import Callable

from playwright.sync_api import Page, expect

from tests.browser.conftest import WebStack, change_risk, sign_in


def open_proposal(stack: WebStack, title: str) -> str:
    """A branch with one change to Supplier S-1005's risk score, proposed into main by usr_author."""
    branch = f"web/review-{secrets.token_hex(3)}"
    with stack.rest(stack.author_key) as http:
        assert http.post("/api/v1/domains/supply/branches", json={"name": branch}).status_code == 201
        change_risk(http, "S-1005", "A new risk score for S-1005", branch=branch)
        response = http.post("/api/v1/domains/supply/proposals", json={"source": branch, "title": title})
        assert response.status_code == 201, response.text
        return str(response.json()["id"])


def test_a_proposal_is_reviewed_and_merged_from_the_page(
    page: Page, web_stack: WebStack, snap: Callable[[str], None]
) -> None:
    title = f"Risk change {secrets.token_hex(2)}"
    proposal = open_proposal(web_stack, title)
    sign_in(page, web_stack, web_stack.web_key)
    page.get_by_role("tab", name="Proposals").click()
    expect(page.get_by_test_id("proposals")).to_contain_text(title)
    snap("proposals")
    page.get_by_test_id("proposals").get_by_role("link", name=title).click()
    expect(page.get_by_test_id("proposal-title")).to_have_text(title)
    assert proposal in page.url

    diff = page.get_by_test_id("diff-record").filter(has_text="Supplier/S-1005")
    expect(diff).to_contain_text("risk_score")
    expect(page.get_by_test_id("blockers")).to_contain_text("approvals-pending")
    expect(page.get_by_test_id("next-steps")).to_contain_text("await_review")
    snap("proposal")

    page.get_by_test_id("review-comment").fill("The new score matches the audit.")
    page.get_by_test_id("review-approve").click()
    expect(page.get_by_test_id("reviews")).to_contain_text("The new score matches the audit.")
    expect(page.get_by_test_id("reviews")).to_contain_text("approved")

    page.get_by_test_id("merge").click()
    expect(page.get_by_test_id("proposal-status-badge")).to_have_text("merged")
    with web_stack.rest() as http:
        merged = http.get(f"/api/v1/domains/supply/proposals/{proposal}").json()
    assert merged["status"] == "merged" and merged["merged_revision"]


def test_a_blocked_merge_says_why(page: Page, web_stack: WebStack) -> None:
    """Not approved yet: Merge is disabled and says what blocks it; approved, it merges."""
    title = f"Blocked {secrets.token_hex(2)}"
    open_proposal(web_stack, title)
    sign_in(page, web_stack, web_stack.web_key)
    page.goto(f"{web_stack.url}/app/d/supply/proposals?status=open")
    page.get_by_test_id("proposals").get_by_role("link", name=title).click()
    merge = page.get_by_test_id("merge")
    expect(merge).to_be_disabled()
    expect(page.get_by_test_id("merge-reasons")).to_contain_text("needs 1 approval and has 0")
    page.get_by_test_id("review-approve").click()
    expect(merge).to_be_enabled()
    expect(page.get_by_test_id("merge-reasons")).to_have_count(0)
    merge.click()
    expect(page.get_by_test_id("proposal-status-badge")).to_have_text("merged")


def test_a_refused_action_shows_the_problem(page: Page, web_stack: WebStack) -> None:
    """The author may not approve their own Proposal: the page does not offer it; asked through the
    API anyway, the refusal says why (shown here for a request-changes on a closed Proposal)."""
    title = f"Refused {secrets.token_hex(2)}"
    proposal = open_proposal(web_stack, title)
    sign_in(page, web_stack, web_stack.web_key)
    page.goto(f"{web_stack.url}/app/d/supply/proposals/{proposal}")
    expect(page.get_by_test_id("proposal-title")).to_have_text(title)
    with web_stack.rest(web_stack.author_key) as http:  # closed behind the page's back
        assert http.post(f"/api/v1/domains/supply/proposals/{proposal}/close").status_code == 200
    page.get_by_test_id("review-request-changes").click()
    alert = page.get_by_role("alert").filter(has_text="closed")
    expect(alert.first).to_be_visible()


def test_a_conflict_is_resolved_from_the_page(page: Page, web_stack: WebStack) -> None:
    """The source and the target both change S-1003's risk score: the Proposal's Conflict, recorded
    when it opened, blocks Merge until it is resolved here with the source's value; then it merges."""
    title = f"Conflicting {secrets.token_hex(2)}"
    branch = f"web/conflict-{secrets.token_hex(3)}"
    with web_stack.rest(web_stack.author_key) as http:
        assert http.post("/api/v1/domains/supply/branches", json={"name": branch}).status_code == 201
        change_risk(http, "S-1003", "The branch's score", branch=branch)
        theirs_score = http.get(
            "/api/v1/domains/supply/kinds/Supplier/records/S-1003", params={"branch": branch}
        ).json()["values"]["risk_score"]
        change_risk(http, "S-1003", "main's score", step=13)  # another value: a Conflict
        response = http.post("/api/v1/domains/supply/proposals", json={"source": branch, "title": title})
        assert response.status_code == 201, response.text
    sign_in(page, web_stack, web_stack.web_key)
    page.goto(f"{web_stack.url}/app/d/supply/proposals")
    page.get_by_test_id("proposals").get_by_role("link", name=title).click()
    page.get_by_test_id("review-approve").click()
    expect(page.get_by_test_id("reviews")).to_contain_text("approved")
    # The Proposal was tried when it opened: its Conflict is listed and blocks the merge.
    conflicts = page.get_by_test_id("conflicts")
    expect(conflicts).to_contain_text("Supplier/S-1003.risk_score")
    expect(page.get_by_test_id("blockers")).to_contain_text("open-conflicts")
    expect(page.get_by_test_id("merge")).to_be_disabled()
    expect(page.get_by_test_id("merge-reasons")).to_contain_text("1 Conflict is open")
    conflicts.get_by_label("theirs (source)").check()
    conflicts.get_by_role("button", name="Resolve").click()
    expect(conflicts).to_contain_text("Resolved with theirs")
    page.get_by_test_id("merge").click()
    expect(page.get_by_test_id("proposal-status-badge")).to_have_text("merged")
    with web_stack.rest() as http:
        record = http.get("/api/v1/domains/supply/kinds/Supplier/records/S-1003").json()
    assert record["values"]["risk_score"] == str(theirs_score), "the source's value won"


def test_assigned_to_me_asks_the_api_for_my_proposals(page: Page, web_stack: WebStack) -> None:
    sign_in(page, web_stack, web_stack.web_key)
    page.goto(f"{web_stack.url}/app/d/supply/proposals?status=all")
    assigned = page.get_by_label("Assigned to me")
    assigned.click()  # the filter lives in the URL: the box is checked once the URL says so
    expect(assigned).to_be_checked()
    assert "assigned=me" in page.url
    # usr_web stewards no Kind of supply: the API lists none for it
    expect(page.get_by_text("No Proposals.")).to_be_visible()
