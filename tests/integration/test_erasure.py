"""The vault and erasure (issue 15 §2), tested as a regulator would: write a distinctive vault value,
spread it over branches, merges, history and every read surface; erase; then look for its bytes on
every surface and in every table of the database."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio
from sqlalchemy import text

from tests.integration.conftest import Stack, open_stack

SECRET = "Zq7-erase-me-4411"
OTHER = "Wk2-keep-me-9083"
D = "/api/v1/domains/crm"
C1 = D + "/kinds/Customer/records/C-1"
KEY_ENV = {"LOREBASE_WEBHOOKS__ENCRYPTION_KEY": "secret://env/LOREBASE_TEST_WEBHOOK_KEY"}

SCHEMA: dict[str, Any] = {
    "description": "Customers with personal data in the vault.",
    "kinds": {
        "Customer": {
            "key": ["id"],
            "title": "name",
            "attributes": {
                "id": {"type": "string", "required": True},
                "name": {"type": "string", "required": True},
                "email": {"type": "string", "vault": True, "sensitivity": ["pii"]},
                "phone": {"type": "string", "vault": True},
                "segment": {"type": "string"},
            },
        }
    },
    "operations": {
        "set_contact": {
            "parameters": {
                "key": {"type": "string", "required": True},
                "email": {"type": "string"},
                "segment": {"type": "string"},
            },
            "edits": [
                {
                    "op": "update_record",
                    "kind": "Customer",
                    "key": "$key",
                    "values": {"email": "$email", "segment": "$segment"},
                }
            ],
            "side_effects": ["contact_changed"],
        }
    },
}


@pytest_asyncio.fixture
async def crm(database_url: str) -> AsyncIterator[Stack]:
    os.environ.setdefault("LOREBASE_TEST_WEBHOOK_KEY", "k" * 40)
    async with open_stack(database_url, **KEY_ENV) as stack:
        response = await stack.http.post(
            "/api/v1/domains", json={"name": "crm", "schema": SCHEMA}, headers=stack.admin
        )
        assert response.status_code == 201, response.text
        response = await stack.http.post(
            D + "/imports",
            json={
                "source": "signup",
                "records": [
                    {"kind": "Customer", "values": {"id": "C-1", "name": "Ada", "email": SECRET, "phone": "+48 1"}},
                    {"kind": "Customer", "values": {"id": "C-2", "name": "Bob", "email": OTHER}},
                ],
            },
            headers=stack.admin,
        )
        assert response.status_code == 200, response.text
        yield stack


async def dump_database(stack: Stack) -> str:
    """Every row of every table of the schema, as text."""
    async with stack.rt.db.engine.connect() as conn:
        tables = (
            await conn.execute(text("select tablename from pg_tables where schemaname = current_schema()"))
        ).scalars()
        out = []
        for table in list(tables):
            rows = (await conn.execute(text(f'select t::text from "{table}" t'))).scalars()
            out.extend(rows)
    return "\n".join(out)


async def test_a_vault_value_is_stored_as_a_ref_and_shown_to_cleared_callers(crm: Stack) -> None:
    record = (await crm.http.get(C1, headers=crm.admin)).json()
    assert record["values"]["email"] == SECRET, record
    dumped = await dump_database(crm)
    assert SECRET not in dumped and "$vault" in dumped
    async with crm.rt.db.engine.connect() as conn:
        stored = (await conn.execute(text("select values from records where key = 'C-1'"))).scalar_one()
    assert set(stored["email"]) == {"$vault"} and stored["email"]["$vault"].startswith("vlt_")
