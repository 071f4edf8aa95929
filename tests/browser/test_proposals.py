"""Proposals: one opened through the REST API by an editor is found in the list, its changes read
Record by Record, approved with a comment and merged from the page; the blockers and next hints
shown are the API's; a schema change's diff and its migration's preview on the target."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.browser.conftest import OVERFLOW, WebStack, assert_accessible, change_risk, sign_in


def open_proposal(stack: WebStack, title: str, description: str | None = None) -> str:
    """A branch with one change to Supplier S-1005's risk score, proposed into main by usr_author."""
    branch = f"web/review-{secrets.token_hex(3)}"
    with stack.rest(stack.author_key) as http:
        assert http.post("/api/v1/domains/supply/branches", json={"name": branch}).status_code == 201
        change_risk(http, "S-1005", "A new risk score for S-1005", branch=branch)
        body = {"source": branch, "title": title}
        if description is not None:
            body["description"] = description
        response = http.post("/api/v1/domains/supply/proposals", json=body)
        assert response.status_code == 201, response.text
        return str(response.json()["id"])


def test_a_proposal_is_reviewed_and_merged_from_the_page(
    page: Page, web_stack: WebStack, snap: Callable[[str], None]
) -> None:
    title = f"Risk change {secrets.token_hex(2)}"
    proposal = open_proposal(web_stack, title)
    sign_in(page, web_stack, web_stack.web_key)
    page.get_by_role("tab", name="Proposals").click()
    expect(page.get_by_test_id("proposals")).to_contain_text(title)
    snap("proposals")
    page.get_by_test_id("proposals").get_by_role("link", name=title).click()
    expect(page.get_by_test_id("proposal-title")).to_have_text(title)
    assert proposal in page.url

    diff = page.get_by_test_id("diff-record").filter(has_text="Supplier/S-1005")
    expect(diff).to_contain_text("risk_score")
    expect(page.get_by_test_id("blockers")).to_contain_text("approvals-pending")
    expect(page.get_by_test_id("next-steps")).to_contain_text("await_review")
    snap("proposal")

    page.get_by_test_id("review-comment").fill("The new score matches the audit.")
    page.get_by_test_id("review-approve").click()
    expect(page.get_by_test_id("reviews")).to_contain_text("The new score matches the audit.")
    expect(page.get_by_test_id("reviews")).to_contain_text("approved")

    page.get_by_test_id("merge").click()
    expect(page.get_by_test_id("proposal-status-badge")).to_have_text("merged")
    with web_stack.rest() as http:
        merged = http.get(f"/api/v1/domains/supply/proposals/{proposal}").json()
    assert merged["status"] == "merged" and merged["merged_revision"]


def test_a_blocked_merge_says_why(page: Page, web_stack: WebStack) -> None:
    """Not approved yet: Merge is disabled and says what blocks it; approved, it merges."""
    title = f"Blocked {secrets.token_hex(2)}"
    open_proposal(web_stack, title)
    sign_in(page, web_stack, web_stack.web_key)
    page.goto(f"{web_stack.url}/app/d/supply/proposals?status=open")
    page.get_by_test_id("proposals").get_by_role("link", name=title).click()
    merge = page.get_by_test_id("merge")
    expect(merge).to_be_disabled()
    expect(page.get_by_test_id("merge-reasons")).to_contain_text("needs 1 approval and has 0")
    page.get_by_test_id("review-approve").click()
    expect(merge).to_be_enabled()
    expect(page.get_by_test_id("merge-reasons")).to_have_count(0)
    merge.click()
    expect(page.get_by_test_id("proposal-status-badge")).to_have_text("merged")


def test_a_refused_action_shows_the_problem(page: Page, web_stack: WebStack) -> None:
    """The author may not approve their own Proposal: the page does not offer it; asked through the
    API anyway, the refusal says why (shown here for a request-changes on a closed Proposal)."""
    title = f"Refused {secrets.token_hex(2)}"
    proposal = open_proposal(web_stack, title)
    sign_in(page, web_stack, web_stack.web_key)
    page.goto(f"{web_stack.url}/app/d/supply/proposals/{proposal}")
    expect(page.get_by_test_id("proposal-title")).to_have_text(title)
    with web_stack.rest(web_stack.author_key) as http:  # closed behind the page's back
        assert http.post(f"/api/v1/domains/supply/proposals/{proposal}/close").status_code == 200
    page.get_by_test_id("review-request-changes").click()
    alert = page.get_by_role("alert").filter(has_text="closed")
    expect(alert.first).to_be_visible()


def test_a_conflict_is_resolved_from_the_page(page: Page, web_stack: WebStack) -> None:
    """The source and the target both change S-1003's risk score: the Proposal's Conflict, recorded
    when it opened, blocks Merge until it is resolved here with the source's value; then it merges."""
    title = f"Conflicting {secrets.token_hex(2)}"
    branch = f"web/conflict-{secrets.token_hex(3)}"
    with web_stack.rest(web_stack.author_key) as http:
        assert http.post("/api/v1/domains/supply/branches", json={"name": branch}).status_code == 201
        change_risk(http, "S-1003", "The branch's score", branch=branch)
        theirs_score = http.get(
            "/api/v1/domains/supply/kinds/Supplier/records/S-1003", params={"branch": branch}
        ).json()["values"]["risk_score"]
        change_risk(http, "S-1003", "main's score", step=13)  # another value: a Conflict
        ours_score = http.get("/api/v1/domains/supply/kinds/Supplier/records/S-1003").json()["values"][
            "risk_score"
        ]
        response = http.post("/api/v1/domains/supply/proposals", json={"source": branch, "title": title})
        assert response.status_code == 201, response.text
    sign_in(page, web_stack, web_stack.web_key)
    page.goto(f"{web_stack.url}/app/d/supply/proposals")
    page.get_by_test_id("proposals").get_by_role("link", name=title).click()
    page.get_by_test_id("review-approve").click()
    expect(page.get_by_test_id("reviews")).to_contain_text("approved")
    # The Proposal was tried when it opened: its Conflict is listed and blocks the merge.
    conflicts = page.get_by_test_id("conflicts")
    expect(conflicts).to_contain_text("Supplier/S-1003.risk_score")
    # The diff marks it, and shows what main holds now beside the base and the source.
    record = page.get_by_test_id("diff-record").filter(has_text="Supplier/S-1003")
    expect(record).to_have_attribute("data-conflict", "open")
    row = record.locator("tr[data-conflict=open]")
    expect(row).to_contain_text("risk_score")
    expect(row.get_by_test_id("conflict-mark")).to_be_visible()
    expect(row.get_by_test_id("target-now")).to_have_text(str(ours_score))
    expect(record.get_by_role("columnheader")).to_have_text(["Attribute", "Base", "Target now", "Source"])
    expect(page.get_by_test_id("blockers")).to_contain_text("open-conflicts")
    expect(page.get_by_test_id("merge")).to_be_disabled()
    expect(page.get_by_test_id("merge-reasons")).to_contain_text("1 Conflict is open")
    conflicts.get_by_label("theirs (source)").check()
    conflicts.get_by_role("button", name="Resolve").click()
    expect(conflicts).to_contain_text("Resolved with theirs")
    page.get_by_test_id("merge").click()
    expect(page.get_by_test_id("proposal-status-badge")).to_have_text("merged")
    with web_stack.rest() as http:
        record = http.get("/api/v1/domains/supply/kinds/Supplier/records/S-1003").json()
    assert record["values"]["risk_score"] == str(theirs_score), "the source's value won"


def test_assigned_to_me_asks_the_api_for_my_proposals(page: Page, web_stack: WebStack) -> None:
    sign_in(page, web_stack, web_stack.web_key)
    page.goto(f"{web_stack.url}/app/d/supply/proposals?status=all")
    assigned = page.get_by_label("Assigned to me")
    assigned.click()  # the filter lives in the URL: the box is checked once the URL says so
    expect(assigned).to_be_checked()
    assert "assigned=me" in page.url
    # usr_web stewards no Kind of supply: the API lists none for it
    expect(page.get_by_text("No Proposals.")).to_be_visible()


def test_the_description_is_markdown_without_html_and_the_author_cannot_approve(
    page: Page, web_stack: WebStack
) -> None:
    title = f"Described {secrets.token_hex(2)}"
    description = (
        "Raise the **risk score** after the audit.\n\n- seal failures\n- late deliveries\n\n"
        '<script>window.injected = 1</script><img src=x onerror="window.injected = 2">'
        "[a link](javascript:window.injected=3)"
    )
    proposal = open_proposal(web_stack, title, description)
    sign_in(page, web_stack, web_stack.author_key)  # usr_author opened it
    page.goto(f"{web_stack.url}/app/d/supply/proposals/{proposal}")
    shown = page.get_by_test_id("proposal-description")
    expect(shown.locator("strong")).to_have_text("risk score")
    expect(shown.locator("li")).to_have_text(["seal failures", "late deliveries"])
    expect(shown.locator("script, img")).to_have_count(0)
    expect(shown.locator("a[href^=javascript]")).to_have_count(0)
    assert page.evaluate("() => window.injected") is None
    expect(page.get_by_test_id("review-approve")).to_have_count(0)
    expect(page.get_by_test_id("own-proposal")).to_contain_text("another reviewer approves it")
    expect(page.get_by_test_id("review-request-changes")).to_be_visible()
    assert_accessible(page, "a Proposal under review")


def test_a_record_says_an_open_proposal_changes_it(page: Page, web_stack: WebStack) -> None:
    title = f"Pending {secrets.token_hex(2)}"
    proposal = open_proposal(web_stack, title)
    with web_stack.rest() as http:
        branch = http.get(f"/api/v1/domains/supply/proposals/{proposal}").json()["source_ref"]
        proposed = http.get(
            "/api/v1/domains/supply/kinds/Supplier/records/S-1005", params={"branch": branch}
        ).json()["values"]["risk_score"]
    sign_in(page, web_stack, web_stack.web_key)
    page.goto(f"{web_stack.url}/app/d/supply/records/Supplier/S-1005")
    banner = page.get_by_test_id("proposal-banner")
    expect(banner).to_contain_text(title)
    expect(banner.locator("li", has_text=title)).to_contain_text(f"risk_score = {proposed}")
    banner.get_by_role("link", name=title).click()
    expect(page.get_by_test_id("proposal-title")).to_have_text(title)
    # A Record no open Proposal changes has no banner.
    page.goto(f"{web_stack.url}/app/d/supply/records/Supplier/S-1010")
    expect(page.get_by_test_id("record-title")).to_be_visible()
    page.wait_for_load_state("networkidle")
    expect(page.get_by_test_id("proposal-banner")).to_have_count(0)


SCHEMA_CHANGES: list[dict[str, Any]] = [
    {
        "op": "add_attribute",
        "kind": "Supplier",
        "attribute": "certification",
        "definition": {
            "type": "enum",
            "values": ["none", "iso9001"],
            "description": "Quality certification.",
        },
        "backfill": {"expression": "'iso9001' if supplier_tier == 1 else 'none'"},
    },
    {"op": "rename_attribute", "kind": "Supplier", "attribute": "tier", "to": "supplier_tier"},
    {
        "op": "change_attribute",
        "kind": "Contract",
        "attribute": "status",
        "definition": {"values": ["active", "expired", "draft", "terminated"]},
    },
]


def shoot(page: Page, element: Locator, path: Path) -> None:
    """A screenshot of one element in the page's coordinates (not under the sticky header)."""
    page.evaluate("() => window.scrollTo(0, 0)")
    box = element.bounding_box()
    assert box is not None
    page.screenshot(path=str(path), full_page=True, clip=box)


def test_a_schema_change_is_reviewed_with_its_diff_and_preview(
    page: Page, web_stack: WebStack, screenshots: Path, request: pytest.FixtureRequest
) -> None:
    """A task branch's change set (a backfilled Attribute, a rename, a wider enum) in a Proposal: the
    reviewer reads each element, base against proposed, where main stands on it, and the migration
    re-run on main as a dry run (the values it writes, no violation); on a phone too. The Proposal
    is closed after (main keeps its schema: the other tests read it)."""
    branch = f"web/schema-{secrets.token_hex(3)}"
    other = f"web/schema-other-{secrets.token_hex(3)}"  # forked with it, widens the same enum otherwise
    with web_stack.rest() as http:
        for name in (branch, other):
            assert http.post("/api/v1/domains/supply/branches", json={"name": name}).status_code == 201
        void = {**SCHEMA_CHANGES[2], "definition": {"values": ["active", "expired", "draft", "void"]}}
        response = http.post(
            f"/api/v1/domains/supply/branches/{other}/schema/changes", json={"changes": [void]}
        )
        assert response.status_code == 200, response.text
        changed = http.post(
            f"/api/v1/domains/supply/branches/{branch}/schema/changes",
            json={"changes": SCHEMA_CHANGES, "message": "Certification, tier renamed, terminated contracts"},
        )
        assert changed.status_code == 200, changed.text
        # What merging would write on main now: the page must show the same counts.
        preview = http.post(
            "/api/v1/domains/supply/branches/main/schema/changes",
            json={"changes": SCHEMA_CHANGES, "dry_run": True},
        ).json()
        backfilled = preview["writes"]["counts"]["Supplier.certification"]
        assert backfilled >= 30 and preview["violation_count"] == 0
        title = f"Schema {secrets.token_hex(2)}"
        opened = http.post("/api/v1/domains/supply/proposals", json={"source": branch, "title": title})
        assert opened.status_code == 201, opened.text
        proposal = opened.json()["id"]
    try:
        sign_in(page, web_stack, web_stack.web_key)
        page.goto(f"{web_stack.url}/app/d/supply/proposals/{proposal}")
        panel = page.get_by_test_id("schema-changes")
        expect(panel.get_by_role("heading", name="Schema changes")).to_be_visible()
        element = panel.get_by_test_id("schema-element")
        added = element.filter(has_text="Supplier.certification")
        expect(added).to_have_attribute("data-change", "added")
        expect(added).to_contain_text("iso9001")
        expect(added.get_by_test_id("schema-writes")).to_contain_text(f"writes {backfilled} values")
        renamed = element.filter(has_text="Supplier.supplier_tier")
        expect(renamed).to_have_attribute("data-change", "renamed")
        expect(renamed).to_contain_text("from Supplier.tier")
        expect(renamed.get_by_test_id("schema-writes")).to_contain_text("moves its values, writes none")
        widened = element.filter(has_text="Contract.status")
        expect(widened).to_have_attribute("data-change", "changed")
        expect(widened.get_by_test_id("schema-members")).to_contain_text("adds terminated")
        expect(widened).to_contain_text("On main: not changed there since the base")
        expect(panel.get_by_test_id("schema-verdict")).to_have_attribute("data-safe", "yes")
        expect(panel.get_by_test_id("schema-violations")).to_have_text(
            "No Record or Link would violate the new schema."
        )
        expect(panel.get_by_test_id("schema-writes-table")).to_contain_text(str(backfilled))
        expect(panel.get_by_test_id("schema-touches")).to_contain_text("update_supplier")
        # The panel alone (docs/images/web/schema-changes.png; the page holds 30 Records' diffs too).
        shoot(page, panel, screenshots / f"{request.node.name}--schema-changes.png")
        assert_accessible(page, "a schema change under review")

        page.set_viewport_size({"width": 390, "height": 844})
        expect(panel.get_by_test_id("schema-verdict")).to_be_visible()
        fit = page.evaluate(OVERFLOW)
        assert fit["scroll"] <= fit["width"], f"the Proposal scrolls sideways on a phone: {fit}"

        # The change set's Revision shows the same diff (no target: no preview).
        revision = changed.json()["revision"]
        page.goto(f"{web_stack.url}/app/d/supply/revisions/{revision}?branch={branch}")
        on_revision = page.get_by_test_id("schema-changes").get_by_test_id("schema-element")
        expect(on_revision.filter(has_text="Supplier.supplier_tier")).to_contain_text("from Supplier.tier")
        expect(page.get_by_test_id("schema-preview")).to_have_count(0)

        # Compared with the other branch (three-way from where both forked): the enum is a Conflict.
        page.goto(f"{web_stack.url}/app/d/supply/compare?base={other}&head={branch}")
        compared = page.get_by_test_id("schema-changes")
        conflict = compared.get_by_test_id("schema-element").filter(has_text="Contract.status")
        expect(conflict).to_have_attribute("data-standing", "conflict")
        expect(conflict.get_by_test_id("schema-standing")).to_contain_text(
            "Conflict: changed there differently"
        )
        expect(compared.get_by_test_id("schema-verdict")).to_have_attribute("data-safe", "no")
        assert_accessible(page, "a schema change compared with a branch that changed it too")

        # An editor (no schema.change on main) reads the diff, and why there is no preview.
        page.context.clear_cookies()
        sign_in(page, web_stack, web_stack.author_key)
        page.goto(f"{web_stack.url}/app/d/supply/proposals/{proposal}")
        expect(page.get_by_test_id("schema-preview-denied")).to_contain_text("schema.change")
        expect(page.get_by_test_id("schema-element").filter(has_text="Contract.status")).to_be_visible()
    finally:
        with web_stack.rest() as http:
            assert http.post(f"/api/v1/domains/supply/proposals/{proposal}/close").status_code == 200
