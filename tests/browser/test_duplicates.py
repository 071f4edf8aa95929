"""Duplicate candidates (reconciliation): a scan from the page lists pairs of Records with the rules
that matched; one candidate shows both Records side by side and is dismissed with a reason, another
is accepted with the survivor chosen, and the other Record is gone."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import Page, expect

from tests.browser.conftest import WebStack, assert_accessible, sign_in


def test_candidates_are_scanned_read_dismissed_and_merged(
    page: Page, web_stack: WebStack, snap: Callable[[str], None]
) -> None:
    sign_in(page, web_stack, web_stack.web_key)
    page.get_by_role("tab", name="Duplicates").click()
    page.get_by_role("button", name="Scan now").click()
    expect(page.get_by_text("Scanned:")).to_be_visible()
    page.goto(page.url.split("?")[0] + "?kind=Contract")
    rows = page.get_by_test_id("candidates").locator("tbody tr")
    expect(rows.first).to_be_visible()
    assert rows.count() >= 2
    expect(rows.first).to_contain_text("similar title")
    snap("duplicates")

    # One is not the same thing: dismissed with a reason.
    first = rows.nth(0)
    first_id = str(first.get_attribute("data-candidate"))
    first.get_by_role("button", name=first_id).click()
    panel = page.get_by_test_id("candidate")
    expect(panel.get_by_test_id("candidate-records").locator("th")).to_have_count(3)
    expect(page.get_by_test_id("dismiss")).to_be_disabled()
    panel.get_by_label("Reason").fill("Two framework agreements of different years")
    page.get_by_test_id("dismiss").click()
    expect(panel.get_by_test_id("decision")).to_contain_text("dismissed by usr_web")
    assert_accessible(page, "a duplicate candidate")

    # Another is the same thing: merged into the Record chosen to survive.
    second = page.get_by_test_id("candidates").locator(f"tbody tr:not([data-candidate='{first_id}'])").first
    second_id = str(second.get_attribute("data-candidate"))
    with web_stack.rest() as http:
        pair = http.get(f"/api/v1/domains/supply/reconciliation/{second_id}").json()
    keep, gone = pair["record_a"], pair["record_b"]
    second.get_by_role("button", name=second_id).click()
    panel.get_by_label(keep).check()
    page.get_by_test_id("accept").click()
    expect(panel.get_by_test_id("accepted")).to_contain_text(f"{gone} merged into {keep}")
    with web_stack.rest() as http:
        kind, key = gone.split("/", 1)
        assert http.get(f"/api/v1/domains/supply/kinds/{kind}/records/{key}").status_code == 404
