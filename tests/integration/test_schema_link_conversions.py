"""A type change of a Relation's link Attribute converts the Links' values as a change_attribute
converts a Kind's (docs/schema.md, "Change sets"): through the change's `map` (per link Attribute)
first, then read as the new type; a value that does not convert is a violation naming the Link,
refusing the whole change set unless `on_invalid: clear` clears it (not when required)."""

from __future__ import annotations

from typing import Any

from tests.integration.conftest import Stack
from tests.integration.test_schema_changes import D, change, head
from tests.integration.test_schema_merges import branch, propose, reviewer_of

LINKS = D + "/relations/supplied_by/links"
P10028 = "P-10028->S-1001"


def retyped(is_primary: dict[str, Any], lead_time_days: dict[str, Any] | None = None, **item: Any) -> Any:
    lead = lead_time_days or {"type": "integer", "min": 0}
    return {
        "op": "change_relation",
        "relation": "supplied_by",
        "definition": {"attributes": {"is_primary": is_primary, "lead_time_days": lead}},
        **item,
    }


async def links(stack: Stack) -> dict[str, dict[str, Any]]:
    answer = await stack.http.get(LINKS, params={"limit": 1000}, headers=stack.admin)
    assert answer.status_code == 200, answer.text
    return {
        f"{link['from'].split('/')[1]}->{link['to'].split('/')[1]}": link for link in answer.json()["links"]
    }


async def test_link_values_convert_to_a_link_attributes_new_type(supply: Stack) -> None:
    before, stored = await head(supply), await links(supply)
    assert stored[P10028]["values"] == {"is_primary": True, "lead_time_days": "21"}
    with_values = [k for k, link in stored.items() if "is_primary" in link["values"]]

    # A boolean is never a number: every is_primary refuses, each Link named, nothing written.
    to_integer = retyped({"type": "integer", "min": 0, "max": 1})
    refused = await change(supply, {"changes": [to_integer]})
    assert refused.status_code == 422, refused.text
    problem = refused.json()
    assert problem["code"] == "schema-migration-failed" and problem["records"] == []
    assert f"supplied_by/{P10028}" in problem["links"]
    assert problem["violation_count"] == len(with_values)
    violation = next(v for v in problem["violations"] if v["path"] == f"supplied_by/{P10028}.is_primary")
    assert violation["link"] == f"supplied_by/{P10028}" and "(the value was True)" in violation["message"]
    assert await head(supply) == before and await links(supply) == stored

    # Through a map (per link Attribute, old value as text -> new value), it converts; the dry run
    # counts and samples the writes like a Kind's.
    mapped = retyped(
        {"type": "integer", "min": 0, "max": 1},
        {"type": "decimal(6,1)", "min": 0},
        map={"is_primary": {"true": 1, "false": 0}},
    )
    dry = await change(supply, {"changes": [mapped], "dry_run": True})
    assert dry.status_code == 200 and dry.json()["valid"], dry.text
    counts = dry.json()["writes"]["counts"]
    assert counts["supplied_by.is_primary"] == len(with_values)
    assert counts["supplied_by.lead_time_days"] == sum(
        "lead_time_days" in v["values"] for v in stored.values()
    )
    samples = [s for s in dry.json()["writes"]["sample"] if s["attribute"] == "is_primary"]
    assert samples and all(s["after"] == ("1" if s["before"] else "0") for s in samples), samples
    assert all(s["ref"].startswith("supplied_by/P-") for s in samples)
    assert await head(supply) == before

    done = await change(supply, {"changes": [mapped]})
    assert done.status_code == 200, done.text
    assert done.json()["migrated"]["links"] == len(stored)
    now = await links(supply)
    assert now[P10028]["values"] == {"is_primary": "1", "lead_time_days": "21.0"}
    for key, link in stored.items():
        assert now[key]["values"].get("is_primary") == (
            None if "is_primary" not in link["values"] else ("1" if link["values"]["is_primary"] else "0")
        )
    # At the Revision before, the Links read as they were.
    then = await supply.http.get(LINKS, params={"limit": 1000, "at": before}, headers=supply.admin)
    assert (
        next(link for link in then.json()["links"] if link["from"] == "Part/P-10028")["values"]
        == (stored[P10028]["values"])
    )
    history = await supply.http.get(f"{D}/revisions/{done.json()['revision']}", headers=supply.admin)
    assert {(c["entity"], c["change"]) for c in history.json()["changes"]} == {("link", "modified")}


async def test_link_values_that_do_not_convert_are_cleared_or_refused_as_a_kinds(supply: Stack) -> None:
    stored = await links(supply)
    # on_invalid: clear clears a value that does not convert when the link Attribute is not required.
    enum = {"type": "enum", "values": ["primary"]}
    cleared = await change(
        supply, {"changes": [retyped(enum, map={"is_primary": {"true": "primary"}})], "on_invalid": "clear"}
    )
    assert cleared.status_code == 200, cleared.text
    now = await links(supply)
    for key, link in stored.items():
        expected = "primary" if link["values"].get("is_primary") is True else None
        assert now[key]["values"].get("is_primary") == expected, key
    # A required link Attribute is never cleared: the Links are named.
    before = await head(supply)
    required = retyped({"type": "boolean"}, {"type": "enum", "values": ["short"], "required": True})
    refused = await change(supply, {"changes": [required], "on_invalid": "clear"})
    assert refused.status_code == 422 and refused.json()["code"] == "schema-migration-failed", refused.text
    assert f"supplied_by/{P10028}" in refused.json()["links"]
    assert await head(supply) == before


async def test_a_bad_link_map_answers_422_naming_it(supply: Stack) -> None:
    before = await head(supply)
    for item, path in (
        (retyped({"type": "boolean"}, map={"nope": {"1": "2"}}), "changes[0].map.nope"),
        (retyped({"type": "boolean"}, map={"is_primary": ["true"]}), "changes[0].map.is_primary"),
        (
            {
                "op": "change_relation",
                "relation": "supplied_by",
                "definition": {"description": "x"},
                "map": {"is_primary": {"true": "1"}},
            },
            "changes[0].map",
        ),
    ):
        refused = await change(supply, {"changes": [item]})
        assert refused.status_code == 422 and refused.json()["code"] == "validation-failed", refused.text
        assert [issue["path"] for issue in refused.json()["issues"]] == [path], refused.text
    assert await head(supply) == before


async def test_a_branchs_link_values_convert_on_their_way_into_the_changed_schema(supply: Stack) -> None:
    """A data branch made before the change: its Link values are converted on merge as the change
    converted the target's, and one that does not convert is a Conflict naming the Link."""
    reviewer = await reviewer_of(supply)
    await branch(supply, "leads")
    imported = await supply.http.post(
        D + "/imports",
        json={
            "message": "Longer lead times",
            "branch": "leads",
            "links": [
                {
                    "relation": "supplied_by",
                    "from": "P-10028",
                    "to": "S-1001",
                    "values": {"is_primary": True, "lead_time_days": 30},
                },
                {
                    "relation": "supplied_by",
                    "from": "P-10001",
                    "to": "S-1003",
                    "values": {"is_primary": False, "lead_time_days": 23},
                },
            ],
        },
        headers=supply.admin,
    )
    assert imported.status_code == 200, imported.text
    mapped = retyped(
        {"type": "enum", "values": ["yes", "no"]},
        {"type": "decimal(6,1)", "min": 0},
        map={"is_primary": {"true": "yes"}},
    )
    done = await change(supply, {"changes": [mapped], "on_invalid": "clear"})  # main's false values go
    assert done.status_code == 200, done.text

    proposal = await propose(supply, "leads", reviewer)
    assert proposal.status_code == 201, proposal.text
    conflicts = (
        await supply.http.get(f"{D}/proposals/{proposal.json()['id']}/conflicts", headers=supply.admin)
    ).json()
    found = [(c["code"], c["entity"], c["key"], c.get("attribute")) for c in conflicts["conflicts"]]
    assert ("schema_migration", "link", "P-10001->S-1003", "is_primary") in found, conflicts
    assert not any(key == "P-10028->S-1001" for _, _, key, _ in found), conflicts
    # As for a Record's value: fixed on the source, then merged.
    fixed = await supply.http.post(
        D + "/imports",
        json={
            "message": "Primary after all",
            "branch": "leads",
            "links": [
                {
                    "relation": "supplied_by",
                    "from": "P-10001",
                    "to": "S-1003",
                    "values": {"is_primary": True, "lead_time_days": 23},
                }
            ],
        },
        headers=supply.admin,
    )
    assert fixed.status_code == 200, fixed.text
    merged = await supply.http.post(f"{D}/proposals/{proposal.json()['id']}/merge", headers=supply.admin)
    assert merged.status_code == 200 and merged.json()["status"] == "merged", merged.text
    now = await links(supply)
    assert now[P10028]["values"] == {"is_primary": "yes", "lead_time_days": "30.0"}
    assert now["P-10001->S-1003"]["values"] == {"is_primary": "yes", "lead_time_days": "23.0"}


async def test_a_branchs_link_values_are_checked_against_the_changed_link_attributes_rules(
    supply: Stack,
) -> None:
    """A Link the source wrote before the target's change_relation, converted on its way in, is
    checked as a write of it on the target would be: a converted value out of the new bounds or
    enum values, a created Link without a value its link Attribute now requires, or a changed Link
    whose required value the source removed, is a `schema_migration` Conflict naming the Link, the
    Attribute and the rule; nothing merges until the source fixes it."""
    reviewer = await reviewer_of(supply)
    with_grade = {
        "op": "change_relation",
        "relation": "supplied_by",
        "definition": {
            "attributes": {
                "is_primary": {"type": "boolean"},
                "lead_time_days": {"type": "integer", "min": 0},
                "grade": {"type": "string"},
            }
        },
    }
    assert (await change(supply, {"changes": [with_grade]})).status_code == 200  # before the fork
    await branch(supply, "grades")

    async def load(lead: int, grade: str, quantity: dict[str, Any], held: dict[str, Any]) -> None:
        imported = await supply.http.post(
            D + "/imports",
            json={
                "message": "Grades and stock",
                "branch": "grades",
                "links": [
                    {
                        "relation": "supplied_by",
                        "from": "P-10028",
                        "to": "S-1001",
                        "values": {"is_primary": True, "lead_time_days": lead, "grade": "A"},
                    },
                    {
                        "relation": "supplied_by",
                        "from": "P-10001",
                        "to": "S-1003",
                        "values": {"is_primary": True, "lead_time_days": 23, "grade": grade},
                    },
                    {"relation": "stocked_at", "from": "P-10001", "to": "PL-03", "values": quantity},
                    {"relation": "stocked_at", "from": "P-10003", "to": "PL-02", "values": held},
                ],
            },
            headers=supply.admin,
        )
        assert imported.status_code == 200, imported.text

    await load(90, "C", {}, {"quantity": None})  # each fits the source's schema (a null clears)
    stricter = [
        {
            "op": "change_relation",
            "relation": "supplied_by",
            "definition": {
                "attributes": {
                    "is_primary": {"type": "boolean"},
                    "lead_time_days": {"type": "decimal(6,1)", "min": 0, "max": 60},
                    "grade": {"type": "enum", "values": ["A", "B"]},
                }
            },
        },
        {
            "op": "change_relation",
            "relation": "stocked_at",
            "definition": {"attributes": {"quantity": {"type": "integer", "min": 0, "required": True}}},
        },
    ]
    done = await change(supply, {"changes": stricter})  # main's Links all fit
    assert done.status_code == 200, done.text
    before, stored = await head(supply), await links(supply)

    proposal = await propose(supply, "grades", reviewer)
    assert proposal.status_code == 201, proposal.text
    number = proposal.json()["id"]
    conflicts = (await supply.http.get(f"{D}/proposals/{number}/conflicts", headers=supply.admin)).json()
    found = {(c["code"], c["ref"], c["attribute"]) for c in conflicts["conflicts"]}
    assert found == {
        ("schema_migration", f"supplied_by/{P10028}", "lead_time_days"),
        ("schema_migration", "supplied_by/P-10001->S-1003", "grade"),
        ("schema_migration", "stocked_at/P-10001->PL-03", "quantity"),
        ("schema_migration", "stocked_at/P-10003->PL-02", "quantity"),
    }, conflicts
    removed = next(c for c in conflicts["conflicts"] if c["ref"] == "stocked_at/P-10003->PL-02")
    assert "(rule value.required)" in removed["theirs"], removed
    why = {c["attribute"]: c["theirs"] for c in conflicts["conflicts"] if c["ref"] != removed["ref"]}
    for attribute, rule in (
        ("lead_time_days", "value.max"),
        ("grade", "value.enum"),
        ("quantity", "value.required"),
    ):
        assert f"(rule {rule})" in why[attribute] and "change the value on grades" in why[attribute], why
    assert "at most 60" in why["lead_time_days"] and "'C'" in why["grade"], why
    merged = await supply.http.post(f"{D}/proposals/{number}/merge", headers=supply.admin)
    assert merged.status_code == 200 and merged.json()["attempt"]["result"] == "conflicts", merged.text
    assert await head(supply) == before and await links(supply) == stored  # nothing written
    assert await stock(supply, "P-10001", "PL-03") == [] and await stock(supply, "P-10003", "PL-02") == [
        {"quantity": "133"}
    ]

    # Fixed on the source, the Links merge with their values converted.
    await load(45, "B", {"quantity": 5}, {"quantity": 7})
    merged = await supply.http.post(f"{D}/proposals/{number}/merge", headers=supply.admin)
    assert merged.status_code == 200 and merged.json()["status"] == "merged", merged.text
    now = await links(supply)
    assert now[P10028]["values"] == {"is_primary": True, "lead_time_days": "45.0", "grade": "A"}
    assert now["P-10001->S-1003"]["values"] == {"is_primary": True, "lead_time_days": "23.0", "grade": "B"}
    assert await stock(supply, "P-10001", "PL-03") == [{"quantity": "5"}]
    assert await stock(supply, "P-10003", "PL-02") == [{"quantity": "7"}]


async def stock(stack: Stack, part: str, plant: str) -> list[dict[str, Any]]:
    """The values of the stocked_at Link of `part` at `plant` on main ([] without one)."""
    answer = await stack.http.get(
        D + "/relations/stocked_at/links", params={"limit": 1000}, headers=stack.admin
    )
    assert answer.status_code == 200, answer.text
    return [
        link["values"]
        for link in answer.json()["links"]
        if link["from"] == f"Part/{part}" and link["to"] == f"Plant/{plant}"
    ]
