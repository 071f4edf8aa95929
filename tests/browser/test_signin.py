"""Sign-in with an API key: a wrong key shows the API's problem; the right one opens the Domain with
a session cookie and leaves the key nowhere in the browser; a 401 later returns to sign-in; sign-out
ends the session."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import Page, expect

from tests.browser.conftest import WebStack, sign_in


def test_a_wrong_key_shows_the_problem(page: Page, web_stack: WebStack, snap: Callable[[str], None]) -> None:
    page.goto(f"{web_stack.url}/app/")
    page.get_by_test_id("key-input").fill("lbk_not-a-key-0000000000000000")
    page.get_by_test_id("domain-input").fill("supply")
    page.get_by_test_id("signin-submit").click()
    alert = page.get_by_role("alert")
    expect(alert).to_be_visible()
    expect(alert).to_contain_text("401")
    expect(page.get_by_test_id("signin-form")).to_be_visible()
    snap("signin")


def test_sign_in_keeps_the_key_out_of_the_browser_and_sign_out_ends_it(
    page: Page, web_stack: WebStack
) -> None:
    sign_in(page, web_stack, web_stack.web_key)
    expect(page.get_by_test_id("principal")).to_contain_text("usr_web")
    cookies = {c["name"]: c for c in page.context.cookies()}
    assert cookies["lorebase_session"]["httpOnly"] is True
    assert cookies["lorebase_session"]["value"] != web_stack.web_key
    stored = page.evaluate("() => JSON.stringify([{...localStorage}, {...sessionStorage}])")
    assert web_stack.web_key not in stored
    assert cookies["lorebase_session"]["value"] not in stored

    page.reload()  # the session outlives a reload: the app asks GET /web/session
    expect(page.get_by_test_id("domain-title")).to_have_text("supply")

    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_test_id("signin-form")).to_be_visible()
    page.goto(f"{web_stack.url}/app/d/supply/health")
    expect(page.get_by_test_id("signin-form")).to_be_visible()


def test_a_401_anywhere_returns_to_sign_in(page: Page, web_stack: WebStack) -> None:
    sign_in(page, web_stack, web_stack.web_key)
    page.goto(f"{web_stack.url}/app/d/supply/health")  # a page without an event stream: it goes quiet
    expect(page.get_by_test_id("health-kinds")).to_be_visible()
    page.wait_for_load_state("networkidle")
    page.context.clear_cookies()  # the session is gone: the next API call answers 401
    page.get_by_role("tab", name="Records").click()
    expect(page.get_by_test_id("signin-form")).to_be_visible()
    assert "next=" in page.url
