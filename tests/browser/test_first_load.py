"""The first load: the overview opened in a browser with an empty cache (signed in: the session
cookie only) transfers at most 400 KB in all, and the initial scripts (those index.html loads,
before any page's own chunk) at most 300 KB: each page is its own chunk, and the gateway sends text
files gzip-compressed (Brotli to a client that accepts br). It has a favicon and the page's title."""

from __future__ import annotations

import re

import httpx
from playwright.sync_api import Browser, expect

from tests.browser.conftest import WAIT_MS, WebStack, sign_in

TOTAL_BUDGET = 400_000
SCRIPT_BUDGET = 300_000
# The scripts index.html names itself (its entry and the chunks it preloads), not those the
# router loads later for a page.
INITIAL = re.compile(r'<(?:script[^>]*\ssrc|link[^>]*rel="modulepreload"[^>]*\shref)="([^"]+\.js)"')

# Every resource of the page so far with the bytes it took on the wire (same origin: all of them).
TRANSFERS = """() => [
  ...performance.getEntriesByType('navigation'),
  ...performance.getEntriesByType('resource'),
].map((e) => ({name: e.name, type: e.initiatorType, bytes: e.transferSize, encoded: e.encodedBodySize}))"""


def test_the_overviews_first_load_fits_the_budget(browser: Browser, web_stack: WebStack) -> None:
    signing = browser.new_context()
    signing.set_default_timeout(WAIT_MS)
    try:
        page = signing.new_page()
        sign_in(page, web_stack, web_stack.web_key)
        cookies = signing.storage_state()["cookies"]
    finally:
        signing.close()
    # An empty cache, signed in: the session cookie and nothing else.
    fresh = browser.new_context(
        viewport={"width": 1400, "height": 900}, storage_state={"cookies": cookies, "origins": []}
    )
    fresh.set_default_timeout(WAIT_MS)
    try:
        page = fresh.new_page()
        page.goto(f"{web_stack.url}/app/d/supply")
        expect(page.get_by_test_id("schema-graph")).to_be_visible()
        expect(page.get_by_test_id("revisions")).to_be_visible()
        page.wait_for_load_state("networkidle")
        expect(page).to_have_title("Overview · supply · Lorebase")
        icon = page.evaluate("() => document.querySelector('link[rel=icon]').href")
        assert page.request.get(icon).status == 200, "the favicon is served"
        transfers = page.evaluate(TRANSFERS)
        index = page.request.get(f"{web_stack.url}/app/").text()
        initial = {f"{web_stack.url}{path}" for path in INITIAL.findall(index)}
    finally:
        fresh.close()
    total = sum(t["bytes"] for t in transfers)
    scripts = sum(t["bytes"] for t in transfers if t["name"].endswith(".js"))
    entry = sum(t["bytes"] for t in transfers if t["name"] in initial)
    print(
        f"first load of the overview: {total} bytes in {len(transfers)} transfers, scripts {scripts} "
        f"bytes, of which initial {entry} bytes ({len(initial)} files)"
    )
    for t in sorted(transfers, key=lambda t: -t["bytes"])[:8]:
        print(f"  {t['bytes']:>8} {t['name'].rsplit('/', 1)[-1]}")
    assert initial and entry > 0, "index.html loads its scripts"
    assert entry <= SCRIPT_BUDGET, f"the initial scripts took {entry} bytes (budget {SCRIPT_BUDGET})"
    assert total <= TOTAL_BUDGET, f"the first load took {total} bytes (budget {TOTAL_BUDGET})"


def test_a_client_that_accepts_br_gets_the_builds_brotli_copies(web_stack: WebStack) -> None:
    """Chromium asks for br over HTTPS only; a client (or a TLS proxy before the gateway) that accepts
    it gets the Brotli copies the build wrote (web/scripts/compress.mjs), smaller than gzip."""
    with httpx.Client(base_url=web_stack.url, trust_env=False) as client:
        index = client.get("/app/").text
        scripts = INITIAL.findall(index)
        assert scripts, "index.html loads its scripts"
        sizes = {}
        for encoding in ("br", "gzip"):
            with client.stream("GET", scripts[0], headers={"Accept-Encoding": encoding}) as answer:
                assert answer.headers["content-encoding"] == encoding
                sizes[encoding] = sum(len(chunk) for chunk in answer.iter_raw())
    print(f"the entry script: {sizes['br']} bytes with br, {sizes['gzip']} with gzip")
    assert sizes["br"] < sizes["gzip"]
