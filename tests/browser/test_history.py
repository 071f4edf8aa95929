"""What changed, and where branches stand: a Revision's page (who, why, origin, what it changed),
reached from the overview's latest Revisions; and a branch compared with main (ahead and behind
counts, the Revisions each has, and what the branch changed since they last met). Both read
`GET .../revisions/{revision}`, not the branches' whole change feeds."""

from __future__ import annotations

import secrets
from collections.abc import Callable

from playwright.sync_api import Page, expect

from tests.browser.conftest import WebStack, assert_accessible, change_risk, sign_in


def test_a_revision_page_says_who_why_and_what_changed(
    page: Page, web_stack: WebStack, snap: Callable[[str], None]
) -> None:
    message = f"Risk review {secrets.token_hex(2)}"
    with web_stack.rest(web_stack.author_key) as http:
        answer = change_risk(http, "S-1006", message)
    sign_in(page, web_stack, web_stack.web_key)
    expect(page.get_by_test_id("revisions").get_by_role("link", name=message)).to_be_visible()
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.get_by_test_id("revisions").get_by_role("link", name=message).click()
    expect(page.get_by_test_id("revision-message")).to_have_text(message)
    facts = page.get_by_test_id("revision-facts")
    expect(facts).to_contain_text("usr_author")
    expect(facts).to_contain_text("operation")
    expect(facts).to_contain_text("Supplier 1")
    assert answer["revision"] in page.url
    record = page.get_by_test_id("diff-record").filter(has_text="Supplier/S-1006")
    expect(record).to_contain_text("risk_score")
    expect(page).to_have_title(f"Revision {answer['revision'][:12]} · supply · Lorebase")
    assert any(f"/revisions/{answer['revision']}" in url for url in requests), requests
    assert not any("/changes" in url for url in requests), requests
    snap("revision")
    assert_accessible(page, "a Revision")


def test_a_branch_compared_with_main(page: Page, web_stack: WebStack, snap: Callable[[str], None]) -> None:
    branch = f"web/compare-{secrets.token_hex(3)}"
    with web_stack.rest(web_stack.author_key) as http:
        assert http.post("/api/v1/domains/supply/branches", json={"name": branch}).status_code == 201
        change_risk(http, "S-1007", "First change on the branch", branch=branch)
        change_risk(http, "S-1008", "Second change on the branch", branch=branch)
        change_risk(http, "S-1009", "A change on main meanwhile")
    sign_in(page, web_stack, web_stack.web_key)
    page.get_by_role("tab", name="Compare").click()
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(page.url.split("?")[0] + f"?head={branch}")
    counts = page.get_by_test_id("compare-counts")
    expect(counts).to_contain_text("2 ahead")
    expect(counts).to_contain_text("1 behind")
    expect(page.get_by_test_id("compare-ahead")).to_contain_text("Second change on the branch")
    expect(page.get_by_test_id("compare-behind")).to_contain_text("A change on main meanwhile")
    diff = page.get_by_test_id("diff")
    expect(diff.get_by_test_id("diff-record")).to_have_count(2)
    expect(diff).to_contain_text("Supplier/S-1007")
    expect(diff).not_to_contain_text("Supplier/S-1009")
    # Read back from both heads to where they met (2 + 1 Revisions and the one they share, each
    # side's), not both whole histories.
    assert not any("/changes" in url for url in requests), requests
    assert sum("/revisions/" in url for url in requests) <= 6, requests
    snap("compare")
    assert_accessible(page, "a branch compare")
    # A Revision in the list opens its page.
    page.get_by_test_id("compare-ahead").get_by_role("link").first.click()
    expect(page.get_by_test_id("revision-message")).to_have_text("Second change on the branch")
