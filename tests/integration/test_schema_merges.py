"""Merges across schema changes (docs/schema.md, "Branches, Proposals and merges"): a data branch
made before a change set merges with its values migrated (renames, backfills, conversions) or with
Conflicts saying why; schemas changed on both sides merge element by element, the same element
changed differently on both sides is a Conflict naming it and both sides."""

from __future__ import annotations

import logging
from typing import Any

import asyncpg
import pytest
from lorebase_keeper.merge import MergeRequest, MergeResult
from lorebase_keeper.proposals import attempts

from lorebase_store import Txn
from tests.integration.conftest import Stack
from tests.integration.test_schema_batches import CERTIFICATION as TIER_CERTIFICATION
from tests.integration.test_schema_batches import RISK_AT_MOST_95
from tests.integration.test_schema_changes import CERTIFICATION, RENAME_TIER, D, change, head


async def branch(stack: Stack, name: str) -> None:
    made = await stack.http.post(D + "/branches", json={"name": name, "from": "main"}, headers=stack.admin)
    assert made.status_code == 201, made.text


async def execute(stack: Stack, operation: str, parameters: dict[str, Any], on: str) -> None:
    done = await stack.http.post(
        f"{D}/operations/{operation}/execute",
        json={"parameters": parameters, "branch": on},
        headers=stack.admin,
    )
    assert done.status_code == 200, done.text


async def propose(stack: Stack, source: str, reviewer: dict[str, str]) -> Any:
    """A Proposal of `source` into main, approved; its id and answer."""
    proposal = await stack.http.post(
        D + "/proposals", json={"source": source, "target": "main", "title": source}, headers=stack.admin
    )
    if proposal.status_code != 201:
        return proposal
    approved = await stack.http.post(
        f"{D}/proposals/{proposal.json()['id']}/reviews", json={"decision": "approve"}, headers=reviewer
    )
    assert approved.status_code == 200, approved.text
    return proposal


AUDITED = {
    "op": "add_attribute",
    "kind": "Supplier",
    "attribute": "audited",
    "definition": {"type": "boolean", "required": True},
    "backfill": {"value": False},
}


async def branches_held(stack: Stack, *names: str) -> dict[str, bool]:
    """Whether another transaction holds each branch's row (probed from a connection of its own)."""
    other = await asyncpg.connect(stack.database_url)
    try:
        locks: dict[str, bool] = {}
        for name in names:
            try:
                await other.execute(
                    "SELECT 1 FROM branches WHERE domain_id = 1 AND name = $1 FOR UPDATE NOWAIT", name
                )
                locks[name] = False
            except asyncpg.LockNotAvailableError:
                locks[name] = True
        return locks
    finally:
        await other.close()


async def reviewer_of(stack: Stack) -> dict[str, str]:
    """A reviewer who may approve Proposals that change main's schema (schema.change: an admin grant)."""
    reviewer = await stack.principal("usr_steward")
    await stack.grant("supply", "usr_steward", "admin")
    return reviewer


async def test_merges_across_schema_changes(supply: Stack) -> None:
    """One Domain for both cases (a supply fixture costs seconds of make test)."""
    reviewer = await reviewer_of(supply)
    await a_data_branch_made_before_a_schema_change_merges_with_its_values_migrated(supply, reviewer)
    await schemas_changed_on_both_sides_merge_by_element_or_name_their_conflicts(supply, reviewer)
    await a_schema_change_on_the_source_alone_migrates_the_target_on_merge(supply, reviewer)
    await merged_values_keep_the_unique_and_required_values_of_the_merged_schema(supply, reviewer)
    await a_kind_renamed_on_the_source_alone_moves_the_targets_records_on_merge(supply, reviewer)
    await a_change_set_sent_with_clear_clears_the_targets_values_on_merge(supply, reviewer)
    await a_value_a_later_attempt_no_longer_clears_is_no_longer_listed(supply, reviewer)


async def a_data_branch_made_before_a_schema_change_merges_with_its_values_migrated(
    supply: Stack, reviewer: dict[str, str]
) -> None:
    await branch(supply, "risk-audit")
    await execute(supply, "update_supplier", {"key": "S-1004", "risk_score": 44}, "risk-audit")
    new_supplier = {
        "supplier_code": "S-2001",
        "legal_name": "Nordhavn Bearings A/S",
        "country": "DK",
        "status": "active",
        "tier": "1",
    }
    imported = await supply.http.post(
        D + "/imports",
        json={"records": [{"kind": "Supplier", "values": new_supplier}], "branch": "risk-audit"},
        headers=supply.admin,
    )
    assert imported.status_code == 200, imported.text
    changed = await change(supply, {"changes": [CERTIFICATION, RENAME_TIER]})  # on main, after the fork
    assert changed.status_code == 200, changed.text

    proposal = await propose(supply, "risk-audit", reviewer)
    assert proposal.status_code == 201, proposal.text
    merged = await supply.http.post(f"{D}/proposals/{proposal.json()['id']}/merge", headers=supply.admin)
    assert merged.status_code == 200, merged.text
    assert merged.json()["attempt"]["result"] == "merge"
    s1004 = (await supply.http.get(D + "/kinds/Supplier/records/S-1004", headers=supply.admin)).json()
    assert s1004["values"]["risk_score"] == "44" and "tier" not in s1004["values"]
    s2001 = (await supply.http.get(D + "/kinds/Supplier/records/S-2001", headers=supply.admin)).json()
    assert s2001["values"]["supplier_tier"] == "1" and "tier" not in s2001["values"]
    assert s2001["values"]["certification"] == "iso9001"  # the change's backfill, applied on the way
    schema = (await supply.http.get(D + "/schema", headers=supply.admin)).json()
    assert schema["schema_version"] == changed.json()["schema_version"]


async def schemas_changed_on_both_sides_merge_by_element_or_name_their_conflicts(
    supply: Stack, reviewer: dict[str, str]
) -> None:
    for name in ("wider-risk", "late-risk", "new-field"):
        await branch(supply, name)
    await execute(supply, "update_supplier", {"key": "S-1005", "risk_score": 97}, "late-risk")
    max_95 = {
        "op": "change_attribute",
        "kind": "Supplier",
        "attribute": "risk_score",
        "definition": {"max": 95},
    }
    max_99 = {
        "op": "change_attribute",
        "kind": "Supplier",
        "attribute": "risk_score",
        "definition": {"max": 99},
    }
    assert (await change(supply, {"changes": [max_99]}, branch="wider-risk")).status_code == 200
    description = {"op": "change_kind", "kind": "Part", "definition": {"description": "A part we buy."}}
    assert (await change(supply, {"changes": [description]}, branch="new-field")).status_code == 200
    assert (await change(supply, {"changes": [max_95]})).status_code == 200  # main

    # The same element changed differently on both sides: a Conflict naming it and both sides.
    proposal = await propose(supply, "wider-risk", reviewer)
    assert proposal.status_code == 201, proposal.text
    conflicts = (
        await supply.http.get(f"{D}/proposals/{proposal.json()['id']}/conflicts", headers=supply.admin)
    ).json()["conflicts"]
    assert [(c["code"], c["entity"], c["element"]) for c in conflicts] == [
        ("schema_conflict", "schema", "Supplier.risk_score")
    ]
    assert (
        conflicts[0]["ours"]["definition"]["max"] == 95 and conflicts[0]["theirs"]["definition"]["max"] == 99
    )
    assert conflicts[0]["base"]["definition"]["max"] == 100
    assert conflicts[0]["resolutions"] == ["theirs"]  # a merge cannot leave part of a change set out

    # A value the target's change does not accept: a Conflict saying why.
    proposal = await propose(supply, "late-risk", reviewer)
    assert proposal.status_code == 201, proposal.text
    conflicts = (
        await supply.http.get(f"{D}/proposals/{proposal.json()['id']}/conflicts", headers=supply.admin)
    ).json()["conflicts"]
    assert [(c["code"], c["ref"], c["attribute"]) for c in conflicts] == [
        ("schema_migration", "Supplier/S-1005", "risk_score")
    ]
    assert "95" in conflicts[0]["theirs"] and "(rule value.max)" in conflicts[0]["theirs"], conflicts
    assert "change the value on late-risk" in conflicts[0]["theirs"], conflicts
    # The value must fit, or the source's changes of the Record be left out (ours): theirs and a
    # value are refused with what to do, nothing stored.
    assert conflicts[0]["resolutions"] == ["ours"]
    for resolution in ({"resolution": "theirs"}, {"resolution": "value", "value": 90}):
        refused = await supply.http.post(conflicts[0]["href"], json=resolution, headers=supply.admin)
        assert refused.status_code == 422, refused.text
        assert refused.json()["issues"][0]["rule"] == "conflict.migration", refused.text
        assert "change the value on late-risk" in refused.json()["detail"], refused.text
        assert "resolve with ours" in refused.json()["detail"], refused.text
    listed = await supply.http.get(f"{D}/proposals/{proposal.json()['id']}/conflicts", headers=supply.admin)
    assert [c["status"] for c in listed.json()["conflicts"]] == ["open"]
    s1005 = D + "/kinds/Supplier/records/S-1005"
    risk_on_main = (await supply.http.get(s1005, headers=supply.admin)).json()["values"]["risk_score"]
    resolved = await supply.http.post(conflicts[0]["href"], json={"resolution": "ours"}, headers=supply.admin)
    assert resolved.status_code == 200 and resolved.json()["resolutions"] == [], resolved.text
    merged = await supply.http.post(f"{D}/proposals/{proposal.json()['id']}/merge", headers=supply.admin)
    assert merged.status_code == 200 and merged.json()["status"] == "merged", merged.text
    assert merged.json()["attempt"]["resolved_conflicts"] == 1, merged.text
    after = (await supply.http.get(s1005, headers=supply.admin)).json()["values"]["risk_score"]
    assert after == risk_on_main != "97"  # the source's change of S-1005 left out

    # Changes to different elements: the source's change set is committed on main by the merge.
    proposal = await propose(supply, "new-field", reviewer)
    assert proposal.status_code == 201, proposal.text
    merged = await supply.http.post(f"{D}/proposals/{proposal.json()['id']}/merge", headers=supply.admin)
    assert merged.status_code == 200, merged.text
    kinds = (await supply.http.get(D + "/schema", headers=supply.admin)).json()["kinds"]
    assert [k["description"] for k in kinds if k["name"] == "Part"] == ["A part we buy."]


async def a_schema_change_on_the_source_alone_migrates_the_target_on_merge(
    supply: Stack, reviewer: dict[str, str]
) -> None:
    await branch(supply, "audited")
    audited = {
        "op": "add_attribute",
        "kind": "Supplier",
        "attribute": "audited",
        "definition": {"type": "boolean", "required": True},
        "backfill": {"value": False},
    }
    max_90 = {
        "op": "change_attribute",
        "kind": "Supplier",
        "attribute": "risk_score",
        "definition": {"max": 90},
    }
    source_change = await change(supply, {"changes": [audited, max_90]}, branch="audited")
    assert source_change.status_code == 200, source_change.text
    # main moves after the fork: one value the source's schema refuses, one it takes.
    await execute(supply, "update_supplier", {"key": "S-1007", "risk_score": 93}, "main")
    await execute(supply, "update_supplier", {"key": "S-1008", "risk_score": 51}, "main")
    before = await head(supply)

    proposal = await propose(supply, "audited", reviewer)
    assert proposal.status_code == 201, proposal.text
    number = proposal.json()["id"]
    conflicts = (await supply.http.get(f"{D}/proposals/{number}/conflicts", headers=supply.admin)).json()
    assert [(c["code"], c["ref"], c["attribute"]) for c in conflicts["conflicts"]] == [
        ("schema_migration", "Supplier/S-1007", "risk_score")
    ]
    assert "90" in conflicts["conflicts"][0]["theirs"]
    assert await head(supply) == before  # nothing merged
    # main's own value, which main's data must change: no resolution leaves it out.
    assert conflicts["conflicts"][0]["resolutions"] == []
    refused = await supply.http.post(
        conflicts["conflicts"][0]["href"], json={"resolution": "ours"}, headers=supply.admin
    )
    assert refused.status_code == 422 and refused.json()["issues"][0]["message"] == "none", refused.text

    await execute(supply, "update_supplier", {"key": "S-1007", "risk_score": 88}, "main")
    merged = await supply.http.post(f"{D}/proposals/{number}/merge", headers=supply.admin)
    assert merged.status_code == 200, merged.text
    assert merged.json()["attempt"]["result"] == "merge", merged.text
    schema = (await supply.http.get(D + "/schema", headers=supply.admin)).json()
    assert schema["schema_version"] == source_change.json()["schema_version"]
    for key, risk in (("S-1007", "88"), ("S-1008", "51")):
        record = (await supply.http.get(f"{D}/kinds/Supplier/records/{key}", headers=supply.admin)).json()
        assert record["values"]["risk_score"] == risk and record["values"]["audited"] is False, record
    # The merge Revision stands on a schema Revision of main that applied the source's change set.
    merge_revision = (
        await supply.http.get(f"{D}/revisions/{merged.json()['merged_revision']}", headers=supply.admin)
    ).json()
    caught_up = await supply.http.get(
        f"{D}/revisions/{merge_revision['revision']['parents'][0]}", headers=supply.admin
    )
    assert caught_up.json()["revision"]["origin"]["type"] == "schema", caught_up.text
    assert caught_up.json()["revision"]["schema_changed"] is True
    assert "audited" in caught_up.json()["revision"]["message"]


async def merged_values_keep_the_unique_and_required_values_of_the_merged_schema(
    supply: Stack, reviewer: dict[str, str]
) -> None:
    await branch(supply, "twins")
    twin = {"legal_name": "Twin Works", "country": "SE", "status": "active", "audited": True}
    imported = await supply.http.post(
        D + "/imports",
        json={
            "records": [
                {"kind": "Supplier", "values": {"supplier_code": code, **twin}}
                for code in ("S-2101", "S-2102")
            ],
            "branch": "twins",
        },
        headers=supply.admin,
    )
    assert imported.status_code == 200, imported.text
    cleared = await supply.http.post(
        D + "/imports",
        json={"records": [{"kind": "Supplier", "values": {"supplier_code": "S-1012", "risk_score": None}}]}
        | {"branch": "twins"},
        headers=supply.admin,
    )
    assert cleared.status_code == 200, cleared.text
    cleared = (
        await supply.http.get(D + "/kinds/Supplier/records/S-1012?branch=twins", headers=supply.admin)
    ).json()
    assert "risk_score" not in cleared["values"], cleared
    unique_names = {
        "op": "change_attribute",
        "kind": "Supplier",
        "attribute": "legal_name",
        "definition": {"unique": True},
    }
    required_risk = {
        "op": "change_attribute",
        "kind": "Supplier",
        "attribute": "risk_score",
        "definition": {"required": True},
        "backfill": {"value": 50},  # S-2001, imported without one
    }
    tightened = await change(supply, {"changes": [unique_names, required_risk]})  # on main
    assert tightened.status_code == 200, tightened.text
    before = await head(supply)

    proposal = await propose(supply, "twins", reviewer)
    assert proposal.status_code == 201, proposal.text
    number = proposal.json()["id"]
    conflicts = (await supply.http.get(f"{D}/proposals/{number}/conflicts", headers=supply.admin)).json()
    found = sorted((c["code"], c["ref"], c["attribute"]) for c in conflicts["conflicts"])
    assert found == [
        ("required_missing", "Supplier/S-1012", "risk_score"),
        ("unique_taken", "Supplier/S-2101", "legal_name"),
        ("unique_taken", "Supplier/S-2102", "legal_name"),
    ], conflicts
    merged = await supply.http.post(f"{D}/proposals/{number}/merge", headers=supply.admin)
    assert merged.json()["status"] == "open" and merged.json()["attempt"]["result"] == "conflicts"
    assert await head(supply) == before  # nothing merged
    required = next(c for c in conflicts["conflicts"] if c["code"] == "required_missing")
    assert required["ours"] is not None  # main's value, which `ours` keeps
    refused = await supply.http.post(required["href"], json={"resolution": "theirs"}, headers=supply.admin)
    assert refused.status_code == 422, refused.text
    kept = await supply.http.post(required["href"], json={"resolution": "ours"}, headers=supply.admin)
    assert kept.status_code == 200, kept.text
    named_twice = next(c for c in conflicts["conflicts"] if c["ref"] == "Supplier/S-2102")  # the later one
    renamed = {"resolution": "value", "value": "Twin Works Nord"}
    assert (
        await supply.http.post(named_twice["href"], json=renamed, headers=supply.admin)
    ).status_code == 200
    merged = await supply.http.post(f"{D}/proposals/{number}/merge", headers=supply.admin)
    assert merged.status_code == 200 and merged.json()["status"] == "merged", merged.text
    s1012 = (await supply.http.get(D + "/kinds/Supplier/records/S-1012", headers=supply.admin)).json()
    assert s1012["values"]["risk_score"] == required["ours"]
    for key, name in (("S-2101", "Twin Works"), ("S-2102", "Twin Works Nord")):
        twin_record = (
            await supply.http.get(f"{D}/kinds/Supplier/records/{key}", headers=supply.admin)
        ).json()
        assert twin_record["values"]["legal_name"] == name, twin_record


async def a_kind_renamed_on_the_source_alone_moves_the_targets_records_on_merge(
    supply: Stack, reviewer: dict[str, str]
) -> None:
    await branch(supply, "agreements")
    rename = {"op": "rename_kind", "kind": "Contract", "to": "Agreement"}
    assert (await change(supply, {"changes": [rename]}, branch="agreements")).status_code == 200
    expired = {
        "records": [{"kind": "Contract", "values": {"contract_number": "C-3001", "status": "expired"}}]
    }
    imported = await supply.http.post(
        D + "/imports", json=expired | {"message": "C-3001 expired"}, headers=supply.admin
    )
    assert imported.status_code == 200, imported.text  # on main, after the fork

    proposal = await propose(supply, "agreements", reviewer)
    assert proposal.status_code == 201, proposal.text
    merged = await supply.http.post(f"{D}/proposals/{proposal.json()['id']}/merge", headers=supply.admin)
    assert merged.status_code == 200 and merged.json()["attempt"]["result"] == "merge", merged.text
    record = await supply.http.get(D + "/kinds/Agreement/records/C-3001", headers=supply.admin)
    assert record.status_code == 200 and record.json()["values"]["status"] == "expired", record.text
    gone = await supply.http.get(D + "/kinds/Contract/records/C-3001", headers=supply.admin)
    assert gone.status_code == 404, gone.text
    history = await supply.http.get(D + "/kinds/Agreement/records/C-3001/history", headers=supply.admin)
    changes = history.json()["changes"]
    assert changes[0]["change"] == "renamed" and changes[0]["renamed_from"] == "Contract/C-3001", changes[0]
    assert "C-3001 expired" in [c["message"] for c in changes]


async def a_change_set_sent_with_clear_clears_the_targets_values_on_merge(
    supply: Stack, reviewer: dict[str, str]
) -> None:
    await branch(supply, "low-risk")
    max_2 = {
        "op": "change_attribute",
        "kind": "Supplier",
        "attribute": "supplier_tier",
        "definition": {"max": 2},
    }
    source_change = await change(supply, {"changes": [max_2], "on_invalid": "clear"}, branch="low-risk")
    assert source_change.status_code == 200, source_change.text
    assert source_change.json()["cleared"], source_change.text  # the source's own values over 60
    kept = await supply.http.get(
        f"{D}/revisions/{source_change.json()['revision']}",
        params={"branch": "low-risk"},
        headers=supply.admin,
    )
    assert kept.json()["schema"]["on_invalid"] == "clear" and kept.json()["schema"]["changes"] == [max_2]
    await execute(supply, "update_supplier", {"key": "S-1009", "tier": 3}, "main")  # after the fork

    proposal = await propose(supply, "low-risk", reviewer)
    assert proposal.status_code == 201, proposal.text
    number = proposal.json()["id"]
    merged = await supply.http.post(f"{D}/proposals/{number}/merge", headers=supply.admin)
    assert merged.status_code == 200 and merged.json()["attempt"]["result"] == "merge", merged.text
    conflicts = (await supply.http.get(f"{D}/proposals/{number}/conflicts", headers=supply.admin)).json()
    cleared = {(c["code"], c["ref"], c["attribute"], c["status"]) for c in conflicts["conflicts"]}
    assert ("schema_cleared", "Supplier/S-1009", "supplier_tier", "resolved") in cleared, conflicts
    s1009 = (await supply.http.get(f"{D}/kinds/Supplier/records/S-1009", headers=supply.admin)).json()
    assert "supplier_tier" not in s1009["values"], s1009


async def a_value_a_later_attempt_no_longer_clears_is_no_longer_listed(
    supply: Stack, reviewer: dict[str, str]
) -> None:
    """A `schema_cleared` Conflict says what the latest attempt clears: when the target's value
    changes so that the change set no longer clears it, the next attempt drops it, as an open
    Conflict no longer found is dropped."""
    await branch(supply, "tier-one")
    max_1 = {
        "op": "change_attribute",
        "kind": "Supplier",
        "attribute": "supplier_tier",
        "definition": {"max": 1},
    }
    source_change = await change(supply, {"changes": [max_1], "on_invalid": "clear"}, branch="tier-one")
    assert source_change.status_code == 200, source_change.text
    for key in ("S-1010", "S-1011"):  # on main, after the fork
        await execute(supply, "update_supplier", {"key": key, "tier": 2}, "main")

    async def cleared(number: str) -> list[tuple[str, str]]:
        answer = await supply.http.get(f"{D}/proposals/{number}/conflicts", headers=supply.admin)
        assert answer.status_code == 200, answer.text
        return sorted(
            (c["ref"], c["status"])
            for c in answer.json()["conflicts"]
            if c["code"] == "schema_cleared" and c["ref"] in ("Supplier/S-1010", "Supplier/S-1011")
        )

    proposal = await propose(supply, "tier-one", reviewer)
    assert proposal.status_code == 201, proposal.text
    number = proposal.json()["id"]
    assert await cleared(number) == [("Supplier/S-1010", "resolved"), ("Supplier/S-1011", "resolved")]

    # S-1010 fits now: the next attempt (main moved) lists S-1011's value, and S-1010's no more.
    await execute(supply, "update_supplier", {"key": "S-1010", "tier": 1}, "main")
    await supply.rt.moves.settled()
    current = (await supply.http.get(f"{D}/proposals/{number}", headers=supply.admin)).json()
    assert current["attempt"]["target_head"] == await head(supply), current
    assert await cleared(number) == [("Supplier/S-1011", "resolved")]

    # An attempt stopped before the catch-up (the schemas conflict) does not know what it would
    # clear: the listed values stay until one that gets there.
    described = {
        "op": "change_attribute",
        "kind": "Supplier",
        "attribute": "supplier_tier",
        "definition": {"description": "Tier of the supplier."},
    }
    assert (await change(supply, {"changes": [described]})).status_code == 200
    await supply.rt.moves.settled()
    answer = (await supply.http.get(f"{D}/proposals/{number}/conflicts", headers=supply.admin)).json()
    clash = [c for c in answer["conflicts"] if c["code"] == "schema_conflict" and c["status"] == "open"]
    assert [c["element"] for c in clash] == ["Supplier.supplier_tier"], answer
    assert await cleared(number) == [("Supplier/S-1011", "resolved")]


async def test_an_attempt_that_is_not_kept_migrates_a_stand_in_and_leaves_the_target_free(
    supply: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Proposal whose source changed the schema is tried (when opened, when either branch moves,
    when merged before it may be) by committing the source's change sets on the target first: over
    a large Kind that migration takes minutes. An attempt that is not kept runs it on a stand-in (an
    overlay forked from the target's head, dropped with the attempt's savepoint), so the target's
    row lock stays free for its writes meanwhile; the Conflicts are the target's (a resolution given
    to one found that way applies when the merge runs on the target itself)."""
    reviewer = await reviewer_of(supply)
    await branch(supply, "audited")
    audited = {
        "op": "add_attribute",
        "kind": "Supplier",
        "attribute": "audited",
        "definition": {"type": "boolean", "required": True},
        "backfill": {"value": False},
    }
    assert (await change(supply, {"changes": [audited]}, branch="audited")).status_code == 200
    await execute(supply, "update_supplier", {"key": "S-1004", "risk_score": 44}, "audited")
    await execute(supply, "update_supplier", {"key": "S-1004", "risk_score": 45}, "main")
    before = await head(supply)

    # Which branch rows the attempt holds, probed from another connection while its merge is done
    # and its savepoint not yet rolled back or kept.
    held: list[dict[str, bool]] = []
    merging = attempts.merge

    async def probed(txn: Txn, request: MergeRequest) -> MergeResult:
        result = await merging(txn, request)
        held.append(await branches_held(supply, "main", "audited"))
        return result

    monkeypatch.setattr(attempts, "merge", probed)
    proposal = await supply.http.post(
        D + "/proposals",
        json={"source": "audited", "target": "main", "title": "audited"},
        headers=supply.admin,
    )
    assert proposal.status_code == 201, proposal.text
    number = proposal.json()["id"]
    assert held and all(h == {"main": False, "audited": True} for h in held), held
    conflicts = (await supply.http.get(f"{D}/proposals/{number}/conflicts", headers=supply.admin)).json()
    [conflict] = conflicts["conflicts"]
    assert (conflict["code"], conflict["ref"], conflict["attribute"]) == (
        "both_changed",
        "Supplier/S-1004",
        "risk_score",
    )
    assert (conflict["ours"], conflict["theirs"]) == ("45", "44")
    assert await head(supply) == before
    names = [
        b["name"] for b in (await supply.http.get(D + "/branches", headers=supply.admin)).json()["branches"]
    ]
    assert not [n for n in names if "~" in n], names

    resolved = await supply.http.post(
        f"{D}/proposals/{number}/conflicts/{conflict['id']}/resolve",
        json={"resolution": "theirs"},
        headers=supply.admin,
    )
    assert resolved.status_code == 200, resolved.text
    approved = await supply.http.post(
        f"{D}/proposals/{number}/reviews", json={"decision": "approve"}, headers=reviewer
    )
    assert approved.status_code == 200, approved.text
    held.clear()
    merged = await supply.http.post(f"{D}/proposals/{number}/merge", headers=supply.admin)
    assert merged.status_code == 200, merged.text
    assert merged.json()["status"] == "merged" and merged.json()["attempt"]["resolved_conflicts"] == 1
    assert held[-1] == {"main": True, "audited": True}, held  # the kept merge holds the target
    s1004 = (await supply.http.get(D + "/kinds/Supplier/records/S-1004", headers=supply.admin)).json()
    assert s1004["values"]["risk_score"] == "44" and s1004["values"]["audited"] is False, s1004


async def test_a_schema_conflict_is_resolved_with_theirs_and_the_merge_goes_through(supply: Stack) -> None:
    """Resolved with theirs, the source's change set is applied to the target's version of the element
    (the catch-up) and that version is kept: the next pass of the merge, on the caught-up target, does
    not find the element conflicting again. Ours is refused with what to do instead."""
    reviewer = await reviewer_of(supply)
    await branch(supply, "wider-risk")
    risk = {"op": "change_attribute", "kind": "Supplier", "attribute": "risk_score"}
    assert (
        await change(supply, {"changes": [{**risk, "definition": {"max": 99}}]}, branch="wider-risk")
    ).status_code == 200
    await execute(supply, "update_supplier", {"key": "S-1004", "risk_score": 98}, "wider-risk")
    narrower = {**risk, "definition": {"max": 95, "description": "Risk from the last audit, 0-95."}}
    assert (await change(supply, {"changes": [narrower]})).status_code == 200  # main

    proposal = await propose(supply, "wider-risk", reviewer)
    assert proposal.status_code == 201, proposal.text
    number = proposal.json()["id"]
    [conflict] = (await supply.http.get(f"{D}/proposals/{number}/conflicts", headers=supply.admin)).json()[
        "conflicts"
    ]
    assert (conflict["code"], conflict["element"]) == ("schema_conflict", "Supplier.risk_score")
    url = f"{D}/proposals/{number}/conflicts/{conflict['id']}/resolve"
    for body in ({"resolution": "ours"}, {"resolution": "value", "value": 1}):
        refused = await supply.http.post(url, json=body, headers=supply.admin)
        assert refused.status_code == 422, refused.text
        assert refused.json()["issues"][0]["rule"] == "conflict.schema", refused.text
        assert "change the source branch's schema" in refused.json()["detail"]
    resolved = await supply.http.post(url, json={"resolution": "theirs"}, headers=supply.admin)
    assert resolved.status_code == 200, resolved.text

    merged = await supply.http.post(f"{D}/proposals/{number}/merge", headers=supply.admin)
    assert merged.status_code == 200, merged.text
    listed = (await supply.http.get(f"{D}/proposals/{number}/conflicts", headers=supply.admin)).json()
    assert merged.json()["status"] == "merged", [
        (c["code"], c.get("theirs"), c["status"]) for c in listed["conflicts"]
    ]
    assert (
        merged.json()["attempt"]["result"] == "merge" and merged.json()["attempt"]["resolved_conflicts"] >= 1
    )
    schema = (await supply.http.get(D + "/schema", headers=supply.admin)).json()
    supplier = next(k for k in schema["kinds"] if k["name"] == "Supplier")
    kept = supplier["attributes"]["risk_score"]
    assert kept["max"] == 99 and kept["description"] == "Risk from the last audit, 0-95.", kept
    s1004 = (await supply.http.get(D + "/kinds/Supplier/records/S-1004", headers=supply.admin)).json()
    assert s1004["values"]["risk_score"] == "98", s1004


async def test_a_kept_merge_stages_its_catch_up_outside_the_locks(
    batched: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    """The merge that is kept stages the migration of the change set it brings before its
    transaction, in batches, outside every lock (schema_changes/catch_up.py): the target's row is
    free and takes writes meanwhile, and under the locks only what was written meanwhile is migrated
    again (a value that no longer fits is a `schema_migration` Conflict, and nothing merges)."""
    caplog.set_level(logging.INFO, logger="lorebase.keeper.schema_changes")
    reviewer = await reviewer_of(batched)
    await branch(batched, "certified")
    await branch(batched, "capped")
    await branch(batched, "audited")
    assert (await change(batched, {"changes": [TIER_CERTIFICATION]}, branch="certified")).status_code == 200
    assert (await change(batched, {"changes": [RISK_AT_MOST_95]}, branch="capped")).status_code == 200
    assert (await change(batched, {"changes": [AUDITED]}, branch="audited")).status_code == 200
    await execute(batched, "update_supplier", {"key": "S-1004", "risk_score": 44}, "main")  # no fast-forward

    # Probed and written from the merge's staging, after its first batch of Suppliers.
    held: list[dict[str, bool]] = []
    meanwhile: list[str] = []

    async def write_on_main(values: dict[str, Any]) -> None:
        held.append(await branches_held(batched, "main", "certified", "capped", "audited"))
        if not values:  # a change set on main instead: the staged migration no longer fits
            described = {"op": "change_kind", "kind": "Part", "definition": {"description": "Bought."}}
            assert (await change(batched, {"changes": [described]})).status_code == 200
            return
        written = await batched.http.post(
            f"{D}/operations/update_supplier/execute",
            json={"parameters": values, "branch": "main"},
            headers=batched.admin,
        )
        assert written.status_code == 200, written.text
        meanwhile.append(written.headers["Lorebase-Revision"])

    async def merged_while(values: dict[str, Any], source: str) -> Any:
        proposal = await propose(batched, source, reviewer)
        assert proposal.status_code == 201, proposal.text
        await batched.rt.moves.settled()
        ran: list[int] = []

        async def listener(kind: str, done: int, total: int) -> None:
            if kind == "Supplier" and not ran:
                ran.append(done)
                await write_on_main(values)

        batched.rt.schema_progress.append(listener)
        try:
            merged = await batched.http.post(
                f"{D}/proposals/{proposal.json()['id']}/merge", headers=batched.admin
            )
        finally:
            batched.rt.schema_progress.remove(listener)
        assert ran and ran[0] < 30, ran  # after its first batch: more to come
        return merged

    # S-1025 (tier 3) is raised to tier 1 while the merge stages: the backfill sees the write.
    merged = await merged_while({"key": "S-1025", "tier": 1}, "certified")
    assert merged.status_code == 200 and merged.json()["status"] == "merged", merged.text
    assert held == [{"main": False, "certified": False, "capped": False, "audited": False}], held
    listing = await batched.http.get(
        D + "/kinds/Supplier/records", params={"limit": 100}, headers=batched.admin
    )
    values = {r["key"]: r["values"] for r in listing.json()["records"]}
    assert len(values) == 30 and all("certification" in v for v in values.values()), values
    assert values["S-1025"]["tier"] == "1" and values["S-1025"]["certification"] == "iso9001"
    assert values["S-1005"]["certification"] == "none" and values["S-1004"]["risk_score"] == "44"
    # The change set's schema Revision on main stands on the write made meanwhile.
    merge_revision = (
        await batched.http.get(f"{D}/revisions/{merged.json()['merged_revision']}", headers=batched.admin)
    ).json()
    caught_up = (
        await batched.http.get(
            f"{D}/revisions/{merge_revision['revision']['parents'][0]}", headers=batched.admin
        )
    ).json()["revision"]
    assert caught_up["origin"]["type"] == "schema" and caught_up["parents"] == meanwhile, caught_up
    assert "staged on main ahead of the merge" in caplog.text
    assert "could not catch up" not in caplog.text and "no longer fits" not in caplog.text
    assert await batched.count("staged_rows") == 0

    # A value written meanwhile that the change set refuses: a Conflict, nothing merged, nothing staged.
    held.clear()
    meanwhile.clear()
    merged = await merged_while({"key": "S-1020", "risk_score": 97}, "capped")
    assert merged.status_code == 200, merged.text
    assert merged.json()["status"] == "open" and merged.json()["attempt"]["result"] == "conflicts"
    assert held == [{"main": False, "certified": False, "capped": False, "audited": False}], held
    assert await head(batched) == meanwhile[-1]  # the write, and nothing after it
    conflicts = (
        await batched.http.get(f"{D}/proposals/{merged.json()['id']}/conflicts", headers=batched.admin)
    ).json()["conflicts"]
    assert [(c["code"], c["ref"], c["attribute"], c["status"]) for c in conflicts] == [
        ("schema_migration", "Supplier/S-1020", "risk_score", "open")
    ], conflicts
    assert "95" in conflicts[0]["theirs"] and "change the value on main" in conflicts[0]["theirs"]
    assert await batched.count("staged_rows") == 0
    assert "could not catch up" not in caplog.text

    # main's schema changed while the merge staged: the staging no longer fits, the change set is
    # staged again under the locks (as before), and merges.
    held.clear()
    merged = await merged_while({}, "audited")
    assert merged.status_code == 200 and merged.json()["status"] == "merged", merged.text
    assert held == [{"main": False, "certified": False, "capped": False, "audited": False}], held
    listing = await batched.http.get(
        D + "/kinds/Supplier/records", params={"limit": 100}, headers=batched.admin
    )
    assert all(r["values"]["audited"] is False for r in listing.json()["records"]), listing.text
    kinds = (await batched.http.get(D + "/schema", headers=batched.admin)).json()["kinds"]
    assert [k["description"] for k in kinds if k["name"] == "Part"] == ["Bought."]
    assert await batched.count("staged_rows") == 0
    assert "staged ahead on main no longer fits: its schema changed" in caplog.text
