"""The app on a phone (390 x 844, Chromium's touch emulation off: what matters is the width): the main
screens (the overview, Records, a Record and its neighbourhood, the lab, the sessions and a replay)
fit the width (no horizontal scroll of the page: wide tables and the tab strip scroll inside
their own box), and the navigation is reachable from a menu button."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import OVERFLOW, WAIT_MS, WebStack, sign_in

WIDTH, HEIGHT = 390, 844


@pytest.fixture
def phone(browser: Browser, screenshots: Path, request: pytest.FixtureRequest) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT}, device_scale_factor=1)
    context.set_default_timeout(WAIT_MS)
    page = context.new_page()
    try:
        yield page
    finally:
        try:
            page.screenshot(path=str(screenshots / f"{request.node.name}.png"), full_page=True)
        finally:
            context.close()


def test_the_main_screens_fit_a_phone_and_the_navigation_is_reachable(
    phone: Page, web_stack: WebStack, snap_phone: Callable[[str], None]
) -> None:
    page = phone
    session = f"phone-{secrets.token_hex(3)}"
    with httpx.Client(
        base_url=web_stack.url,
        timeout=30,
        trust_env=False,
        headers={"Authorization": f"Bearer {web_stack.admin_key}", "Lorebase-Session": session},
    ) as agent:
        assert agent.get("/api/v1/domains/supply/kinds/Supplier/records/S-1001").status_code == 200
        # The trace is written after the answer: wait until the session can be read.
        deadline = time.monotonic() + WAIT_MS / 1000
        while agent.get(f"/api/v1/sessions/{session}").status_code != 200:
            assert time.monotonic() < deadline, f"the session {session} was not recorded"
            time.sleep(0.2)
    sign_in(page, web_stack, web_stack.admin_key)  # the session's principal: it may read the session
    base = f"{web_stack.url}/app"
    screens = {
        "overview": (f"{base}/d/supply", "schema-graph"),
        "records": (f"{base}/d/supply/records?kind=Supplier", "query-records"),
        "record": (f"{base}/d/supply/records/Supplier/S-1001", "record-values"),
        "neighbourhood": (f"{base}/d/supply/records/Supplier/S-1001/neighbourhood", "explore-records"),
        "lab": (f"{base}/d/supply/lab", "lab-question"),
        "sessions": (f"{base}/sessions", "sessions-table"),
        "replay": (f"{base}/sessions/{session}", "replay-canvas"),
    }
    wide = {}
    for name, (url, ready) in screens.items():
        started = time.monotonic()
        page.goto(url)
        expect(page.get_by_test_id(ready).first).to_be_visible()
        measured = page.evaluate(OVERFLOW)
        print(
            f"{name} ({time.monotonic() - started:.1f} s): page {measured['scroll']} px wide in "
            f"{measured['width']}: {measured['wide']}"
        )
        if measured["scroll"] > measured["width"]:
            wide[name] = measured
        if name in ("overview", "replay"):
            snap_phone(name)
    assert not wide, f"wider than the phone: {wide}"

    # The replay's controls stay usable: the scrubber keeps a width a thumb can use.
    scrubber = page.get_by_test_id("replay-scrubber").bounding_box()
    assert scrubber and scrubber["width"] >= 150, scrubber

    # The navigation: a menu button opens the app's links and Sign out.
    page.goto(f"{base}/d/supply")
    menu = page.get_by_role("button", name="Navigation")
    expect(menu).to_be_visible()
    menu.click()
    expect(page.get_by_role("menuitem", name="Sign out")).to_be_visible()
    page.get_by_role("menuitem", name="Agent sessions").click()
    expect(page).to_have_url(f"{base}/sessions")
    menu.click()
    page.get_by_role("menuitem", name="Sign out").click()
    expect(page.get_by_test_id("signin-submit")).to_be_visible()


@pytest.fixture
def snap_phone(phone: Page, screenshots: Path, request: pytest.FixtureRequest) -> Callable[[str], None]:
    def take(label: str) -> None:
        phone.screenshot(path=str(screenshots / f"{request.node.name}--phone-{label}.png"), full_page=True)

    return take
