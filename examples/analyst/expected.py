"""The analyst questions and their expected answers, computed from the example data with plain
Python, apart from Lorebase and from the reference agent (agent.py).

    python -m examples.analyst.expected > examples/analyst/questions.json

Each question names its Domain and the answer an analyst expects: a count, counts per value
(groups), the keys of the matching Records (keys), or one value of one Record (value). A test
(tests/integration/test_analyst.py) checks that questions.json is what this script writes, then
has the agent answer every question against a running Keeper.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

from examples.analyst import energy, fleet

ROOT = Path(__file__).resolve().parents[2]
Rows = list[dict[str, Any]]


def supply() -> dict[str, Rows]:
    """The supply example as `lorebase up --example supply` leaves it: the import, then S-1001's
    risk_score raised to 90; open_flags derived from the open RiskFlags."""
    data = json.loads((ROOT / "examples" / "supply" / "data.json").read_text())
    kinds: dict[str, Rows] = {}
    for record in data["records"]:
        kinds.setdefault(record["kind"], []).append(dict(record["values"]))
    for supplier in kinds["Supplier"]:
        if supplier["supplier_code"] == "S-1001":
            supplier["risk_score"] = "90"
    status = {f["flag_id"]: f.get("status") for f in kinds["RiskFlag"]}
    opened = Counter(
        link["to"] for link in data["links"] if link["relation"] == "flags" and status[link["from"]] == "open"
    )
    for supplier in kinds["Supplier"]:
        supplier["open_flags"] = str(opened.get(supplier["supplier_code"], 0))
    kinds["links"] = data["links"]
    return kinds


def fleet_data() -> dict[str, Rows]:
    return generated_data(fleet.data())


def energy_data() -> dict[str, Rows]:
    return generated_data(energy.data())


def generated_data(generated: dict[str, Any]) -> dict[str, Rows]:
    kinds: dict[str, Rows] = {}
    for record in generated["records"]:
        kinds.setdefault(record["kind"], []).append(dict(record["values"]))
    kinds["links"] = generated["links"]
    return kinds


def num(value: Any) -> Decimal:
    return Decimal(str(value))


def count(rows: Rows, test: Callable[[dict[str, Any]], bool] = lambda r: True) -> dict[str, Any]:
    return {"count": sum(1 for r in rows if test(r))}


def groups(rows: Rows, attr: str) -> dict[str, Any]:
    return {"groups": dict(sorted(Counter(str(r.get(attr)) for r in rows).items()))}


def keys(rows: Rows, key: str, test: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    return {"keys": sorted(r[key] for r in rows if test(r))}


def top(rows: Rows, key: str, attr: str, highest: bool) -> dict[str, Any]:
    ranked = sorted((r for r in rows if r.get(attr) is not None), key=lambda r: num(r[attr]), reverse=highest)
    assert num(ranked[0][attr]) != num(ranked[1][attr]), "a tie would make the question ambiguous"
    return {"keys": [ranked[0][key]]}


def value(rows: Rows, test: Callable[[dict[str, Any]], bool], attr: str) -> dict[str, Any]:
    found = [r for r in rows if test(r)]
    assert len(found) == 1
    return {"value": found[0][attr]}


def linked(data: dict[str, Rows], relation: str, key: str, forward: bool) -> dict[str, Any]:
    ends = [
        (link["from"] if not forward else link["to"])
        for link in data["links"]
        if link["relation"] == relation and (link["to"] if not forward else link["from"]) == key
    ]
    return {"keys": sorted(ends)}


def questions() -> list[dict[str, Any]]:
    s = supply()
    sup, part, po, con, plant, flag = (
        s[k] for k in ("Supplier", "Part", "PurchaseOrder", "Contract", "Plant", "RiskFlag")
    )
    f = fleet_data()
    veh, dep, drv = f["Vehicle"], f["Depot"], f["Driver"]
    kavsen = next(r["supplier_code"] for r in sup if r["legal_name"].startswith("Kavsen Alloys"))
    anna = next(r for r in drv if r["full_name"].startswith("Anna"))
    asked: list[tuple[str, str, dict[str, Any]]] = [
        ("supply", "How many suppliers are there?", count(sup)),
        ("supply", "How many suppliers are in Poland?", count(sup, lambda r: r["country"] == "PL")),
        ("supply", "How many suppliers are in PL?", count(sup, lambda r: r["country"] == "PL")),
        (
            "supply",
            "Which suppliers are blocked?",
            keys(sup, "supplier_code", lambda r: r["status"] == "blocked"),
        ),
        ("supply", "How many suppliers are dormant?", count(sup, lambda r: r["status"] == "inactive")),
        (
            "supply",
            "Which vendors have a risk score above 80?",
            keys(sup, "supplier_code", lambda r: num(r["risk_score"]) > 80),
        ),
        (
            "supply",
            "How many suppliers have a risk score below 25?",
            count(sup, lambda r: num(r["risk_score"]) < 25),
        ),
        (
            "supply",
            "Which suppliers have a risk above 60?",
            keys(sup, "supplier_code", lambda r: num(r["risk_score"]) > 60),
        ),
        ("supply", "Which suppliers are tier 1?", keys(sup, "supplier_code", lambda r: r["tier"] == "1")),
        ("supply", "How many suppliers per country?", groups(sup, "country")),
        ("supply", "How many suppliers per tier?", groups(sup, "tier")),
        (
            "supply",
            "Which supplier has the highest risk score?",
            top(sup, "supplier_code", "risk_score", True),
        ),
        (
            "supply",
            "How many active suppliers are in Germany?",
            count(sup, lambda r: r["status"] == "active" and r["country"] == "DE"),
        ),
        (
            "supply",
            "Which suppliers have at least 1 open flags?",
            keys(sup, "supplier_code", lambda r: int(r["open_flags"]) >= 1),
        ),
        (
            "supply",
            "How many suppliers have a risk score of at least 70?",
            count(sup, lambda r: num(r["risk_score"]) >= 70),
        ),
        (
            "supply",
            "What is the risk score of Kavsen Alloys?",
            value(sup, lambda r: r["supplier_code"] == kavsen, "risk_score"),
        ),
        (
            "supply",
            "What is the tier of Lindqvist Lager?",
            value(sup, lambda r: r["legal_name"].startswith("Lindqvist Lager"), "tier"),
        ),
        (
            "supply",
            "Which city is Brennecke Dichtungstechnik in?",
            value(sup, lambda r: r["legal_name"].startswith("Brennecke"), "city"),
        ),
        (
            "supply",
            "What is the status of S-1030?",
            value(sup, lambda r: r["supplier_code"] == "S-1030", "status"),
        ),
        (
            "supply",
            "Which suppliers are located in Japan?",
            keys(sup, "supplier_code", lambda r: r["country"] == "JP"),
        ),
        ("supply", "How many parts per category?", groups(part, "category")),
        ("supply", "How many bearings are there?", count(part, lambda r: r["category"] == "bearing")),
        (
            "supply",
            "Which parts cost more than 100 EUR?",
            keys(part, "part_number", lambda r: num(r["unit_cost"]) > 100),
        ),
        (
            "supply",
            "How many seals cost less than 10 EUR?",
            count(part, lambda r: r["category"] == "seal" and num(r["unit_cost"]) < 10),
        ),
        ("supply", "Which part has the lowest unit cost?", top(part, "part_number", "unit_cost", False)),
        ("supply", "How many components are valves?", count(part, lambda r: r["category"] == "valve")),
        (
            "supply",
            "What is the unit cost of P-10028?",
            value(part, lambda r: r["part_number"] == "P-10028", "unit_cost"),
        ),
        ("supply", "Which parts does Kavsen Alloys supply?", linked(s, "supplied_by", kavsen, False)),
        ("supply", "How many open purchase orders are there?", count(po, lambda r: r["status"] == "open")),
        ("supply", "How many orders per status?", groups(po, "status")),
        (
            "supply",
            "How many orders were placed before May 2026?",
            count(po, lambda r: r["ordered_on"] < "2026-05-01"),
        ),
        (
            "supply",
            "How many orders have a total of more than 5000 EUR?",
            count(po, lambda r: num(r["total"]) > 5000),
        ),
        (
            "supply",
            "Which orders have a quantity of at least 500?",
            keys(po, "po_number", lambda r: num(r["quantity"]) >= 500),
        ),
        ("supply", "How many contracts per currency?", groups(con, "currency")),
        ("supply", "How many contracts are in euros?", count(con, lambda r: r["currency"] == "EUR")),
        ("supply", "How many agreements are expired?", count(con, lambda r: r["status"] == "expired")),
        (
            "supply",
            "How many contracts expire before 2027?",
            count(con, lambda r: r["valid_to"] < "2027-01-01"),
        ),
        ("supply", "How many risk flags are open?", count(flag, lambda r: r["status"] == "open")),
        ("supply", "How many high risks are there?", count(flag, lambda r: r["severity"] == "high")),
        ("supply", "How many flags per severity?", groups(flag, "severity")),
        (
            "supply",
            "How many flags were raised after June 2026?",
            count(flag, lambda r: r["raised_on"] >= "2026-07-01"),
        ),
        ("supply", "Which plants are in Austria?", keys(plant, "plant_code", lambda r: r["country"] == "AT")),
        ("supply", "How many sites are in Poland?", count(plant, lambda r: r["country"] == "PL")),
        (
            "supply",
            "Which suppliers in Germany are active?",
            keys(sup, "supplier_code", lambda r: r["country"] == "DE" and r["status"] == "active"),
        ),
        (
            "supply",
            "List the blocked vendors",
            keys(sup, "supplier_code", lambda r: r["status"] == "blocked"),
        ),
        ("supply", "How many parts cost less than 5 EUR?", count(part, lambda r: num(r["unit_cost"]) < 5)),
        (
            "supply",
            "Which orders were cancelled?",
            keys(po, "po_number", lambda r: r["status"] == "cancelled"),
        ),
        (
            "supply",
            "Suppliers with risk score under 20",
            keys(sup, "supplier_code", lambda r: int(r["risk_score"]) < 20),
        ),
        ("supply", "How many contracts are in USD?", count(con, lambda r: r["currency"] == "USD")),
        ("supply", "How many plants per country?", groups(plant, "country")),
        ("supply", "Which part has the highest unit cost?", top(part, "part_number", "unit_cost", True)),
        (
            "supply",
            "How many suppliers in Poland are tier 1?",
            count(sup, lambda r: r["country"] == "PL" and r["tier"] == "1"),
        ),
        (
            "supply",
            "What is the currency of C-3001?",
            value(con, lambda r: r["contract_number"] == "C-3001", "currency"),
        ),
        ("supply", "How many open flags are there?", count(flag, lambda r: r["status"] == "open")),
        (
            "supply",
            "How many suppliers does Corvane have in Sweden?",
            count(sup, lambda r: r["country"] == "SE"),
        ),
        (
            "supply",
            "Which gaskets cost more than 2 EUR?",
            keys(part, "part_number", lambda r: r["category"] == "gasket" and num(r["unit_cost"]) > 2),
        ),
        ("supply", "How many purchase orders are received?", count(po, lambda r: r["status"] == "received")),
        ("supply", "Which supplier is in Pune?", keys(sup, "supplier_code", lambda r: r["city"] == "Pune")),
        ("fleet", "Which drivers have a C licence?", keys(drv, "driver_id", lambda r: r["licence"] == "C")),
        (
            "fleet",
            "How many vehicles were registered in 2020?",
            count(veh, lambda r: r["registered_on"].startswith("2020")),
        ),
        ("fleet", "How many retired trucks?", count(veh, lambda r: r["status"] == "retired")),
        (
            "fleet",
            "How many volvo trucks run on diesel?",
            count(veh, lambda r: r["make"] == "volvo" and r["fuel"] == "diesel"),
        ),
        ("fleet", "Which truck has the lowest mileage?", top(veh, "plate", "mileage_km", False)),
        ("fleet", "How many trucks are electric?", count(veh, lambda r: r["fuel"] == "electric")),
        ("fleet", "How many vehicles per fuel?", groups(veh, "fuel")),
        (
            "fleet",
            "Which vehicles have a mileage above 850000?",
            keys(veh, "plate", lambda r: num(r["mileage_km"]) > 850000),
        ),
        ("fleet", "How many trucks are in maintenance?", count(veh, lambda r: r["status"] == "maintenance")),
        ("fleet", "How many vehicles are operational?", count(veh, lambda r: r["status"] == "in_service")),
        ("fleet", "How many drivers hold a CE licence?", count(drv, lambda r: r["licence"] == "CE")),
        (
            "fleet",
            "How many drivers have more than 20 years of experience?",
            count(drv, lambda r: int(r["years_experience"]) > 20),
        ),
        (
            "fleet",
            "Which driver has the most years of experience?",
            top(drv, "driver_id", "years_experience", True),
        ),
        (
            "fleet",
            "How many vehicles were registered before 2018?",
            count(veh, lambda r: r["registered_on"] < "2018-01-01"),
        ),
        ("fleet", "How many trucks per make?", groups(veh, "make")),
        (
            "fleet",
            "What is the mileage of V-0007?",
            value(veh, lambda r: r["plate"] == "V-0007", "mileage_km"),
        ),
        ("fleet", "How many depots are in Germany?", count(dep, lambda r: r["country"] == "DE")),
        (
            "fleet",
            "How many Scania trucks have a payload of at least 20 tonnes?",
            count(veh, lambda r: r["make"] == "scania" and num(r["capacity_t"]) >= 20),
        ),
        (
            "fleet",
            "How many loading bays does Depot Duisburg Logport have?",
            value(dep, lambda r: r["name"] == "Depot Duisburg Logport", "bays"),
        ),
        (
            "fleet",
            f"Which trucks does {anna['full_name']} drive?",
            linked(f, "drives", anna["driver_id"], True),
        ),
        (
            "fleet",
            "How many battery trucks are in service?",
            count(veh, lambda r: r["fuel"] == "electric" and r["status"] == "in_service"),
        ),
    ]
    asked += compositional(s, f, energy_data())
    return [{"domain": d, "question": q, "expected": e} for d, q, e in asked]


def ranked(rows: Rows, key: str, attr: str, n: int, highest: bool) -> dict[str, Any]:
    """The first n Records by attr; a tie at the cut would make the question ambiguous."""
    found = sorted(
        (r for r in rows if r.get(attr) is not None), key=lambda r: _order(r[attr]), reverse=highest
    )
    assert len(found) == n or _order(found[n - 1][attr]) != _order(found[n][attr]), "a tie at the cut"
    return {"keys": sorted(r[key] for r in found[:n])}


def _order(value: Any) -> Any:
    return num(value) if str(value).replace(".", "", 1).isdigit() else str(value)


def per_record(rows: Rows, key: str, links: Rows, relation: str, end: str) -> dict[str, Any]:
    """Links of `relation` counted per Record (at its `end`: from or to), zero included."""
    held = Counter(link[end] for link in links if link["relation"] == relation)
    return {"groups": {r[key]: held.get(r[key], 0) for r in rows}}


def most_linked(
    rows: Rows, key: str, links: Rows, relation: str, end: str, n: int, most: bool
) -> dict[str, Any]:
    """The n Records with the most (or fewest) Links of `relation`; a tie at the cut would make the
    question ambiguous."""
    held = per_record(rows, key, links, relation, end)["groups"]
    found = sorted(held, key=lambda k: (-held[k] if most else held[k], k))
    assert len(found) == n or held[found[n - 1]] != held[found[n]], "a tie at the cut"
    return {"keys": sorted(found[:n])}


def compositional(
    s: dict[str, Rows], f: dict[str, Rows], e: dict[str, Rows]
) -> list[tuple[str, str, dict[str, Any]]]:
    """Questions of issue 31, asked as an analyst writes them: number words, comparatives,
    superlatives and top-k, verbs of state, counts of related Records, dates as people say them
    (those with a year: the relative ones depend on the day and are in
    tests/integration/test_resolve_analysts.py)."""
    sup, part, po, con, flag = (s[k] for k in ("Supplier", "Part", "PurchaseOrder", "Contract", "RiskFlag"))
    veh, dep, drv = f["Vehicle"], f["Depot"], f["Driver"]
    flagged = {link["to"] for link in s["links"] if link["relation"] == "flags"}
    return [
        # number words
        (
            "supply",
            "Which suppliers have a risk score above seventy?",
            keys(sup, "supplier_code", lambda r: num(r["risk_score"]) > 70),
        ),
        ("supply", "How many tier two suppliers are there?", count(sup, lambda r: r["tier"] == "2")),
        (
            "supply",
            "How many orders have a quantity of more than a dozen?",
            count(po, lambda r: num(r["quantity"]) > 12),
        ),
        (
            "fleet",
            "How many drivers have more than thirty years of experience?",
            count(drv, lambda r: int(r["years_experience"]) > 30),
        ),
        ("fleet", "How many depots have fewer than twenty bays?", count(dep, lambda r: int(r["bays"]) < 20)),
        # comparatives
        (
            "supply",
            "Which parts are cheaper than 20 EUR?",
            keys(part, "part_number", lambda r: num(r["unit_cost"]) < 20),
        ),
        (
            "supply",
            "How many orders are more expensive than 5000 euros?",
            count(po, lambda r: num(r["total"]) > 5000),
        ),
        (
            "supply",
            "How many contracts are older than 2023?",
            count(con, lambda r: r["valid_from"] < "2023-01-01"),
        ),
        (
            "supply",
            "How many risk flags are newer than March 2026?",
            count(flag, lambda r: r["raised_on"] >= "2026-04-01"),
        ),
        (
            "supply",
            "How many suppliers are riskier than 75?",
            count(sup, lambda r: num(r["risk_score"]) > 75),
        ),
        (
            "fleet",
            "How many trucks are older than 2018?",
            count(veh, lambda r: r["registered_on"] < "2018-01-01"),
        ),
        ("fleet", "Which depots are larger than 50 bays?", keys(dep, "code", lambda r: int(r["bays"]) > 50)),
        (
            "fleet",
            "How many trucks carry heavier than 25 tonnes?",
            count(veh, lambda r: num(r["capacity_t"]) > 25),
        ),
        # superlatives and top-k
        ("supply", "Which are the three cheapest parts?", ranked(part, "part_number", "unit_cost", 3, False)),
        ("supply", "What is the most expensive part?", ranked(part, "part_number", "unit_cost", 1, True)),
        (
            "supply",
            "Which is the most recent purchase order?",
            ranked(po, "po_number", "ordered_on", 1, True),
        ),
        ("supply", "Which are the two oldest risk flags?", ranked(flag, "flag_id", "raised_on", 2, False)),
        ("supply", "Which supplier is the riskiest?", ranked(sup, "supplier_code", "risk_score", 1, True)),
        ("supply", "Top 5 suppliers by risk score", ranked(sup, "supplier_code", "risk_score", 5, True)),
        ("fleet", "Which is the oldest truck?", ranked(veh, "plate", "registered_on", 1, False)),
        ("fleet", "Which are the three largest depots?", ranked(dep, "code", "bays", 3, True)),
        ("fleet", "Which are the 4 newest trucks?", ranked(veh, "plate", "registered_on", 4, True)),
        # verbs of state
        ("supply", "Which suppliers are flagged?", {"keys": sorted(flagged)}),
        (
            "supply",
            "How many flagged suppliers are in Poland?",
            count(sup, lambda r: r["supplier_code"] in flagged and r["country"] == "PL"),
        ),
        (
            "supply",
            "How many suppliers are not flagged?",
            count(sup, lambda r: r["supplier_code"] not in flagged),
        ),
        (
            "supply",
            "Which contracts expire before 2026?",
            keys(con, "contract_number", lambda r: r["valid_to"] < "2026-01-01"),
        ),
        ("supply", "How many expired contracts are there?", count(con, lambda r: r["status"] == "expired")),
        # counts of related Records
        (
            "supply",
            "How many parts does each tier 1 supplier supply?",
            per_record(
                [r for r in sup if r["tier"] == "1"], "supplier_code", s["links"], "supplied_by", "to"
            ),
        ),
        (
            "supply",
            "How many risk flags does each supplier in Poland have?",
            per_record([r for r in sup if r["country"] == "PL"], "supplier_code", s["links"], "flags", "to"),
        ),
        (
            "fleet",
            "How many trucks does each depot have?",
            per_record(dep, "code", f["links"], "based_at", "to"),
        ),
        (
            "fleet",
            "How many trucks does each driver with a CE licence drive?",
            per_record([r for r in drv if r["licence"] == "CE"], "driver_id", f["links"], "drives", "from"),
        ),
        (
            "supply",
            "Which supplier supplies the most parts?",
            most_linked(sup, "supplier_code", s["links"], "supplied_by", "to", 1, True),
        ),
        (
            "supply",
            "Which are the two suppliers with the most parts?",
            most_linked(sup, "supplier_code", s["links"], "supplied_by", "to", 2, True),
        ),
        (
            "supply",
            "Which part has the fewest suppliers?",
            most_linked(part, "part_number", s["links"], "supplied_by", "from", 1, False),
        ),
        (
            "fleet",
            "Which depot has the most trucks?",
            most_linked(dep, "code", f["links"], "based_at", "to", 1, True),
        ),
        # dates as people say them, with a year
        (
            "supply",
            "How many orders were placed in Q2 2026?",
            count(po, lambda r: "2026-04-01" <= r["ordered_on"] < "2026-07-01"),
        ),
        (
            "supply",
            "How many orders were placed before the end of April 2026?",
            count(po, lambda r: r["ordered_on"] < "2026-05-01"),
        ),
        (
            "fleet",
            "How many drivers were hired since the start of 2020?",
            count(drv, lambda r: r["hired_on"] >= "2020-01-01"),
        ),
        (
            "fleet",
            "How many trucks were registered in Q1 2020?",
            count(veh, lambda r: "2020-01-01" <= r["registered_on"] < "2020-04-01"),
        ),
    ] + energy_questions(e)


def energy_questions(e: dict[str, Rows]) -> list[tuple[str, str, dict[str, Any]]]:
    """The compositional questions on the energy Domain (energy.py), written before the agent ran
    them. "expired" and "overdue" compare with the day of the Revision read: the data's dates make
    the answer the same on any day of 2026 to 2029 (TODAY stands for them)."""
    site, asset, check = e["Site"], e["Asset"], e["Inspection"]
    today = "2026-12-01"
    inspected = {link["to"] for link in e["links"] if link["relation"] == "inspects"}

    def tech(name: str) -> list[dict[str, Any]]:
        return [r for r in asset if r["technology"] == name]

    return [
        # number words
        (
            "energy",
            "How many assets have a capacity above twelve MW?",
            count(asset, lambda r: num(r["capacity_mw"]) > 12),
        ),
        (
            "energy",
            "How many inspections found more than five defects?",
            count(check, lambda r: r.get("defects") is not None and int(r["defects"]) > 5),
        ),
        (
            "energy",
            "How many sites have a grid capacity of at least two hundred MW?",
            count(site, lambda r: num(r["grid_mw"]) >= 200),
        ),
        # comparatives (busier, cheaper: the Domain's words, declared in its schema)
        (
            "energy",
            "Which assets are busier than 97?",
            keys(asset, "asset_id", lambda r: int(r["output_pct"]) > 97),
        ),
        (
            "energy",
            "How many assets are cheaper than 40 EUR per MWh?",
            count(asset, lambda r: num(r["tariff_eur_mwh"]) < 40),
        ),
        (
            "energy",
            "How many assets are older than 2010?",
            count(asset, lambda r: r["commissioned_on"] < "2010-01-01"),
        ),
        (
            "energy",
            "How many solar arrays are larger than 40 MW?",
            count(tech("solar"), lambda r: num(r["capacity_mw"]) > 40),
        ),
        # superlatives and top-k
        ("energy", "Which are the three largest assets?", ranked(asset, "asset_id", "capacity_mw", 3, True)),
        (
            "energy",
            "Which are the two oldest assets?",
            ranked(asset, "asset_id", "commissioned_on", 2, False),
        ),
        (
            "energy",
            "What is the dearest battery?",
            ranked(tech("battery"), "asset_id", "tariff_eur_mwh", 1, True),
        ),
        ("energy", "Top 3 sites by grid capacity", ranked(site, "site_code", "grid_mw", 3, True)),
        (
            "energy",
            "Which hydro plant is the idlest?",
            ranked(tech("hydro"), "asset_id", "output_pct", 1, False),
        ),
        # verbs of state
        (
            "energy",
            "How many assets have an expired permit?",
            count(asset, lambda r: r["permit_expires_on"] < today),
        ),
        (
            "energy",
            "How many scheduled inspections are overdue?",
            count(check, lambda r: r["status"] == "scheduled" and r["due_on"] < today),
        ),
        (
            "energy",
            "How many assets were never inspected?",
            count(asset, lambda r: r["asset_id"] not in inspected),
        ),
        (
            "energy",
            "Which wind turbines are running at more than 98?",
            keys(tech("wind"), "asset_id", lambda r: int(r["output_pct"]) > 98),
        ),
        # written after "without", "not" before a comparison and a count before the Kind ranked
        # were added to resolve
        (
            "energy",
            "How many operating assets are without inspections?",
            count(asset, lambda r: r["status"] == "operating" and r["asset_id"] not in inspected),
        ),
        (
            "energy",
            "How many assets are not older than 2010?",
            count(asset, lambda r: r["commissioned_on"] >= "2010-01-01"),
        ),
        (
            "energy",
            "Which two assets have the highest tariff?",
            ranked(asset, "asset_id", "tariff_eur_mwh", 2, True),
        ),
        # counts of related Records
        (
            "energy",
            "How many assets does each site have?",
            per_record(site, "site_code", e["links"], "located_at", "to"),
        ),
        (
            "energy",
            "Which site has the most assets?",
            most_linked(site, "site_code", e["links"], "located_at", "to", 1, True),
        ),
        (
            "energy",
            "How many assets does each site in Greece have?",
            per_record(
                [r for r in site if r["country"] == "GR"], "site_code", e["links"], "located_at", "to"
            ),
        ),
        # dates with a year
        (
            "energy",
            "How many assets were commissioned in Q3 2019?",
            count(asset, lambda r: "2019-07-01" <= r["commissioned_on"] < "2019-10-01"),
        ),
        (
            "energy",
            "How many inspections are due before the end of June 2025?",
            count(check, lambda r: r["due_on"] < "2025-07-01"),
        ),
    ]


if __name__ == "__main__":
    json.dump(questions(), sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")
