"""`lorebase schema infer --dsn URL --table T`: a change set proposed from PostgreSQL tables, their
declared types, primary keys and foreign keys (a real PostgreSQL; docs/schema.md, "Onboarding")."""

from __future__ import annotations

import asyncio
import json

import asyncpg
import pytest

from lorebase.cli import main
from lorebase.schema.changes import apply_changes

TABLES = """
CREATE SCHEMA shop;
CREATE TABLE shop.carriers (carrier_code varchar(8) PRIMARY KEY, name text NOT NULL, rating numeric(4,1));
CREATE TABLE shop.shipments (
  id bigint PRIMARY KEY, carrier varchar(8) NOT NULL REFERENCES shop.carriers, sent_on date NOT NULL,
  status varchar(10) NOT NULL, weight_kg numeric(8,3), fragile boolean
);
INSERT INTO shop.carriers VALUES ('CR-01', 'Nordlys Freight', 4.5), ('CR-02', 'Vistula Cargo', NULL);
INSERT INTO shop.shipments
SELECT i, CASE WHEN i % 2 = 0 THEN 'CR-01' ELSE 'CR-02' END, DATE '2024-01-01' + i,
       CASE WHEN i % 3 = 0 THEN 'lost' ELSE 'delivered' END, i * 1.25, i % 2 = 0
  FROM generate_series(1, 12) AS i;
"""


async def _create(url: str) -> None:
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(TABLES)
    finally:
        await conn.close()


async def test_tables_give_kinds_keys_types_and_relations(
    database_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    url = database_url.replace("postgresql+asyncpg://", "postgresql://")
    await _create(url)
    argv = [
        "schema",
        "infer",
        "--dsn",
        url,
        "--table",
        "shop.carriers",
        "--table",
        "shop.shipments",
        "--json",
    ]
    code = await asyncio.to_thread(main, argv)
    out = capsys.readouterr().out
    assert code == 0, out
    changes = json.loads(out)["changes"]
    schema = apply_changes({}, changes).schema
    carrier, shipment = schema.kinds["Carrier"], schema.kinds["Shipment"]
    assert list(carrier.key) == ["carrier_code"] and list(shipment.key) == ["id"]
    rating = schema.document["kinds"]["Carrier"]["attributes"]["rating"]
    assert rating["type"] == "decimal(4,1)" and not rating["required"]
    assert shipment.attributes["sent_on"].type == "date" and shipment.attributes["sent_on"].required
    assert list(shipment.attributes["status"].values or ()) == ["delivered", "lost"]
    assert shipment.attributes["fragile"].type == "boolean"
    relation = schema.relations["carrier_of"]
    assert (relation.from_kind, relation.to_kind, relation.cardinality) == (
        "Shipment",
        "Carrier",
        "many_to_one",
    )
    again = await asyncio.to_thread(main, argv)
    assert again == 0 and capsys.readouterr().out == out  # the same tables, the same bytes

    code = await asyncio.to_thread(main, ["schema", "infer", "--dsn", url, "--table", "shop.nope"])
    assert code == 1 and "no table 'shop.nope'" in capsys.readouterr().err
