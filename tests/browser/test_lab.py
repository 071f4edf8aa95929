"""The retrieval lab in a real Chromium against the supply example: two configurations compared, what
one finds and the other misses highlighted, and the URL restoring the whole comparison."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit

from playwright.sync_api import Page

from tests.browser.conftest import WebStack, sign_in


def test_two_configurations_compared_and_restored(
    page: Page, web_stack: WebStack, snap: Callable[[str], None]
) -> None:
    sign_in(page, web_stack, web_stack.web_key)
    page.goto(f"{web_stack.url}/app/d/supply/lab")
    page.get_by_test_id("lab-question").fill("seal")
    # B: the same but one search result, labelled.
    second = page.get_by_test_id("lab-config-1")
    second.get_by_label("Search limit").fill("1")
    second.get_by_label("Configuration B label").fill("located")
    page.get_by_role("button", name="Compare").click()

    results = page.get_by_test_id("lab-results")
    results.wait_for()
    # A (all Kinds, the default limit) finds seals that B (one result) misses: highlighted in A.
    missed = page.get_by_test_id("lab-search-0").locator("[data-missed-by='located']")
    missed.first.wait_for()
    assert missed.count() >= 1
    assert "located misses" in missed.first.inner_text().lower()
    assert page.get_by_test_id("lab-search-1").locator("[data-item]").count() == 1
    # Every configuration's pack reports its tokens per section.
    tokens = page.get_by_test_id("lab-tokens")
    assert "seeds" in tokens.inner_text()
    assert page.get_by_test_id("lab-budget").count() == 2
    snap("lab")

    url = page.url
    query = parse_qs(urlsplit(url).query)
    assert query["q"] == ["seal"]
    assert query["c1.limit"] == ["1"]
    assert query["c1.label"] == ["located"]
    found = [item.get_attribute("data-item") for item in missed.all()]

    # The link alone restores the comparison, results and highlights included.
    restored = page.context.new_page()
    try:
        restored.goto(url)
        again = restored.get_by_test_id("lab-search-0").locator("[data-missed-by='located']")
        again.first.wait_for()
        assert [item.get_attribute("data-item") for item in again.all()] == found
        assert restored.get_by_test_id("lab-question").input_value() == "seal"
        assert restored.get_by_test_id("lab-config-1").get_by_label("Search limit").input_value() == "1"
    finally:
        restored.close()
    print(f"lab comparison link: {url}; found by A and missed by B: {found}")
