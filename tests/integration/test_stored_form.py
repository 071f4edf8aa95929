"""The smaller stored form (lorebase_store/stored_form.py, migration 0017): what an import stores,
that every read answers as from the whole form, that a created history row takes its values before
the Record it reads through changes, is deleted or leaves with its branch, and that migrating a
Domain down to the whole form and up again changes no answer; the modified rows of a schema change
set's migration (migration 0024) likewise."""

from __future__ import annotations

import asyncio
from typing import Any

from alembic import command
from sqlalchemy import select, text

from lorebase_store.bulk import COPY_THRESHOLD
from lorebase_store.migrate import _config
from lorebase_store.stored_form import history_after
from lorebase_store.tables import history
from tests.integration.conftest import Stack
from tests.integration.test_erasure import OTHER, SECRET, crm  # noqa: F401 (the fixture)
from tests.integration.test_erasure import D as CRM
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


async def migrated_rows(stack: Stack, revision: str) -> dict[str, Any]:
    """The modified history rows of `revision`, by key: `after` as stored and as it reads."""
    stored = select(history.c.key, history.c.after, history_after().label("reads")).where(
        history.c.revision == revision, history.c.entity == "record", history.c.change == "modified"
    )
    async with stack.rt.db.engine.connect() as conn:
        return {row.key: (row.after, row.reads) for row in await conn.execute(stored)}


async def change_set(stack: Stack, branch: str) -> str:
    band = {
        "op": "add_attribute",
        "kind": "Customer",
        "attribute": "band",
        "definition": {"type": "enum", "values": ["new", "old"]},
        "backfill": {"expression": "'old' if segment else 'new'"},
    }
    response = await stack.http.post(
        f"{CRM}/branches/{branch}/schema/changes", json={"changes": [band]}, headers=stack.admin
    )
    assert response.status_code == 200, response.text
    assert response.json()["migrated"]["records"] == 2
    return str(response.json()["revision"])


async def at_revision(stack: Stack, first: str, revision: str) -> list[bytes]:
    out = []
    for key in ("C-1", "C-2"):
        record = f"{CRM}/kinds/Customer/records/{key}"
        for path in (
            f"{record}?at={revision}",
            f"{record}?at={revision}&lineage=true",
            f"{record}/lineage?at={revision}",
            f"{record}/explain?at={revision}",
        ):
            response = await stack.http.get(path, headers=stack.admin)
            assert response.status_code == 200, (path, response.text)
            out.append(response.content)
    for path in (f"{CRM}/diff?from={first}&to={revision}", f"{CRM}/revisions/{revision}"):
        response = await stack.http.get(path, headers=stack.admin)
        assert response.status_code == 200, (path, response.text)
        out.append(response.content)
    query = await stack.http.post(
        f"{CRM}/query", json={"kind": "Customer", "at": revision}, headers=stack.admin
    )
    assert query.status_code == 200, query.text
    out.append(query.content)
    return out


async def test_a_migrated_records_history_row_is_stored_by_reference(crm: Stack) -> None:  # noqa: F811
    """The modified history rows a change set's migration writes store no `after` on a copy branch
    (read through the Record's row), and read the same after a later write to the Record (which
    fills its row first), an erasure and an archive of their branch; an overlay branch's are whole."""
    first = (await crm.http.get(f"{CRM}/branches/main", headers=crm.admin)).json()["head"]
    for name, mode in (("work", "copy"), ("lay", "overlay")):
        made = await crm.http.post(
            f"{CRM}/branches", json={"name": name, "from": "main", "mode": mode}, headers=crm.admin
        )
        assert made.status_code == 201, made.text
    migrated = await change_set(crm, "main")
    rows = await migrated_rows(crm, migrated)
    assert {key: stored for key, (stored, _) in rows.items()} == {"C-1": None, "C-2": None}
    stored = await raw(crm, "SELECT key, \"values\" FROM records WHERE branch = 'main' ORDER BY key")
    assert {key: reads for key, (_, reads) in rows.items()} == {row.key: row.values for row in stored}
    assert rows["C-1"][1]["band"] == "new" and set(rows["C-1"][1]["email"]) == {"$vault"}
    before = await at_revision(crm, first, migrated)
    assert SECRET.encode() in before[0] and b'"band":"new"' in before[0]
    history_c1 = await crm.http.get(
        f"{CRM}/kinds/Customer/records/C-1/history?values=true", headers=crm.admin
    )
    assert [entry["change"] for entry in history_c1.json()["changes"]] == ["modified", "created"]

    # A later write to C-1: its row takes the values it read through first; C-2's stays by reference.
    later = await crm.http.post(
        f"{CRM}/imports",
        json={"records": [{"kind": "Customer", "values": {"id": "C-1", "segment": "gold"}}]},
        headers=crm.admin,
    )
    assert later.status_code == 200, later.text
    filled = await migrated_rows(crm, migrated)
    assert filled["C-1"] == (rows["C-1"][1], rows["C-1"][1]) and filled["C-2"] == rows["C-2"]
    assert await at_revision(crm, first, migrated) == before
    history_now = await crm.http.get(
        f"{CRM}/kinds/Customer/records/C-1/history?values=true", headers=crm.admin
    )
    assert history_now.json()["changes"][1:] == history_c1.json()["changes"]

    # An erasure of both: the Revision's values read erased, C-1's (filled) and C-2's (by reference) alike.
    erased = await crm.http.post(
        f"{CRM}/erasures",
        json={"records": ["Customer/C-1", "Customer/C-2"], "reason": "test"},
        headers=crm.admin,
    )
    assert erased.status_code == 201, erased.text
    assert await migrated_rows(crm, migrated) == filled
    after_erasure = await at_revision(crm, first, migrated)
    assert not any(SECRET.encode() in answer or OTHER.encode() in answer for answer in after_erasure)
    for key in ("C-1", "C-2"):
        then = await crm.http.get(f"{CRM}/kinds/Customer/records/{key}?at={migrated}", headers=crm.admin)
        assert then.json()["values"]["email"] == "[erased]" and then.json()["values"]["band"] == "new"

    # The same change set on the copy branch (by reference) and on the overlay (stored whole, it has
    # no Records' rows); the copy branch archived: its rows take their values first.
    on_work = await change_set(crm, "work")
    work_rows = await migrated_rows(crm, on_work)
    assert [stored for stored, _ in work_rows.values()] == [None, None]
    on_lay = await change_set(crm, "lay")
    lay_rows = await migrated_rows(crm, on_lay)
    assert all(stored is not None and stored == reads for stored, reads in lay_rows.values())
    assert [reads for _, reads in lay_rows.values()] == [reads for _, reads in work_rows.values()]
    deleted = await crm.http.delete(f"{CRM}/branches/work", headers=crm.admin)
    assert deleted.status_code in (200, 204), deleted.text
    archived = await migrated_rows(crm, on_work)
    assert archived == {key: (reads, reads) for key, (_, reads) in work_rows.items()}
