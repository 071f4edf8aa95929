"""A second, generated Domain for the analyst questions: a road-freight fleet (vehicles, depots,
drivers). Deterministic: the same seed gives the same schema and data, so the expected answers
(expected.py) are computed once and checked in.

    python examples/analyst/fleet.py > fleet.json   # {"schema": ..., "records": [...], "links": [...]}
"""

from __future__ import annotations

import json
import random
import sys
from datetime import date, timedelta
from typing import Any

SEED = 16
COUNTRY_NAMES = {"NL": ["Netherlands", "Holland"], "DE": ["Germany"], "BE": ["Belgium"], "PL": ["Poland"]}

SCHEMA: dict[str, Any] = {
    "description": "Vehicles, depots and drivers of a road-freight fleet.",
    "kinds": {
        "Vehicle": {
            "description": "A truck of the fleet.",
            "key": ["plate"],
            "title": "label",
            "aliases": ["truck", "trucks", "lorry", "lorries"],
            "attributes": {
                "plate": {
                    "type": "string",
                    "required": True,
                    "pattern": "^V-[0-9]{4}$",
                    "description": "Fleet number.",
                },
                "label": {"type": "string", "required": True, "description": "Make, model and fleet number."},
                "make": {
                    "type": "enum",
                    "values": ["volvo", "scania", "man", "daf", "iveco", "mercedes"],
                    "aliases": ["brand", "manufacturer"],
                    "description": "Manufacturer of the truck.",
                },
                "fuel": {
                    "type": "enum",
                    "values": ["diesel", "electric", "hybrid", "lng"],
                    "aliases": ["powertrain", "engine"],
                    "value_aliases": {"electric": ["battery", "ev"], "lng": ["gas", "liquefied natural gas"]},
                    "description": "What the truck runs on.",
                },
                "status": {
                    "type": "enum",
                    "values": ["in_service", "maintenance", "retired"],
                    "value_aliases": {
                        "in_service": ["active", "operational", "in service"],
                        "maintenance": ["in repair", "workshop", "repair"],
                        "retired": ["decommissioned"],
                    },
                    "description": "Whether the truck is on the road.",
                },
                "mileage_km": {
                    "type": "integer",
                    "min": 0,
                    "aliases": ["odometer"],
                    "description": "Odometer reading in km.",
                },
                "capacity_t": {
                    "type": "decimal(6,1)",
                    "min": 0,
                    "aliases": ["payload"],
                    "description": "Payload capacity in tonnes.",
                },
                "registered_on": {
                    "type": "date",
                    "aliases": ["registration date"],
                    "description": "First registration date.",
                },
            },
        },
        "Depot": {
            "description": "A site where trucks are based.",
            "key": ["code"],
            "title": "name",
            "aliases": ["depots", "base", "yard"],
            "attributes": {
                "code": {
                    "type": "string",
                    "required": True,
                    "pattern": "^D-[0-9]{2}$",
                    "description": "Depot code.",
                },
                "name": {"type": "string", "required": True, "description": "Name of the depot."},
                "city": {"type": "string", "description": "City of the depot."},
                "country": {
                    "type": "string",
                    "pattern": "^[A-Z]{2}$",
                    "value_aliases": COUNTRY_NAMES,
                    "description": "ISO 3166-1 alpha-2 country code.",
                },
                "bays": {"type": "integer", "min": 0, "description": "Loading bays at the depot."},
            },
        },
        "Driver": {
            "description": "A driver employed by the fleet.",
            "key": ["driver_id"],
            "title": "full_name",
            "aliases": ["drivers", "chauffeur"],
            "attributes": {
                "driver_id": {
                    "type": "string",
                    "required": True,
                    "pattern": "^DR-[0-9]{3}$",
                    "description": "Staff number.",
                },
                "full_name": {"type": "string", "required": True, "description": "Name of the driver."},
                "licence": {
                    "type": "enum",
                    "values": ["B", "C", "CE"],
                    "aliases": ["license", "licence class"],
                    "description": "Driving licence class.",
                },
                "years_experience": {
                    "type": "integer",
                    "min": 0,
                    "description": "Years of driving experience.",
                },
                "hired_on": {"type": "date", "description": "Date the driver was hired."},
            },
        },
    },
    "relations": {
        "based_at": {
            "from": "Vehicle",
            "to": "Depot",
            "inverse": "vehicles",
            "cardinality": "many_to_one",
            "description": "The depot the truck is based at.",
        },
        "drives": {
            "from": "Driver",
            "to": "Vehicle",
            "inverse": "driven_by",
            "cardinality": "many_to_many",
            "description": "The driver is assigned to the truck.",
            "attributes": {"since": {"type": "date", "description": "Date of the assignment."}},
        },
    },
}

FIRST = [
    "Anna",
    "Jan",
    "Marta",
    "Pieter",
    "Lotte",
    "Tomasz",
    "Sven",
    "Ewa",
    "Hendrik",
    "Greta",
    "Lukas",
    "Sofie",
]
LAST = ["Kowalski", "de Vries", "Jansen", "Nowak", "Bakker", "Muller", "Peeters", "Visser", "Schmidt", "Maes"]
DEPOTS = [
    ("Rotterdam", "NL", "Depot Rotterdam Waalhaven"),
    ("Venlo", "NL", "Depot Venlo Trade Port"),
    ("Duisburg", "DE", "Depot Duisburg Logport"),
    ("Hamburg", "DE", "Depot Hamburg Altenwerder"),
    ("Antwerp", "BE", "Depot Antwerp Kiel"),
    ("Poznan", "PL", "Depot Poznan Komorniki"),
]
MODELS = {
    "volvo": "FH16",
    "scania": "R500",
    "man": "TGX",
    "daf": "XF",
    "iveco": "S-Way",
    "mercedes": "Actros",
}


def data(seed: int = SEED) -> dict[str, list[dict[str, Any]]]:
    rng = random.Random(seed)
    records: list[dict[str, Any]] = []
    links: list[dict[str, Any]] = []
    for i, (city, country, name) in enumerate(DEPOTS, 1):
        values = {
            "code": f"D-{i:02d}",
            "name": name,
            "city": city,
            "country": country,
            "bays": str(rng.randint(8, 60)),
        }
        records.append({"kind": "Depot", "values": values})
    for i in range(1, 61):
        make = rng.choice(list(MODELS))
        plate = f"V-{i:04d}"
        day = date(2016, 1, 1) + timedelta(days=rng.randint(0, 9 * 365))
        values = {
            "plate": plate,
            "label": f"{make.upper() if make in ('man', 'daf') else make.title()} {MODELS[make]} {plate}",
            "make": make,
            "fuel": rng.choices(["diesel", "electric", "hybrid", "lng"], [6, 2, 1, 1])[0],
            "status": rng.choices(["in_service", "maintenance", "retired"], [7, 2, 1])[0],
            "mileage_km": str(rng.randint(5, 900) * 1000 + i),
            "capacity_t": f"{rng.randint(120, 280) / 10:.1f}",
            "registered_on": day.isoformat(),
        }
        records.append({"kind": "Vehicle", "values": values})
        links.append(
            {
                "relation": "based_at",
                "from": plate,
                "to": f"D-{rng.randint(1, len(DEPOTS)):02d}",
                "values": {},
            }
        )
    names: set[str] = set()
    for i in range(1, 41):
        while True:
            name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
            if name not in names:
                names.add(name)
                break
        values = {
            "driver_id": f"DR-{i:03d}",
            "full_name": name,
            "licence": rng.choices(["B", "C", "CE"], [1, 3, 4])[0],
            "years_experience": str(i % 7 + rng.randint(0, 25) if i != 17 else 38),
            "hired_on": (date(2010, 1, 1) + timedelta(days=rng.randint(0, 15 * 365))).isoformat(),
        }
        records.append({"kind": "Driver", "values": values})
        for number in sorted(rng.sample(range(1, 61), rng.randint(1, 3))):
            since = (date(2024, 1, 1) + timedelta(days=rng.randint(0, 700))).isoformat()
            links.append(
                {
                    "relation": "drives",
                    "from": f"DR-{i:03d}",
                    "to": f"V-{number:04d}",
                    "values": {"since": since},
                }
            )
    return {"records": records, "links": links}


if __name__ == "__main__":
    json.dump({"schema": SCHEMA, **data()}, sys.stdout, indent=1)
