"""A large change set's migration runs in slices (in its own process), paced outside the branch's
lock by keeper.schema_changes.duty (lorebase_keeper.writes.pace; docs/schema.md, "Large
migrations"): the same change set answers and writes the same whether it runs flat out or in
slices, each followed by a pause, with its changes sorted in merged runs, planned a few at a time
and COPYed in small chunks; and the duty is a share of the time (a Domain's setting out of range
answers 422)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from lorebase_keeper.schema_changes import process
from lorebase_keeper.schema_changes.change import apart as change_module
from lorebase_keeper.schema_changes.staged import Staged
from lorebase_keeper.schema_changes.staged import staging as staged_module
from lorebase_keeper.writes import changes as changes_module
from lorebase_keeper.writes import pace

from lorebase_store import Database
from tests.integration.conftest import Stack
from tests.integration.test_schema_batches import CERTIFICATION, D
from tests.integration.test_schema_changes import RENAME_TIER

CHANGE_SET = {
    "changes": [
        RENAME_TIER,  # the backfill reads the new name
        CERTIFICATION | {"backfill": {"expression": "'iso9001' if supplier_tier == 1 else 'none'"}},
        {"op": "rename_kind", "kind": "Part", "to": "Component"},
        {
            "op": "add_attribute",
            "kind": "PurchaseOrder",
            "attribute": "size",
            "definition": {"type": "enum", "values": ["small", "large"]},
            "backfill": {"expression": "'large' if quantity >= 25 else 'small'"},
        },
    ],
    "message": "Certify, rename and size",
}
REVISION = re.compile(r"\b[0-9a-f]{64}\b")


async def _run(stack: Stack, branch: str) -> tuple[dict[str, Any], list[Any]]:
    """The change set on `branch` (made from main): its answer, and what it wrote (the Revision, and
    the Records of the Kinds it changed with their provenance), the Revision ids and branch named
    alike."""
    made = await stack.http.post(D + "/branches", json={"name": branch, "from": "main"}, headers=stack.admin)
    assert made.status_code == 201, made.text
    response = await stack.http.post(
        f"{D}/branches/{branch}/schema/changes", json=CHANGE_SET, headers=stack.admin
    )
    assert response.status_code == 200, response.text
    answer = response.json()
    revision = answer["revision"]
    view = await stack.http.get(f"{D}/revisions/{revision}", params={"branch": branch}, headers=stack.admin)
    assert view.status_code == 200, view.text
    wrote: list[Any] = [view.json()]
    for kind in ("Supplier", "Component", "PurchaseOrder"):
        listing = await stack.http.get(
            f"{D}/kinds/{kind}/records",
            params={"branch": branch, "limit": 1000},
            headers=stack.admin,
        )
        assert listing.status_code == 200, listing.text
        wrote.append(listing.json()["records"])
    history = await stack.http.get(
        f"{D}/kinds/Component/records/P-10001/history", params={"branch": branch}, headers=stack.admin
    )
    assert history.status_code == 200, history.text
    wrote.append(history.json())

    def alike(document: Any) -> Any:
        text = REVISION.sub("R", str(document)).replace(f"'{branch}'", "'B'")
        return re.sub(r"'(at|created_at|committed_at)': '[^']*'", r"'\1': 'T'", text)

    for key in ("revision", "head", "branch"):
        answer.pop(key)
    return answer, [alike(part) for part in wrote]


async def test_a_migration_in_paced_slices_writes_what_a_flat_out_one_writes(
    supply: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The migration runs in a process of its own (schema_changes/process.py), which would not see
    # the module settings patched here: the child's own work runs in this process instead. (A
    # fork of this process, threads and all, crashed now and then.)
    async def here(apart: process.Apart, db: Database, told: process.Told) -> Staged:
        return await process.stage_here(apart, told, lambda: None)

    monkeypatch.setattr(change_module, "stage_apart", here)
    # Flat out: no slice ends (nothing pauses), the changes listed at once.
    monkeypatch.setattr(pace, "SLICE_S", 3600.0)
    flat = await _run(supply, "flat")
    # In slices: a pause after every step (the duty's sleeps included), the ChangeSet's changes
    # listed by the paced path and sorted in runs of 3, planned 3 at a time, COPYed 7 at a time,
    # and let go of 2 at a time.
    monkeypatch.setattr(pace, "SLICE_S", 0.0)
    monkeypatch.setattr(pace, "_RUN", 3)
    monkeypatch.setattr(changes_module, "LARGE", 5)
    monkeypatch.setattr(staged_module, "ROWS", 7)
    monkeypatch.setattr(staged_module, "_PLANNED", 3)
    monkeypatch.setattr(staged_module, "_FREED", 2)
    paced = await _run(supply, "paced")
    assert paced == flat
    assert flat[0]["migrated"]["records"] > 100  # every Supplier, Part and PurchaseOrder


@pytest.mark.parametrize("duty", [0, 1.5, "half"])
async def test_a_domains_duty_is_a_share_of_the_time(stack: Stack, duty: Any) -> None:
    schema = {"kinds": {"Thing": {"key": ["id"], "attributes": {"id": {"type": "string"}}}}}
    bad = await stack.http.post(
        "/api/v1/domains",
        json={"name": "things", "schema": schema, "settings": {"keeper": {"schema_changes": {"duty": duty}}}},
        headers=stack.admin,
    )
    assert bad.status_code == 422, bad.text
    assert {i["path"] for i in bad.json()["issues"]} == {"settings.keeper.schema_changes.duty"}
    listed = await stack.http.get("/api/v1/domains/things/schema", headers=stack.admin)
    assert listed.status_code == 404  # nothing was made
