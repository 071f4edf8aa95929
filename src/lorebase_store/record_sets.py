"""Records of many (Kind, key) pairs, of any Kinds, in one statement: what a context pack and a
neighbourhood read of their seeds and neighbours (whole rows, values only, or whether they exist),
through the driver and prepared once per connection.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lorebase_store.record_reads import RecordRow
from lorebase_store.txn import TxnBase


@dataclass(frozen=True)
class RefsRead:
    """What `RecordsTxn.refs_read` found: whole rows, values only, and which Records exist."""

    rows: dict[tuple[str, str], RecordRow]
    values: dict[tuple[str, str], dict[str, Any]]
    existing: set[tuple[str, str]]


# Records of several Kinds in one statement (a context pack, a neighbourhood): `kind = ANY(kinds)
# AND key = ANY(keys)` is one index range whatever the table's statistics say (a join with
# unnest(kinds, keys) scanned the whole branch right after an import, before ANALYZE). The few
# rows of another requested Kind that share a key are dropped by the caller.
_OF_REFS = """
  FROM records
 WHERE domain_id = $1 AND branch = $2 AND kind = ANY(CAST($3 AS text[])) AND key = ANY(CAST($4 AS text[]))
"""
_RECORDS_OF = 'SELECT kind, key, "values", provenance, created_revision, updated_revision' + _OF_REFS
_VALUES_OF = 'SELECT kind, key, "values"' + _OF_REFS
_KEYS_OF = "SELECT kind, key" + _OF_REFS  # an index-only scan of the primary key once vacuumed
# The three reads of `refs_read` as the arms of one statement: whole rows, values, existence.
_REFS_READ_ARMS = (
    'SELECT 0, kind, key, "values", provenance, created_revision, updated_revision',
    'SELECT 1, kind, key, "values", NULL::jsonb, NULL::text, NULL::text',
    "SELECT 2, kind, key, NULL::jsonb, NULL::jsonb, NULL::text, NULL::text",
)


class RecordSetsTxn(TxnBase):
    async def records_of(
        self, domain_id: int, branch: str, refs: list[tuple[str, str]]
    ) -> dict[tuple[str, str], RecordRow]:
        """The Records of these (Kind, key) pairs, of any Kinds, in one statement."""
        wanted = set(refs)
        rows = await self._of_refs(_RECORDS_OF, domain_id, branch, wanted)
        return {
            (row["kind"], row["key"]): RecordRow(*row.values())
            for row in rows
            if (row["kind"], row["key"]) in wanted
        }

    async def values_of(
        self, domain_id: int, branch: str, refs: list[tuple[str, str]]
    ) -> dict[tuple[str, str], dict[str, Any]]:
        """Only the values of these Records (no provenance to decode), in one statement."""
        wanted = set(refs)
        rows = await self._of_refs(_VALUES_OF, domain_id, branch, wanted)
        return {(kind, key): values for kind, key, values in rows if (kind, key) in wanted}

    async def existing_of(
        self, domain_id: int, branch: str, refs: list[tuple[str, str]]
    ) -> set[tuple[str, str]]:
        """Which of these Records exist, in one statement that reads no values."""
        wanted = set(refs)
        rows = await self._of_refs(_KEYS_OF, domain_id, branch, wanted)
        return {(kind, key) for kind, key in rows if (kind, key) in wanted}

    async def refs_read(
        self,
        domain_id: int,
        branch: str,
        *,
        rows: list[tuple[str, str]],
        values: list[tuple[str, str]],
        existing: list[tuple[str, str]],
    ) -> RefsRead:
        """In one statement (one round trip, one snapshot), what `records_of`, `values_of` and
        `existing_of` answer for `rows`, `values` and `existing`: a context pack reads its seeds,
        its near neighbours' values and which far neighbours exist at once."""
        asked = (set(rows), set(values), set(existing))
        arms: list[str] = []
        params: list[Any] = [domain_id, branch]
        for select_, refs in zip(_REFS_READ_ARMS, asked, strict=True):
            if refs:
                n = len(params)
                arms.append(
                    f"{select_} FROM records WHERE domain_id = $1 AND branch = $2"
                    f" AND kind = ANY(CAST(${n + 1} AS text[])) AND key = ANY(CAST(${n + 2} AS text[]))"
                )
                params += [sorted({kind for kind, _ in refs}), sorted({key for _, key in refs})]
        read = RefsRead({}, {}, set())
        if not arms:
            return read
        driver = await self.driver()
        for arm, kind, key, values_, provenance, created, updated in await driver.fetch(
            "\nUNION ALL\n".join(arms), *params
        ):
            if (kind, key) not in asked[arm]:  # another asked Kind that shares the key
                continue
            if arm == 0:
                read.rows[(kind, key)] = RecordRow(kind, key, values_, provenance, created, updated)
            elif arm == 1:
                read.values[(kind, key)] = values_
            else:
                read.existing.add((kind, key))
        return read

    async def _of_refs(self, sql: str, domain_id: int, branch: str, refs: set[tuple[str, str]]) -> Any:
        """Rows of `sql` (_RECORDS_OF or _VALUES_OF) for these refs: through the driver, prepared
        once per connection (every neighbourhood and context pack reads its Records so)."""
        if not refs:
            return []
        kinds = sorted({kind for kind, _ in refs})
        keys = sorted({key for _, key in refs})
        driver = await self.driver()
        return await driver.fetch(sql, domain_id, branch, kinds, keys)


__all__ = ["RecordSetsTxn", "RefsRead"]
