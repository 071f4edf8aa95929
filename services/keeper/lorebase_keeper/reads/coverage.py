"""The coverage block of POST /query (seed section 2, "Read coverage before concluding none").

Per Kind read, its Records and the Revision its statistics were counted at (`as_of`;
`approximate` when that is older than the head); per Attribute used in where, select or group_by,
how many Records lack a value; per Kind read and Source declaring it, when it last synchronized,
whether that is older than its stale_after, and how many of its Records its last full sync left out
(`unseen_records`); and human notes. Statistics and Sources describe the default branch head only:
other branches and `at` get `omitted` with the reason. Scribe recounts the statistics
(scribe.statistics.interval_s); a Kind it has not counted yet is counted here on demand, and that
count serves the later heads of its branch as Scribe's would (`approximate`, `as_of` the head it was
counted at) for `RECOUNT_S`, then is counted again: a new Kind or a freshly loaded one costs one scan
a minute per process, not one per commit, until Scribe's statistics take over.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from datetime import UTC, datetime
from typing import Any

from lorebase.ids import iso, utc_now
from lorebase_keeper.access import Access
from lorebase_keeper.access import readable as readable_view
from lorebase_keeper.domains import Domain
from lorebase_keeper.reads.snapshots import ReadPoint
from lorebase_store import KindStatistics, Txn

USES = ("where", "select", "group_by")
OMITTED = "statistics describe the default branch head only, not other branches or at"


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
        block["omitted"] = OMITTED
        return block
    stats = await txn.get_statistics(domain.id, point.branch.name, kinds)
    view = readable_view(access, domain, point.branch.name)
    for kind in kinds:
        readable = view.cleared(kind)
        counted = stats.get(kind)
        if counted is None:
            attributes = [a for a in domain.schema.kinds[kind].attributes if a in readable]
            counted = await _count(txn, domain, point, kind, attributes)
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
    block["sources"], notes = await source_coverage(txn, domain, point, kinds)
    block["notes"] += notes
    return block


RECOUNT_S = 60.0
_COUNTED: OrderedDict[tuple[Any, ...], tuple[KindStatistics, float]] = OrderedDict()
_KEPT = 256


async def _count(
    txn: Txn, domain: Domain, point: ReadPoint, kind: str, attributes: list[str]
) -> KindStatistics:
    """A Kind Scribe has not counted yet: the count this process made at this head, or at an earlier
    head of the branch less than RECOUNT_S ago (a large Kind takes a scan; under a steady flow of
    commits, counting at each head would scan it for every question), else counted now."""
    # The Domain's creation time tells Domains of one id in two databases apart (tests run many).
    key = (domain.id, domain.row.created_at, point.branch.name, kind, tuple(attributes))
    known = _COUNTED.get(key)
    now = time.monotonic()
    if known is not None and (known[0].revision == point.revision or now - known[1] < RECOUNT_S):
        _COUNTED.move_to_end(key)
        return known[0]
    records, missing = await txn.count_kind(domain.id, point.branch.name, kind, attributes)
    counted = KindStatistics(kind, point.revision, records, missing)
    if point.revision is not None:
        _COUNTED[key] = (counted, now)
        _COUNTED.move_to_end(key)
        while len(_COUNTED) > _KEPT:
            _COUNTED.popitem(last=False)
    return counted


async def source_coverage(
    txn: Txn, domain: Domain, point: ReadPoint, kinds: list[str], now: datetime | None = None
) -> tuple[list[dict[str, Any]], list[str]]:
    """The `sources` entries of these (readable) Kinds at the default branch head, and their notes."""
    branch = point.branch.name
    declaring = {
        source.name: [k for k in kinds if k in source.kinds]
        for source in domain.schema.sources.values()
        if any(k in source.kinds for k in kinds)
    }
    states = await txn.source_states(domain.id, branch, list(declaring))
    unseen: dict[str, dict[str, int]] = {}
    for name, state in states.items():
        if state.last_full is not None:
            unseen[name] = await txn.unseen_records(domain.id, branch, name, declaring[name], state.last_full)
    now = now or utc_now()
    entries: list[dict[str, Any]] = []
    notes: list[str] = []
    for kind in kinds:
        for source in domain.schema.sources_of(kind):
            known = states.get(source.name)
            synced = None if known is None else known.last.synced_at
            stale = synced is None or (now - synced).total_seconds() > source.stale_after_s
            count = unseen.get(source.name, {}).get(kind, 0)
            entries.append(
                {
                    "kind": kind,
                    "source": source.name,
                    "last_synced_at": None if synced is None else iso(synced),
                    "stale_after": source.stale_after,
                    "stale": stale,
                    "unseen_records": count,
                }
            )
            prefix = f"{kind} from Source {source.name}"
            if synced is None:
                notes.append(f"{prefix}: never synchronized; its Records may be missing")
            elif stale:
                shown = synced.astimezone(UTC).replace(microsecond=0).isoformat()
                notes.append(
                    f"{prefix}: last synchronized {shown}, older than stale_after {source.stale_after}"
                )
            if count:
                notes.append(
                    f"{prefix}: {count} Record{'s' if count != 1 else ''} delivered before "
                    f"{'are' if count != 1 else 'is'} not in its last full sync (unseen_records); "
                    "they may be gone at the Source"
                )
    return entries, notes


__all__ = ["OMITTED", "attributes_in", "coverage", "source_coverage"]
