"""Example answers for the OpenAPI document, from the seed, adapted to the supply example so they
are true: the context pack of the seed's request (`{"refs": ["Supplier/S-1001"], "depth": 1,
"budget_tokens": 1500}`), resolve's candidates for a question in the supply vocabulary, the event
document of the seed's `update_supplier` commit, and the webhook operation event of a
`flag_supplier_risk` task write after its Proposal merged.

Revision ids and times depend on when a stack loaded the example (a Revision id hashes its time), so
these use the seed's (`f4d2…` for the head; the import's `97ce9a2ce272…`). Every example converts
strictly into its endpoint's response model (tests/unit/test_answers.py).
"""

from __future__ import annotations

from typing import Any

HEAD = "f4d229169a37fa73e83df368ea2c035fead80d809b908cf236c013a0dd23066b"  # update_supplier by usr_editor
IMPORT = "97ce9a2ce2724b5cb259ad88aec71ef78ab08e3a94f9ea925fe2d347fef821bb"  # the import by usr_loader

CONTEXT_PACK: dict[str, Any] = {
    "domain": "supply",
    "branch": "main",
    "revision": HEAD,
    "etag": f'"{HEAD}.3c1f0e7a9b2d4c55"',
    "seeds": [
        {
            "ref": "Supplier/S-1001",
            "title": "Kavsen Alloys Sp. z o.o.",
            "values": {
                "supplier_code": "S-1001",
                "legal_name": "Kavsen Alloys Sp. z o.o.",
                "vat_number": "PL7792408316",
                "city": "Poznan",
                "country": "PL",
                "risk_score": "90",
                "status": "active",
                "tier": "1",
                "open_flags": "0",
            },
            "updated_revision": HEAD,
        }
    ],
    "neighbors": [
        {
            "ref": "Contract/C-3001",
            "title": "Framework supply agreement 2023 - Kavsen Alloys Sp. z o.o.",
            "depth": 1,
            "values": {
                "contract_number": "C-3001",
                "title": "Framework supply agreement 2023 - Kavsen Alloys Sp. z o.o.",
                "status": "active",
                "currency": "PLN",
                "valid_from": "2023-01-01",
                "valid_to": "2027-12-31",
            },
        },
        {
            "ref": "Part/P-10028",
            "title": "Radial shaft seal 25x42x7",
            "depth": 1,
            "values": {
                "part_number": "P-10028",
                "name": "Radial shaft seal 25x42x7",
                "category": "seal",
                "unit_cost": "24.01",
            },
        },
    ],
    "links": {
        "supplied_by": [
            {
                "from": "Part/P-10028",
                "to": "Supplier/S-1001",
                "values": {"is_primary": True, "lead_time_days": "21"},
            }
        ],
        "with_supplier": [{"from": "Contract/C-3001", "to": "Supplier/S-1001"}],
    },
    "schema": {
        "kinds": [
            {
                "name": "Supplier",
                "description": "A company that supplies parts to Corvane Industries.",
                "key": ["supplier_code"],
                "title": "legal_name",
                "attributes": [
                    {
                        "name": "supplier_code",
                        "type": "string",
                        "description": "Supplier code assigned by purchasing.",
                    },
                    {"name": "legal_name", "type": "string", "description": "Registered legal name."},
                    {
                        "name": "vat_number",
                        "type": "string",
                        "description": "VAT or tax registration number.",
                    },
                    {"name": "city", "type": "string", "description": "City of the registered office."},
                    {
                        "name": "country",
                        "type": "string",
                        "description": "ISO 3166-1 alpha-2 country code of the registered office.",
                    },
                    {
                        "name": "risk_score",
                        "type": "integer",
                        "description": "Supplier risk score from 0 (safe) to 100 "
                        "(critical), maintained by risk analysts.",
                    },
                    {
                        "name": "status",
                        "type": "enum",
                        "description": "Whether purchasing may order from the supplier.",
                    },
                    {
                        "name": "tier",
                        "type": "integer",
                        "description": "Supplier tier: 1 strategic, 2 preferred, 3 approved.",
                    },
                    {
                        "name": "open_flags",
                        "type": "integer",
                        "description": "Open risk flags about the supplier (derived).",
                    },
                ],
            },
            {
                "name": "Part",
                "description": "A purchased part used in Corvane Industries products and plants.",
                "key": ["part_number"],
                "title": "name",
                "attributes": [
                    {"name": "part_number", "type": "string", "description": "Corvane part number."},
                    {
                        "name": "name",
                        "type": "string",
                        "description": "Part description as it appears on purchase orders.",
                    },
                    {"name": "category", "type": "enum", "description": "Commodity group of the part."},
                    {
                        "name": "unit_cost",
                        "type": "decimal(10,2)",
                        "description": "Standard unit cost in EUR.",
                    },
                ],
            },
            {
                "name": "Contract",
                "description": "A purchasing agreement between Corvane Industries and a supplier.",
                "key": ["contract_number"],
                "title": "title",
                "attributes": [
                    {"name": "contract_number", "type": "string", "description": "Contract number."},
                    {"name": "title", "type": "string", "description": "Title of the agreement."},
                    {"name": "status", "type": "enum", "description": "Lifecycle state of the agreement."},
                    {
                        "name": "currency",
                        "type": "string",
                        "description": "ISO 4217 currency of the agreed prices.",
                    },
                    {"name": "valid_from", "type": "date", "description": "First day the agreement applies."},
                    {"name": "valid_to", "type": "date", "description": "Last day the agreement applies."},
                ],
            },
        ],
        "relations": [
            {
                "name": "supplied_by",
                "inverse": "supplies",
                "from": "Part",
                "to": "Supplier",
                "cardinality": "many_to_many",
                "description": "A supplier can supply the part.",
            },
            {
                "name": "with_supplier",
                "inverse": "contracts",
                "from": "Contract",
                "to": "Supplier",
                "cardinality": "many_to_one",
                "description": "The supplier the contract is signed with.",
            },
        ],
    },
    "recent_changes": [
        {
            "revision": HEAD,
            "at": "2026-10-01T08:00:04Z",
            "ref": "Supplier/S-1001",
            "change": "modified",
            "attributes": ["risk_score"],
            "actor": "usr_editor",
            "origin": "operation",
            "message": "Raise the risk of S-1001",
        },
        {
            "revision": IMPORT,
            "at": "2026-10-01T08:00:03Z",
            "ref": "Supplier/S-1001",
            "change": "created",
            "attributes": [
                "city",
                "country",
                "legal_name",
                "open_flags",
                "risk_score",
                "status",
                "supplier_code",
                "tier",
                "vat_number",
            ],
            "actor": "usr_loader",
            "origin": "import",
            "message": "Import the supply example data",
        },
        {
            "revision": IMPORT,
            "at": "2026-10-01T08:00:03Z",
            "ref": "Part/P-10028",
            "change": "created",
            "attributes": ["category", "name", "part_number", "unit_cost"],
            "actor": "usr_loader",
            "origin": "import",
            "message": "Import the supply example data",
        },
        {
            "revision": IMPORT,
            "at": "2026-10-01T08:00:03Z",
            "ref": "Contract/C-3001",
            "change": "created",
            "attributes": ["contract_number", "currency", "status", "title", "valid_from", "valid_to"],
            "actor": "usr_loader",
            "origin": "import",
            "message": "Import the supply example data",
        },
    ],
    "lineage": [
        {
            "ref": "Supplier/S-1001",
            "attributes": ["risk_score"],
            "origin": "operation",
            "actor": "usr_editor",
            "at": "2026-10-01T08:00:04Z",
            "revision": HEAD,
        },
        {
            "ref": "Supplier/S-1001",
            "attributes": [
                "supplier_code",
                "legal_name",
                "vat_number",
                "city",
                "country",
                "status",
                "tier",
                "open_flags",
            ],
            "origin": "import",
            "actor": "usr_loader",
            "at": "2026-10-01T08:00:03Z",
            "revision": IMPORT,
        },
    ],
    "budget": {
        "limit_tokens": 1500,
        "used_tokens": 1305,
        "chars_per_token": 4.0,
        "sections": {
            "seeds": 87,
            "neighbors": 119,
            "links": 46,
            "schema": 629,
            "recent_changes": 304,
            "lineage": 120,
        },
        "trimmed": [],
        "omitted": {},
        "over_budget": False,
        "capped": False,
    },
}
CHANGES: dict[str, Any] = {
    "domain": "supply",
    "branch": "main",
    "head": HEAD,
    "events": [
        {
            "sequence": 2,
            "keys": {"Supplier": ["S-1001"]},
            "type": "revision.committed",
            "kinds": {"Supplier": 1},
            "stats": {"changes": 1, "partitions_changed": 1},
            "author": "usr_editor",
            "branch": "main",
            "domain": "supply",
            "origin": {"ref": "inv_01J9X2R7K4QW3M8D5T6V0B1N2C", "type": "operation"},
            "message": "Raise the risk of S-1001",
            "parents": [IMPORT],
            "revision": HEAD,
            "relations": {},
            "created_at": "2026-10-01T08:00:04.120044Z",
            "generation": 2,
            "keys_truncated": False,
            "schema_changed": False,
        }
    ],
    "next_since": HEAD,
    "more": False,
}
RESOLVE: dict[str, Any] = {
    "domain": "supply",
    "branch": "main",
    "revision": HEAD,
    "candidates": [
        {
            "target": "attribute",
            "kind": "Supplier",
            "attribute": "risk_score",
            "type": "integer",
            "score": 1.0,
            "level": "exact",
            "matched": "risk score",
        },
        {
            "target": "value",
            "kind": "Supplier",
            "attribute": "status",
            "type": "enum",
            "values": ["inactive"],
            "predicate": {"attr": "status", "op": "eq", "value": "inactive"},
            "score": 0.95,
            "level": "synonym",
            "matched": "dormant",
            "records": 2,
        },
        {"target": "kind", "kind": "Supplier", "score": 0.95, "level": "synonym", "matched": "vendors"},
    ],
    "unmatched": ["average", "of"],
    "hints": [],
    "skipped": [{"level": "embedding", "reason": "other levels matched"}],
    "coverage": {
        "kinds": [{"kind": "Supplier", "records": 30, "as_of": HEAD, "approximate": False}],
        "attributes": [
            {
                "kind": "Supplier",
                "attribute": "risk_score",
                "missing": 0.0,
                "missing_records": 0,
                "used_in": ["select"],
            },
            {
                "kind": "Supplier",
                "attribute": "status",
                "missing": 0.0,
                "missing_records": 0,
                "used_in": ["where"],
            },
        ],
        "unknown": ["average"],
        "sources": [],
        "notes": ["average: term unknown in this Domain"],
    },
}
REVISION_EVENT: dict[str, Any] = CHANGES["events"][0]

# flag_supplier_risk by the agent agt_risk: on the protected main it ran on the task branch
# agent/agt_risk/q4-audit, and its event was written when the Proposal merged (branch is the target,
# head the merged head, revisions those of the task branch).
TASK_HEAD = "9be1c4d07f2a5e8b3c6d9f0a1b4e7c2d5f8a0b3c6e9d1f4a7b0c3e6d9f2a5b8c"
MERGED = "5b0c2e8f1a4d7b0c3f6e9a2d5b8c1e4f7a0d3b6c9e2f5a8b1d4c7e0f3a6b9d2c"
OPERATION_EVENT: dict[str, Any] = {
    "sequence": 812,
    "type": "operation.risk_flag_raised",
    "side_effect": "risk_flag_raised",
    "domain": "supply",
    "branch": "main",
    "operation": "flag_supplier_risk",
    "operation_id": "opr_flag_supplier_risk",
    "invocation_id": "inv_01J9X4M7Q2R8T5V3W6Y9Z0A1B4",
    "principal": "agt_risk",
    "revisions": [TASK_HEAD],
    "head": MERGED,
    "parameters": {"reason": "Two late deliveries", "severity": "high", "supplier": "S-1001"},
    "edit_count": 2,
    "edits": [
        {
            "op": "upsert_record",
            "kind": "RiskFlag",
            "key": "RF-S-1001-high",
            "values": {
                "flag_id": "RF-S-1001-high",
                "severity": "high",
                "status": "open",
                "reason": "Two late deliveries",
            },
        },
        {"op": "upsert_link", "relation": "flags", "from": "RF-S-1001-high", "to": "S-1001", "values": {}},
    ],
    "edits_truncated": False,
    "source_branch": "agent/agt_risk/q4-audit",
    "proposal": "prp_01J9X4M8K3N6P9R2S5T8V1W4X7",
}

__all__ = ["CHANGES", "CONTEXT_PACK", "OPERATION_EVENT", "RESOLVE", "REVISION_EVENT"]
