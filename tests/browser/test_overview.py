"""The Domain overview on the supply example: the schema graph with the Kinds the schema answer
lists, counts, health, branches; its first render time (printed, not asserted); and a Revision
committed through the REST API appearing without a reload."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import Page, expect

from tests.browser.conftest import WebStack, change_risk, sign_in


def test_the_overview_draws_the_schema_and_measures_its_first_render(
    page: Page, web_stack: WebStack, snap: Callable[[str], None]
) -> None:
    with web_stack.rest() as http:
        kinds = sorted(k["name"] for k in http.get("/api/v1/domains/supply/schema").json()["kinds"])
    sign_in(page, web_stack, web_stack.web_key)
    page.goto(f"{web_stack.url}/app/d/supply")  # a fresh load, signed in: what the timing measures
    expect(page.locator('[data-testid="overview"][data-ready="true"]')).to_be_visible()
    ready_ms = page.evaluate("() => performance.getEntriesByName('lorebase:overview-ready')[0].startTime")
    print(f"overview first render: {ready_ms:.0f} ms from navigation start (supply example)")
    graph = page.get_by_test_id("schema-graph")
    assert sorted((graph.get_attribute("data-kinds") or "").split(",")) == kinds
    counts = page.get_by_test_id("kind-counts")
    for kind in kinds:
        expect(counts).to_contain_text(kind)
    expect(page.get_by_test_id("health-summary")).to_contain_text("Records")
    expect(page.get_by_test_id("branches")).to_contain_text("main")
    expect(page.get_by_test_id("revisions")).to_contain_text("Import the supply example data")
    expect(page.get_by_test_id("traits")).to_contain_text("Located")
    expect(page.get_by_test_id("lenses")).to_contain_text("supplier_risk")
    snap("overview")


def test_a_new_revision_appears_without_a_reload(page: Page, web_stack: WebStack) -> None:
    sign_in(page, web_stack, web_stack.web_key)
    expect(page.get_by_test_id("live-state")).to_have_text("live")
    page.evaluate("() => { window.__sameDocument = true; }")
    with web_stack.rest(web_stack.author_key) as http:
        revision = change_risk(http, "S-1010", "Live from the browser test")["revision"]
    row = page.locator(f'[data-testid="revisions"] tr[data-revision="{revision}"]')
    expect(row).to_contain_text("Live from the browser test")
    assert page.evaluate("() => window.__sameDocument === true"), "the page was reloaded"
