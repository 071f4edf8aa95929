"""A viewer whose grant is narrowed to one Kind sees no other Kind anywhere in the app: the app
shows only what the API answers this principal (the Kinds are read from the schema, never
hard-coded). The principal, its key and its grant are made through the admin REST API."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import WebStack, make_principal, sign_in

SEEN = "Part"


@pytest.fixture(scope="module")
def narrowed_key(web_stack: WebStack) -> str:
    with web_stack.rest() as http:
        return make_principal(http, "usr_parts_web", "user", "viewer", [SEEN])


def hidden_kinds(stack: WebStack) -> list[str]:
    with stack.rest() as http:
        kinds = [k["name"] for k in http.get("/api/v1/domains/supply/schema").json()["kinds"]]
    assert SEEN in kinds
    return [k for k in kinds if k != SEEN]


def assert_no_hidden_kind(page: Page, hidden: list[str], screen: str) -> None:
    page.wait_for_load_state("networkidle")
    text = page.locator("body").inner_text()
    html = page.content()
    for kind in hidden:
        pattern = re.compile(rf"\b{re.escape(kind)}\b")
        assert not pattern.search(text), f"{screen} shows the hidden Kind {kind}"
        assert not pattern.search(html), f"{screen}'s page holds the hidden Kind {kind}"


def test_a_viewer_narrowed_to_one_kind_sees_no_other(
    page: Page, web_stack: WebStack, narrowed_key: str
) -> None:
    hidden = hidden_kinds(web_stack)
    sign_in(page, web_stack, narrowed_key)
    base = f"{web_stack.url}/app/d/supply"

    expect(page.locator('[data-testid="overview"][data-ready="true"]')).to_be_visible()
    assert page.get_by_test_id("schema-graph").get_attribute("data-kinds") == SEEN
    assert_no_hidden_kind(page, hidden, "the overview")
    # The Revisions feed needs a grant not narrowed to Kinds: a permission notice, not an error.
    notice = page.locator("[data-permission=denied]").first
    expect(notice).to_contain_text("you do not have permission")
    expect(notice).to_contain_text("a Domain admin can grant what is missing")

    page.goto(f"{base}/records")
    expect(page.get_by_test_id("query-records")).to_contain_text(f"{SEEN}/")
    assert_no_hidden_kind(page, hidden, "the query builder")
    page.get_by_test_id("query-kind").click()
    assert page.get_by_role("option").all_inner_texts() == [SEEN]
    page.keyboard.press("Escape")

    page.goto(f"{base}/records/{SEEN}/P-10028")
    expect(page.get_by_test_id("record-values")).to_contain_text("part_number")
    assert_no_hidden_kind(page, hidden, "the Record page")
    for tab in ("History", "Explain", "Links", "Context pack"):
        page.get_by_role("tab", name=tab).click()
        assert_no_hidden_kind(page, hidden, f"the Record page's {tab} tab")

    page.goto(f"{base}/records/{SEEN}/P-10028/neighbourhood")
    expect(page.get_by_test_id("explore-records")).to_contain_text(f"{SEEN}/P-10028")
    assert_no_hidden_kind(page, hidden, "the neighbourhood canvas")

    page.goto(f"{base}/proposals?status=all")
    assert_no_hidden_kind(page, hidden, "the Proposals")

    page.goto(f"{base}/health")
    expect(page.get_by_test_id("health-kinds")).to_contain_text(SEEN)
    assert_no_hidden_kind(page, hidden, "the health report")
