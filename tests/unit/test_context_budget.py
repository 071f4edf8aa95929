"""The token budget of context packs: estimates over the exact text, each trim step in order."""

from __future__ import annotations

import copy
import math
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st
from lorebase_keeper.context.budget import (
    Budget,
    _trim_neighbors,
    fit,
    pack_markdown,
    render_markdown_section,
    trimmed_whole,
)

ORDER = [
    "lineage",
    "recent_changes",
    "far_neighbor_values",
    "far_neighbors",
    "schema_descriptions",
    "near_neighbor_values",
    "near_neighbors",
    "schema",
]
NAMES = ["seeds", "neighbors", "links", "schema", "recent_changes", "lineage"]


def pack(near: int = 3, far: int = 3) -> dict[str, Any]:
    neighbors = [
        {
            "ref": f"Part/P-{i}",
            "title": f"Part {i}",
            "depth": 1,
            "values": {"name": f"Part {i}", "cost": "1.00"},
        }
        for i in range(near)
    ]
    neighbors += [
        {"ref": f"Plant/PL-{i}", "title": f"Plant {i}", "depth": 2, "values": {"city": "Poznan"}}
        for i in range(far)
    ]
    return {
        "domain": "supply",
        "branch": "main",
        "revision": "r" * 64,
        "seeds": [
            {
                "ref": "Supplier/S-1",
                "title": "Kavsen",
                "values": {"risk_score": "90"},
                "updated_revision": "r" * 64,
            }
        ],
        "neighbors": neighbors,
        "links": {
            "supplied_by": [{"from": n["ref"], "to": "Supplier/S-1"} for n in neighbors if n["depth"] == 1],
            "stocked_at": [{"from": "Part/P-0", "to": n["ref"]} for n in neighbors if n["depth"] == 2],
        },
        "_relation_ends": {"supplied_by": "Part -> Supplier", "stocked_at": "Part -> Plant"},
        "schema": {
            "kinds": [
                {
                    "name": k,
                    "description": f"The {k} Kind, described at some length.",
                    "key": ["id"],
                    "title": "name",
                    "attributes": [{"name": "name", "type": "string", "description": "Its name."}],
                }
                for k in ("Supplier", "Part", "Plant")
            ],
            "relations": [
                {
                    "name": "supplied_by",
                    "inverse": "supplies",
                    "from": "Part",
                    "to": "Supplier",
                    "cardinality": "many_to_many",
                    "description": "A supplier can supply the part.",
                }
            ],
        },
        "recent_changes": [
            {
                "revision": f"{i:064d}",
                "at": "2026-10-01T08:00:00Z",
                "ref": "Supplier/S-1",
                "change": "modified",
                "attributes": ["risk_score"],
                "actor": "usr_editor",
                "origin": "operation",
                "message": f"change {i}",
            }
            for i in range(4)
        ],
        "lineage": [
            {
                "ref": "Supplier/S-1",
                "attributes": ["risk_score"],
                "origin": "operation",
                "actor": "usr_editor",
                "at": "2026-10-01T08:00:00Z",
                "revision": f"{i:064d}",
            }
            for i in range(3)
        ],
    }


def total(format_: str, p: dict[str, Any]) -> int:
    budget = Budget(10**9, 4.0, format_)
    budget.estimate(p, NAMES)
    return budget.used


def test_estimates_are_the_exact_text_of_each_section() -> None:
    p = pack()
    budget = Budget(10**9, 4.0, "json")
    budget.estimate(p, NAMES)
    for name in NAMES:
        assert budget.sections[name] == math.ceil(len(orjson.dumps(p[name])) / 4.0)
    markdown = Budget(10**9, 3.0, "markdown")
    markdown.estimate(p, NAMES)
    assert markdown.sections["links"] == math.ceil(len(render_markdown_section("links", p)) / 3.0)


def test_each_step_runs_in_order_and_only_as_far_as_needed() -> None:
    full = total("json", pack())
    # just over budget: only lineage goes, one entry, the last first
    p = pack()
    budget = Budget(full - 1, 4.0, "json")
    fit(p, budget, NAMES, ORDER)
    assert budget.trimmed == ["lineage"] and budget.omitted == {"lineage": 1}
    assert [e["revision"][-1] for e in p["lineage"]] == ["0", "1"]
    # a budget that only the seeds (and empty sections) fit: every step ran, in trim_order
    p = pack()
    budget = Budget(total("json", emptied(pack())), 4.0, "json")
    fit(p, budget, NAMES, ORDER)
    assert budget.trimmed == ORDER
    assert p["seeds"] == pack()["seeds"], "seeds are never trimmed"
    assert budget.over_budget is False and budget.used <= budget.limit


def emptied(p: dict[str, Any]) -> dict[str, Any]:
    """What is left when every step has run to the end: the seeds, and their Links to each other."""
    return {
        **p,
        "neighbors": [],
        "links": {name: [] for name in p["links"]},
        "schema": {"kinds": [], "relations": []},
        "recent_changes": [],
        "lineage": [],
    }


def test_far_neighbors_lose_values_before_they_go_and_take_their_links() -> None:
    p = pack()
    expected = copy.deepcopy(p)
    for n in expected["neighbors"]:
        if n["depth"] == 2:
            n["values"] = {}
    target = total("json", {**expected, "lineage": [], "recent_changes": []})
    budget = Budget(target, 4.0, "json")
    fit(p, budget, NAMES, ORDER)
    assert budget.trimmed == ["lineage", "recent_changes", "far_neighbor_values"]
    assert all(n["values"] == {} for n in p["neighbors"] if n["depth"] == 2)
    assert all(n["values"] for n in p["neighbors"] if n["depth"] == 1)
    smaller = Budget(target - 20, 4.0, "json")
    fit(p, smaller, NAMES, ORDER)
    assert "far_neighbors" in smaller.trimmed
    kept = {n["ref"] for n in p["neighbors"]}
    assert all(link["to"] in kept for link in p["links"].get("stocked_at", [])), (
        "a removed neighbour takes its Links"
    )


def test_over_budget_when_the_seeds_alone_do_not_fit() -> None:
    p = pack()
    budget = Budget(3, 4.0, "markdown")
    fit(p, budget, NAMES, ORDER)
    assert budget.over_budget is True and p["seeds"] == pack()["seeds"]
    text = pack_markdown(p, NAMES, budget)
    assert text.splitlines()[0] == "# Context: supply/main"
    assert "; trimmed: lineage(3), recent_changes(4), far_neighbor_values(" in text.splitlines()[1]


@settings(max_examples=60, deadline=None)
@given(near=st.integers(0, 12), far=st.integers(0, 12), limit=st.integers(1, 3000), markdown=st.booleans())
def test_a_fitted_pack_fits_unless_its_seeds_do_not(near: int, far: int, limit: int, markdown: bool) -> None:
    format_ = "markdown" if markdown else "json"
    p = pack(near, far)
    budget = Budget(limit, 4.0, format_)
    fit(p, budget, NAMES, ORDER)
    fresh = Budget(limit, 4.0, format_)
    fresh.estimate(p, NAMES)
    assert fresh.used == budget.used, "the reported estimate is the estimate of what is sent"
    floor = Budget(limit, 4.0, format_)
    floor.estimate(emptied(pack(near, far)), NAMES)
    assert budget.over_budget == (budget.used > limit)
    if floor.used <= limit:
        assert budget.used <= limit, "whatever can be trimmed is, until the pack fits"
    assert p["seeds"] == pack(near, far)["seeds"]
    assert budget.trimmed == [step for step in ORDER if step in budget.trimmed]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from([1, 2, 3]), st.booleans()), max_size=40),
    st.sampled_from(["far_neighbor_values", "far_neighbors", "near_neighbor_values", "near_neighbors"]),
    st.integers(min_value=1, max_value=50),
)
def test_a_batch_of_neighbour_trims_is_that_many_single_trims(
    shape: list[tuple[int, bool]], step: str, count: int
) -> None:
    """fit trims neighbours in batches, in one pass: the pack left is the one `count` trims of one
    neighbour each would leave (the same neighbours emptied or dropped, in the same order)."""
    neighbors = sorted(
        (
            {"ref": f"Part/P-{i:02d}", "title": "t", "depth": depth, "values": {"a": "v"} if shown else {}}
            for i, (depth, shown) in enumerate(shape)
        ),
        key=lambda n: (n["depth"], n["ref"]),
    )
    batched, single = {"neighbors": copy.deepcopy(neighbors)}, {"neighbors": copy.deepcopy(neighbors)}
    dropped_batched: set[str] = set()
    dropped_single: set[str] = set()
    done = _trim_neighbors(step, batched, count, dropped_batched)
    singles = sum(_trim_neighbors(step, single, 1, dropped_single) for _ in range(count))
    assert (done, batched, dropped_batched) == (singles, single, dropped_single)


far_values = st.dictionaries(
    st.sampled_from(["po_number", "quantity", "status"]), st.text(max_size=12), max_size=3
)


@settings(max_examples=300, deadline=None)
@given(
    near=st.integers(0, 10),
    far=st.lists(st.tuples(st.sampled_from([2, 3]), far_values), max_size=30),
    limit=st.integers(1, 2500),
    markdown=st.booleans(),
    history=st.tuples(st.integers(0, 4), st.integers(0, 4)),
    order=st.permutations(ORDER),
    default_order=st.booleans(),
)
def test_skipping_far_values_the_budget_drops_answers_the_same(
    near: int,
    far: list[tuple[int, dict[str, str]]],
    limit: int,
    markdown: bool,
    history: tuple[int, int],
    order: list[str],
    default_order: bool,
) -> None:
    """A pack whose far neighbours' values would all be trimmed (trimmed_whole) is fitted without
    them, given only how many would have shown some: the answer is the one fitting the pack with
    them gives, for every budget, format, history and trim order (context/pack.py reads them only
    otherwise)."""
    format_ = "markdown" if markdown else "json"
    trim_order = ORDER if default_order else list(order)
    full = pack(near, 0)
    full["recent_changes"] = full["recent_changes"][: history[0]]
    full["lineage"] = full["lineage"][: history[1]]
    full["neighbors"] += sorted(
        (
            {"ref": f"PurchaseOrder/PO-{i:03d}", "title": None, "depth": depth, "values": values}
            for i, (depth, values) in enumerate(far)
        ),
        key=lambda n: (n["depth"], n["ref"]),
    )
    expected_budget = Budget(limit, 4.0, format_)
    expected = copy.deepcopy(full)
    fit(expected, expected_budget, NAMES, trim_order)

    blank = copy.deepcopy(full)
    for neighbor in blank["neighbors"]:
        if neighbor["depth"] > 1:
            neighbor["values"] = {}
    budget = Budget(limit, 4.0, format_)
    if trimmed_whole(blank, budget, NAMES, trim_order, "far_neighbor_values"):
        showing = sum(1 for n in full["neighbors"] if n["depth"] > 1 and n["values"])
        fitted = blank
        fit(fitted, budget, NAMES, trim_order, omitted={"far_neighbor_values": showing})
    else:
        fitted = copy.deepcopy(full)
        fit(fitted, budget, NAMES, trim_order)
    assert budget.document() == expected_budget.document()
    assert {n: fitted[n] for n in NAMES} == {n: expected[n] for n in NAMES}
    if markdown:
        assert pack_markdown(fitted, NAMES, budget) == pack_markdown(expected, NAMES, expected_budget)
