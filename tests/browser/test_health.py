"""Health: the data-health report of a branch with a duplicate title (imported through the REST
API), whose example keys link to their Records."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import Page, expect

from tests.browser.conftest import WebStack, sign_in


def test_the_health_report_links_its_examples_to_their_records(
    page: Page, web_stack: WebStack, snap: Callable[[str], None]
) -> None:
    with web_stack.rest() as http:  # imports need domain.settings
        assert http.post("/api/v1/domains/supply/branches", json={"name": "web/health"}).status_code == 201
        response = http.post(
            "/api/v1/domains/supply/imports",
            json={
                "branch": "web/health",
                "message": "A second Kavsen",
                "records": [
                    {
                        "kind": "Supplier",
                        "values": {"supplier_code": "S-1999", "legal_name": "Kavsen Alloys Sp. z o.o."},
                    }
                ],
            },
        )
        assert response.status_code == 200, response.text
    sign_in(page, web_stack, web_stack.web_key)
    page.goto(f"{web_stack.url}/app/d/supply/health?branch=web%2Fhealth")
    report = page.get_by_test_id("health-page")
    expect(report).to_contain_text("duplicates on legal_name")
    expect(page.get_by_test_id("health-kinds")).to_contain_text("Supplier")
    expect(page.get_by_test_id("health-relations")).to_contain_text("supplied_by")
    snap("health")
    page.get_by_test_id("health-example").filter(has_text="S-1999").click()
    expect(page.get_by_test_id("record-title")).to_have_text("Kavsen Alloys Sp. z o.o.")
    assert "branch=web%2Fhealth" in page.url or "branch=web/health" in page.url
