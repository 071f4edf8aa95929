"""COPY for the rows of a large commit (an import): new Records, new Links and history rows.

The commit statement (commits.py) sends its rows as JSON arrays that PostgreSQL unpacks with
jsonb_to_recordset: fine for an Operation's few rows, but for 100,000 Records the server would parse
every document twice and the client build one huge string first. COPY streams the rows instead
(asyncpg's binary COPY).

The rows are made from a generator while asyncpg sends them: PostgreSQL parses the rows sent
before while the next ones are made, so the two processes work at once. A Record's values and
provenance are the same objects as its history row's `after` and provenance (plan_commit), so each
document is encoded once. Rows go in the stored form (stored_form.py): provenance naming its main
Revision once, and no `after` in the created history rows of Records the commit leaves unchanged. (Measured against COPY's text format built as bytes in Python: the binary
rows cost the client a fifth of the CPU, for the same work in the server.)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import orjson

from lorebase_store.stored_form import StoredRows

# From this many rows on, new Records, new Links and history rows go in by COPY (imports).
COPY_THRESHOLD = 2000

# From this many new Records on, a load's commit (`CommitRows.defer_index`) leaves the entries of
# `records_values` (GIN) pending (`gin_pending_list_limit`, for its transaction only): merging them
# as the rows come, 4 MB at a time (PostgreSQL's default), was half of PostgreSQL's CPU for COPYing
# 100,000 Records (1.7-2.0 s against 0.9 s). The merge then runs after the commit has answered
# (`Database.merge_pending`, with the ANALYZE that follows a large load:
# lorebase_keeper/writes/planner_statistics.py); meanwhile a search of `values` reads the pending
# entries too, as it always does, and a write that finds more than 4 MB of them merges them itself.
# A staged commit of as many rows (a change set's migration, staged_rows.py) does the same: merging
# them 4 MB at a time was about 40 % of its `UPDATE records ... FROM staged_rows`, under the lock.
DEFER_INDEX_ROWS = 10_000
PENDING_LIMIT = "SET LOCAL gin_pending_list_limit = '64MB'"
PENDING_INDEXES = ("records_values",)

RECORD_COLUMNS = (
    "domain_id",
    "branch",
    "kind",
    "key",
    "values",
    "provenance",
    "created_revision",
    "updated_revision",
)
LINK_COLUMNS = ("domain_id", "branch", "relation", "from_key", "to_key", "values", "provenance", "revision")
HISTORY_COLUMNS = (
    "domain_id",
    "branch",
    "generation",
    "revision",
    "entity",
    "name",
    "key",
    "change",
    "attributes",
    "before",
    "after",
    "provenance",
)

Row = tuple[Any, ...]


class Documents:
    """The JSON text of jsonb columns, each distinct object encoded once (by identity: the rows
    hold every object while a COPY runs, so no id is reused)."""

    def __init__(self) -> None:
        self._texts: dict[int, str] = {}
        self._names: dict[tuple[str, ...], str] = {}

    def names(self, value: list[str]) -> str:
        """A list of names (a history row's `attributes`), encoded once per distinct list: the
        created rows of one import mostly list the same Attributes."""
        key = tuple(value)
        text = self._names.get(key)
        if text is None:
            text = self._names[key] = orjson.dumps(value).decode()
        return text

    def __call__(self, value: Any) -> str | None:
        if value is None:
            return None
        key = id(value)
        text = self._texts.get(key)
        if text is None:
            text = self._texts[key] = orjson.dumps(value).decode()
        return text


def record_rows(
    domain_id: int, branch: str, rows: Iterable[dict[str, Any]], json: Documents, form: StoredRows
) -> Iterator[Row]:
    for r in rows:
        yield (
            domain_id,
            branch,
            r["kind"],
            r["key"],
            json(r["values"]),
            json(form.provenance(r["values"], r["provenance"])),
            r["created_revision"],
            r["updated_revision"],
        )


def staged_record_rows(
    staging: str, rows: Iterable[dict[str, Any]], json: Documents, form: StoredRows
) -> Iterator[Row]:
    """Changed Records of a commit as rows of staged_rows (staged_rows.py), upserted from there."""
    for r in rows:
        yield (
            staging,
            0,
            r["kind"],
            r["key"],
            "record",
            "modified",
            "[]",
            None,
            json(r["values"]),
            json(form.provenance(r["values"], r["provenance"])),
            r["created_revision"],
            r["updated_revision"],
            True,
            None,
            None,
        )


def link_rows(
    domain_id: int, branch: str, rows: Iterable[dict[str, Any]], json: Documents, form: StoredRows
) -> Iterator[Row]:
    for r in rows:
        yield (
            domain_id,
            branch,
            r["relation"],
            r["from_key"],
            r["to_key"],
            json(r["values"]),
            json(form.provenance(r["values"], r["provenance"])),
            r["revision"],
        )


def history_rows(
    domain_id: int, branch: str, rows: Iterable[dict[str, Any]], json: Documents, form: StoredRows
) -> Iterator[Row]:
    """History rows in the order given (their sequence numbers follow it), in the stored form."""
    unchanged = form.unchanged
    for h in rows:
        after = h["after"]
        created = h["change"] == "created" and h["entity"] == "record"
        yield (
            domain_id,
            branch,
            h["generation"],
            h["revision"],
            h["entity"],
            h["name"],
            h["key"],
            h["change"],
            json.names(h["attributes"]),
            json(h["before"]),
            None if created and (h["name"], h["key"], h["revision"]) in unchanged else json(after),
            json(form.provenance(after, h["provenance"])),
        )


async def copy_rows(driver: Any, table: str, columns: tuple[str, ...], rows: Iterator[Row]) -> None:
    """COPY `rows` into `table` on the asyncpg connection `driver` (inside its transaction)."""
    await driver.copy_records_to_table(table, columns=columns, records=rows)


__all__ = [
    "COPY_THRESHOLD",
    "DEFER_INDEX_ROWS",
    "PENDING_INDEXES",
    "PENDING_LIMIT",
    "HISTORY_COLUMNS",
    "LINK_COLUMNS",
    "RECORD_COLUMNS",
    "Documents",
    "copy_rows",
    "history_rows",
    "link_rows",
    "record_rows",
    "staged_record_rows",
]
