"""Records: the query builder (a condition, then a group-by) with coverage beside the answer; the
"type words" box whose candidate becomes a filter; and a Record page with its values and lineage,
history with before/after, explain, Links and context pack."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from urllib.parse import quote

from playwright.sync_api import Page, expect

from tests.browser.conftest import WebStack, assert_accessible, choose, sign_in


def test_the_query_builder_filters_groups_and_shows_coverage(page: Page, web_stack: WebStack) -> None:
    sign_in(page, web_stack, web_stack.web_key)
    page.goto(f"{web_stack.url}/app/d/supply/records?kind=Supplier")
    expect(page.get_by_test_id("query-records")).to_contain_text("Supplier/S-1002")
    page.get_by_role("button", name="Add condition").click()
    condition = page.get_by_test_id("condition")
    choose(page, condition.get_by_label("Attribute"), "country")
    condition.get_by_label("Value").fill("PL")
    page.get_by_test_id("query-run").click()
    records = page.get_by_test_id("query-records")
    expect(records).to_contain_text("Supplier/S-1001")
    expect(records).not_to_contain_text("Supplier/S-1002")  # in DE
    expect(page.get_by_test_id("coverage")).to_contain_text("country")
    page.get_by_role("button", name="Show the DSL").click()
    dsl = json.loads(page.get_by_test_id("query-dsl").inner_text())
    assert dsl["where"] == {"attr": "country", "op": "eq", "value": "PL"}

    choose(page, page.get_by_test_id("query-group-by"), "status")
    page.get_by_test_id("query-run").click()
    expect(page.get_by_test_id("query-groups")).to_contain_text("active")
    assert "q=" in page.url  # the query is in the URL: a shareable link


def test_a_resolve_candidate_becomes_a_filter(
    page: Page, web_stack: WebStack, snap: Callable[[str], None]
) -> None:
    sign_in(page, web_stack, web_stack.web_key)
    page.goto(f"{web_stack.url}/app/d/supply/records")
    page.get_by_test_id("resolve-input").fill("high severity flags")
    page.get_by_test_id("resolve-submit").click()
    candidate = page.get_by_test_id("resolve-candidate").filter(has_text="severity eq high")
    candidate.click()
    expect(page.get_by_test_id("condition")).to_have_count(1)
    records = page.get_by_test_id("query-records")
    expect(records).to_contain_text("RiskFlag/")
    dsl_button = page.get_by_role("button", name="Show the DSL")
    dsl_button.click()
    dsl = json.loads(page.get_by_test_id("query-dsl").inner_text())
    assert dsl["kind"] == "RiskFlag"
    assert dsl["where"] == {"attr": "severity", "op": "eq", "value": "high"}
    snap("records")


def test_a_record_page_shows_lineage_history_explain_links_and_context(
    page: Page, web_stack: WebStack, snap: Callable[[str], None]
) -> None:
    sign_in(page, web_stack, web_stack.web_key)
    page.goto(f"{web_stack.url}/app/d/supply/records/Supplier/{quote('S-1001')}")
    expect(page.get_by_test_id("record-title")).to_have_text("Kavsen Alloys Sp. z o.o.")
    values = page.get_by_test_id("record-values")
    expect(values).to_contain_text("risk_score")
    expect(values).to_contain_text("Raise the risk of S-1001")  # the lineage's message
    snap("record")

    page.get_by_role("tab", name="History").click()
    history = page.get_by_test_id("history")
    expect(history).to_contain_text("Raise the risk of S-1001")
    expect(history.locator('[data-change="changed"]').first).to_contain_text("risk_score")
    snap("record-history")

    page.get_by_role("tab", name="Explain").click()
    expect(page.get_by_test_id("explain")).to_contain_text("Created in")

    page.get_by_role("tab", name="Links").click()
    links = page.get_by_test_id("record-links")
    expect(links).to_contain_text("Part/")
    links.get_by_role("link").filter(has_text="Part/").first.click()
    expect(page.get_by_test_id("record-title")).not_to_have_text("Kavsen Alloys Sp. z o.o.")
    page.go_back()

    page.get_by_role("tab", name="Context pack").click()
    expect(page.get_by_test_id("context-pack")).to_contain_text("tokens")
    expect(page.get_by_test_id("context-pack")).to_contain_text("(seed)")


def test_the_at_picker_reads_an_earlier_revision_and_shows_the_apis_answer(
    page: Page, web_stack: WebStack
) -> None:
    with web_stack.rest() as http:
        history = http.get("/api/v1/domains/supply/kinds/Supplier/records/S-1001/history?values=true").json()
    created = history["changes"][-1]  # the import: the first value of risk_score
    sign_in(page, web_stack, web_stack.web_key)
    page.goto(f"{web_stack.url}/app/d/supply/records/Supplier/S-1001")
    at = page.get_by_test_id("at-picker")
    at.fill(created["revision"][:12])
    at.press("Enter")
    expect(page.get_by_test_id("record-values")).to_contain_text(created["after"]["risk_score"])
    assert f"at={created['revision'][:12]}" in page.url
    at.fill("not-a-revision")  # a valid tag name that names nothing: the API's 404, shown as it says
    at.press("Enter")
    expect(page.locator('[role="alert"][data-problem="revision-not-found"]').first).to_contain_text(
        "nor a tag"
    )
    at.fill("not a revision!")  # not even a name: the API's 400
    at.press("Enter")
    expect(page.locator('[role="alert"][data-problem="invalid-at"]').first).to_contain_text("Revision")


def test_a_records_neighbourhood_expands_on_the_canvas_and_in_the_list(
    page: Page, web_stack: WebStack, snap: Callable[[str], None]
) -> None:
    sign_in(page, web_stack, web_stack.web_key)
    page.goto(f"{web_stack.url}/app/d/supply/records/Supplier/S-1001")
    page.get_by_test_id("explore-link").click()
    expect(page).to_have_title("Neighbourhood of Supplier/S-1001 · supply · Lorebase")
    records = page.get_by_test_id("explore-records")
    expect(records.locator("tr[data-ref='Supplier/S-1001']")).to_contain_text("expanded")
    expect(records).to_contain_text("Part/")
    canvas = page.locator("[data-testid=explore-canvas][data-positions]")
    expect(canvas).to_be_visible()
    first = records.locator("tbody tr").count()

    # A click on a node on the canvas reads its neighbourhood too: it is expanded, one more ring.
    positions = json.loads(canvas.get_attribute("data-positions") or "[]")
    ref, x, y = next(p for p in positions if p[0].startswith("Part/"))
    canvas.click(position={"x": x, "y": y})
    expect(records.locator(f"tr[data-ref='{ref}']")).to_contain_text("expanded")
    expect(records.locator("tbody tr td:nth-child(2)").filter(has_text="2").first).to_be_visible()
    assert records.locator("tbody tr").count() > first

    # The keyboard reaches the same through the list: Expand on a Record at depth 1.
    button = records.get_by_role("button", name=re.compile(r"^Expand "))
    label = button.first.get_attribute("aria-label") or ""
    button.first.focus()
    page.keyboard.press("Enter")
    expect(records.locator(f"tr[data-ref='{label.removeprefix('Expand ')}']")).to_contain_text("expanded")
    assert_accessible(page, "the neighbourhood canvas")
    snap("neighbourhood")

    # A Kind left out is drawn nowhere (with what only it reached); the Kind stays in the picker.
    page.get_by_test_id("explore-kinds").get_by_label("Part", exact=True).uncheck()
    expect(records).not_to_contain_text("Part/")
    expect(page.get_by_test_id("explore-links")).not_to_contain_text("Part/")
    page.get_by_test_id("explore-kinds").get_by_label("Part", exact=True).check()
    expect(records).to_contain_text("Part/")


def column(page: Page, name: str) -> list[str]:
    """The cells of one column of the answer's table, top to bottom."""
    table = page.get_by_test_id("query-records")
    headers = [h.strip().rstrip("↑↓ ").strip() for h in table.locator("thead th").all_inner_texts()]
    index = headers.index(name) + 1
    return table.locator(f"tbody tr td:nth-child({index})").all_inner_texts()


def test_the_records_table_pages_both_ways_counts_sorts_and_picks_typed_values(
    page: Page, web_stack: WebStack
) -> None:
    with web_stack.rest() as http:
        body = {"kind": "Supplier", "where": {"attr": "risk_score", "op": "ge", "value": 50}}
        risky = http.post("/api/v1/domains/supply/query", json={**body, "aggregate": {"count": True}})
        assert risky.status_code == 200, risky.text
        risky_total = risky.json()["aggregate"]["count"]
        suppliers = http.get("/api/v1/domains/supply/kinds/Supplier/records?limit=1000").json()
    total = len(suppliers["records"])
    sign_in(page, web_stack, web_stack.web_key)
    state = {"target": "kind", "name": "Supplier", "limit": 4}
    requests: list[str] = []
    page.on("request", lambda r: requests.append(f"{r.method} {r.url}") if "/supply/" in r.url else None)
    page.goto(f"{web_stack.url}/app/d/supply/records?q={quote(json.dumps(state))}")
    line = page.get_by_test_id("query-page")
    expect(line).to_contain_text(f"Records 1–4 of {total} · page 1")
    # A shared link sends its query once: one page read (the Kind's listing) and one count.
    assert sum("/kinds/Supplier/records?" in r for r in requests) == 1, requests
    first = column(page, "Record")
    page.get_by_role("button", name="Next page").click()
    expect(line).to_contain_text(f"Records 5–8 of {total} · page 2")
    assert column(page, "Record") != first
    page.get_by_role("button", name="Previous page").click()
    expect(line).to_contain_text(f"Records 1–4 of {total} · page 1")
    assert column(page, "Record") == first
    expect(page.get_by_role("button", name="Previous page")).to_be_disabled()

    # A column's header sorts by it, ascending then descending (announced with aria-sort).
    page.get_by_test_id("sort-risk_score").click()
    header = page.locator("th[aria-sort]").filter(has=page.get_by_test_id("sort-risk_score"))
    expect(header).to_have_attribute("aria-sort", "ascending")
    every = [int(r["values"]["risk_score"]) for r in suppliers["records"]]
    first_score = page.get_by_test_id("query-records").locator("tbody tr").first
    expect(first_score).to_contain_text(str(min(every)))
    scores = [int(v) for v in column(page, "risk_score")]
    assert scores == sorted(scores), scores
    page.get_by_test_id("sort-risk_score").click()
    expect(header).to_have_attribute("aria-sort", "descending")
    expect(first_score).to_contain_text(str(max(every)))
    scores = [int(v) for v in column(page, "risk_score")]
    assert scores == sorted(scores, reverse=True), scores

    # Typed pickers: an enum's values in a list, a number compared.
    page.get_by_role("button", name="Add condition").click()
    condition = page.get_by_test_id("condition")
    choose(page, condition.get_by_label("Attribute"), "status")
    assert condition.get_by_label("Value").locator("option").all_inner_texts() == [
        "choose a value",
        "active",
        "inactive",
        "blocked",
    ]
    choose(page, condition.get_by_label("Attribute"), "risk_score")
    choose(page, condition.get_by_label("Operator"), "≥")
    value = condition.get_by_label("Value")
    assert value.get_attribute("type") == "number"
    value.fill("50")
    page.get_by_test_id("query-run").click()
    expect(line).to_contain_text(f"of {risky_total} · page 1")
    assert all(int(v) >= 50 for v in column(page, "risk_score"))

    page.goto(f"{web_stack.url}/app/d/supply/records?kind=Contract")
    page.get_by_role("button", name="Add condition").click()
    condition = page.get_by_test_id("condition")
    choose(page, condition.get_by_label("Attribute"), "valid_from")
    assert condition.get_by_label("Value").get_attribute("type") == "date"
