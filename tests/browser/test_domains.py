"""The Domains after sign-in: signing in without naming a Domain lists the Domains the principal
holds a grant in (the admin: every one), each opening its overview; a principal with no grant is
told to ask for one."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import Page, expect

from tests.browser.conftest import WebStack


def sign_in_without_a_domain(page: Page, stack: WebStack, key: str) -> None:
    page.goto(f"{stack.url}/app/")
    page.evaluate("() => localStorage.clear()")  # no Domain remembered from an earlier visit
    page.reload()
    page.get_by_test_id("key-input").fill(key)
    page.get_by_test_id("domain-input").fill("")
    page.get_by_test_id("signin-submit").click()


def test_sign_in_lists_the_domains_to_open(
    page: Page, web_stack: WebStack, snap: Callable[[str], None]
) -> None:
    sign_in_without_a_domain(page, web_stack, web_stack.web_key)
    listed = page.get_by_test_id("domain-list")
    expect(listed).to_be_visible()
    expect(page).to_have_title("Domains · Lorebase")
    expect(page.get_by_role("heading", level=1)).to_have_text("Domains")
    row = listed.locator("tr", has=page.get_by_role("link", name="supply", exact=True))
    expect(row).to_contain_text("main")
    snap("domains")
    row.get_by_role("link", name="supply", exact=True).click()
    expect(page.get_by_test_id("domain-title")).to_have_text("supply")
    # The header's link comes back to the list.
    page.get_by_role("link", name="Domains", exact=True).click()
    expect(page.get_by_test_id("domain-list")).to_be_visible()


def test_a_principal_without_grants_is_told_to_ask(page: Page, web_stack: WebStack) -> None:
    with web_stack.rest() as http:
        response = http.post("/api/v1/principals", json={"id": "usr_nogrant", "type": "user"})
        assert response.status_code in (201, 409), response.text
        key = http.post("/api/v1/principals/usr_nogrant/keys").json()["key"]
    sign_in_without_a_domain(page, web_stack, key)
    expect(page.get_by_test_id("no-domains")).to_contain_text("ask a Domain admin")
    expect(page.get_by_test_id("domain-list")).to_have_count(0)
