"""Renames of Kinds and Relations in a change set (docs/schema.md, "Changing a schema"): the Records
and Links move with their keys, values, provenance and creation; history follows them back across
the rename; a read at an earlier Revision uses the old name; what the rename rewrites is listed in
the dry run; a bad rename changes nothing and says what to change."""

from __future__ import annotations

from tests.integration.conftest import Stack
from tests.integration.test_schema_changes import D, change, head

RENAME_KIND = {"op": "rename_kind", "kind": "Supplier", "to": "Vendor"}
RENAME_RELATION = {"op": "rename_relation", "relation": "supplied_by", "to": "sourced_from"}


async def test_renamed_kind_and_relation_keep_history_lineage_and_old_reads(supply: Stack) -> None:
    before = await head(supply)
    old = (await supply.http.get(D + "/kinds/Supplier/records/S-1001", headers=supply.admin)).json()
    reader = await supply.principal("usr_reader")
    grant = await supply.grant("supply", "usr_reader", "viewer", kinds=["Supplier"])

    # Bad renames: 422 naming the member to change, nothing written.
    for bad, path in (
        ({"op": "rename_kind", "kind": "Supplier", "to": "Part"}, "changes[0].to"),
        ({"op": "rename_kind", "kind": "Supplyer", "to": "Vendor"}, "changes[0].kind"),
        ({"op": "rename_relation", "relation": "supplied_by", "to": "flags"}, "changes[0].to"),
        ({"op": "rename_relation", "relation": "nope", "to": "x"}, "changes[0].relation"),
    ):
        refused = await change(supply, {"changes": [bad]})
        assert refused.status_code == 422, refused.text
        issue = refused.json()["issues"][0]
        assert issue["path"] == path and issue["message"], issue
    assert await head(supply) == before

    # A dry run names the derived values a conversion would change (closing every open flag).
    close = {
        "op": "change_attribute",
        "kind": "RiskFlag",
        "attribute": "status",
        "definition": {"values": ["open", "closed"]},
        "map": {"open": "closed"},
    }
    closing = await change(supply, {"changes": [close], "dry_run": True})
    assert closing.status_code == 200, closing.text
    writes = closing.json()["writes"]
    assert writes["counts"]["RiskFlag.status"] > 0 and writes["derived"]["Supplier.open_flags"] > 0
    assert all(w["after"] == "0" for w in writes["derived_sample"])

    dry = await change(supply, {"changes": [RENAME_KIND, RENAME_RELATION], "dry_run": True})
    assert dry.status_code == 200, dry.text
    touches = dry.json()["touches"]
    assert "supplier_risk" in touches["lenses"] and "update_supplier" in touches["operations"]
    assert grant in touches["grants"]
    assert dry.json()["valid"] is True and await head(supply) == before

    done = await change(supply, {"changes": [RENAME_KIND, RENAME_RELATION], "message": "Vendors"})
    assert done.status_code == 200, done.text
    revision = done.json()["revision"]

    # The Revision's changes list each moved Record and Link once, under its new name.
    links = len(
        (await supply.http.get(D + "/relations/sourced_from/links?limit=1000", headers=supply.admin)).json()[
            "links"
        ]
    )
    assert done.json()["migrated"] == {"records": 30, "links": links}
    view = (await supply.http.get(f"{D}/revisions/{revision}", headers=supply.admin)).json()
    moved = {(c["entity"], c["name"], c["change"]) for c in view["changes"]}
    assert moved == {("record", "Vendor", "renamed"), ("link", "sourced_from", "renamed")}, moved
    assert len(view["changes"]) == view["revision"]["stats"]["changes"] == 30 + links
    s1001 = next(c for c in view["changes"] if c["key"] == "S-1001")
    assert s1001["renamed_from"] == "Supplier/S-1001"

    record = await supply.http.get(D + "/kinds/Vendor/records/S-1001", headers=supply.admin)
    assert record.status_code == 200, record.text
    now = record.json()
    assert now["values"] == old["values"]
    assert now.get("created_revision") == old.get("created_revision")
    gone = await supply.http.get(D + "/kinds/Supplier/records/S-1001", headers=supply.admin)
    assert gone.status_code == 404, gone.text

    history = (await supply.http.get(D + "/kinds/Vendor/records/S-1001/history", headers=supply.admin)).json()
    assert [c["message"] for c in history["changes"]] == [
        "Vendors",
        "Raise the risk of S-1001",
        "Import the supply example data",
    ]
    assert history["changes"][0]["change"] == "renamed"
    assert history["changes"][0]["renamed_from"] == "Supplier/S-1001"

    lineage = (await supply.http.get(D + "/kinds/Vendor/records/S-1001/lineage", headers=supply.admin)).json()
    assert lineage["attributes"]["risk_score"]["message"] == "Raise the risk of S-1001"
    assert lineage["attributes"]["legal_name"]["message"] == "Import the supply example data"
    assert revision not in {entry["revision"] for entry in lineage["attributes"].values()}
    assert lineage["changes"] == 3

    # Reads at the Revision before the rename use the old names.
    then = await supply.http.get(
        D + "/kinds/Supplier/records/S-1001", params={"at": before}, headers=supply.admin
    )
    assert then.status_code == 200 and then.json()["values"] == old["values"], then.text
    links_then = await supply.http.get(
        D + "/relations/supplied_by/links", params={"at": before, "limit": 1000}, headers=supply.admin
    )
    links_now = await supply.http.get(
        D + "/relations/sourced_from/links", params={"limit": 1000}, headers=supply.admin
    )
    assert links_then.status_code == 200 and links_now.status_code == 200, links_now.text
    pairs = [(link["from"], link["to"], link["values"]) for link in links_now.json()["links"]]
    assert pairs == [
        (link["from"], link["to"].replace("Supplier/", "Vendor/"), link["values"])
        for link in links_then.json()["links"]
    ]
    assert pairs and all(to.startswith("Vendor/") for _, to, _ in pairs)
    assert links_now.json()["to_kind"] == "Vendor"

    # The Operation and the grant follow the new name.
    executed = await supply.http.post(
        D + "/operations/update_supplier/execute",
        json={"parameters": {"key": "S-1002", "risk_score": 12}},
        headers=supply.admin,
    )
    assert executed.status_code == 200, executed.text
    seen = await supply.http.get(D + "/kinds/Vendor/records/S-1002", headers=reader)
    assert seen.status_code == 200 and seen.json()["values"]["risk_score"] == "12", seen.text


async def test_a_kind_renamed_on_an_overlay_branch_writes_history_rows_only(supply: Stack) -> None:
    """An overlay branch keeps no Records' rows (docs/branches.md): the rename writes each Record's
    move as history rows (what its snapshot reads, history and a merge read), no copy of it; main
    is untouched; merged, main's Records move."""
    made = await supply.http.post(
        D + "/branches", json={"name": "vendors", "from": "main", "mode": "overlay"}, headers=supply.admin
    )
    assert made.status_code == 201, made.text
    main_head = await head(supply)
    overlay = "branch = 'vendors'"
    renamed = await change(supply, {"changes": [RENAME_KIND]}, branch="vendors")
    assert renamed.status_code == 200 and renamed.json()["migrated"]["records"] == 30, renamed.text

    assert await supply.count(f"records where {overlay}") == 0
    assert await supply.count(f"links where {overlay}") == 0
    # Its bound: the move of each Record of the Kind (deleted under the old name, created under
    # the new), nothing else.
    assert await supply.count(f"history where {overlay}") == 2 * 30
    assert await supply.count(f"history where {overlay} and name = 'Vendor'") == 30

    on = {"branch": "vendors"}
    vendor = await supply.http.get(D + "/kinds/Vendor/records/S-1001", params=on, headers=supply.admin)
    supplier = await supply.http.get(D + "/kinds/Supplier/records/S-1001", headers=supply.admin)
    assert vendor.status_code == supplier.status_code == 200, vendor.text
    assert vendor.json()["values"] == supplier.json()["values"]
    assert (
        await supply.http.get(D + "/kinds/Vendor/records/S-1001", headers=supply.admin)
    ).status_code == 404
    old_name = await supply.http.get(D + "/kinds/Supplier/records/S-1001", params=on, headers=supply.admin)
    assert old_name.status_code == 404, old_name.text
    for kind, branch in (("Vendor", "vendors"), ("Supplier", "main")):
        listed = await supply.http.post(
            D + "/query", json={"kind": kind, "branch": branch, "limit": 100}, headers=supply.admin
        )
        assert listed.status_code == 200 and len(listed.json()["records"]) == 30, listed.text
    history = await supply.http.get(
        D + "/kinds/Vendor/records/S-1001/history", params=on, headers=supply.admin
    )
    changes = history.json()["changes"]
    assert changes[0]["change"] == "renamed" and changes[0]["renamed_from"] == "Supplier/S-1001"
    assert [c["message"] for c in changes[1:]] == [
        "Raise the risk of S-1001",
        "Import the supply example data",
    ]
    assert await head(supply) == main_head

    # A write on the overlay after the rename, under the new name.
    executed = await supply.http.post(
        D + "/operations/update_supplier/execute",
        json={"parameters": {"key": "S-1002", "risk_score": 12}, "branch": "vendors"},
        headers=supply.admin,
    )
    assert executed.status_code == 200, executed.text
    s1002 = await supply.http.get(D + "/kinds/Vendor/records/S-1002", params=on, headers=supply.admin)
    assert s1002.json()["values"]["risk_score"] == "12"
    assert await supply.count(f"records where {overlay}") == 0

    # Merged into main (a fast-forward): main's Records move, read from the overlay's history.
    proposal = await supply.http.post(
        D + "/proposals",
        json={"source": "vendors", "target": "main", "title": "Vendors"},
        headers=supply.admin,
    )
    assert proposal.status_code == 201, proposal.text
    steward = await supply.principal("usr_steward")
    await supply.grant("supply", "usr_steward", "admin")
    approved = await supply.http.post(
        f"{D}/proposals/{proposal.json()['id']}/reviews", json={"decision": "approve"}, headers=steward
    )
    assert approved.status_code == 200, approved.text
    merged = await supply.http.post(f"{D}/proposals/{proposal.json()['id']}/merge", headers=supply.admin)
    assert merged.status_code == 200, merged.text
    after = await supply.http.get(D + "/kinds/Vendor/records/S-1002", headers=supply.admin)
    assert after.status_code == 200 and after.json()["values"]["risk_score"] == "12", after.text
    assert await supply.count("records where branch = 'main' and kind = 'Vendor'") == 30
    assert await supply.count("records where branch = 'main' and kind = 'Supplier'") == 0
