"""An agent's session read as a trace, in a real Chromium against a real stack.

A service principal works with a `Lorebase-Session` header: it reads a Supplier, writes it through
the agent task flow (a task branch and a Proposal), reads it back on the task branch, asks for a
Record that does not exist (a 404 step), and reads a lineage (whose origins name the import source
`examples/supply`). usr_web approves and merges the Proposal, which deletes the task branch. The
admin, signed in, replays the session:

- the read on the deleted task branch shows the Record as of its Revision (the API reads the
  branch's archive), not "did not exist";
- the write's step lists the Record it changed, and links to its Proposal;
- the import source is no Record: nothing named `examples/...` is drawn or listed;
- the canvas draws the graph as of each step's Revision: the Links around the step's Records there,
  with the Records no step touched.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import WebStack, assert_accessible, make_principal, sign_in

SUPPLIER = "S-1004"


@dataclass(frozen=True)
class AgentSession:
    session: str
    proposal: str
    task_branch: str
    title: str  # the Supplier's title


@pytest.fixture(scope="module")
def agent_session(web_stack: WebStack) -> Iterator[AgentSession]:
    session = f"agent-trace-{secrets.token_hex(4)}"
    task = f"trace-{secrets.token_hex(3)}"
    base = "/api/v1/domains/supply"
    with web_stack.rest() as admin:
        key = make_principal(admin, f"svc_trace_{secrets.token_hex(3)}", "service", "editor")
    headers = {"Authorization": f"Bearer {key}", "Lorebase-Session": session}
    with httpx.Client(base_url=web_stack.url, timeout=30, trust_env=False, headers=headers) as agent:
        record = agent.get(f"{base}/kinds/Supplier/records/{SUPPLIER}")
        assert record.status_code == 200, record.text
        score = (int(record.json()["values"]["risk_score"]) + 11) % 101
        body = {
            "parameters": {"key": SUPPLIER, "risk_score": score},
            "task": task,
            "intent": "Raise the **risk score** of S-1004 after the audit.\n\n- seal failures\n- late deliveries",
        }
        wrote = agent.post(f"{base}/operations/update_supplier/execute", json=body)
        assert wrote.status_code == 202, wrote.text
        branch, proposal = wrote.json()["branch"], wrote.json()["proposal"]["id"]
        again = agent.get(f"{base}/kinds/Supplier/records/{SUPPLIER}", params={"branch": branch})
        assert again.status_code == 200, again.text
        assert agent.get(f"{base}/kinds/Supplier/records/S-NOPE").status_code == 404
        assert agent.get(f"{base}/kinds/Supplier/records/{SUPPLIER}/lineage").status_code == 200
    with web_stack.rest(web_stack.web_key) as reviewer:
        approved = reviewer.post(f"{base}/proposals/{proposal}/reviews", json={"decision": "approve"})
        assert approved.status_code == 200, approved.text
        merged = reviewer.post(f"{base}/proposals/{proposal}/merge")
        assert merged.status_code == 200 and merged.json()["status"] == "merged", merged.text
        assert reviewer.get(f"{base}/branches/{branch}").status_code == 404  # deleted at merge
    yield AgentSession(session, proposal, branch, str(record.json()["title"]))


def open_step(page: Page, stack: WebStack, session: str, step: int) -> None:
    page.goto(f"{stack.url}/app/sessions/{session}?step={step}")
    expect(page.get_by_test_id("step-panel")).to_have_attribute("data-step", str(step - 1))


def test_the_replay_reads_a_deleted_task_branch_and_draws_no_import_source(
    page: Page, web_stack: WebStack, agent_session: AgentSession, snap: Callable[[str], None]
) -> None:
    sign_in(page, web_stack, web_stack.admin_key)
    # Step 1: the canvas draws the graph around S-1004 at the step's Revision (its Parts, Contracts...
    # which no step touched), not only what the session touched.
    open_step(page, web_stack, agent_session.session, 1)
    graph = page.get_by_test_id("revision-graph")
    expect(graph).to_contain_text("As of this step's Revision")
    expect(graph).to_contain_text("Links around its Records")
    assert int(graph.get_attribute("data-extra-nodes") or "0") > 0, graph.inner_text()
    # Step 3: the read on the task branch, deleted since: the Record as of the step's Revision.
    open_step(page, web_stack, agent_session.session, 3)
    records = page.get_by_test_id("step-records")
    expect(records).to_contain_text(f"Supplier/{SUPPLIER}")
    expect(records).to_contain_text(agent_session.title)
    expect(records.locator("[data-absent]")).to_have_count(0)
    expect(graph).to_contain_text("As of this step's Revision")  # read through the branch's archive
    # Step 2: the write lists the Record it changed (read on its task branch too).
    open_step(page, web_stack, agent_session.session, 2)
    expect(page.get_by_test_id("step-changed")).to_contain_text(f"Supplier/{SUPPLIER}")
    expect(records).to_contain_text(agent_session.title)
    expect(records.locator("[data-absent]")).to_have_count(0)
    # Step 5: the lineage's origins name the import source, which is no Record.
    open_step(page, web_stack, agent_session.session, 5)
    expect(records).to_contain_text(f"Supplier/{SUPPLIER}")
    expect(records).not_to_contain_text("examples/")
    expect(graph).to_contain_text("As of this step's Revision")
    snap("replay-deleted-branch")


def test_the_trace_lists_steps_marks_errors_sums_up_and_links_its_proposal(
    page: Page, web_stack: WebStack, agent_session: AgentSession, snap: Callable[[str], None]
) -> None:
    sign_in(page, web_stack, web_stack.admin_key)
    page.goto(f"{web_stack.url}/app/sessions/{agent_session.session}")
    rows = page.get_by_test_id("step-row")
    expect(rows).to_have_count(5)
    expect(rows.nth(1)).to_contain_text("ExecuteOperation")
    expect(rows.nth(1)).to_contain_text("202")
    expect(rows.nth(3)).to_have_attribute("data-failed", "true")
    totals = page.get_by_test_id("session-totals")
    expect(totals).to_contain_text("5 steps")
    expect(totals).to_contain_text("1 error")
    expect(totals).to_contain_text("1 write · 1 Revision · 1 Record changed")
    expect(page).to_have_title(f"Session {agent_session.session} · Lorebase")

    # The failed step is marked on the scrubber; its mark goes to it and the panel says why.
    marks = page.get_by_test_id("scrubber-errors").get_by_role("button")
    expect(marks).to_have_count(1)
    marks.first.click()
    expect(page.get_by_test_id("step-panel")).to_have_attribute("data-step", "3")
    expect(page.get_by_test_id("step-problem")).to_contain_text("S-NOPE")
    expect(rows.nth(3)).to_have_attribute("aria-current", "step")

    # A click in the list goes to the step: the write, with what it changed and its Proposal.
    rows.nth(1).click()
    expect(page.get_by_test_id("step-panel")).to_have_attribute("data-step", "1")
    expect(page.get_by_test_id("step-changed")).to_contain_text("modified")
    snap("trace")
    assert_accessible(page, "the trace")

    # Session -> Proposal, and back.
    page.get_by_test_id("session-proposals").get_by_role("link", name=agent_session.proposal).click()
    expect(page.get_by_test_id("proposal-status-badge")).to_have_text("merged")
    page.get_by_test_id("proposal-sessions").get_by_role("link", name=agent_session.session).click()
    expect(page.get_by_test_id("step-list")).to_be_visible()
    assert f"/app/sessions/{agent_session.session}" in page.url
