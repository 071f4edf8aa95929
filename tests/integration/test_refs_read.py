"""RecordsTxn.refs_read: a context pack's seeds, near values and far existence in one statement answer
what records_of, values_of and existing_of answer one by one."""

from __future__ import annotations

from typing import Any

from lorebase_store import Txn
from tests.integration.conftest import Stack


async def test_one_statement_answers_the_three_reads(supply: Stack) -> None:
    async def both(txn: Txn) -> tuple[tuple[Any, Any, Any], tuple[Any, Any, Any]]:
        domain = await txn.get_domain("supply")
        assert domain is not None
        # Missing Records, and refs whose key exists under another asked Kind (the arms read the
        # cross product of their Kinds and keys), are left out as the single reads leave them out.
        rows = [("Supplier", "S-1001"), ("Supplier", "S-0000"), ("Part", "S-1002")]
        values = [("Part", "P-10028"), ("Contract", "C-3001"), ("Supplier", "P-10028")]
        existing = [("Supplier", "S-1002"), ("Part", "P-10028"), ("PurchaseOrder", "S-1001")]
        read = await txn.refs_read(domain.id, "main", rows=rows, values=values, existing=existing)
        single = (
            await txn.records_of(domain.id, "main", rows),
            await txn.values_of(domain.id, "main", values),
            await txn.existing_of(domain.id, "main", existing),
        )
        empty = await txn.refs_read(domain.id, "main", rows=[], values=[], existing=[])
        assert (empty.rows, empty.values, empty.existing) == ({}, {}, set())
        return (read.rows, read.values, read.existing), single

    read, single = await supply.rt.db.read("refs_read", both)
    assert read == single
    rows, values, existing = single
    assert set(rows) == {("Supplier", "S-1001")} and rows[("Supplier", "S-1001")].provenance
    assert set(values) == {("Part", "P-10028"), ("Contract", "C-3001")}
    assert existing == {("Supplier", "S-1002"), ("Part", "P-10028")}
