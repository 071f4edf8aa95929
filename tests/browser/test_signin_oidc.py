"""Sign-in through the organisation's identity provider: "Sign in with Test IdP" beside the API key
runs the authorization code flow with PKCE (through the gateway, against the provider process of
tests/oidc/provider.py, which signs erin in at once) and comes back signed in with the session
cookie on the list of the Domains erin's group may read (supply, not a Domain it grants nothing
in), opens one, and sign-out ends the session there and in Lorebase (the token is refused after)."""

from __future__ import annotations

from collections.abc import Callable

import httpx
from playwright.sync_api import Page, expect

from tests.browser.conftest import WebStack

HIDDEN = {
    "name": "oidc-hidden",
    "schema": {
        "description": "A Domain erin's group grants nothing in.",
        "kinds": {"Memo": {"key": ["code"], "attributes": {"code": {"type": "string", "required": True}}}},
    },
}


def test_sign_in_with_the_identity_provider_and_out(
    page: Page, web_stack: WebStack, snap: Callable[[str], None]
) -> None:
    with web_stack.rest() as http:
        created = http.post("/api/v1/domains", json=HIDDEN)
        assert created.status_code in (201, 409), created.text
    page.goto(f"{web_stack.url}/app/")
    button = page.get_by_test_id("signin-provider-test-idp")
    expect(button).to_have_text("Sign in with Test IdP")
    expect(page.get_by_test_id("key-input")).to_be_visible()  # the key stays, beside it
    snap("signin-providers")
    button.click()

    # Back from the provider, signed in: who, and the Domains its group may read.
    expect(page.get_by_test_id("principal")).to_contain_text("usr_erin")
    domains = page.get_by_test_id("domain-list")
    expect(domains).to_contain_text("supply")
    expect(domains).not_to_contain_text("oidc-hidden")
    cookies = {c["name"]: c for c in page.context.cookies()}
    session = cookies["lorebase_session"]
    assert session["httpOnly"] is True and session["sameSite"] == "Strict"
    assert "lorebase_oidc" not in cookies  # the sign-in's state is gone once it is used
    assert session["value"] not in page.evaluate(
        "() => JSON.stringify([{...localStorage}, {...sessionStorage}])"
    )
    snap("signed-in")

    domains.get_by_role("link", name="supply", exact=True).click()
    expect(page.get_by_test_id("domain-title")).to_have_text("supply")
    expect(page.get_by_test_id("principal")).to_contain_text("usr_erin")

    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_test_id("signin-form")).to_be_visible()
    expect(page.get_by_test_id("signin-provider-test-idp")).to_be_visible()
    with httpx.Client(base_url=web_stack.url, trust_env=False, timeout=30) as http:
        refused = http.get("/api/v1/domains", headers={"Authorization": f"Bearer {session['value']}"})
    assert refused.status_code == 401, refused.text
