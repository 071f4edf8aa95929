"""The smaller stored form of provenance and of the history of created Records (migration 0017).

Provenance maps each Attribute holding a value to the Revision that set it (docs/storage.md). An
import sets every value of 100,000 Records in one Revision, and storing its 64-character id once per
value made the Records' rows twice the size of their values. So the stored map names the Revision
behind most of its values once, as `$all`, and lists only the Attributes that differ:

    {"$all": "d76b…", "risk_score": "ae3c…"}      (read as: every value from d76b…, risk_score from ae3c…)

`$link`, `$via` and `$evidence` are kept as they are. A map is stored so only when every Attribute
holding a value has an entry and no entry names an Attribute without one; otherwise it is stored
whole. The rows read back (`RecordRow`, `LinkRow`, `HistoryRow`) always hold the whole map, with
its keys in the order PostgreSQL's jsonb keeps them (shorter first, then bytewise), so nothing above
the store sees the difference and every answer keeps its bytes.

The history row of a created Record repeated the Record's values in `after`. When the commit that
creates a Record writes its materialised row unchanged since (created and last changed by the same
Revision), the history row stores `after` NULL and is read through that row (`history_after`: on
the branch that committed it, created and updated by that Revision). The modified rows a schema
change set's migration writes (staged_rows.py, migration 0024) are stored so too: `after` NULL,
read through the Record's row on that branch last updated by that Revision. Such a row (at most one
per Record: its latest) stays so until the Record changes, is deleted, or its branch is archived:
then the statement doing so fills `after` first, from the row as it was (the commit statement's
`fil`, staged_rows.py's fills, `FILL` in `archive_branch`). A deleted Record's row keeps `after`
NULL as before (change 'deleted').
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import and_, case, or_, select, type_coerce
from sqlalchemy.dialects.postgresql import JSONB

from lorebase_store.tables import history, records

ALL = "$all"


def _jsonb_order(key: str) -> tuple[int, bytes]:
    raw = key.encode()
    return len(raw), raw


def compact(values: Mapping[str, Any] | None, provenance: dict[str, Any]) -> dict[str, Any]:
    """The stored form of a whole provenance map of these values (the map itself when it has no
    smaller form)."""
    if not values or not provenance or ALL in provenance:
        return provenance
    counts: dict[str, int] = {}
    for name in values:
        revision = provenance.get(name)
        if not isinstance(revision, str):
            return provenance
        counts[revision] = counts.get(revision, 0) + 1
    attributes = sum(1 for name in provenance if not name.startswith("$"))
    if attributes != len(values):
        return provenance  # an entry of an Attribute without a value: kept whole
    top = min(counts, key=lambda revision: (-counts[revision], revision))
    out: dict[str, Any] = {ALL: top}
    for name, entry in provenance.items():
        if name.startswith("$") or entry != top:
            out[name] = entry
    return out


def expand(values: Mapping[str, Any] | None, provenance: dict[str, Any]) -> dict[str, Any]:
    """The whole provenance map of a stored one (itself when stored whole)."""
    if ALL not in provenance:
        return provenance
    top = provenance[ALL]
    out = {name: entry for name, entry in provenance.items() if name != ALL}
    for name in values or ():
        out.setdefault(name, top)
    return {name: out[name] for name in sorted(out, key=_jsonb_order)}


def unchanged_since_created(records_rows: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    """The (Kind, key, Revision) of the Records a commit (or group) inserts as their creation made
    them: their created history rows store no `after`. (A Record deleted and made again within one
    group updates the row it had, whose `created_revision` stays: its history is stored whole.)"""
    return {
        (r["kind"], r["key"], r["created_revision"])
        for r in records_rows
        if r["created_revision"] == r["updated_revision"] and r.get("new")
    }


def history_after(source: Any = history) -> Any:
    """`after` as it reads, of `history` or of a subquery of its rows (with its domain_id, branch,
    entity, name, key, change, revision and after): a Record's row stored by reference (`after`
    NULL, created or modified) takes the values of the Record's materialised row that its Revision
    last updated (and, for a created row, created). A query that keeps a few of many rows (DISTINCT
    ON) selects the stored column inside and this outside, so only the rows it keeps look up their
    Record."""
    c = source.c
    current = records.alias("current_record")
    values = (
        select(current.c["values"])
        .where(
            current.c.domain_id == c.domain_id,
            current.c.branch == c.branch,
            current.c.kind == c.name,
            current.c.key == c.key,
            current.c.updated_revision == c.revision,
            or_(c.change != "created", current.c.created_revision == c.revision),
        )
        .scalar_subquery()
    )
    return type_coerce(
        case((and_(c.after.is_(None), c.change != "deleted", c.entity == "record"), values), else_=c.after),
        JSONB,
    )


def history_columns(source: Any = history) -> list[Any]:
    """The columns of `history` (or of a subquery of its rows) as a read selects them: `after`
    through `history_after`."""
    return [history_after(source).label("after") if column.name == "after" else column for column in source.c]


# The condition of the history rows `h` stored by reference through the Record rows `r` (already
# matched on domain, branch, Kind and key): what every fill keys on (the commit statement's `fil`,
# staged_rows.py, `FILL`), as `history_after` reads them.
BY_REFERENCE = (
    "h.entity = 'record' AND h.after IS NULL AND h.change <> 'deleted' AND h.revision = r.updated_revision"
)

# Before a branch's materialised rows go (archive_branch): the history rows read through them take
# their values.
FILL = f"""
UPDATE history h SET after = r."values"
  FROM records r
 WHERE r.domain_id = :domain_id AND r.branch = :branch
   AND h.domain_id = r.domain_id AND h.branch = r.branch AND h.name = r.kind AND h.key = r.key
   AND {BY_REFERENCE}
"""


class StoredRows:
    """The stored form of a commit's rows, each provenance compacted once however many rows share
    it (a Record's and its history row's are the same object: plan_commit)."""

    def __init__(self, records_rows: list[dict[str, Any]]) -> None:
        self.unchanged = unchanged_since_created(records_rows)
        self._compacted: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}

    def provenance(self, values: Mapping[str, Any] | None, provenance: dict[str, Any]) -> dict[str, Any]:
        if ALL in provenance or not provenance:
            return provenance  # planned in the stored form already (a created Record), or empty
        known = self._compacted.get(id(provenance))
        if known is None or known[0] is not provenance:
            known = self._compacted[id(provenance)] = (provenance, compact(values, provenance))
        return known[1]

    def record(self, row: dict[str, Any]) -> dict[str, Any]:
        return {**row, "provenance": self.provenance(row["values"], row["provenance"])}

    def link(self, row: dict[str, Any]) -> dict[str, Any]:
        return {**row, "provenance": self.provenance(row["values"], row["provenance"])}

    def history(self, row: dict[str, Any]) -> dict[str, Any]:
        provenance = self.provenance(row["after"], row["provenance"])
        if (
            row["change"] == "created"
            and row["entity"] == "record"
            and (row["name"], row["key"], row["revision"]) in self.unchanged
        ):
            return {**row, "after": None, "provenance": provenance}
        return {**row, "provenance": provenance}


__all__ = [
    "ALL",
    "BY_REFERENCE",
    "FILL",
    "StoredRows",
    "compact",
    "expand",
    "history_after",
    "history_columns",
    "unchanged_since_created",
]
