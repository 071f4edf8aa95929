"""A third Domain for the analyst questions, of another field than supply chains and fleets: the
energy assets of a power producer (sites, generating and storage assets, inspections). Its schema
ties two words of its own to Attributes (`comparatives`: "busier", "the idlest", "dearer", "the
cheapest"), so resolve reads them from the Domain, not from code. Deterministic: the same seed gives
the same schema and data, so the expected answers (expected.py) are computed once and checked in.

Dates that questions compare with today (permits that expired, inspections overdue) lie either
before 2026 or from 2030 on, so the answers hold whatever day of 2026 to 2029 the data is loaded.

    python examples/analyst/energy.py > energy.json   # {"schema": ..., "records": [...], "links": [...]}
"""

from __future__ import annotations

import json
import random
import sys
from datetime import date, timedelta
from typing import Any

SEED = 31

SCHEMA: dict[str, Any] = {
    "description": "Generating and storage assets of a power producer, their sites and inspections.",
    "kinds": {
        "Site": {
            "description": "A grid-connected site holding assets.",
            "key": ["site_code"],
            "title": "name",
            "aliases": ["park", "parks", "location"],
            "attributes": {
                "site_code": {
                    "type": "string",
                    "required": True,
                    "pattern": "^ST-[0-9]{2}$",
                    "description": "Site code.",
                },
                "name": {"type": "string", "required": True, "description": "Name of the site."},
                "country": {
                    "type": "string",
                    "pattern": "^[A-Z]{2}$",
                    "value_aliases": {"ES": ["Spain"], "PT": ["Portugal"], "GR": ["Greece"], "IT": ["Italy"]},
                    "description": "ISO 3166-1 alpha-2 country code.",
                },
                "grid_mw": {
                    "type": "decimal(7,1)",
                    "min": 0,
                    "aliases": ["grid capacity", "connection capacity"],
                    "description": "Grid connection capacity in MW.",
                },
            },
        },
        "Asset": {
            "description": "A generating or storage unit.",
            "key": ["asset_id"],
            "title": "label",
            "aliases": ["unit", "units", "installation", "installations"],
            "attributes": {
                "asset_id": {
                    "type": "string",
                    "required": True,
                    "pattern": "^A-[0-9]{4}$",
                    "description": "Asset number.",
                },
                "label": {"type": "string", "required": True, "description": "Model and asset number."},
                "technology": {
                    "type": "enum",
                    "values": ["wind", "solar", "battery", "hydro"],
                    "aliases": ["technology type"],
                    "value_aliases": {
                        "wind": ["wind turbine", "turbine"],
                        "solar": ["solar array", "pv", "solar park"],
                        "battery": ["battery storage", "storage", "batteries"],
                        "hydro": ["hydro plant", "hydropower"],
                    },
                    "description": "How the asset makes or stores power.",
                },
                "status": {
                    "type": "enum",
                    "values": ["operating", "maintenance", "decommissioned"],
                    "value_aliases": {
                        "operating": ["in operation", "online"],
                        "maintenance": ["under maintenance", "offline"],
                        "decommissioned": ["retired"],
                    },
                    "description": "Whether the asset produces.",
                },
                "capacity_mw": {
                    "type": "decimal(6,2)",
                    "min": 0,
                    "description": "Rated capacity in MW.",
                },
                "output_pct": {
                    "type": "integer",
                    "min": 0,
                    "max": 100,
                    "aliases": ["load"],
                    "comparatives": {"busier": "gt", "idler": "lt", "busiest": "max", "idlest": "min"},
                    "description": "Current output as a percent of rated capacity.",
                },
                "tariff_eur_mwh": {
                    "type": "decimal(6,2)",
                    "min": 0,
                    "aliases": ["tariff"],
                    "comparatives": {"cheaper": "lt", "dearer": "gt", "cheapest": "min", "dearest": "max"},
                    "description": "Feed-in tariff in EUR per MWh.",
                },
                "commissioned_on": {"type": "date", "description": "Date the asset was commissioned."},
                "permit_expires_on": {
                    "type": "date",
                    "aliases": ["permit expiry"],
                    "description": "Date the operating permit expires.",
                },
            },
        },
        "Inspection": {
            "description": "A safety inspection of an asset.",
            "key": ["inspection_id"],
            "aliases": ["check", "checks", "audit", "audits"],
            "attributes": {
                "inspection_id": {
                    "type": "string",
                    "required": True,
                    "pattern": "^IN-[0-9]{5}$",
                    "description": "Inspection number.",
                },
                "status": {
                    "type": "enum",
                    "values": ["scheduled", "done"],
                    "value_aliases": {"scheduled": ["planned", "open"], "done": ["completed", "closed"]},
                    "description": "Whether the inspection took place.",
                },
                "due_on": {"type": "date", "description": "Date the inspection is due."},
                "defects": {"type": "integer", "min": 0, "description": "Defects the inspection found."},
            },
        },
    },
    "relations": {
        "located_at": {
            "from": "Asset",
            "to": "Site",
            "inverse": "assets",
            "cardinality": "many_to_one",
            "description": "The site the asset stands at.",
        },
        "inspects": {
            "from": "Inspection",
            "to": "Asset",
            "inverse": "inspections",
            "cardinality": "many_to_one",
            "description": "The asset the inspection is of.",
        },
    },
}

SITES = [
    ("Tarifa Levante", "ES"),
    ("Zaragoza Ebro", "ES"),
    ("Alentejo Sol", "PT"),
    ("Douro Alto", "PT"),
    ("Evia Kafireas", "GR"),
    ("Thessaly Plains", "GR"),
    ("Puglia Tavoliere", "IT"),
    ("Sicilia Mazara", "IT"),
]
MODELS = {
    "wind": ["Vestas V150", "Nordex N149", "Siemens SG145"],
    "solar": ["SunPower Helix", "Jinko Tiger"],
    "battery": ["Fluence Gridstack", "Tesla Megapack"],
    "hydro": ["Andritz Kaplan"],
}
CAPACITY = {"wind": (30, 70), "solar": (50, 600), "battery": (100, 400), "hydro": (200, 900)}  # tenths of MW


def _past_or_far(rng: random.Random, past: bool) -> date:
    """A day before 2026, or from 2030 on: the same answer to "expired" and "overdue" in 2026-2029."""
    if past:
        return date(2021, 1, 1) + timedelta(days=rng.randint(0, 5 * 365 - 1))
    return date(2030, 1, 1) + timedelta(days=rng.randint(0, 6 * 365))


def data(seed: int = SEED) -> dict[str, list[dict[str, Any]]]:
    rng = random.Random(seed)
    records: list[dict[str, Any]] = []
    links: list[dict[str, Any]] = []
    for i, (name, country) in enumerate(SITES, 1):
        values = {
            "site_code": f"ST-{i:02d}",
            "name": name,
            "country": country,
            "grid_mw": f"{rng.randint(400, 4000) / 10:.1f}",
        }
        records.append({"kind": "Site", "values": values})
    for i in range(1, 201):
        technology = rng.choices(list(MODELS), [5, 3, 2, 1])[0]
        asset_id = f"A-{i:04d}"
        low, high = CAPACITY[technology]
        values = {
            "asset_id": asset_id,
            "label": f"{rng.choice(MODELS[technology])} {asset_id}",
            "technology": technology,
            "status": rng.choices(["operating", "maintenance", "decommissioned"], [8, 2, 1])[0],
            "capacity_mw": f"{rng.randint(low * 10, high * 10) / 100:.2f}",
            "output_pct": str(rng.randint(0, 100)),
            "tariff_eur_mwh": f"{rng.randint(3000, 12000) / 100:.2f}",
            "commissioned_on": (date(2005, 1, 1) + timedelta(days=rng.randint(0, 20 * 365))).isoformat(),
            "permit_expires_on": _past_or_far(rng, rng.random() < 0.2).isoformat(),
        }
        records.append({"kind": "Asset", "values": values})
        links.append(
            {
                "relation": "located_at",
                "from": asset_id,
                "to": f"ST-{rng.randint(1, len(SITES)):02d}",
                "values": {},
            }
        )
    number = 0
    for i in range(1, 201):
        if rng.random() < 0.25:
            continue  # never inspected
        for _ in range(rng.randint(1, 3)):
            number += 1
            done = rng.random() < 0.6
            values = {
                "inspection_id": f"IN-{number:05d}",
                "status": "done" if done else "scheduled",
                "due_on": _past_or_far(rng, done or rng.random() < 0.4).isoformat(),
            }
            if done:
                values["defects"] = str(rng.choices(range(13), [6, 5, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1])[0])
            records.append({"kind": "Inspection", "values": values})
            links.append(
                {"relation": "inspects", "from": values["inspection_id"], "to": f"A-{i:04d}", "values": {}}
            )
    return {"records": records, "links": links}


if __name__ == "__main__":
    json.dump({"schema": SCHEMA, **data()}, sys.stdout, indent=1)
