"""The retrieval lab in a real Chromium against the supply example: two configurations compared, what
one finds and the other misses highlighted, and the URL restoring the whole comparison; a limit
that seeds the pack; a question set saved in the browser and scored with hit@k."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit

from playwright.sync_api import Page, expect

from tests.browser.conftest import WebStack, assert_accessible, sign_in


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


def test_the_limit_seeds_the_pack_and_a_saved_question_set_scores_hit_at_k(
    page: Page, web_stack: WebStack, snap: Callable[[str], None]
) -> None:
    with web_stack.rest() as http:
        found = http.post("/api/v1/domains/supply/search", json={"text": "seal", "limit": 5})
        assert found.status_code == 200, found.text
        expected = found.json()["results"][0]["ref"]
    assert not expected.startswith("Plant/")
    sign_in(page, web_stack, web_stack.web_key)
    # A: at most 2 search results, and so 2 seeds in its pack; B: Plants only.
    page.goto(f"{web_stack.url}/app/d/supply/lab?c0.limit=2&c1.kind=Plant")
    page.get_by_test_id("lab-question").fill("seal")
    page.get_by_role("button", name="Compare").click()
    pack = page.get_by_test_id("lab-context-0")
    expect(pack.locator("[data-item]").first).to_be_visible()
    seeds = pack.locator("[data-item]").filter(has_text="seed ·").count()
    assert 1 <= seeds <= 2, pack.inner_text()

    sets = page.get_by_test_id("lab-question-sets")
    sets.get_by_label("Set name").fill("seals")
    sets.get_by_label("k", exact=True).fill("3")
    page.get_by_test_id("lab-questions").fill(f"seal | {expected}\nnothing like this zzqx | Part/P-99999")
    sets.get_by_role("button", name="Save set").click()
    sets.get_by_role("button", name="Score the configurations").click()
    expect(page.get_by_test_id("hit-at-k-0")).to_have_text("1/2 (50%)")
    expect(page.get_by_test_id("hit-at-k-1")).to_have_text("0/2 (0%)")
    expect(page.get_by_test_id("lab-scores")).to_contain_text("found at 1")
    snap("lab-question-set")
    assert_accessible(page, "the lab with a scored question set")

    # Saved in this browser: a new page of the lab offers it again.
    page.goto(f"{web_stack.url}/app/d/supply/lab")
    sets = page.get_by_test_id("lab-question-sets")
    sets.get_by_label("Saved sets").select_option("seals")
    expect(page.get_by_test_id("lab-questions")).to_have_value(
        f"seal | {expected}\nnothing like this zzqx | Part/P-99999"
    )
    assert sets.get_by_label("k", exact=True).input_value() == "3"
