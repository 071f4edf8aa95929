"""Property: a context pack whose last hop reads whole only the Links of the first far neighbours by
key (context/pack.py's `ranked`, the rest by their keys from an index) answers the same bytes as the
pack that reads every Link whole, for random seeds, depths, Relations, budgets, formats and callers,
on a graph with high fan-out: a Supplier whose Parts have ~25 PurchaseOrders each and are stocked at
many Plants (Links with values), enough for the caps (max_neighbors, max_links) to cut at depth 3."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from lorebase_keeper.context import pack as context
from lorebase_keeper.reads import graph

from tests.integration.conftest import Stack

D = "/api/v1/domains/supply/context"
PARTS = [f"P-2{n:04d}" for n in range(6)]
PLANTS = [f"PL-{n:02d}" for n in range(10, 40)]
RELATIONS = ["supplies", "purchase_orders", "stocked_at", "contracts", "risk_flags", "supplied_by"]
loaded: dict[int, dict[str, dict[str, str]]] = {}  # per stack: the callers' headers
# As they are, whatever an example patched.
FITTED: Any = context._fitted
WALK, CAPS = context.walk, context.Caps.of


async def fan_out(supply: Stack) -> dict[str, dict[str, str]]:
    """S-1001's new Parts, 25 PurchaseOrders each, 30 Plants stocking them; an admin and a
    reader of three Kinds (the others' Records and Links are never walked for them)."""
    if id(supply) in loaded:
        return loaded[id(supply)]
    records: list[dict[str, Any]] = []
    links: list[dict[str, Any]] = []
    for p, part in enumerate(PARTS):
        records.append({"kind": "Part", "values": {"part_number": part, "name": f"Fan-out part {p}"}})
        links.append(
            {
                "relation": "supplied_by",
                "from": part,
                "to": "S-1001",
                "values": {"is_primary": p % 2 == 0, "lead_time_days": str(7 * p)},
            }
        )
        for n in range(25):
            po = f"PO-3{p:02d}{n:03d}"
            records.append(
                {
                    "kind": "PurchaseOrder",
                    "values": {"po_number": po, "quantity": str(n + 1), "status": "open"},
                }
            )
            links.append({"relation": "for_part", "from": po, "to": part, "values": {}})
        for plant in PLANTS[p * 3 : p * 3 + 15]:
            links.append(
                {"relation": "stocked_at", "from": part, "to": plant, "values": {"quantity": str(100 + p)}}
            )
    records += [
        {"kind": "Plant", "values": {"plant_code": plant, "name": f"Plant {plant}", "city": "Gdansk"}}
        for plant in PLANTS
    ]
    loader = await supply.principal("usr_loader")
    response = await supply.http.post(
        "/api/v1/domains/supply/imports",
        json={"source": "fan-out", "message": "Fan-out", "records": records, "links": links},
        headers=loader,
    )
    assert response.status_code == 200, response.text
    reader = await supply.principal("usr_reader")
    await supply.grant("supply", "usr_reader", "viewer", kinds=["Supplier", "Part", "PurchaseOrder"])
    callers = {"admin": supply.admin, "reader": reader}
    loaded[id(supply)] = callers
    return callers


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    seeds=st.sampled_from([["Supplier/S-1001"], ["Part/P-20002"], ["Supplier/S-1001", "Supplier/S-1002"]]),
    depth=st.sampled_from([2, 2, 3]),
    relations=st.none() | st.lists(st.sampled_from(RELATIONS), min_size=1, max_size=3, unique=True),
    tokens=st.integers(40, 9000),
    markdown=st.booleans(),
    caller=st.sampled_from(["admin", "reader"]),
    first=st.integers(1, 30),
    caps=st.tuples(
        st.sampled_from([None, 15, 40, 90]), st.sampled_from([None, 25, 120]), st.sampled_from([None, 3, 12])
    ),
    walks=st.none(),
)
# The ranked read answers when the budget keeps few far neighbours (the others' Links unread), and
# the pack is read again whole when it shows more than were read whole: `walks` made, first unread.
@example(
    seeds=["Supplier/S-1001"],
    depth=2,
    relations=None,
    tokens=600,
    markdown=False,
    caller="admin",
    first=4,
    caps=(None, None, None),
    walks=(1, True),
)
@example(  # 15 Records at most: the statement leaves out the Links the cap would refuse
    seeds=["Supplier/S-1001"],
    depth=2,
    relations=None,
    tokens=600,
    markdown=False,
    caller="admin",
    first=4,
    caps=(15, None, None),
    walks=(1, True),
)
@example(
    seeds=["Supplier/S-1001"],
    depth=2,
    relations=None,
    tokens=20000,
    markdown=False,
    caller="admin",
    first=4,
    caps=(None, None, None),
    walks=(2, True),
)
async def test_a_ranked_last_hop_answers_the_same_bytes(
    supply: Stack,
    monkeypatch: pytest.MonkeyPatch,
    seeds: list[str],
    depth: int,
    relations: list[str] | None,
    tokens: int,
    markdown: bool,
    caller: str,
    first: int,
    caps: tuple[int | None, int | None, int | None],
    walks: tuple[int, bool] | None,
) -> None:
    callers = await fan_out(supply)
    records, links, fanout = caps  # tighter caps than the settings', for both reads

    def of(domain: Any, **kwargs: Any) -> Any:
        given = CAPS(domain, **kwargs)
        return context.Caps(
            min(given.max_records, records or given.max_records),
            min(given.max_links, links or given.max_links),
            min(given.max_fanout, fanout or given.max_fanout),
        )

    monkeypatch.setattr(context.Caps, "of", of)
    unread: list[int] = []

    async def walk(*args: Any, **kwargs: Any) -> Any:
        result = await WALK(*args, **kwargs)
        unread.append(len(result.unread))
        return result

    monkeypatch.setattr(context, "walk", walk)
    body: dict[str, Any] = {
        "refs": seeds,
        "depth": depth,
        "budget_tokens": tokens,
        "format": "markdown" if markdown else "json",
    }
    if relations is not None:
        body["relations"] = relations
    monkeypatch.setattr(graph, "RANKED_FANOUT", 0)  # rank whatever the fan-out
    answers = []
    for first_ in (first, None):  # `first` Links read whole per Relation, then every Link whole
        calls: list[int] = []

        async def fitted(*args: Any, first_: int | None = first_, calls: list[int] = calls) -> Any:
            calls.append(1)  # the pack's second read, when the first could not answer, stays whole
            return await FITTED(*args[:-1], first_ if len(calls) == 1 else None)

        monkeypatch.setattr(context, "_fitted", fitted)
        supply.rt.read_cache.forget()
        response = await supply.http.post(D, json=body, headers=callers[caller])
        assert response.status_code in (200, 422), response.text  # 422: a Relation the reader may not read
        answers.append((response.status_code, response.content))
        if walks is not None and first_ is not None:
            assert (len(unread), unread[0] > 0) == walks, unread
    assert answers[0] == answers[1]
