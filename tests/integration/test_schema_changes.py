"""Schema change sets on a branch (docs/schema.md, "Changing a schema"): a change is a Revision with its
data migration; renames keep history and lineage; a failing conversion refuses the whole; reads at
an earlier Revision see the earlier schema; the feeds say schema_changed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio

from tests.integration.conftest import Stack
from tests.integration.feed_stack import Feed, running_feed

D = "/api/v1/domains/supply"
CHANGES = D + "/branches/{}/schema/changes"
S1001 = D + "/kinds/Supplier/records/S-1001"

CERTIFICATION = {
    "op": "add_attribute",
    "kind": "Supplier",
    "attribute": "certification",
    "definition": {"type": "enum", "values": ["none", "iso9001"], "description": "Quality certification."},
    "backfill": {"expression": "'iso9001' if supplier_tier == 1 else 'none'"},
}
RENAME_TIER = {"op": "rename_attribute", "kind": "Supplier", "attribute": "tier", "to": "supplier_tier"}


@pytest_asyncio.fixture
async def feed(supply: Stack, nats_url: str) -> AsyncIterator[Feed]:
    async with running_feed(supply, nats_url, relay=False) as running:
        yield running


async def change(stack: Stack, body: dict[str, Any], branch: str = "main", headers: Any = None) -> Any:
    return await stack.http.post(CHANGES.format(branch), json=body, headers=headers or stack.admin)


async def head(stack: Stack, branch: str = "main") -> str:
    response = await stack.http.get(f"{D}/branches/{branch}", headers=stack.admin)
    assert response.status_code == 200, response.text
    return str(response.json()["head"])


async def test_rename_and_backfill_keep_history_and_lineage(supply: Stack) -> None:
    before = await head(supply)
    old = (await supply.http.get(S1001, headers=supply.admin)).json()
    assert old["values"]["tier"] == "1"
    dry = await change(supply, {"changes": [CERTIFICATION, RENAME_TIER], "dry_run": True})
    assert dry.status_code == 200, dry.text
    assert dry.json()["status"] == "dry_run" and dry.json()["valid"] is True
    assert dry.json()["touches"]["operations"] == ["update_supplier"]
    assert dry.json()["migrated"]["records"] == 30
    writes = dry.json()["writes"]  # the backfill writes; the rename moves values and writes none
    assert writes["counts"] == {"Supplier.certification": 30} and writes["derived"] == {}
    assert {"ref": "Supplier/S-1001", "attribute": "certification", "before": None, "after": "iso9001"} in (
        writes["sample"]
    )
    assert await head(supply) == before  # a dry run writes nothing

    response = await change(
        supply,
        {
            "changes": [CERTIFICATION, RENAME_TIER],
            "message": "Certification; tier renamed",
            "expected_head": before,
        },
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "committed" and body["revision"] == await head(supply)
    assert body["schema_version"] != body["previous_schema_version"]

    record = (await supply.http.get(S1001, headers=supply.admin)).json()
    assert record["values"]["supplier_tier"] == "1" and "tier" not in record["values"]
    assert record["values"]["certification"] == "iso9001"

    history = (await supply.http.get(S1001 + "/history", headers=supply.admin)).json()
    messages = [entry.get("message") for entry in history["changes"]]
    assert "Certification; tier renamed" in messages and "Import the supply example data" in messages

    lineage = (await supply.http.get(S1001 + "/lineage", headers=supply.admin)).json()
    by_attribute = lineage["attributes"]
    # The renamed value still names the import that wrote it; the backfill names the schema change.
    assert by_attribute["supplier_tier"]["revision"] != body["revision"]
    assert by_attribute["supplier_tier"]["message"] == "Import the supply example data"
    assert by_attribute["certification"]["revision"] == body["revision"]

    schema_now = (await supply.http.get(D + "/schema", headers=supply.admin)).json()
    supplier = next(k for k in schema_now["kinds"] if k["name"] == "Supplier")
    assert "supplier_tier" in supplier["attributes"] and "tier" not in supplier["attributes"]
    schema_then = (await supply.http.get(D + "/schema", params={"at": before}, headers=supply.admin)).json()
    supplier = next(k for k in schema_then["kinds"] if k["name"] == "Supplier")
    assert "tier" in supplier["attributes"] and "certification" not in supplier["attributes"]
    assert (
        schema_then["revision"] == before and schema_then["schema_version"] == body["previous_schema_version"]
    )

    # A read at the earlier Revision sees the earlier schema and values.
    then = await supply.http.get(S1001, params={"at": before}, headers=supply.admin)
    assert then.status_code == 200, then.text
    assert then.json()["values"]["tier"] == "1" and "supplier_tier" not in then.json()["values"]
    query_then = await supply.http.post(
        D + "/query",
        json={"kind": "Supplier", "where": {"attr": "tier", "op": "eq", "value": 1}, "at": before},
        headers=supply.admin,
    )
    assert query_then.status_code == 200, query_then.text
    query_now = await supply.http.post(
        D + "/query",
        json={"kind": "Supplier", "where": {"attr": "supplier_tier", "op": "eq", "value": 1}},
        headers=supply.admin,
    )
    assert query_now.status_code == 200, query_now.text
    assert query_now.json()["count"] == query_then.json()["count"] > 0

    # The Operation the rename touched writes the renamed Attribute.
    executed = await supply.http.post(
        D + "/operations/update_supplier/execute",
        json={"parameters": {"key": "S-1002", "tier": 2}},
        headers=supply.admin,
    )
    assert executed.status_code == 200, executed.text
    s1002 = (await supply.http.get(D + "/kinds/Supplier/records/S-1002", headers=supply.admin)).json()
    assert s1002["values"]["supplier_tier"] == "2"


async def test_type_change_with_a_failing_value_is_refused_naming_the_records(supply: Stack) -> None:
    before = await head(supply)
    to_integer = {
        "op": "change_attribute",
        "kind": "Supplier",
        "attribute": "legal_name",
        "definition": {"type": "integer"},
    }
    response = await change(supply, {"changes": [to_integer]})
    assert response.status_code == 422, response.text
    problem = response.json()
    assert problem["type"].endswith("schema-migration-failed")
    assert "Supplier/S-1001" in problem["records"] and problem["violation_count"] == 30
    assert await head(supply) == before  # nothing changed
    record = (await supply.http.get(S1001, headers=supply.admin)).json()
    assert record["values"]["legal_name"] == "Kavsen Alloys Sp. z o.o."

    # A conversion that works: tier to an enum, through a map.
    to_enum = {
        "op": "change_attribute",
        "kind": "Supplier",
        "attribute": "tier",
        "definition": {
            "type": "enum",
            "values": ["strategic", "preferred", "approved"],
            "min": None,
            "max": None,
        },
        "map": {"1": "strategic", "2": "preferred", "3": "approved"},
    }
    converted = await change(supply, {"changes": [to_enum]})
    assert converted.status_code == 200, converted.text
    record = (await supply.http.get(S1001, headers=supply.admin)).json()
    assert record["values"]["tier"] == "strategic"


async def test_bad_change_sets_answer_422_with_what_to_change(supply: Stack) -> None:
    before = await head(supply)
    unknown = await change(
        supply, {"changes": [{"op": "rename_attribute", "kind": "Supplier", "attribute": "nope", "to": "x"}]}
    )
    assert unknown.status_code == 422, unknown.text
    assert unknown.json()["issues"][0]["path"] == "changes[0].attribute"
    required = await change(
        supply,
        {
            "changes": [
                {
                    "op": "add_attribute",
                    "kind": "Supplier",
                    "attribute": "duns",
                    "definition": {"type": "string", "required": True},
                }
            ]
        },
    )
    assert required.status_code == 422, required.text
    assert required.json()["type"].endswith("schema-migration-failed")
    ghost = await change(supply, {"changes": [{"op": "remove_trait", "trait": "Ghost"}]})
    assert ghost.status_code == 422, ghost.text
    assert ghost.json()["issues"][0]["path"] == "changes[0].trait" and "Located" in ghost.text
    renamed = await change(
        supply, {"changes": [{"op": "rename_trait", "trait": "Located", "to": "Addressed"}], "dry_run": True}
    )
    assert renamed.status_code == 200, renamed.text
    assert renamed.json()["changes"][0]["kinds"] == ["Supplier", "Plant"]
    assert renamed.json()["migrated"] == {"records": 0, "links": 0}
    bad = await change(
        supply,
        {
            "changes": [
                {
                    "op": "split_attribute",
                    "kind": "Supplier",
                    "attribute": "city",
                    "pattern": "(.*)",
                    "into": {"town": {"type": "string"}},
                },
                {
                    "op": "merge_attributes",
                    "kind": "Supplier",
                    "attributes": ["city", "nope"],
                    "to": "place",
                    "definition": {"type": "string"},
                    "backfill": {"expression": "city"},
                },
                {
                    "op": "merge_attributes",
                    "kind": "Supplier",
                    "attributes": ["supplier_code", "city"],
                    "to": "code_city",
                    "definition": {"type": "string"},
                },
            ]
        },
    )
    assert bad.status_code == 422, bad.text
    assert [(i["path"], i["rule"]) for i in bad.json()["issues"]] == [
        ("changes[0].pattern", "change.required"),
        ("changes[1].attributes[1]", "change.unknown"),
        ("changes[2].attributes[0]", "change.source"),
        ("changes[2].backfill", "change.required"),
    ]
    split = {
        "op": "split_attribute",
        "kind": "Supplier",
        "attribute": "legal_name",
        "pattern": "(?P<trading_name>.+) (?P<legal_form>GmbH|AB|AG)",
        "into": {
            "trading_name": {"type": "string"},
            "legal_form": {"type": "enum", "values": ["GmbH", "AB", "AG"]},
        },
    }
    refused = await change(supply, {"changes": [split], "dry_run": True})
    assert refused.status_code == 200 and not refused.json()["valid"], refused.text
    failed = [v for v in refused.json()["violations"] if v["record"] == "Supplier/S-1001"]
    assert [(v["path"], v["rule"]) for v in failed] == [
        ("Supplier/S-1001.trading_name", "split.failed"),
        ("Supplier/S-1001.legal_form", "split.failed"),
    ]
    cleared = await change(supply, {"changes": [split], "dry_run": True, "on_invalid": "clear"})
    assert cleared.json()["valid"], cleared.text
    writes = cleared.json()["writes"]
    assert writes["counts"]["Supplier.trading_name"] == 5 and writes["counts"]["Supplier.legal_name"] == 30
    assert {
        "ref": "Supplier/S-1002",
        "attribute": "trading_name",
        "before": None,
        "after": "Brennecke Dichtungstechnik",
    } in writes["sample"]
    moved = await change(
        supply,
        {"changes": [{"op": "change_relation", "relation": "supplied_by", "definition": {"to": "Plant"}}]},
    )
    assert moved.status_code == 422, moved.text
    assert moved.json()["issues"][0]["path"] == "changes[0].definition.to"
    narrowed = await change(
        supply,
        {
            "dry_run": True,
            "changes": [
                {
                    "op": "change_relation",
                    "relation": "supplied_by",
                    "definition": {
                        "cardinality": "many_to_one",
                        "attributes": {"lead_time_days": {"type": "integer", "max": 24}},
                    },
                },
                {
                    "op": "change_attribute",
                    "kind": "Supplier",
                    "attribute": "vat_number",
                    "definition": {"sensitivity": []},
                },
                {"op": "change_kind", "kind": "Supplier", "definition": {"stewards": []}},
            ],
        },
    )
    assert narrowed.status_code == 200 and not narrowed.json()["valid"], narrowed.text
    rules = {(v["path"], v["rule"]) for v in narrowed.json()["violations"]}
    assert ("Part/P-10001.supplied_by", "link.cardinality") in rules
    assert ("supplied_by/P-10001->S-1004.lead_time_days", "value.max") in rules
    assert [(p["target"], p["member"], p["removed"]) for p in narrowed.json()["protection"]] == [
        ("Supplier.vat_number", "sensitivity", ["confidential"]),
        ("Supplier", "stewards", ["usr_editor"]),
    ]
    dropped = await change(
        supply,
        {
            "dry_run": True,
            "on_invalid": "clear",
            "changes": [
                {
                    "op": "change_relation",
                    "relation": "supplied_by",
                    "definition": {"attributes": {"lead_time_days": {"type": "integer", "max": 24}}},
                }
            ],
        },
    )
    assert dropped.json()["valid"] and dropped.json()["migrated"]["links"] > 0, dropped.text
    stale = await change(supply, {"changes": [RENAME_TIER], "expected_head": "0" * 64})
    assert stale.status_code == 409 and stale.json()["type"].endswith("stale-head")
    assert await head(supply) == before

    merged = await change(
        supply,
        {
            "changes": [
                {"op": "change_kind", "kind": "Supplier", "definition": {"implements": []}},
                {
                    "op": "merge_attributes",
                    "kind": "Supplier",
                    "attributes": ["city", "country"],
                    "to": "location",
                    "definition": {"type": "string", "pattern": ".+, [A-Z]{2}"},
                    "backfill": {"expression": "city + ', ' + country"},
                },
            ]
        },
    )
    assert merged.status_code == 200, merged.text
    assert merged.json()["writes"]["counts"]["Supplier.location"] == 30
    s1001 = (await supply.http.get(S1001, headers=supply.admin)).json()["values"]
    assert s1001["location"] == "Poznan, PL" and "city" not in s1001 and "country" not in s1001

    # value_aliases alone: the words of the stored values named; the others keep theirs.
    aliases = {"op": "change_attribute", "kind": "Supplier", "attribute": "status"}
    wrong = await change(supply, {"changes": [{**aliases, "definition": {"value_aliases": {"gone": ["x"]}}}]})
    assert wrong.status_code == 422, wrong.text
    assert wrong.json()["issues"][0]["path"] == "changes[0].definition.value_aliases.gone"
    worded = await change(
        supply, {"changes": [{**aliases, "definition": {"value_aliases": {"blocked": ["banned"]}}}]}
    )
    assert worded.status_code == 200, worded.text
    schema = (await supply.http.get(D + "/schema", headers=supply.admin)).json()
    supplier = next(k for k in schema["kinds"] if k["name"] == "Supplier")
    status = supplier["attributes"]["status"]
    assert status["value_aliases"] == {"inactive": ["dormant"], "blocked": ["banned"]}
    assert status["values"] == ["active", "inactive", "blocked"]


async def test_changes_feed_says_schema_changed(supply: Stack, feed: Feed) -> None:
    response = await change(supply, {"changes": [RENAME_TIER]})
    assert response.status_code == 200, response.text
    page = await supply.http.get(D + "/branches/main/changes", headers=supply.admin)
    assert page.status_code == 200, page.text
    events = page.json()["events"]
    assert [e["schema_changed"] for e in events] == [False, False, True]
    assert events[-1]["origin"] == {"type": "schema", "ref": response.json()["schema_version"]}
    assert events[-1]["kinds"] == {"Supplier": 30}


async def test_a_write_on_another_branch_keeps_its_own_schema(supply: Stack) -> None:
    created = await supply.http.post(
        D + "/branches", json={"name": "schema-work", "from": "main"}, headers=supply.admin
    )
    assert created.status_code == 201, created.text
    response = await change(supply, {"changes": [RENAME_TIER]}, branch="schema-work")
    assert response.status_code == 200, response.text
    on_branch = await supply.http.get(S1001, params={"branch": "schema-work"}, headers=supply.admin)
    assert on_branch.json()["values"]["supplier_tier"] == "1"
    on_main = await supply.http.get(S1001, headers=supply.admin)
    assert on_main.json()["values"]["tier"] == "1"
    executed = await supply.http.post(
        D + "/operations/update_supplier/execute",
        json={"parameters": {"key": "S-1003", "tier": 3}, "branch": "main"},
        headers=supply.admin,
    )
    assert executed.status_code == 200, executed.text
    s1003 = (await supply.http.get(D + "/kinds/Supplier/records/S-1003", headers=supply.admin)).json()
    assert s1003["values"]["tier"] == "3"


async def test_a_schema_change_reaches_protected_main_through_a_proposal(supply: Stack) -> None:
    """The change set on a branch; a Proposal merges it (a fast-forward) and main stands on the new
    schema. A data branch made before it merges with its changes migrated."""
    for name in ("schema-tier", "data-before"):
        made = await supply.http.post(
            D + "/branches", json={"name": name, "from": "main"}, headers=supply.admin
        )
        assert made.status_code == 201, made.text
    data = await supply.http.post(
        D + "/operations/update_supplier/execute",
        json={"parameters": {"key": "S-1004", "risk_score": 44}, "branch": "data-before"},
        headers=supply.admin,
    )
    assert data.status_code == 200, data.text
    changed = await change(supply, {"changes": [RENAME_TIER]}, branch="schema-tier")
    assert changed.status_code == 200, changed.text
    proposal = await supply.http.post(
        D + "/proposals",
        json={"source": "schema-tier", "target": "main", "title": "Rename tier"},
        headers=supply.admin,
    )
    assert proposal.status_code == 201, proposal.text
    # Only a principal who may change main's schema approves a Proposal that changes it.
    reviewer = await supply.principal("usr_reviewer")
    await supply.grant("supply", "usr_reviewer", "reviewer")
    reviews = f"{D}/proposals/{proposal.json()['id']}/reviews"
    refused = await supply.http.post(reviews, json={"decision": "approve"}, headers=reviewer)
    assert refused.status_code == 403, refused.text
    assert (
        refused.json()["code"] == "schema-approval-required" and "schema.change" in refused.json()["detail"]
    )
    unreviewed = await supply.http.get(f"{D}/proposals/{proposal.json()['id']}", headers=reviewer)
    assert unreviewed.json()["reviews"] == [], "a refused approval records nothing"
    steward = await supply.principal("usr_schema_steward")
    await supply.grant("supply", "usr_schema_steward", "admin")
    approved = await supply.http.post(reviews, json={"decision": "approve"}, headers=steward)
    assert approved.status_code == 200, approved.text
    merged = await supply.http.post(f"{D}/proposals/{proposal.json()['id']}/merge", headers=supply.admin)
    assert merged.status_code == 200, merged.text
    assert merged.json()["attempt"]["result"] == "fast_forward"
    schema = (await supply.http.get(D + "/schema", headers=supply.admin)).json()
    assert schema["schema_version"] == changed.json()["schema_version"]
    record = (await supply.http.get(S1001, headers=supply.admin)).json()
    assert record["values"]["supplier_tier"] == "1"

    # The data branch made before the change merges, its changes migrated into the new schema.
    body = {"source": "data-before", "target": "main", "title": "Risk"}
    proposal = await supply.http.post(D + "/proposals", json=body, headers=supply.admin)
    assert proposal.status_code == 201, proposal.text
    pid = proposal.json()["id"]
    approved = await supply.http.post(
        f"{D}/proposals/{pid}/reviews", json={"decision": "approve"}, headers=reviewer
    )
    assert approved.status_code == 200, approved.text
    # The source gains a change set after the approval: that approval no longer counts for the schema.
    described = {"op": "change_kind", "kind": "Supplier", "definition": {"description": "A supplier."}}
    gained = await change(supply, {"changes": [described]}, branch="data-before")
    assert gained.status_code == 200, gained.text
    read = (await supply.http.get(f"{D}/proposals/{pid}", headers=supply.admin)).json()
    assert read["approval"]["approvals"] == 0 and read["approval"]["stale_for_schema"] == 1, read["approval"]
    assert "schema approver" in read["next"][0]["detail"], read["next"]
    blocked = await supply.http.post(f"{D}/proposals/{pid}/merge", headers=supply.admin)
    assert blocked.status_code == 409 and "approvals-pending" in blocked.json()["blockers"], blocked.text
    again = await supply.http.post(
        f"{D}/proposals/{pid}/reviews", json={"decision": "approve"}, headers=steward
    )
    assert again.status_code == 200, again.text
    merged = await supply.http.post(f"{D}/proposals/{pid}/merge", headers=supply.admin)
    assert merged.status_code == 200, merged.text
    s1004 = (await supply.http.get(D + "/kinds/Supplier/records/S-1004", headers=supply.admin)).json()
    assert s1004["values"]["risk_score"] == "44" and "supplier_tier" in s1004["values"]
    assert "tier" not in s1004["values"]


async def test_an_agent_proposes_a_schema_change_from_its_task_branch(supply: Stack) -> None:
    """A grant of admin on agent branches only: change sets there, not on main; its Proposal waits
    for a principal who may change main's schema."""
    agent = await supply.principal("usr_schema_agent")
    await supply.grant("supply", "usr_schema_agent", "admin", branches=["agent/*"])
    await supply.grant("supply", "usr_schema_agent", "editor", branches=["main"])
    made = await supply.http.post(D + "/branches", json={"name": "agent/tier", "from": "main"}, headers=agent)
    assert made.status_code == 201, made.text
    body = {"changes": [RENAME_TIER]}
    on_main = await supply.http.post(D + "/branches/main/schema/changes", json=body, headers=agent)
    assert on_main.status_code == 403, on_main.text
    changed = await supply.http.post(D + "/branches/agent/tier/schema/changes", json=body, headers=agent)
    assert changed.status_code == 200, changed.text
    proposal = await supply.http.post(
        D + "/proposals",
        json={"source": "agent/tier", "target": "main", "title": "Rename tier"},
        headers=agent,
    )
    assert proposal.status_code == 201, proposal.text
    reviews = f"{D}/proposals/{proposal.json()['id']}/reviews"
    reviewer = await supply.principal("usr_data_reviewer")
    await supply.grant("supply", "usr_data_reviewer", "reviewer")
    refused = await supply.http.post(reviews, json={"decision": "approve"}, headers=reviewer)
    assert refused.status_code == 403 and refused.json()["code"] == "schema-approval-required", refused.text
    asked = await supply.http.post(reviews, json={"decision": "request_changes"}, headers=reviewer)
    assert asked.status_code == 200, asked.text
    approved = await supply.http.post(reviews, json={"decision": "approve"}, headers=supply.admin)
    assert approved.status_code == 200, approved.text


async def test_a_revisions_changes_records_links_and_schema(supply: Stack) -> None:
    before = await head(supply)
    response = await change(supply, {"changes": [CERTIFICATION, RENAME_TIER]})
    assert response.status_code == 200, response.text
    revision = response.json()["revision"]
    page = await supply.http.get(f"{D}/revisions/{revision}", params={"limit": 20}, headers=supply.admin)
    assert page.status_code == 200, page.text
    body = page.json()
    assert body["revision"]["id"] == revision and body["revision"]["schema_changed"] is True
    assert body["revision"]["origin"]["type"] == "schema"
    assert body["schema"] == {
        "added": ["Supplier.supplier_tier", "Supplier.certification"],
        "removed": ["Supplier.tier"],
        "changed": ["operation:update_supplier"],
        "changes": [
            {"op": "add_attribute", **{k: v for k, v in CERTIFICATION.items() if k != "op"}},
            {"op": "rename_attribute", **{k: v for k, v in RENAME_TIER.items() if k != "op"}},
        ],
    }
    assert len(body["changes"]) == 20 and body["next_cursor"]
    assert body["changes"][0]["entity"] == "record" and body["changes"][0]["name"] == "Supplier"
    assert set(body["changes"][0]["attributes"]) == {"certification", "supplier_tier", "tier"}
    rest = await supply.http.get(
        f"{D}/revisions/{revision}", params={"cursor": body["next_cursor"]}, headers=supply.admin
    )
    assert len(rest.json()["changes"]) == 10 and rest.json()["next_cursor"] is None
    earlier = (await supply.http.get(f"{D}/revisions/{before[:12]}", headers=supply.admin)).json()
    assert earlier["schema"] is None and earlier["revision"]["schema_changed"] is False
    assert earlier["changes"] == [
        {
            "entity": "record",
            "name": "Supplier",
            "key": "S-1001",
            "change": "modified",
            "attributes": ["risk_score"],
        }
    ]
    unknown = await supply.http.get(f"{D}/revisions/{'0' * 64}", headers=supply.admin)
    assert unknown.status_code == 404, unknown.text

    # A map of a confidential Attribute's values is withheld from a reader without the clearance.
    vat: dict[str, Any] = {"op": "change_attribute", "kind": "Supplier", "attribute": "vat_number"}
    vat |= {"definition": {"description": "VAT number."}, "map": {"PL0000000000": "PL0000000001"}}
    response = await change(supply, {"changes": [vat]})
    assert response.status_code == 200, response.text
    revision = response.json()["revision"]
    reader = await supply.principal("usr_revision_reader")
    await supply.grant("supply", "usr_revision_reader", "reviewer")
    seen = (await supply.http.get(f"{D}/revisions/{revision}", headers=reader)).json()["schema"]
    assert seen["changed"] == ["Supplier.vat_number"]
    assert seen["changes"] == [{**{k: v for k, v in vat.items() if k != "map"}, "withheld": ["map"]}]
    full = (await supply.http.get(f"{D}/revisions/{revision}", headers=supply.admin)).json()["schema"]
    assert full["changes"] == [vat]


async def test_paged_listings_of_records_and_links_at_a_revision(supply: Stack) -> None:
    before = await head(supply)
    first = await supply.http.get(D + "/kinds/Supplier/records", params={"limit": 25}, headers=supply.admin)
    assert first.status_code == 200, first.text
    keys = [r["key"] for r in first.json()["records"]]
    assert len(keys) == 25 and keys == sorted(keys) and first.json()["next_cursor"]
    rest = await supply.http.get(
        D + "/kinds/Supplier/records", params={"cursor": first.json()["next_cursor"]}, headers=supply.admin
    )
    assert len(rest.json()["records"]) == 5 and not rest.json().get("next_cursor")
    links = await supply.http.get(
        D + "/relations/supplied_by/links", params={"limit": 7}, headers=supply.admin
    )
    assert links.status_code == 200, links.text
    page = links.json()
    assert page["from_kind"] == "Part" and page["to_kind"] == "Supplier" and len(page["links"]) == 7
    seen = [(link["from"], link["to"]) for link in page["links"]]
    cursor = page["next_cursor"]
    while cursor:
        more = (
            await supply.http.get(
                D + "/relations/supplied_by/links", params={"cursor": cursor}, headers=supply.admin
            )
        ).json()
        seen += [(link["from"], link["to"]) for link in more["links"]]
        cursor = more["next_cursor"]
    assert seen == sorted(seen) and len(seen) == len(set(seen)) > 7

    response = await change(supply, {"changes": [RENAME_TIER]})
    assert response.status_code == 200, response.text
    now = (
        await supply.http.get(D + "/kinds/Supplier/records", params={"limit": 1}, headers=supply.admin)
    ).json()
    then = (
        await supply.http.get(
            D + "/kinds/Supplier/records", params={"limit": 1, "at": before}, headers=supply.admin
        )
    ).json()
    assert now["records"][0]["key"] == then["records"][0]["key"]
    then_links = await supply.http.get(
        D + "/relations/supplied_by/links", params={"at": before, "limit": 1000}, headers=supply.admin
    )
    assert [(link["from"], link["to"]) for link in then_links.json()["links"]] == seen
    unknown = await supply.http.get(D + "/relations/nope/links", headers=supply.admin)
    assert unknown.status_code == 404, unknown.text


async def test_an_idempotency_key_answers_a_retry_once(supply: Stack) -> None:
    body = {"changes": [RENAME_TIER], "idempotency_key": "rename-tier-1"}
    first = await change(supply, body)
    assert first.status_code == 200, first.text
    again = await change(supply, body)
    assert again.status_code == 200, again.text
    assert again.json()["replayed"] is True and again.json()["revision"] == first.json()["revision"]
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert await head(supply) == first.json()["revision"]
    other = await change(supply, {"changes": [CERTIFICATION], "idempotency_key": "rename-tier-1"})
    assert other.status_code == 422 and other.json()["type"].endswith("idempotency-key-reused"), other.text


async def test_scribe_counts_with_the_default_branchs_schema(supply: Stack) -> None:
    from lorebase_scribe.statistics import recount

    response = await change(
        supply,
        {
            "changes": [
                RENAME_TIER,
                {
                    "op": "add_kind",
                    "kind": "Audit",
                    "definition": {
                        "key": ["code"],
                        "attributes": {"code": {"type": "string", "required": True}},
                    },
                },
            ]
        },
    )
    assert response.status_code == 200, response.text
    assert await recount(supply.rt.db) == 7  # the six Kinds and the new one
    domain = await supply.rt.domains.get("supply")
    stats = await supply.rt.db.read(
        "statistics", lambda txn: txn.get_statistics(domain.id, "main", ["Supplier", "Audit"])
    )
    assert "supplier_tier" in stats["Supplier"].missing and "tier" not in stats["Supplier"].missing
    assert stats["Audit"].records == 0
