"""The retrieval lab in a real Chromium against the supply example: two configurations compared, what
one finds and the other misses highlighted, and the URL restoring the whole comparison; a limit
that seeds the pack; a question set saved in the browser and scored with hit@k."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit

from playwright.sync_api import Page, expect

from tests.browser.conftest import WebStack, assert_accessible, sign_in


def test_two_configurations_compared_restored_and_scored_on_a_question_set(
    page: Page, web_stack: WebStack, snap: Callable[[str], None]
) -> None:
    with web_stack.rest() as http:
        searched = http.post("/api/v1/domains/supply/search", json={"text": "seal", "limit": 5})
        assert searched.status_code == 200, searched.text
        expected = searched.json()["results"][0]["ref"]  # the first seal: every configuration's first
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
    # B's limit seeds its pack too: its one search result is its one seed.
    pack = page.get_by_test_id("lab-context-1")
    expect(pack.locator("[data-item]").first).to_be_visible()
    assert pack.locator("[data-item]").filter(has_text="seed ·").count() == 1, pack.inner_text()
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

    # A question set, saved in this browser, scores both on hit@k: B (one result) finds the first
    # seal too, and neither finds what nothing matches.
    sets = page.get_by_test_id("lab-question-sets")
    sets.get_by_label("Set name").fill("seals")
    sets.get_by_label("k", exact=True).fill("3")
    questions = f"seal | {expected}\nnothing like this zzqx | Part/P-99999"
    page.get_by_test_id("lab-questions").fill(questions)
    sets.get_by_role("button", name="Save set").click()
    sets.get_by_role("button", name="Score the configurations").click()
    expect(page.get_by_test_id("hit-at-k-0")).to_have_text("1/2 (50%)")
    expect(page.get_by_test_id("hit-at-k-1")).to_have_text("1/2 (50%)")
    expect(page.get_by_test_id("lab-scores")).to_contain_text("found at 1")
    expect(page.get_by_test_id("lab-scores")).to_contain_text("miss (not in the first 3)")
    snap("lab-question-set")
    assert_accessible(page, "the lab with a scored question set")
    # Saved in this browser: the restored page (same profile) offers it.
    restored = page.context.new_page()
    try:
        restored.goto(url)
        sets = restored.get_by_test_id("lab-question-sets")
        sets.get_by_label("Saved sets").select_option("seals")
        expect(restored.get_by_test_id("lab-questions")).to_have_value(questions)
    finally:
        restored.close()
