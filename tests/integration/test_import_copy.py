"""Imports through COPY (lorebase_store.bulk): the edges of the bulk path. A key given twice in one
batch, a refused import that leaves nothing behind, evidence shared by thousands of Records stored
once, text that COPY must carry exactly (tabs, newlines, backslashes, quotes, non-ASCII), and the
value index entries a large import leaves pending until after its answer."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select, text

from lorebase_store.bulk import COPY_THRESHOLD, DEFER_INDEX_ROWS, PENDING_INDEXES
from lorebase_store.stored_form import history_after
from lorebase_store.tables import history as history_table
from tests.integration.conftest import Stack
from tests.integration.test_extractions import evidence

SCHEMA = {
    "kinds": {
        "Item": {
            "key": ["sku"],
            "title": "name",
            "attributes": {
                "sku": {"type": "string", "required": True},
                "name": {"type": "string"},
                "qty": {"type": "integer", "min": 0},
                "price": {"type": "decimal(10,2)"},
                "code": {"type": "string", "unique": True},
            },
        }
    }
}
COUNT = COPY_THRESHOLD + 500  # past the threshold: records and history go in by COPY
TABLES = ("revisions", "records", "history", "outbox", "audit_log", "extractions")


async def domain(stack: Stack, name: str = "bulk") -> None:
    created = await stack.http.post(
        "/api/v1/domains", json={"name": name, "schema": SCHEMA}, headers=stack.admin
    )
    assert created.status_code == 201, created.text


def items(count: int = COUNT) -> list[dict[str, Any]]:
    return [
        {
            "kind": "Item",
            "values": {
                "sku": f"I{i:05d}",
                "name": f"Item {i}",
                "qty": i,
                "price": f"{i}.50",
                "code": f"C{i}",
            },
        }
        for i in range(count)
    ]


async def load(stack: Stack, body: dict[str, Any], status: int = 200) -> dict[str, Any]:
    response = await stack.http.post("/api/v1/domains/bulk/imports", json=body, headers=stack.admin)
    assert response.status_code == status, response.text[:500]
    return dict(response.json())


async def counts(stack: Stack) -> dict[str, int]:
    return {table: await stack.count(table) for table in TABLES}


async def test_a_key_given_twice_in_one_batch_is_one_record_with_the_later_values(stack: Stack) -> None:
    await domain(stack)
    records = items()
    records.append({"kind": "Item", "values": {"sku": "I00007", "name": "Seven again", "qty": "70"}})
    answer = await load(stack, {"source": "erp", "records": records})
    assert answer["received"] == {"records": COUNT + 1, "links": 0}
    assert answer["changed"] == {"records": COUNT, "links": 0}
    assert await stack.count("records") == COUNT and await stack.count("history") == COUNT
    seven = await stack.http.get("/api/v1/domains/bulk/kinds/Item/records/I00007", headers=stack.admin)
    # The later item wins where it gives a value; the earlier one's other values stay.
    assert seven.json()["values"] == {
        "sku": "I00007",
        "name": "Seven again",
        "qty": "70",
        "price": "7.50",
        "code": "C7",
    }
    async with stack.rt.db.engine.connect() as conn:
        # `after` as it reads (a created Record's row stores none while the Record is unchanged).
        history = (
            await conn.execute(
                select(history_table.c.change, history_after().label("after")).where(
                    history_table.c.key == "I00007"
                )
            )
        ).all()
    assert [(row.change, row.after["name"]) for row in history] == [("created", "Seven again")]


async def test_a_refused_large_import_changes_nothing(stack: Stack) -> None:
    await domain(stack)
    await load(stack, {"source": "erp", "records": items(10)})
    before = await counts(stack)
    # Valid item by item; two of them share a unique code, which only the change set sees.
    records = items()
    records[-1]["values"]["code"] = "C3"
    refused = await load(stack, {"source": "erp", "records": records}, status=422)
    assert any(issue["rule"] == "value.unique" for issue in refused["issues"])
    # The same with evidence: nothing of it is stored either.
    refused = await load(
        stack, {"source": "erp", "records": records, "extraction": evidence("item list")}, status=422
    )
    # A large batch whose code is held by a stored Record it does not name (the stored lookup).
    records = items()[10:]
    records[-1]["values"]["code"] = "C3"
    refused = await load(stack, {"source": "erp", "records": records}, status=422)
    assert [issue["message"] for issue in refused["issues"]] == [
        "code must be unique on Item; 'C3' is also held by I00003"
    ]
    assert await counts(stack) == before


async def test_evidence_shared_by_a_large_import_is_stored_once(stack: Stack) -> None:
    await domain(stack)
    shared = evidence("the price list")
    own = evidence("row 5 of the price list")
    records = items()
    records[5]["extraction"] = own
    answer = await load(stack, {"source": "prices", "records": records, "extraction": shared})
    assert answer["changed"]["records"] == COUNT
    assert await stack.count("extractions") == 2
    async with stack.rt.db.engine.connect() as conn:
        named = (
            await conn.execute(
                text(
                    "SELECT count(DISTINCT provenance->'$evidence'->>'price') AS n,"
                    " count(*) FILTER (WHERE provenance->'$evidence'->>'name' IS NULL) AS missing"
                    " FROM records"
                )
            )
        ).one()
        origin = (await conn.execute(text("SELECT origin FROM revisions"))).scalar_one()
    assert (named.n, named.missing) == (2, 0)
    assert origin == {"type": "extraction", "ref": "prices"}


async def test_copy_carries_text_exactly(stack: Stack) -> None:
    await domain(stack)
    odd = ["tab\there", "line\nbreak", "carriage\rreturn", "back\\slash", 'quote"d', "zażółć 😀", "\\N"]
    records = items()
    for index, word in enumerate(odd):
        records[index]["values"]["name"] = word
        records[index]["values"]["sku"] = f"K{index}-{word}"
    answer = await load(stack, {"source": "erp", "records": records})
    assert answer["changed"]["records"] == COUNT
    async with stack.rt.db.engine.connect() as conn:
        rows = (
            await conn.execute(
                text("SELECT key, values FROM records WHERE key LIKE 'K%' ORDER BY key"),
            )
        ).all()
        after = (
            await conn.execute(
                select(history_table.c.key, history_after().label("after"))
                .where(history_table.c.key.like("K%"))
                .order_by(history_table.c.key)
            )
        ).all()
    expected = sorted((f"K{index}-{word}", word) for index, word in enumerate(odd))
    assert [(row.key, row.values["name"]) for row in rows] == expected
    assert [(row.key, row.after["name"]) for row in after] == expected


async def test_a_schema_change_over_many_records_goes_by_copy_and_keeps_their_history(stack: Stack) -> None:
    """Past COPY_THRESHOLD changed Records, a commit writes them through a temporary table (one JSON
    array of a million would pass jsonb's limit); their created history rows keep the old values."""
    await domain(stack)
    imported = await load(stack, {"source": "test", "records": items()})
    band = {
        "op": "add_attribute",
        "kind": "Item",
        "attribute": "band",
        "definition": {"type": "enum", "values": ["small", "large"]},
        "backfill": {"expression": "'large' if qty >= 1000 else 'small'"},
    }
    response = await stack.http.post(
        "/api/v1/domains/bulk/branches/main/schema/changes", json={"changes": [band]}, headers=stack.admin
    )
    assert response.status_code == 200, response.text
    assert response.json()["migrated"]["records"] == COUNT
    record = "/api/v1/domains/bulk/kinds/Item/records/I01500"
    now = (await stack.http.get(record, headers=stack.admin)).json()
    assert now["values"]["band"] == "large" and now["values"]["name"] == "Item 1500"
    then = await stack.http.get(record, params={"at": imported["revision"]}, headers=stack.admin)
    assert then.status_code == 200, then.text
    assert then.json()["values"] == {k: v for k, v in now["values"].items() if k != "band"}
    history = (await stack.http.get(record + "/history", headers=stack.admin)).json()["changes"]
    assert [entry["change"] for entry in history] == ["modified", "created"]


async def test_a_large_import_s_pending_index_entries_answer_before_and_after_their_merge(
    stack: Stack,
) -> None:
    """An import of DEFER_INDEX_ROWS new Records leaves their `records_values` entries pending (merged
    after the answer, with the ANALYZE), and so does a change set rewriting as many Records' values:
    a search of values finds them by the index either way."""
    await domain(stack)
    count = DEFER_INDEX_ROWS
    await load(stack, {"source": "erp", "records": items(count)})
    where = {"kind": "Item", "where": {"attr": "code", "op": "eq", "value": f"C{count - 1}"}}

    async def found() -> list[str]:
        response = await stack.http.post("/api/v1/domains/bulk/query", json=where, headers=stack.admin)
        assert response.status_code == 200, response.text
        return [record["key"] for record in response.json()["records"]]

    async def by_index() -> list[str]:
        async with stack.rt.db.engine.begin() as conn:
            await conn.execute(text("SET LOCAL enable_seqscan = off"))
            rows = await conn.execute(
                text("""SELECT key FROM records WHERE "values" @> CAST(:doc AS jsonb)"""),
                {"doc": f'{{"code": "C{count - 1}"}}'},
            )
            return [row.key for row in rows]

    key = f"I{count - 1:05d}"
    assert await found() == [key] and await by_index() == [key]
    await stack.rt.db.merge_pending(PENDING_INDEXES)
    assert await found() == [key] and await by_index() == [key]

    # A change set rewriting as many Records' values leaves their entries pending the same way.
    band = {
        "op": "add_attribute",
        "kind": "Item",
        "attribute": "band",
        "definition": {"type": "enum", "values": ["small", "large"]},
        "backfill": {"expression": "'large' if qty >= 1000 else 'small'"},
    }
    changed = await stack.http.post(
        "/api/v1/domains/bulk/branches/main/schema/changes", json={"changes": [band]}, headers=stack.admin
    )
    assert changed.status_code == 200, changed.text

    async def large() -> int:
        async with stack.rt.db.engine.begin() as conn:
            await conn.execute(text("SET LOCAL enable_seqscan = off"))
            return int(
                await conn.scalar(
                    text("""SELECT count(*) FROM records WHERE "values" @> '{"band": "large"}'""")
                )
            )

    assert await large() == count - 1000
    await stack.rt.db.merge_pending(PENDING_INDEXES)
    assert await large() == count - 1000
