"""The three holes the second black-box probe found, each reproduced as the attacker made it, and
closed by the policy point (lorebase.contract.policy, lorebase_keeper.api.dispatch):

1. a Domain admin narrowed to Kinds lifted its own narrowing with a grant to itself;
2. a Supplier-only editor accepted a reconciliation and the answer named the hidden Links it moved;
3. a Kind-narrowed admin erased Records of Kinds it cannot see (201 for a real key, 404 for a
   made-up one: an existence oracle) and `GET /erasures` listed them.

Each refused write changes nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio

from tests.integration.conftest import Stack
from tests.integration.feed_stack import Feed, running_feed
from tests.integration.test_reconciliation import duplicates, listed, pair, scan, unprotect

D = "/api/v1/domains/supply"


async def _narrowed(stack: Stack, principal: str, role: str, kinds: list[str]) -> dict[str, str]:
    headers = await stack.principal(principal)
    await stack.grant("supply", principal, role, kinds=kinds)
    return headers


@pytest_asyncio.fixture
async def feed(supply: Stack, nats_url: str) -> AsyncIterator[Feed]:
    async with running_feed(supply, nats_url, relay=False) as running:
        yield running


def _shape(problem: dict[str, Any]) -> tuple[int, str]:
    return problem["status"], problem["code"]


async def test_a_kind_narrowed_admin_hands_out_nothing_beyond_its_kinds(supply: Stack, feed: Feed) -> None:
    narrow = await _narrowed(supply, "usr_narrow_admin", "admin", ["Supplier"])
    await supply.principal("usr_other")
    grants = D + "/grants"
    before = await supply.count("grants")

    # Itself unnarrowed, another admin of a hidden Kind, a viewer of every Kind: all refused.
    for body in (
        {"principal": "usr_narrow_admin", "role": "admin"},
        {"principal": "usr_other", "role": "admin", "kinds": ["RiskFlag"]},
        {"principal": "usr_other", "role": "viewer"},
        {"principal": "usr_other", "role": "viewer", "kinds": ["Supplier", "Part"]},
    ):
        refused = await supply.http.post(grants, json=body, headers=narrow)
        assert refused.status_code == 403, (body, refused.text)
        assert "RiskFlag" not in refused.text or "RiskFlag" in str(body)
    assert await supply.count("grants") == before

    # Within its own: a viewer of Suppliers.
    made = await supply.http.post(
        grants, json={"principal": "usr_other", "role": "viewer", "kinds": ["Supplier"]}, headers=narrow
    )
    assert made.status_code == 201, made.text

    # It still reads no RiskFlag and no webhook.
    flags = await supply.http.get(D + "/kinds/RiskFlag/records/RF-S-1005-low", headers=narrow)
    assert flags.status_code == 404
    hooks = await supply.http.get(D + "/webhooks", headers=narrow)
    assert hooks.status_code == 403, hooks.text

    # A grant it could not have made is withdrawn by nobody narrower: it answers like an unknown one.
    loader_grant = await supply.grant("supply", "usr_loader", "viewer")
    hidden = await supply.http.delete(f"{grants}/{loader_grant}", headers=narrow)
    unknown = await supply.http.delete(f"{grants}/grt_nothing_here", headers=narrow)
    assert _shape(hidden.json()) == _shape(unknown.json()) == (404, "not-found")
    assert await supply.count("grants") == before + 2


async def test_a_supplier_only_editor_cannot_merge_records_whose_links_it_cannot_see(supply: Stack) -> None:
    await duplicates(supply)
    await scan(supply)
    await unprotect(supply)
    editor = await _narrowed(supply, "usr_supplier_editor", "editor", ["Supplier"])
    candidate = pair(await listed(supply, query="?kind=Supplier"), "Supplier/S-2001", "Supplier/S-2002")
    assert candidate is not None
    head = (await supply.http.get(D + "/branches/main", headers=supply.admin)).json()["head"]

    # The candidate is visible (two Suppliers) ...
    seen = await supply.http.get(f"{D}/reconciliation/{candidate['id']}", headers=editor)
    assert seen.status_code == 200, seen.text
    # ... but merging them moves Part Links along supplied_by, which the editor may not read.
    refused = await supply.http.post(
        f"{D}/reconciliation/{candidate['id']}/accept", json={"keep": "S-2001"}, headers=editor
    )
    assert refused.status_code == 403, refused.text
    for hidden in ("P-9000", "supplied_by", "Part", "moved_links", "dropped_links"):
        assert hidden not in refused.text
    assert (await supply.http.get(D + "/branches/main", headers=supply.admin)).json()["head"] == head
    kept = await supply.http.get(D + "/kinds/Supplier/records/S-2002", headers=supply.admin)
    assert kept.status_code == 200


async def test_a_kind_narrowed_admin_erases_and_lists_only_what_it_may_read(supply: Stack) -> None:
    narrow = await _narrowed(supply, "usr_narrow_eraser", "admin", ["Supplier"])
    erasures = D + "/erasures"
    before = await supply.count("erasures")

    # A real hidden Record and a made-up Kind answer alike: no oracle, nothing erased.
    real = await supply.http.post(
        erasures, json={"records": ["Part/P-10028"], "reason": "probe"}, headers=narrow
    )
    made_up = await supply.http.post(
        erasures, json={"records": ["Gizmo/P-10028"], "reason": "probe"}, headers=narrow
    )
    assert _shape(real.json()) == _shape(made_up.json()) == (422, "validation-failed")
    assert real.json()["detail"].replace("'Part'", "'X'") == made_up.json()["detail"].replace(
        "'Gizmo'", "'X'"
    )
    subject = await supply.http.post(
        erasures,
        json={
            "subject": {"kind": "Part", "attribute": "name", "value": "Radial shaft seal 25x42x7"},
            "reason": "p",
        },
        headers=narrow,
    )
    assert _shape(subject.json()) == (422, "validation-failed")
    assert await supply.count("erasures") == before

    # What the unnarrowed admin erased of a Part is not listed to it; its own Supplier erasure is.
    erased = await supply.http.post(
        erasures, json={"records": ["Part/P-10028"], "reason": "request"}, headers=supply.admin
    )
    assert erased.status_code == 201, erased.text
    own = await supply.http.post(
        erasures, json={"records": ["Supplier/S-1002"], "reason": "request"}, headers=narrow
    )
    assert own.status_code == 201, own.text
    listed_ = (await supply.http.get(erasures, headers=narrow)).json()["erasures"]
    assert [e["records"] for e in listed_] == [["Supplier/S-1002"]]
    everything = (await supply.http.get(erasures, headers=supply.admin)).json()["erasures"]
    assert len(everything) == 2
