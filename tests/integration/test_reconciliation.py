"""Reconciliation candidates (docs/reconciliation.md) against the real stack: Scribe's scan and its
rules, the list with its filters and masking, accept (a merge Revision that keeps both histories and
moves the Links, or a Proposal on a protected branch), dismiss, and the refusals, each of which
changes nothing."""

from __future__ import annotations

from typing import Any

from lorebase_scribe.reconciliation import reconcile

from tests.integration.conftest import Stack

D = "/api/v1/domains/supply"
R = D + "/reconciliation"
SUPPLIERS = D + "/kinds/Supplier/records"


async def scan(stack: Stack) -> None:
    await reconcile(stack.rt.db, stack.rt.settings)


async def listed(
    stack: Stack, headers: dict[str, str] | None = None, query: str = ""
) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    cursor = ""
    while True:
        joiner = "&" if query else "?"
        page = await stack.http.get(
            R + query + (f"{joiner}cursor={cursor}" if cursor else ""), headers=headers or stack.admin
        )
        assert page.status_code == 200, page.text
        found += page.json()["candidates"]
        cursor = page.json()["next_cursor"]
        if not cursor:
            return found


def pair(candidates: list[dict[str, Any]], a: str, b: str) -> dict[str, Any] | None:
    return next((c for c in candidates if (c["record_a"], c["record_b"]) == (a, b)), None)


async def duplicates(stack: Stack) -> None:
    """Suppliers that are one company (same title; same VAT but for case; a similar title), a Part
    named like one of them, and Links on the duplicates."""
    loader = await stack.principal("usr_loader")
    records = [
        (
            "Supplier",
            {
                "supplier_code": "S-2001",
                "legal_name": "Ostberg Metallwerk GmbH",
                "vat_number": "DE111222333",
                "city": "Kassel",
                "tier": "2",
            },
        ),
        (
            "Supplier",
            {
                "supplier_code": "S-2002",
                "legal_name": "Ostberg  metallwerk GmbH",
                "city": "Cassel",
                "country": "DE",
                "status": "active",
            },
        ),
        (
            "Supplier",
            {"supplier_code": "S-2003", "legal_name": "Ostberg Metalwerk GmbH & Co", "city": "Kassel"},
        ),
        (
            "Supplier",
            {"supplier_code": "S-2004", "legal_name": "Vantaa Tooling Oy", "vat_number": "FI99887766"},
        ),
        (
            "Supplier",
            {"supplier_code": "S-2005", "legal_name": "Tooling of Finland", "vat_number": "fi99887766"},
        ),
        ("Part", {"part_number": "P-90001", "name": "Ostberg Metallwerk GmbH"}),
        ("Part", {"part_number": "P-90002", "name": "Valve housing DN50"}),
        ("Contract", {"contract_number": "C-9001", "title": "Supply of valve housings"}),
    ]
    links = [
        ("supplied_by", "P-90001", "S-2001"),
        ("supplied_by", "P-90001", "S-2002"),
        ("supplied_by", "P-90002", "S-2002"),
        ("with_supplier", "C-9001", "S-2002"),
    ]
    body = {
        "source": "duplicates",
        "records": [{"kind": k, "values": v} for k, v in records],
        "links": [{"relation": r, "from": f, "to": t, "values": {}} for r, f, t in links],
    }
    response = await stack.http.post(D + "/imports", json=body, headers=loader)
    assert response.status_code == 200, response.text


async def head(stack: Stack, branch: str = "main") -> str:
    response = await stack.http.get(f"{D}/branches/{branch}", headers=stack.admin)
    assert response.status_code == 200, response.text
    return str(response.json()["head"])


async def test_candidates_by_rule_within_a_kind_with_stewards_and_masking(supply: Stack) -> None:
    await duplicates(supply)
    await scan(supply)
    found = await listed(supply, query="?kind=Supplier")
    assert all(c["kind"] == "Supplier" and c["status"] == "open" for c in found)
    title = pair(found, "Supplier/S-2001", "Supplier/S-2002")
    assert title is not None and title["score"] == 0.9
    assert title["evidence"] == [
        {
            "rule": "title",
            "attribute": "legal_name",
            "values": ["Ostberg Metallwerk GmbH", "Ostberg  metallwerk GmbH"],
        }
    ]
    assert title["stewards"] == ["usr_editor"] and title["branch"] == "main"
    assert title["revision"] == await head(supply)
    unique = pair(found, "Supplier/S-2004", "Supplier/S-2005")
    assert unique is not None and unique["score"] == 1.0
    assert unique["evidence"] == [
        {"rule": "unique", "attribute": "vat_number", "values": ["FI99887766", "fi99887766"]}
    ]
    similar = pair(found, "Supplier/S-2001", "Supplier/S-2003")
    assert similar is not None and [e["rule"] for e in similar["evidence"]] == ["similar_title"]
    assert 0.6 <= similar["evidence"][0]["similarity"] < 1 and similar["score"] < 0.9
    everything = await listed(supply, query="?status=all")
    assert not any("P-90001" in (c["record_a"] + c["record_b"]) for c in everything), "other Kinds never pair"

    # Deterministic, and not redone: a second pass and a scan now find the same pairs and scores.
    before = {(c["record_a"], c["record_b"]): (c["id"], c["score"]) for c in everything}
    await scan(supply)
    scanned = await supply.http.post(R + "/scan", headers=supply.admin)
    assert scanned.status_code == 200, scanned.text
    assert scanned.json()["candidates"] == len(before) and scanned.json()["dropped"] == 0
    after = {
        (c["record_a"], c["record_b"]): (c["id"], c["score"])
        for c in await listed(supply, query="?status=all")
    }
    assert after == before

    # One candidate, with the Records as they are now.
    one = await supply.http.get(f"{R}/{unique['id']}", headers=supply.admin)
    assert one.status_code == 200, one.text
    assert [r["values"]["vat_number"] for r in one.json()["records"]] == ["FI99887766", "fi99887766"]

    # A viewer without the confidential clearance sees the rule, not the values.
    viewer = await supply.principal("usr_viewer")
    await supply.grant("supply", "usr_viewer", "viewer")
    masked = pair(await listed(supply, viewer, "?kind=Supplier"), "Supplier/S-2004", "Supplier/S-2005")
    assert masked is not None
    assert masked["evidence"] == [
        {"rule": "unique", "attribute": "vat_number", "values": ["***", "***"], "redacted": True}
    ]
    shown = await supply.http.get(f"{R}/{unique['id']}", headers=viewer)
    assert all("vat_number" not in r["values"] for r in shown.json()["records"])

    # assigned=me: the candidates of the Kinds the caller stewards.
    editor = await supply.principal("usr_editor")
    mine = await listed(supply, editor, "?assigned=me")
    assert mine and {c["kind"] for c in mine} == {"Supplier"}
    assert await listed(supply, viewer, "?assigned=me") == []

    # A grant narrowed to other Kinds sees no Supplier candidate: listed or named, it is unknown.
    parts = await supply.principal("usr_parts")
    await supply.grant("supply", "usr_parts", "viewer", kinds=["Part"])
    assert {c["kind"] for c in await listed(supply, parts, "?status=all")} <= {"Part"}
    hidden = await supply.http.get(f"{R}/{unique['id']}", headers=parts)
    assert hidden.status_code == 404, hidden.text
    assert (await supply.http.get(R + "?kind=Supplier", headers=parts)).status_code == 404
    assert (await supply.http.get(R + "?status=maybe", headers=viewer)).status_code in (400, 422)


async def unprotect(stack: Stack) -> None:
    response = await stack.http.patch(f"{D}/branches/main", json={"protected": False}, headers=stack.admin)
    assert response.status_code == 200, response.text


async def test_accept_merges_the_records_keeps_both_histories_and_moves_the_links(supply: Stack) -> None:
    await duplicates(supply)
    await scan(supply)
    await unprotect(supply)
    agent = await supply.principal("agt_reconciler", type="service")
    await supply.grant("supply", "agt_reconciler", "editor")
    found = await listed(supply, query="?kind=Supplier")
    title = pair(found, "Supplier/S-2001", "Supplier/S-2002")
    similar = pair(found, "Supplier/S-2002", "Supplier/S-2003")
    assert title is not None and similar is not None
    created = (await supply.http.get(f"{SUPPLIERS}/S-2002/history", headers=supply.admin)).json()["changes"]

    accepted = await supply.http.post(
        f"{R}/{title['id']}/accept", json={"keep": "S-2001", "reason": "one company"}, headers=agent
    )
    assert accepted.status_code == 200, accepted.text
    doc = accepted.json()
    assert (
        doc["status"] == "merged" and doc["kept"] == "Supplier/S-2001" and doc["removed"] == "Supplier/S-2002"
    )
    assert doc["filled"] == ["country", "status"]
    assert doc["conflicts"] == [
        {"attribute": "city", "kept": "Kassel", "dropped": "Cassel"},
        {"attribute": "legal_name", "kept": "Ostberg Metallwerk GmbH", "dropped": "Ostberg  metallwerk GmbH"},
    ]
    assert doc["moved_links"] == 2
    assert doc["dropped_links"] == [
        {
            "relation": "supplied_by",
            "link": "supplied_by:P-90001->S-2002",
            "reason": "the survivor holds this Link already",
        }
    ]
    assert doc["candidate"]["status"] == "accepted" and doc["candidate"]["decided_by"] == "agt_reconciler"
    assert doc["candidate"]["result"]["revision"] == doc["revision"] == await head(supply)
    assert doc["candidate"]["reason"] == "one company"
    assert [n["action"] for n in doc["next"]] == ["get_record", "get_history"]

    survivor = await supply.http.get(f"{SUPPLIERS}/S-2001", headers=supply.admin)
    assert survivor.json()["values"]["country"] == "DE" and survivor.json()["values"]["city"] == "Kassel"
    assert (await supply.http.get(f"{SUPPLIERS}/S-2002", headers=supply.admin)).status_code == 404
    for relation, expected in (
        ("supplies", ["Part/P-90001", "Part/P-90002"]),
        ("contracts", ["Contract/C-9001"]),
    ):
        links = await supply.http.get(f"{SUPPLIERS}/S-2001/links/{relation}", headers=supply.admin)
        assert links.status_code == 200, links.text
        assert [link["from"] for link in links.json()["links"]] == expected

    # The removed Record's history stays readable and says where it went.
    history = (await supply.http.get(f"{SUPPLIERS}/S-2002/history", headers=supply.admin)).json()["changes"]
    assert history[0]["change"] == "deleted" and history[0]["merged_into"] == "Supplier/S-2001"
    assert history[0]["revision"] == doc["revision"] and history[1:] == created
    # The survivor's filled values keep the Revision that set them on the removed Record.
    lineage = (await supply.http.get(f"{SUPPLIERS}/S-2001/lineage", headers=supply.admin)).json()
    country = lineage["attributes"]["country"]
    assert country["revision"] == created[0]["revision"], "the import that set it on S-2002"
    assert country["brought_by"] == doc["revision"] and country["merged_from"] == "Supplier/S-2002"
    assert "merged_from" not in lineage["attributes"]["city"]

    # Decided once; the candidate on the removed Record is stale, and refusing it changes nothing.
    again = await supply.http.post(f"{R}/{title['id']}/accept", json={"keep": "S-2001"}, headers=agent)
    assert again.status_code == 409 and again.json()["type"].endswith("candidate-decided"), again.text
    moved = await head(supply)
    stale = await supply.http.post(f"{R}/{similar['id']}/accept", json={"keep": "S-2003"}, headers=agent)
    assert stale.status_code == 409 and stale.json()["type"].endswith("candidate-stale"), stale.text
    assert "S-2002 was deleted" in stale.json()["detail"]
    assert await head(supply) == moved
    assert (await supply.http.get(f"{R}/{similar['id']}", headers=supply.admin)).json()["status"] == "open"
    # The next scan forgets it.
    await scan(supply)
    assert pair(await listed(supply, query="?kind=Supplier"), "Supplier/S-2002", "Supplier/S-2003") is None


async def test_accept_on_protected_main_opens_a_proposal_for_an_agent(supply: Stack) -> None:
    await duplicates(supply)
    await scan(supply)
    agent = await supply.principal("agt_reconciler", type="service")
    await supply.grant("supply", "agt_reconciler", "editor")
    found = await listed(supply, query="?kind=Supplier")
    unique = pair(found, "Supplier/S-2004", "Supplier/S-2005")
    title = pair(found, "Supplier/S-2001", "Supplier/S-2002")
    assert unique is not None and title is not None
    main = await head(supply)

    proposed = await supply.http.post(
        f"{R}/{unique['id']}/accept", json={"keep": "S-2004", "task": "vat dupes"}, headers=agent
    )
    assert proposed.status_code == 202, proposed.text
    doc = proposed.json()
    assert doc["status"] == "proposed" and doc["target"] == "main"
    assert doc["branch"] == "agent/agt_reconciler/vat-dupes"
    assert doc["proposal"]["created"] and doc["proposal"]["target_ref"] == "main"
    assert doc["candidate"]["result"]["proposal"] == doc["proposal"]["id"]
    assert doc["next"] and doc["approval"]["required"] >= 1
    assert await head(supply) == main, "main is untouched until the Proposal merges"
    assert (await supply.http.get(f"{SUPPLIERS}/S-2005", headers=supply.admin)).status_code == 200
    on_task = await supply.http.get(f"{SUPPLIERS}/S-2005?branch={doc['branch']}", headers=supply.admin)
    assert on_task.status_code == 404, on_task.text
    proposal = await supply.http.get(doc["proposal"]["url"], headers=supply.admin)
    assert (
        proposal.status_code == 200
        and proposal.json()["executions"][0]["operation"] == "reconciliation.merge"
    )

    # While the Proposal is open, a scan does not propose the pair again.
    await scan(supply)
    assert pair(await listed(supply, query="?kind=Supplier"), "Supplier/S-2004", "Supplier/S-2005") is None

    # Approved and merged, main holds the merge: the removed Record's history says where it went.
    reviewer = await supply.principal("usr_reviewer")
    await supply.grant("supply", "usr_reviewer", "reviewer")
    review = await supply.http.post(
        doc["proposal"]["url"] + "/reviews", json={"decision": "approve"}, headers=reviewer
    )
    assert review.status_code == 200, review.text
    done = await supply.http.post(doc["proposal"]["url"] + "/merge", headers=supply.admin)
    assert done.status_code == 200, done.text
    assert (await supply.http.get(f"{SUPPLIERS}/S-2005", headers=supply.admin)).status_code == 404
    history = (await supply.http.get(f"{SUPPLIERS}/S-2005/history", headers=supply.admin)).json()
    assert history["changes"][0]["merged_into"] == "Supplier/S-2004"

    # A user holding operation.execute commits directly, as with Operations.
    editor = await supply.principal("usr_editor")
    merged = await supply.http.post(f"{R}/{title['id']}/accept", json={"keep": "S-2002"}, headers=editor)
    assert merged.status_code == 200 and merged.json()["status"] == "merged", merged.text
    assert merged.json()["filled"] == ["tier", "vat_number"]


async def test_dismissed_pairs_are_never_proposed_again(supply: Stack) -> None:
    await duplicates(supply)
    await scan(supply)
    viewer = await supply.principal("usr_viewer")
    await supply.grant("supply", "usr_viewer", "viewer")
    editor = await supply.principal("usr_editor")
    found = await listed(supply, query="?kind=Supplier")
    similar = pair(found, "Supplier/S-2001", "Supplier/S-2003")
    assert similar is not None
    url = f"{R}/{similar['id']}/dismiss"

    refused = await supply.http.post(url, json={"reason": "a subsidiary"}, headers=viewer)
    assert refused.status_code == 403, refused.text
    missing = await supply.http.post(url, json={}, headers=editor)
    assert missing.status_code == 422, missing.text
    assert (await supply.http.get(f"{R}/{similar['id']}", headers=supply.admin)).json()["status"] == "open"

    # The steward of Supplier dismisses (an editor: no proposal.review needed).
    dismissed = await supply.http.post(url, json={"reason": "a subsidiary"}, headers=editor)
    assert dismissed.status_code == 200, dismissed.text
    candidate = dismissed.json()["candidate"]
    assert candidate["status"] == "dismissed" and candidate["reason"] == "a subsidiary"
    assert candidate["decided_by"] == "usr_editor"
    again = await supply.http.post(url, json={"reason": "twice"}, headers=editor)
    assert again.status_code == 409, again.text

    # Scans leave it dismissed and never open it again, whatever changes.
    await supply.http.post(R + "/scan", headers=supply.admin)
    await scan(supply)
    assert pair(await listed(supply, query="?kind=Supplier"), "Supplier/S-2001", "Supplier/S-2003") is None
    gone = await listed(supply, query="?status=dismissed")
    assert [c["id"] for c in gone] == [similar["id"]]
    # Dismissed, it cannot be accepted either.
    late = await supply.http.post(
        f"{R}/{similar['id']}/accept", json={"keep": "S-2001"}, headers=supply.admin
    )
    assert late.status_code == 409, late.text

    # A rename of the Kind takes its candidates along: read under the new name, still dismissed.
    rename = {"changes": [{"op": "rename_kind", "kind": "Supplier", "to": "Vendor"}]}
    renamed = await supply.http.post(D + "/branches/main/schema/changes", json=rename, headers=supply.admin)
    assert renamed.status_code == 200, renamed.text
    assert [c["record_a"] for c in await listed(supply, query="?status=dismissed")] == ["Vendor/S-2001"]
    await scan(supply)
    vendors = await listed(supply, query="?kind=Vendor")
    assert pair(vendors, "Vendor/S-2001", "Vendor/S-2002") is not None
    assert pair(vendors, "Vendor/S-2001", "Vendor/S-2003") is None
    old_name = await supply.http.get(R + "?kind=Supplier", headers=supply.admin)
    assert old_name.status_code == 404, old_name.text  # the Kind is Vendor now


async def test_refused_accepts_change_nothing(supply: Stack) -> None:
    await duplicates(supply)
    await scan(supply)
    viewer = await supply.principal("usr_viewer")
    await supply.grant("supply", "usr_viewer", "viewer")
    title = pair(await listed(supply, query="?kind=Supplier"), "Supplier/S-2001", "Supplier/S-2002")
    assert title is not None
    url = f"{R}/{title['id']}/accept"
    main = await head(supply)
    revisions, branches = await supply.count("revisions"), await supply.count("branches")

    forbidden = await supply.http.post(url, json={"keep": "S-2001"}, headers=viewer)
    assert forbidden.status_code == 403, forbidden.text
    wrong = await supply.http.post(url, json={"keep": "S-1001"}, headers=supply.admin)
    assert wrong.status_code == 422 and wrong.json()["issues"][0]["path"] == "keep", wrong.text
    extra = await supply.http.post(url, json={"keep": "S-2001", "force": True}, headers=supply.admin)
    assert extra.status_code == 422, extra.text
    unknown = await supply.http.post(f"{R}/rcn_nope/accept", json={"keep": "S-2001"}, headers=supply.admin)
    assert unknown.status_code == 404, unknown.text
    assert (await supply.http.get(f"{R}/rcn_nope", headers=supply.admin)).status_code == 404
    scan_refused = await supply.http.post(R + "/scan", headers=viewer)
    assert scan_refused.status_code == 403, scan_refused.text
    assert (await supply.count("revisions"), await supply.count("branches")) == (revisions, branches)
    assert await head(supply) == main

    # A Record changed so that no rule holds any more: stale.
    editor = await supply.principal("usr_editor")
    renamed = await supply.http.post(
        D + "/imports",
        json={
            "source": "rename",
            "records": [
                {
                    "kind": "Supplier",
                    "values": {"supplier_code": "S-2002", "legal_name": "Entirely Different AB"},
                }
            ],
        },
        headers=await supply.principal("usr_loader"),
    )
    assert renamed.status_code == 200, renamed.text
    main = await head(supply)
    revisions, branches = await supply.count("revisions"), await supply.count("branches")
    stale = await supply.http.post(url, json={"keep": "S-2001"}, headers=editor)
    assert stale.status_code == 409 and stale.json()["type"].endswith("candidate-stale"), stale.text
    assert "no rule matches" in stale.json()["detail"]
    # An agent on protected main would get a task branch: refused first, it gets none.
    agent = await supply.principal("agt_reconciler", type="service")
    await supply.grant("supply", "agt_reconciler", "editor")
    refused = await supply.http.post(url, json={"keep": "S-2001", "task": "stale"}, headers=agent)
    assert refused.status_code == 409 and refused.json()["type"].endswith("candidate-stale"), refused.text
    assert (await supply.count("revisions"), await supply.count("branches")) == (revisions, branches)
    assert await head(supply) == main
    assert (await supply.http.get(f"{R}/{title['id']}", headers=supply.admin)).json()["status"] == "open"
