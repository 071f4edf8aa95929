"""Real answers fit their response models (lorebase.contract.answers), strictly.

For every endpoint that answers JSON with a 2xx, one or more real answers on the supply example,
made with the admin's key, are converted into the endpoint's model with `msgspec.convert` (strict:
a member the model does not declare, a missing required one or a wrong type fails). This catches
drift between keeper's or feed's answers and the contract without schemathesis. Each area lists the
endpoints it covers, and the lists together must be every JSON endpoint. Webhook deliveries are
checked too: the bodies a receiver gets fit RevisionEvent and OperationEvent.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import msgspec
import orjson
import pytest
import pytest_asyncio
from lorebase_scribe.suggestions import suggest
from lorebase_scribe.webhook_attempts import DeliverySettings
from lorebase_scribe.webhook_delivery import deliver_pending
from lorebase_scribe.webhooks import HttpxSender

from lorebase.contract import BY_NAME, ENDPOINTS
from lorebase.contract.answers.feed import OperationEvent, RevisionEvent
from tests.integration.conftest import ADMIN_KEY, Stack
from tests.integration.feed_stack import Feed, running_feed
from tests.integration.test_reconciliation import duplicates, pair, unprotect
from tests.integration.test_webhooks import KEY, Receiver, sealer, start_cursor

D = "/api/v1/domains/supply"
S1001 = D + "/kinds/Supplier/records/S-1001"
SCOPE = {"project_id": "answers", "mission_id": None, "agent_id": "agent", "visibility": "shared"}
REVISION = re.compile(r"[0-9a-f]{64}")

ADMIN = {
    "health",
    "create_principal",
    "create_key",
    "revoke_key",
    "add_session_note",
    "get_session",
    "list_sessions",
    "start_web_session",
    "get_web_session",
    "list_identity_providers",
    "list_domains",
    "create_domain",
    "get_domain",
    "create_grant",
    "delete_grant",
    "get_schema",
    "create_branch",
    "list_branches",
    "get_branch",
    "update_branch",
    "delete_branch",
    "create_tag",
    "list_tags",
    "get_tag",
    "create_erasure",
    "list_erasures",
}
READS = {
    "get_record",
    "get_links",
    "get_history",
    "get_lineage",
    "explain",
    "diff",
    "get_health",
    "get_kind_health",
    "context",
    "neighborhood",
    "traverse",
    "search",
    "resolve",
    "query",
}
WRITES = {
    "execute_operation",
    "import_data",
    "sync_source",
    "set_embedding",
    "list_suggestions",
    "accept_suggestion",
    "dismiss_suggestion",
    "create_proposal",
    "list_proposals",
    "get_proposal",
    "review_proposal",
    "merge_proposal",
    "close_proposal",
    "list_conflicts",
    "resolve_conflict",
}
RECONCILIATION = {
    "list_reconciliation",
    "get_reconciliation",
    "accept_reconciliation",
    "dismiss_reconciliation",
    "scan_reconciliation",
}
# Schema change sets, a Revision's changes and the plain listings (docs/schema.md, docs/rest.md).
SCHEMA = {
    "change_schema",
    "get_schema_change",
    "list_schema_changes",
    "get_revision",
    "list_records",
    "list_links",
}
FEED = {"changes", "create_webhook", "list_webhooks", "update_webhook", "delete_webhook"}
MEMORY = {e.name for e in ENDPOINTS if e.path.startswith("/api/v1/memory")}
# A Server-Sent Events stream (tests/integration/test_feed_events.py); the 204s of sign-out
# (tests/integration/test_web_sessions.py) and of deleting a tag (test_tags.py); the redirects of the
# sign-in through an identity provider (test_oidc_web.py).
NOT_JSON = {"events", "end_web_session", "delete_tag", "start_oidc_sign_in", "finish_oidc_sign_in"}


class Answers:
    """Calls endpoints by name and holds each 2xx answer to the endpoint's model."""

    def __init__(self, stack: Stack, headers: dict[str, str] | None = None) -> None:
        self.stack = stack
        self.headers = headers or stack.admin
        self.called: set[str] = set()

    async def __call__(
        self, name: str, path: str, *, headers: dict[str, str] | None = None, **kw: Any
    ) -> Any:
        endpoint = BY_NAME[name]
        response = await self.stack.http.request(
            endpoint.method, path, headers={**self.headers, **(headers or {})}, **kw
        )
        statuses = {endpoint.success, *(status for status, _ in endpoint.other_answers)}
        assert response.status_code in statuses, (name, response.status_code, response.text)
        assert response.headers["content-type"].startswith("application/json"), name
        revision = response.headers.get("lorebase-revision")
        assert revision is None or REVISION.fullmatch(revision), (name, revision)
        if endpoint.etag:
            assert response.headers.get("etag"), name
        document = response.json()
        model = dict(endpoint.other_answers).get(response.status_code, endpoint.response)
        try:
            msgspec.convert(document, model)
        except msgspec.ValidationError as exc:
            pytest.fail(f"{name} answered what its model does not describe: {exc}\n{response.text[:2000]}")
        self.called.add(name)
        return document

    def covered(self, names: set[str]) -> None:
        assert self.called == names, f"not called: {names - self.called}; not listed: {self.called - names}"


def test_the_areas_cover_every_json_endpoint() -> None:
    areas = [ADMIN, READS, WRITES, RECONCILIATION, SCHEMA, FEED, MEMORY, NOT_JSON]
    assert sum(len(area) for area in areas) == len(set().union(*areas)), "an endpoint is in two areas"
    assert set().union(*areas) == set(BY_NAME)


async def test_administration_answers(supply: Stack) -> None:
    call = Answers(supply)
    await call("health", "/health")
    await call("create_principal", "/api/v1/principals", json={"id": "agt_answers", "type": "service"})
    key = await call("create_key", "/api/v1/principals/agt_answers/keys")
    await call("revoke_key", f"/api/v1/principals/agt_answers/keys/{key['id']}")
    await call(
        "add_session_note", "/api/v1/sessions/s-answers/notes", json={"text": "start", "domain": "supply"}
    )
    await supply.http.get(S1001, headers={**supply.admin, "Lorebase-Session": "s-answers"})
    session = await call("get_session", "/api/v1/sessions/s-answers")
    assert [entry["kind"] for entry in session["entries"]] == ["note", "step"]
    assert (await call("list_sessions", "/api/v1/sessions"))["sessions"][0]["session"] == "s-answers"
    await call("start_web_session", "/api/v1/web/session", json={"key": ADMIN_KEY})
    token = supply.http.cookies["lorebase_session"]
    supply.http.cookies.clear()
    await call("get_web_session", "/api/v1/web/session", headers={"Authorization": f"Bearer {token}"})
    await call("list_identity_providers", "/api/v1/web/identity-providers")
    await call("list_domains", "/api/v1/domains")
    await call(
        "create_domain",
        "/api/v1/domains",
        json={
            "name": "tiny",
            "schema": {"kinds": {"Thing": {"key": ["code"], "attributes": {"code": {"type": "string"}}}}},
        },
    )
    await call("get_domain", D)
    narrowed = await call(
        "create_grant", D + "/grants", json={"principal": "agt_answers", "role": "viewer", "kinds": ["Part"]}
    )
    await call("delete_grant", f"{D}/grants/{narrowed['id']}")
    await call("get_schema", D + "/schema")
    await call("get_schema", "/api/v1/domains/tiny/schema")  # no Revision yet: revision is null
    await call("create_branch", D + "/branches", json={"name": "lay", "mode": "overlay"})
    await call("list_branches", D + "/branches")
    await call("get_branch", D + "/branches/main")
    await call("update_branch", D + "/branches/lay", json={"required_approvals": 1})
    await call("delete_branch", D + "/branches/lay")
    head = (await supply.http.get(D + "/branches/main", headers=supply.admin)).json()["head"]
    await call("create_tag", D + "/tags", json={"name": "answers/v1", "revision": head})
    await call("list_tags", D + "/tags")
    await call("get_tag", D + "/tags/answers/v1")
    # The supply example has no vault Attribute: an erasure records the request and erases nothing.
    await call("create_erasure", D + "/erasures", json={"records": ["Supplier/S-1001"], "reason": "answers"})
    await call("list_erasures", D + "/erasures")
    call.covered(ADMIN)


async def test_read_answers(supply: Stack) -> None:
    call = Answers(supply)
    record = await call("get_record", S1001)
    await call("get_record", S1001 + "?links=true&lineage=true")
    await call("get_record", S1001 + f"?at={record['updated_revision']}&links=true")  # from a snapshot
    await call("get_links", S1001 + "/links/supplies?limit=1")
    history = await call("get_history", S1001 + "/history?values=true")
    await call("get_history", S1001 + "/history?limit=1")
    await call("get_lineage", S1001 + "/lineage")
    await call("explain", S1001 + "/explain")
    older, newer = history["changes"][-1]["revision"], history["changes"][0]["revision"]
    await call("diff", f"{D}/diff?from={older}&to={newer}")
    await call("get_health", D + "/health")
    await call("get_health", D + f"/health?at={older}")
    await call("get_kind_health", D + "/kinds/PurchaseOrder/health")
    seed_request = {"refs": ["Supplier/S-1001"], "depth": 1, "budget_tokens": 1500, "format": "json"}
    await call("context", D + "/context", json=seed_request)
    await call("context", D + "/context", json={"lens": "supplier_risk", "refs": ["Supplier/S-1001"]})
    small = await call("context", D + "/context", json={"search": "Kavsen", "budget_tokens": 150, "depth": 2})
    assert small["budget"]["trimmed"], "the small budget trims"
    await call(
        "context",
        D + "/context",
        json={"refs": ["Part/P-10028"], "include_schema": False, "include_recent_changes": False},
    )
    await call("neighborhood", D + "/neighborhood", json={"refs": ["Supplier/S-1001"], "depth": 2})
    await call("neighborhood", D + "/neighborhood", json={"refs": ["Supplier/S-1001"], "values": False})
    await call(
        "traverse", D + "/traverse", json={"from": ["Supplier/S-1001"], "path": ["supplies", "stocked_at"]}
    )
    await call("search", D + "/search", json={"text": "Kavsen"})
    await call("search", D + "/search", json={"text": "seal", "traits": ["Located"], "values": False})
    await call("resolve", D + "/resolve", json={"text": "average risk score of dormant vendors"})
    await call("resolve", D + "/resolve", json={"text": "vendors", "coverage": False, "at": older})
    where = {"attr": "country", "op": "eq", "value": "PL"}
    await call("query", D + "/query", json={"kind": "Supplier", "where": where, "limit": 2})
    await call("query", D + "/query", json={"kind": "Supplier", "aggregate": {"group_by": "status"}})
    await call("query", D + "/query", json={"kind": "Supplier", "aggregate": {"count": True}, "at": older})
    await call("query", D + "/query", json={"trait": "Located", "select": ["city"], "coverage": False})
    call.covered(READS)


async def test_write_and_proposal_answers(supply: Stack) -> None:
    call = Answers(supply)
    agent = await supply.principal("agt_answers", type="service")
    await supply.grant("supply", "agt_answers", "editor")
    execute = D + "/operations/update_supplier/execute"
    await call(
        "execute_operation",
        execute,
        json={"parameters": {"key": "S-1001", "risk_score": 75}, "dry_run": True},
    )
    await call(
        "execute_operation",
        execute,
        json={"parameters": {"key": "S-9999", "risk_score": 5}, "dry_run": True},
    )
    needs_review = await call(  # an agent's dry run on protected main: it runs, with `review`
        "execute_operation",
        execute,
        json={"parameters": {"key": "S-1001", "risk_score": 75}, "dry_run": True},
        headers=agent,
    )
    assert needs_review["review"]["reason"] == "protected-branch"
    await call("create_branch", D + "/branches", json={"name": "work"})
    change = {"parameters": {"key": "S-1002", "risk_score": 70}, "branch": "work", "idempotency_key": "a-1"}
    await call("execute_operation", execute, json=change)
    replayed = await call("execute_operation", execute, json=change)
    assert replayed["replayed"] is True
    await call("execute_operation", execute, json={**change, "idempotency_key": "a-2"})  # nothing to change
    task = {
        "parameters": {"supplier": "S-1001", "severity": "high", "reason": "Two late deliveries"},
        "task": "q4-audit",
        "intent": "Flag S-1001 after the Q4 delivery audit",
        "idempotency_key": "q4-audit-S-1001-flag",
    }
    flag = D + "/operations/flag_supplier_risk/execute"
    dry_run = {**task, "dry_run": True, "idempotency_key": "q4-audit-dry-run"}
    await call("execute_operation", flag, json=dry_run, headers=agent)
    proposed = await call("execute_operation", flag, json=task, headers=agent)
    assert proposed["status"] == "proposed"
    records = [{"kind": "Supplier", "values": {"supplier_code": "S-1003", "city": "Lyon"}}]
    await call("import_data", D + "/imports", json={"records": records, "branch": "work"})
    await call("set_embedding", S1001 + "/embedding", json={"vector": [0.1, 0.2, 0.3], "model": "mini"})

    # A Source to sync (the supply example declares none).
    source_schema = {
        "kinds": {"Thing": {"key": ["code"], "title": "code", "attributes": {"code": {"type": "string"}}}},
        "sources": {"erp": {"kinds": ["Thing"], "stale_after": "P1D"}},
    }
    await call("create_domain", "/api/v1/domains", json={"name": "synced", "schema": source_schema})
    sync = "/api/v1/domains/synced/sources/erp/sync"
    await call("sync_source", sync, json={"records": [{"kind": "Thing", "values": {"code": "a"}}]})
    await call("sync_source", sync, json={"records": [], "mode": "incremental"})
    await call("query", "/api/v1/domains/synced/query", json={"kind": "Thing"})
    await call("get_lineage", "/api/v1/domains/synced/kinds/Thing/records/a/lineage")

    # Suggestions, from resolve misses.
    await _suggestions(supply)
    listed = await call("list_suggestions", D + "/suggestions?status=all")
    first, second = (s["id"] for s in listed["suggestions"][:2])
    await call("accept_suggestion", f"{D}/suggestions/{first}/accept")
    await call("dismiss_suggestion", f"{D}/suggestions/{second}/dismiss")

    # A Proposal with a Conflict: the same Attribute changed on both sides.
    main_side = {"parameters": {"key": "S-1002", "risk_score": 60}}
    await call("execute_operation", execute, json=main_side)
    opened = await call(
        "create_proposal", D + "/proposals", json={"source": "work", "title": "Work"}, headers=agent
    )
    path = f"{D}/proposals/{opened['id']}"
    await call("list_proposals", D + "/proposals?status=all")
    await call("review_proposal", path + "/reviews", json={"decision": "approve", "comment": "ok"})
    attempted = await call("merge_proposal", path + "/merge")
    assert attempted["attempt"]["result"] == "conflicts"
    conflicts = await call("list_conflicts", path + "/conflicts")
    for conflict in conflicts["conflicts"]:
        await call(
            "resolve_conflict", f"{path}/conflicts/{conflict['id']}/resolve", json={"resolution": "theirs"}
        )
    merged = await call("merge_proposal", path + "/merge")
    assert merged["status"] == "merged"
    await call("get_proposal", path)
    lineage = await call("get_lineage", D + "/kinds/Supplier/records/S-1002/lineage")
    assert lineage["attributes"]["risk_score"]["merge_resolution"] == {"choice": "theirs"}
    await call("explain", D + "/kinds/Supplier/records/S-1002/explain")
    task_proposal = proposed["proposal"]["id"]
    await call("close_proposal", f"{D}/proposals/{task_proposal}/close")
    call.covered(WRITES | {"create_branch", "create_domain", "query", "get_lineage", "explain"})


async def _suggestions(stack: Stack) -> None:
    """Misses of resolve, three times each, and Scribe's pass that turns them into suggestions."""
    # words too short for a guessed edit (a one-edit typo of a longer word is no miss: issue 16)
    for _ in range(3):
        response = await stack.http.post(D + "/resolve", json={"text": "vnd actv xyzzy"}, headers=stack.admin)
        assert response.status_code == 200, response.text
    assert await suggest(stack.rt.db, stack.rt.settings) >= 2


@pytest_asyncio.fixture
async def feed(supply: Stack, nats_url: str, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Feed]:
    monkeypatch.setenv("LOREBASE_TEST_WEBHOOK_KEY", KEY)
    settings = {
        "LOREBASE_WEBHOOKS__ENCRYPTION_KEY": "secret://env/LOREBASE_TEST_WEBHOOK_KEY",
        "LOREBASE_WEBHOOKS__ALLOWED_SCHEMES": '["https", "http"]',
        "LOREBASE_WEBHOOKS__ALLOW_PRIVATE_TARGETS": "true",
    }
    async with running_feed(supply, nats_url, relay=False, settings=settings) as running:
        yield running


async def test_reconciliation_answers(supply: Stack) -> None:
    """Candidates listed and read, a merge (200) and a Proposal (202), a dismissal, a scan; and the
    history and lineage members a merge adds (merged_into, merged_from)."""
    call = Answers(supply)
    await duplicates(supply)
    await call("scan_reconciliation", D + "/reconciliation/scan")
    found = (await call("list_reconciliation", D + "/reconciliation?kind=Supplier&limit=200"))["candidates"]
    title = pair(found, "Supplier/S-2001", "Supplier/S-2002")
    unique = pair(found, "Supplier/S-2004", "Supplier/S-2005")
    similar = pair(found, "Supplier/S-2001", "Supplier/S-2003")
    assert title and unique and similar
    await call("get_reconciliation", f"{D}/reconciliation/{title['id']}")
    agent = await supply.principal("agt_answers", type="service")
    await supply.grant("supply", "agt_answers", "editor")
    proposed = await call(
        "accept_reconciliation",
        f"{D}/reconciliation/{unique['id']}/accept",
        json={"keep": "S-2004"},
        headers=agent,
    )
    assert proposed["status"] == "proposed"
    await call("dismiss_reconciliation", f"{D}/reconciliation/{similar['id']}/dismiss", json={"reason": "no"})
    await unprotect(supply)
    merged = await call(
        "accept_reconciliation", f"{D}/reconciliation/{title['id']}/accept", json={"keep": "S-2001"}
    )
    assert merged["status"] == "merged"
    call.covered(RECONCILIATION)
    records = D + "/kinds/Supplier/records"
    history = await supply.http.get(f"{records}/S-2002/history?values=true", headers=supply.admin)
    msgspec.convert(history.json(), BY_NAME["get_history"].response)
    assert history.json()["changes"][0]["merged_into"] == "Supplier/S-2001"
    lineage = await supply.http.get(f"{records}/S-2001/lineage", headers=supply.admin)
    msgspec.convert(lineage.json(), BY_NAME["get_lineage"].response)
    assert lineage.json()["attributes"]["country"]["merged_from"] == "Supplier/S-2002"


async def test_feed_answers_and_deliveries(supply: Stack, feed: Feed) -> None:
    call = Answers(supply)
    page = await call("changes", D + "/branches/main/changes")
    await call("changes", D + f"/branches/main/changes?since={page['events'][0]['revision']}&kinds=Supplier")
    receiver = Receiver([])
    async with receiver as url, httpx.AsyncClient(trust_env=False) as client:
        hook = await call("create_webhook", D + "/webhooks", json={"url": url, "clearances": ["pii"]})
        await call("list_webhooks", D + "/webhooks")
        await call("update_webhook", f"{D}/webhooks/{hook['id']}", json={"clearances": []})
        await start_cursor(supply.rt.db)
        flagged = await supply.http.post(
            D + "/operations/flag_supplier_risk/execute",
            json={
                "parameters": {"supplier": "S-1001", "severity": "high", "reason": "late"},
                "branch": "main",
            },
            headers=supply.admin,
        )
        assert flagged.status_code == 200, flagged.text
        sender = HttpxSender(client, allowed_schemes=("http",), allow_private_targets=True)
        result = await deliver_pending(supply.rt.db, sender, sealer(), DeliverySettings())
        assert result.delivered == 2
    models = {"revision.committed": RevisionEvent, "operation.risk_flag_raised": OperationEvent}
    for headers, body in receiver.requests:
        msgspec.convert(orjson.loads(body), models[headers["lorebase-event"]])
    await call("delete_webhook", f"{D}/webhooks/{hook['id']}")
    call.covered(FEED)


async def test_memory_answers(stack: Stack) -> None:
    call = Answers(stack)
    scope = {k: v for k, v in SCOPE.items() if k != "visibility"}
    capabilities = ["memory_read", "memory_write", "memory_checkpoint"]
    grant = await call(
        "create_memory_grant",
        "/api/v1/memory/grants",
        json={"principal": "usr_admin", "scope": scope, "capabilities": capabilities},
    )
    key = {"Idempotency-Key": "m-1"}
    created = await call(
        "create_memory",
        "/api/v1/memory/records",
        json={"scope": SCOPE, "content": {"fact": "x"}},
        headers=key,
    )
    replayed = await call(
        "create_memory",
        "/api/v1/memory/records",
        json={"scope": SCOPE, "content": {"fact": "x"}},
        headers=key,
    )
    assert replayed["replayed"] is True
    record = "/api/v1/memory/records/" + created["record"]["record_id"]
    await call(
        "derive_memory",
        "/api/v1/memory/derivations",
        json={"scope": SCOPE, "derived_from": [created["record"]["record_id"]], "content": "d"},
        headers={"Idempotency-Key": "m-2"},
    )
    await call(
        "update_memory",
        record,
        json={"record_revision": 1, "content": {"fact": "y"}},
        headers={"Idempotency-Key": "m-3"},
    )
    embedding = {"record_revision": 2, "model": "mini", "vector": [0.1, 0.2]}
    await call(
        "attach_memory_embedding", record + "/embedding", json=embedding, headers={"Idempotency-Key": "m-4"}
    )
    same = await call(
        "attach_memory_embedding", record + "/embedding", json=embedding, headers={"Idempotency-Key": "m-5"}
    )
    assert same["change"] is None
    await call(
        "review_memory",
        record + "/reviews",
        json={"decision": "approve", "reason": "checked"},
        headers={"Idempotency-Key": "m-6"},
    )
    await call("get_memory", record)
    await call("query_memory", "/api/v1/memory/query", json={"scope": SCOPE, "limit": 1})
    changes = {"scope": SCOPE, "query": {"after": None, "through": None, "limit": 2}}
    first = await call(
        "read_memory_changes", "/api/v1/memory/changes", json={"contract_version": 1, **changes}
    )
    second = await call(
        "read_memory_changes", "/api/v1/memory/changes", json={"contract_version": 2, **changes}
    )
    nobody = {**changes, "scope": {**SCOPE, "agent_id": "nobody"}}
    await call(
        "create_memory_grant",
        "/api/v1/memory/grants",
        json={
            "principal": "usr_admin",
            "scope": {**scope, "agent_id": "nobody"},
            "capabilities": capabilities,
        },
    )
    empty = await call(
        "read_memory_changes", "/api/v1/memory/changes", json={"contract_version": 1, **nobody}
    )
    assert empty["high_watermark"] is None
    saved = {"contract_version": 1, "scope": SCOPE, "cursor": first["next_cursor"], "revision": 0}
    await call("save_memory_checkpoint", "/api/v1/memory/checkpoints/c-1", json=saved)
    await call(
        "save_memory_checkpoint",
        "/api/v1/memory/checkpoints/c-2",
        json={**saved, "contract_version": 2, "cursor": second["next_cursor"]},
    )
    await call("get_memory_checkpoint", "/api/v1/memory/checkpoints/c-2")
    await call("list_memory_checkpoints", "/api/v1/memory/checkpoints?limit=1")
    await call("delete_memory_checkpoint", "/api/v1/memory/checkpoints/c-1")
    await call("delete_memory", record, headers={"Idempotency-Key": "m-7"})
    await call("get_memory", record)  # deleted: metadata only
    await call("query_memory", "/api/v1/memory/query", json={"scope": SCOPE, "include_unavailable": True})
    await call("delete_memory_grant", "/api/v1/memory/grants/" + grant["id"])
    call.covered(MEMORY)


async def test_schema_change_and_listing_answers(supply: Stack) -> None:
    call = Answers(supply)
    rename = {"op": "rename_attribute", "kind": "Supplier", "attribute": "tier", "to": "supplier_tier"}
    changes = D + "/branches/main/schema/changes"
    await call("change_schema", changes, json={"changes": [rename], "dry_run": True})
    failing = {
        "op": "change_attribute",
        "kind": "Supplier",
        "attribute": "legal_name",
        "definition": {"type": "integer"},
    }
    dry = await call("change_schema", changes, json={"changes": [failing], "dry_run": True})
    assert dry["valid"] is False and dry["violation_count"] == 30
    changed = await call("change_schema", changes, json={"changes": [rename], "message": "rename"})
    await call("get_revision", f"{D}/revisions/{changed['revision']}?limit=2")
    await call("get_revision", f"{D}/revisions/{changed['revision'][:12]}")
    await call("list_records", D + "/kinds/Supplier/records?limit=2")
    await call("list_records", D + f"/kinds/Part/records?at={changed['revision']}")
    await call("list_links", D + "/relations/supplied_by/links?limit=2")
    await call("list_links", D + f"/relations/supplied_by/links?at={changed['revision']}")
    # As a job (Prefer: respond-async): its 202, and the job running and done.
    job = await call(
        "change_schema", changes, json={"changes": [failing]}, headers={"Prefer": "respond-async"}
    )
    assert job["status"] == "running"
    await call("get_schema_change", job["href"])
    await supply.rt.background.settled()
    assert (await call("get_schema_change", job["href"]))["status"] == "failed"
    await call("list_schema_changes", D + "/schema/changes?limit=1")
    call.covered(SCHEMA)
