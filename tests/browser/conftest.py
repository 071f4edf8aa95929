"""The web app's browser tests: one `lorebase up --example supply` serving the built app (web/dist),
and Debian's chromium driven by Playwright.

The stack offers "Sign in with Test IdP" (tests/oidc/provider.py, a process of its own whose person
`erin` is in the group `supply-readers`, a viewer of supply; a public web client registered there).

Nothing is built here: `make test` (or `make web`) builds web/dist, and the stack fixture fails with
what to run when it is missing. Chromium is /usr/bin/chromium (never `playwright install`), headless,
without GPU or background network, with a fresh profile per test. Every test leaves a screenshot
named after it under the pytest output folder (`<basetemp>/screenshots/`); `docs/images/web/` holds
the ones the docs show (scripts/web_screenshots.py copies them there).

The fixtures are package-scoped, so the stack stops and Playwright's sync driver (which runs an
event loop in the main thread while it is open) closes once the browser tests are done: the tests
collected after them call asyncio.run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import (
    Browser,
    BrowserContext,
    Locator,
    Page,
    Playwright,
    expect,
    sync_playwright,
)

from lorebase.embedded import free_port
from tests.e2e.running import HEALTH_TIMEOUT_S, stop, up_env
from tests.oidc.provider import start_provider, stop_provider

ROOT = Path(__file__).resolve().parents[2]
WEB_DIST = ROOT / "web" / "dist"
AXE = ROOT / "web" / "node_modules" / "axe-core" / "axe.min.js"  # a devDependency of the web app
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-quic",
]
ADMIN_KEY = "lbk_browser-admin-key-0123456789abcdef"
# Playwright's default wait for a selector or an assertion; generous for a loaded 2-core machine.
WAIT_MS = 20_000
expect.set_options(timeout=WAIT_MS)  # the assertions' own default is 5 s

# The page's own width beyond the viewport's, and the elements that stick out (to say what to fix).
OVERFLOW = """() => {
  const width = document.documentElement.clientWidth;
  const wide = [...document.querySelectorAll('body *')]
    .filter((e) => e.getBoundingClientRect().right > width + 1 && e.getClientRects().length)
    .filter((e) => !e.closest('[data-scrolls]'))
    .slice(0, 5)
    .map((e) => `${e.tagName.toLowerCase()}.${[...e.classList].slice(0, 2).join('.')}[${e.getAttribute('data-testid') || ''}] ${Math.round(e.getBoundingClientRect().right)}`);
  return {scroll: document.documentElement.scrollWidth, width, wide};
}"""


@dataclass(frozen=True)
class WebStack:
    url: str
    admin_key: str
    web_key: str  # usr_web: a user with the admin role on supply (signs in; reviews and merges)
    author_key: str  # usr_author: a user, editor on supply (writes and opens Proposals through REST)
    log: Path
    provider: str = ""  # the identity provider's issuer URL (signs erin in at once)

    def rest(self, key: str | None = None) -> httpx.Client:
        """A REST client with an API key (the admin's by default), for what a test sets up."""
        return httpx.Client(
            base_url=self.url,
            timeout=30,
            trust_env=False,
            headers={"Authorization": f"Bearer {key or self.admin_key}"},
        )


def make_principal(
    http: httpx.Client, principal: str, type: str, role: str, kinds: list[str] | None = None
) -> str:
    """A principal with a grant on supply (narrowed to `kinds` when given) and an API key for it."""
    response = http.post("/api/v1/principals", json={"id": principal, "type": type})
    assert response.status_code == 201, response.text
    grant: dict[str, object] = {"principal": principal, "role": role}
    if kinds:
        grant["kinds"] = kinds
    response = http.post("/api/v1/domains/supply/grants", json=grant)
    assert response.status_code == 201, response.text
    response = http.post(f"/api/v1/principals/{principal}/keys")
    assert response.status_code == 201, response.text
    return str(response.json()["key"])


@pytest.fixture(scope="package")
def web_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebStack]:
    if not (WEB_DIST / "index.html").is_file():
        pytest.fail(f"the web app is not built ({WEB_DIST} has no index.html): run `make web` first")
    directory = tmp_path_factory.mktemp("webstack")
    data_dir, log = directory / "data", directory / "up.log"
    port = free_port()
    provider, issuer = start_provider("--user", "Erin", "--groups", "supply-readers")
    callback = f"http://127.0.0.1:{port}/api/v1/web/oidc/callback"
    client = httpx.post(issuer + "/register", json={"redirect_uris": [callback]}, trust_env=False).json()
    issuers = [
        {
            "issuer": issuer,
            "audience": "lorebase",
            "roles": {"supply-readers": [{"domain": "supply", "role": "viewer"}]},
            "web": {"id": "test-idp", "label": "Test IdP", "client_id": client["client_id"]},
        }
    ]
    env = up_env(
        data_dir,
        port,
        ADMIN_KEY,
        LOREBASE_WEB__ROOT=str(WEB_DIST),
        LOREBASE_KEEPER__AUTH__OIDC__ISSUERS=json.dumps(issuers),
    )
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "lorebase", "up", "--example", "supply"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + HEALTH_TIMEOUT_S
        while "Lorebase is up" not in log.read_text(errors="replace"):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"lorebase up did not come up:\n{log.read_text(errors='replace')[-4000:]}")
            time.sleep(0.2)
        url = f"http://127.0.0.1:{port}"
        with httpx.Client(
            base_url=url, timeout=30, trust_env=False, headers={"Authorization": f"Bearer {ADMIN_KEY}"}
        ) as http:
            web = make_principal(http, "usr_web", "user", "admin")
            author = make_principal(http, "usr_author", "user", "editor")
        yield WebStack(url, ADMIN_KEY, web, author, log, issuer)
    finally:
        stop(process, data_dir)
        stop_provider(provider)


@pytest.fixture(scope="package")  # Playwright's sync API holds an event loop: gone after tests/browser
def playwright() -> Iterator[Playwright]:
    if not Path(CHROMIUM).is_file():
        pytest.fail(f"{CHROMIUM} is missing: `apt-get install chromium` (make test installs it)")
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="package")
def browser(playwright: Playwright, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
    try:
        yield browser
    finally:
        browser.close()


@pytest.fixture(scope="package")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("screenshots", numbered=False)


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    """A fresh browser profile (no cookies, no storage) per test."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    context.set_default_timeout(WAIT_MS)
    try:
        yield context
    finally:
        context.close()


@pytest.fixture
def page(context: BrowserContext, screenshots: Path, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A page of the app; after the test, its screenshot is `screenshots/<test name>.png`."""
    page = context.new_page()
    try:
        yield page
    finally:
        name = request.node.name.replace("/", "_")
        try:
            page.screenshot(path=str(screenshots / f"{name}.png"), full_page=True)
            print(f"screenshot: {screenshots / f'{name}.png'}")
        except Exception as exc:  # the page may be gone after a failure; the failure says why
            print(f"no screenshot for {name}: {exc}")


@pytest.fixture
def snap(page: Page, screenshots: Path, request: pytest.FixtureRequest) -> Callable[[str], None]:
    """`snap("overview")` saves the page now as `screenshots/<test name>--overview.png`; the docs'
    images (docs/images/web/overview.png...) are these, copied by scripts/web_screenshots.py."""

    def take(label: str) -> None:
        page.screenshot(path=str(screenshots / f"{request.node.name}--{label}.png"), full_page=True)

    return take


def sign_in(page: Page, stack: WebStack, key: str, domain: str = "supply") -> None:
    """Sign in through the form and wait for the Domain's overview."""
    page.goto(f"{stack.url}/app/")
    page.get_by_test_id("key-input").fill(key)
    page.get_by_test_id("domain-input").fill(domain)
    page.get_by_test_id("signin-submit").click()
    page.get_by_test_id("domain-title").wait_for()


def assert_accessible(page: Page, label: str) -> None:
    """axe-core's checks (WCAG 2 A and AA, and its best practices) on the page as it is now: no
    serious or critical violation; the others are printed."""
    if not AXE.is_file():
        pytest.fail(f"{AXE} is missing: `make web` installs the web app's packages")
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        # Evaluated through the driver, not as a <script>: the app's Content-Security-Policy
        # refuses inline scripts (rightly), and the driver's evaluation is not the page's script.
        page.evaluate(f"() => {{ {AXE.read_text()}\n }}")
    result = page.evaluate(
        "() => axe.run(document, {resultTypes: ['violations'], runOnly: {type: 'tag', values: "
        "['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']}})"
    )
    found = [
        f"{v['impact']}: {v['id']} ({v['help']}) at {[n['target'] for n in v['nodes'][:3]]}"
        for v in result["violations"]
    ]
    print(f"axe on {label}: {len(found)} violations", *found, sep="\n  ")
    blocking = [line for line in found if line.startswith(("serious", "critical"))]
    assert not blocking, f"axe on {label}:\n" + "\n".join(blocking)


def choose(page: Page, field: Locator, option: str) -> None:
    """Pick `option` in a Mantine Select (a combobox: click, then the option by its exact name)."""
    field.click()
    page.get_by_role("option", name=option, exact=True).click()


def change_risk(
    http: httpx.Client, key: str, message: str, branch: str = "", step: int = 7
) -> dict[str, Any]:
    """Commit a new risk score for Supplier `key` (its current one plus `step`, modulo 101: it
    differs, so the Operation makes a Revision) through update_supplier; returns the answer."""
    query = {"branch": branch} if branch else {}
    record = http.get(f"/api/v1/domains/supply/kinds/Supplier/records/{key}", params=query)
    assert record.status_code == 200, record.text
    score = (int(record.json()["values"]["risk_score"]) + step) % 101
    body: dict[str, Any] = {"parameters": {"key": key, "risk_score": score}, "message": message}
    if branch:
        body["branch"] = branch
    response = http.post("/api/v1/domains/supply/operations/update_supplier/execute", json=body)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    assert answer["revision"], answer
    return answer
