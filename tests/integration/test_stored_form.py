"""The smaller stored form (lorebase_store/stored_form.py, migration 0017): what an import stores,
that every read answers as from the whole form, that a created history row takes its values before
the Record it reads through changes, is deleted or leaves with its branch, and that migrating a
Domain down to the whole form and up again changes no answer."""

from __future__ import annotations

import asyncio
from typing import Any

from alembic import command
from sqlalchemy import text

from lorebase_store.bulk import COPY_THRESHOLD
from lorebase_store.migrate import _config
from tests.integration.conftest import Stack
from tests.integration.test_import_copy import domain, items

API = "/api/v1/domains/bulk"


async def raw(stack: Stack, sql: str) -> list[Any]:
    async with stack.rt.db.engine.connect() as conn:
        return list((await conn.execute(text(sql))).all())


async def answers(stack: Stack, at: str) -> list[bytes]:
    """The read surfaces of a few Records: the Record (with lineage), as of the import, its
    history, its lineage, explain, a query as of the import and a context pack."""
    out = []
    for key in ("I00000", "I00007", "I01234"):
        record = f"{API}/kinds/Item/records/{key}"
        for path in (
            f"{record}?lineage=true",
            f"{record}?at={at}",
            f"{record}/history",
            f"{record}/lineage",
            f"{record}/explain",
        ):
            response = await stack.http.get(path, headers=stack.admin)
            assert response.status_code in (200, 404), (path, response.text)
            out.append(response.content)
    query = {"kind": "Item", "where": {"attr": "qty", "op": "lt", "value": 20}, "at": at, "limit": 50}
    response = await stack.http.post(f"{API}/query", json=query, headers=stack.admin)
    assert response.status_code == 200, response.text
    out.append(response.content)
    return out


async def test_imports_store_the_smaller_form_and_read_as_the_whole(stack: Stack) -> None:
    await domain(stack)
    loaded = await stack.http.post(
        f"{API}/imports", json={"source": "erp", "records": items()}, headers=stack.admin
    )
    assert loaded.status_code == 200, loaded.text
    imported = loaded.json()["revision"]
    stored = await raw(stack, "SELECT provenance FROM records LIMIT 5")
    assert all(row.provenance == {"$all": imported} for row in stored)
    created = await raw(stack, "SELECT count(*) AS n FROM history WHERE change = 'created' AND after IS NULL")
    assert created[0].n == COPY_THRESHOLD + 500
    seven = await stack.http.get(f"{API}/kinds/Item/records/I00007?lineage=true", headers=stack.admin)
    assert set(seven.json()["lineage"]) == {"sku", "name", "qty", "price", "code"}
    assert {entry["revision"] for entry in seven.json()["lineage"].values()} == {imported}
    before = await answers(stack, imported)

    # A change to I00007 (one Record: the commit statement, not COPY): its created row takes the
    # values it read through first; as of the import it still reads as imported.
    changed = await stack.http.post(
        f"{API}/imports",
        json={"source": "erp", "records": [{"kind": "Item", "values": {"sku": "I00007", "name": "Seven"}}]},
        headers=stack.admin,
    )
    assert changed.status_code == 200, changed.text
    filled = await raw(stack, "SELECT after FROM history WHERE key = 'I00007' AND change = 'created'")
    assert filled[0].after["name"] == "Item 7"
    at_import = await stack.http.get(f"{API}/kinds/Item/records/I00007?at={imported}", headers=stack.admin)
    assert at_import.json()["values"]["name"] == "Item 7"
    lineage = (
        await stack.http.get(f"{API}/kinds/Item/records/I00007?lineage=true", headers=stack.admin)
    ).json()
    assert lineage["lineage"]["name"]["revision"] == changed.json()["revision"]
    assert lineage["lineage"]["qty"]["revision"] == imported
    after_change = await answers(stack, imported)
    # As of the import, I00000 and the query answer as before the change.
    assert (after_change[1], after_change[-1]) == (before[1], before[-1])

    # A branch made from main, changed and deleted: main's created rows read on (main's Records are
    # as imported); the branch's own Records leave nothing unreadable behind.
    made = await stack.http.post(
        f"{API}/branches", json={"name": "work", "from": "main"}, headers=stack.admin
    )
    assert made.status_code == 201, made.text
    work = await stack.http.post(
        f"{API}/imports",
        json={
            "source": "erp",
            "branch": "work",
            "records": [{"kind": "Item", "values": {"sku": "I01234", "qty": 1}}],
        },
        headers=stack.admin,
    )
    assert work.status_code == 200, work.text
    deleted = await stack.http.delete(f"{API}/branches/work", headers=stack.admin)
    assert deleted.status_code in (200, 204), deleted.text
    assert await answers(stack, imported) == after_change

    # Down to the whole form (0015) and up again: the same answers, the same stored form. (This code
    # reads revisions.schema_digest, migration 0018: it answers on the database once it is back up.)
    url = stack.database_url
    await asyncio.to_thread(command.downgrade, _config(url), "0015")
    whole = await raw(stack, "SELECT count(*) AS n FROM records WHERE provenance ? '$all'")
    assert whole[0].n == 0
    await asyncio.to_thread(command.upgrade, _config(url), "head")
    assert await answers(stack, imported) == after_change
