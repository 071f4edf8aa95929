"""The coverage block of POST /query (seed section 2, "Read coverage before concluding none").

Per Kind read, its Records and the Revision its statistics were counted at (`as_of`;
`approximate` when that is older than the head); per Attribute used in where, select or group_by,
how many Records lack a value; Sources (none until source syncs exist) and human notes. Statistics
describe the default branch head only: other branches and `at` get `omitted` with the reason.
Scribe recounts them (scribe.statistics.interval_s); a Kind never counted is counted on demand.
"""

from __future__ import annotations

from typing import Any

from lorebase_keeper.auth import Access
from lorebase_keeper.domains import Domain
from lorebase_keeper.records import cleared
from lorebase_keeper.snapshots import ReadPoint
from lorebase_store import KindStatistics, Txn

USES = ("where", "select", "group_by")


def attributes_in(where: dict[str, Any] | None) -> list[str]:
    """The Attributes a normalised filter tree names, in order of appearance."""
    found: list[str] = []
    stack = [where] if where else []
    while stack:
        node = stack.pop(0)
        for combinator in ("and", "or"):
            if combinator in node:
                stack = list(node[combinator]) + stack
        if "not" in node:
            stack.insert(0, node["not"])
        if "attr" in node:
            found.append(node["attr"])
    return list(dict.fromkeys(found))


def _percent(ratio: float) -> str:
    value = round(ratio * 100, 1)
    return f"{int(value)}" if value == int(value) else f"{value}"


async def coverage(
    txn: Txn, access: Access, domain: Domain, point: ReadPoint, kinds: list[str], used: dict[str, set[str]]
) -> dict[str, Any]:
    block: dict[str, Any] = {"kinds": [], "attributes": [], "sources": [], "notes": []}
    if point.at is not None or point.branch.name != domain.default_branch:
        block["omitted"] = "statistics describe the default branch head only, not other branches or at"
        return block
    stats = await txn.get_statistics(domain.id, point.branch.name, kinds)
    for kind in kinds:
        readable = cleared(access, point.branch.name, domain.schema.kinds[kind].attributes)
        counted = stats.get(kind)
        if counted is None:
            attributes = [a for a in domain.schema.kinds[kind].attributes if a in readable]
            records, missing = await txn.count_kind(domain.id, point.branch.name, kind, attributes)
            counted = KindStatistics(kind, point.revision, records, missing)
        block["kinds"].append(
            {
                "kind": kind,
                "records": counted.records,
                "as_of": counted.revision,
                "approximate": counted.revision != point.revision,
            }
        )
        for attribute in domain.schema.kinds[kind].attributes:
            uses = [use for use in USES if attribute in used.get(use, set())]
            if not uses or attribute not in readable or attribute not in counted.missing:
                continue
            lacking = counted.missing[attribute]
            ratio = round(lacking / counted.records, 4) if counted.records else 0.0
            block["attributes"].append(
                {
                    "kind": kind,
                    "attribute": attribute,
                    "missing": ratio,
                    "missing_records": lacking,
                    "used_in": uses,
                }
            )
            if lacking:
                note = f"{attribute} missing on {_percent(ratio)}% of {kind}"
                if "where" in uses:
                    note += f": a filter on {attribute} excludes them"
                block["notes"].append(note)
    return block


__all__ = ["attributes_in", "coverage"]
