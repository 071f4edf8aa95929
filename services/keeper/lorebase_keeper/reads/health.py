"""Data health (seed section 6): how sound the head of a branch (or an earlier Revision) is.

Per Kind: Records, the last change, violations of the current schema grouped by rule and Attribute
with example keys (an evenly spread sample past read.health.max_records_validated), duplicate
groups on unique and title Attributes (case and spacing folded; values never printed). Per
Relation: Links, orphans (an end that does not exist) and, for required_from, the Records missing
the Link. Per Kind with derived Attributes, `derived` counts the Records missing a materialised
derived value (`summary.stale_derived_kinds` the Kinds where it is not 0). `summary.ok` is false on
violations, orphans, gaps or duplicates of unique Attributes; stale derived values do not fail it.
Only what the caller may read is checked and reported (lorebase_keeper.access.readable): a derived
Attribute computed over a Kind it may not read is not validated, counted or named. Reports are
kept per Revision and readable part of the schema in keeper's read cache (lorebase_keeper.read_cache).
"""

from __future__ import annotations

from typing import Any, cast

from lorebase.canonical import canonical_json
from lorebase.contract.reads import Health, KindHealth
from lorebase.reconciliation import fold
from lorebase.schema import Attribute, DomainSchema, Kind, key_values, validate_values
from lorebase_keeper.access import Access, readable, readable_kind
from lorebase_keeper.domains import Domain
from lorebase_keeper.reads.snapshots import ReadPoint, read_point
from lorebase_keeper.runtime import Runtime
from lorebase_store import Txn


def _sample(items: list[tuple[str, dict[str, Any]]], limit: int) -> list[tuple[str, dict[str, Any]]]:
    """A fixed, evenly spread sample in key order."""
    if len(items) <= limit:
        return items
    step = len(items) / limit
    return [items[int(i * step)] for i in range(limit)]


def _violations(
    schema: DomainSchema,
    kind: Kind,
    attributes: dict[str, Attribute],
    records: list[tuple[str, dict[str, Any]]],
    examples: int,
) -> dict[str, Any]:
    """Violations of the Attributes the caller may know (`attributes`), grouped by rule and name."""
    groups: dict[tuple[str, str], list[str]] = {}
    invalid: set[str] = set()
    for key, stored in records:
        found: list[tuple[str, str]] = []
        values = {name: value for name, value in stored.items() if name in attributes}
        canonical, issues = validate_values(attributes, values, path="", partial=False, stored=True)
        found += [(issue.rule, issue.path.lstrip(".")) for issue in issues]
        for name, value in canonical.items():
            if value is not None and values.get(name) != value:
                found.append(("value.canonical", name))
        try:
            expected = key_values(kind, key)
        except ValueError:
            expected = {}
        for name in kind.key:
            if values.get(name) is None or str(values.get(name)) != str(expected.get(name, values.get(name))):
                found.append(("record.key", name))
        for trait in kind.implements:
            for name, attr in schema.traits[trait].attributes.items():
                if attr.required and values.get(name) is None:
                    found.append(("trait.required", name))
        for rule, attribute in dict.fromkeys(found):
            groups.setdefault((rule, attribute), []).append(key)
            invalid.add(key)
    return {
        "invalid": len(invalid),
        "groups": [
            {"rule": rule, "attribute": attribute, "records": len(keys), "examples": keys[:examples]}
            for (rule, attribute), keys in sorted(groups.items())
        ],
    }


def _duplicates(
    kind: Kind, attributes: dict[str, Attribute], records: list[tuple[str, dict[str, Any]]], limit: int
) -> list[dict[str, Any]]:
    checked = [(name, "unique") for name, attr in attributes.items() if attr.unique]
    if kind.title and kind.title in attributes and not attributes[kind.title].unique:
        checked.append((kind.title, "title"))
    out = []
    for name, reason in checked:
        by_value: dict[str, list[str]] = {}
        for key, values in records:
            if values.get(name) is not None:
                by_value.setdefault(fold(values[name]), []).append(key)
        for keys in sorted((sorted(k) for k in by_value.values() if len(k) > 1), key=lambda k: k[0]):
            out.append({"attribute": name, "reason": reason, "records": len(keys), "keys": keys})
    return out[:limit] if limit else out


def _missing_derived(
    attributes: dict[str, Attribute], records: list[tuple[str, dict[str, Any]]]
) -> int | None:
    """Records missing a materialised derived value (stale, or not computable); None: no Derivations.

    Only the stored values are read: a stored value that differs from what the Derivation computes
    now is not detected here.
    """
    names = [name for name, attribute in attributes.items() if attribute.derived is not None]
    if not names:
        return None
    return sum(1 for _, values in records if any(values.get(name) is None for name in names))


async def _records(txn: Txn, domain: Domain, point: ReadPoint, kind: str) -> list[tuple[str, dict[str, Any]]]:
    if point.at is None:
        return await txn.records_of_kind(domain.id, point.branch.name, kind)
    return [
        (row.key, row.after or {})
        for row in await txn.snapshot_entities(domain.id, point.chain, point.at, "record", kind)
    ]


async def _links(txn: Txn, domain: Domain, point: ReadPoint, relation: str) -> list[tuple[str, str]]:
    if point.at is None:
        return await txn.link_pairs(domain.id, point.branch.name, relation)
    pairs = []
    for row in await txn.snapshot_entities(domain.id, point.chain, point.at, "link", relation):
        from_key, _, to_key = row.key.partition("->")
        pairs.append((from_key, to_key))
    return pairs


async def data_health(rt: Runtime, access: Access, domain: Domain, request: Health) -> dict[str, Any]:
    """The health report of the Domain (Health) or of one Kind (KindHealth) on the request's branch."""
    branch, at = request.branch or None, request.at or None
    kind_name = request.kind if isinstance(request, KindHealth) else None
    limits = domain.settings.model.read.health
    max_validated = limits.max_records_validated
    examples = limits.examples
    max_groups = limits.duplicate_groups_max
    max_listed = limits.orphans_max

    async def read(txn: Txn) -> dict[str, Any]:
        point = await read_point(txn, domain, branch, at)
        name = point.branch.name
        view = readable(access, domain, name)
        kinds, relations = list(view.kinds), list(view.relations)
        if kind_name is not None:
            readable_kind(access, domain, name, kind_name)
            kinds = [kind_name]
            relations = [
                r
                for r in relations
                if kind_name in (domain.schema.relations[r].from_kind, domain.schema.relations[r].to_kind)
            ]
        known = {kind: dict(view.attributes(kind)) for kind in kinds}
        readable_part = canonical_json([relations, {kind: list(known[kind]) for kind in kinds}]).decode()
        cache_key = rt.read_cache.key(domain, name, point.revision, access, ("data_health", readable_part))
        cached = rt.read_cache.get(cache_key, domain)
        if cached is not None:
            return cast(dict[str, Any], cached)
        keys_of: dict[str, set[str]] = {}
        kind_reports = []
        for kind in sorted(kinds):
            records = await _records(txn, domain, point, kind)
            keys_of[kind] = {key for key, _ in records}
            sample = _sample(records, max_validated)
            violations = _violations(domain.schema, domain.schema.kinds[kind], known[kind], sample, examples)
            duplicates = _duplicates(domain.schema.kinds[kind], known[kind], records, 0)
            last = await txn.last_change(domain.id, point.chain, point.at, "record", kind)
            kind_reports.append(
                {
                    "kind": kind,
                    "records": len(records),
                    "last_change": last,
                    "checked": len(sample),
                    "sampled": len(sample) < len(records),
                    "invalid": violations["invalid"],
                    "violations": violations["groups"],
                    "duplicate_groups": len(duplicates),
                    "duplicates": duplicates[:max_groups],
                    "derived": _missing_derived(known[kind], records),
                }
            )
        relation_reports = []
        for relation_name in sorted(relations):
            relation = domain.schema.relations[relation_name]
            pairs = await _links(txn, domain, point, relation_name)
            for end_kind in (relation.from_kind, relation.to_kind):
                if end_kind not in keys_of:
                    keys_of[end_kind] = {key for key, _ in await _records(txn, domain, point, end_kind)}
            orphans = [
                f"{f}->{t}"
                for f, t in pairs
                if f not in keys_of[relation.from_kind] or t not in keys_of[relation.to_kind]
            ]
            report: dict[str, Any] = {
                "relation": relation_name,
                "from": relation.from_kind,
                "to": relation.to_kind,
                "links": len(pairs),
                "orphans": len(orphans),
                "orphan_examples": orphans[:max_listed],
                "required_from": relation.required_from,
            }
            if relation.required_from:
                linked = {f for f, _ in pairs}
                gaps = sorted(keys_of[relation.from_kind] - linked)
                report["gaps"] = len(gaps)
                report["gap_examples"] = gaps[:max_listed]
            relation_reports.append(report)
        unique_groups = sum(1 for k in kind_reports for d in k["duplicates"] if d["reason"] == "unique")
        totals = {
            "kinds": len(kind_reports),
            "records": sum(k["records"] for k in kind_reports),
            "links": sum(r["links"] for r in relation_reports),
            "invalid_records": sum(k["invalid"] for k in kind_reports),
            "orphan_links": sum(r["orphans"] for r in relation_reports),
            "required_gaps": sum(r.get("gaps", 0) for r in relation_reports),
            "duplicate_groups": sum(k["duplicate_groups"] for k in kind_reports),
            "stale_derived_kinds": sum(1 for k in kind_reports if k["derived"]),
        }
        ok = not (
            totals["invalid_records"] or totals["orphan_links"] or totals["required_gaps"] or unique_groups
        )
        document = {
            "domain": domain.name,
            "branch": name,
            "revision": point.revision,
            "summary": {"ok": ok, **totals},
            "kinds": kind_reports,
            "relations": relation_reports,
        }
        rt.read_cache.put(cache_key, domain, document)
        return document

    return await rt.db.read("data_health", read)


def health_markdown(doc: dict[str, Any]) -> str:
    """The seed's Markdown report; Revisions shortened to 12 hex digits."""
    s = doc["summary"]
    short = (doc["revision"] or "")[:12]
    lines = [
        f"# Health of {doc['domain']} on {doc['branch']}",
        f"revision {short}",
        "",
        f"{'ok' if s['ok'] else 'needs attention'}: {s['kinds']} kinds, {s['records']} records, {s['links']} links",
        f"- invalid records: {s['invalid_records']}; orphan links: {s['orphan_links']}; "
        f"required-relation gaps: {s['required_gaps']}; duplicate groups: {s['duplicate_groups']}; "
        f"kinds with stale derived values: {s['stale_derived_kinds']}",
        "",
        "## Kinds",
        "| kind | records | invalid | duplicate groups | derived | last change |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for k in doc["kinds"]:
        derived = "" if k["derived"] is None else str(k["derived"])
        lines.append(
            f"| {k['kind']} | {k['records']} | {k['invalid']} | {k['duplicate_groups']} | {derived} | {(k['last_change'] or '')[:12]} |"
        )
    for k in doc["kinds"]:
        if k["violations"]:
            lines.append(f"### {k['kind']}: violations ({k['checked']} of {k['records']} Records checked)")
            for v in k["violations"]:
                lines.append(
                    f"- {v['rule']} on {v['attribute']}: {v['records']} (e.g. {', '.join(v['examples'])})"
                )
        if k["duplicates"]:
            lines.append(f"### {k['kind']}: duplicates ({k['duplicate_groups']} groups)")
            for d in k["duplicates"]:
                lines.append(f"- {d['attribute']} [{d['reason']}]: {', '.join(d['keys'])} ({d['records']})")
    if doc["relations"]:
        lines += [
            "",
            "## Relations",
            "| relation | ends | links | orphans | gaps | side |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for r in doc["relations"]:
            gaps = str(r["gaps"]) if r["required_from"] else ""
            lines.append(
                f"| {r['relation']} | {r['from']} -> {r['to']} | {r['links']} | {r['orphans']} | {gaps} |  |"
            )
        for r in doc["relations"]:
            if r.get("gaps"):
                lines.append(f"- {r['relation']} required, missing for: {', '.join(r['gap_examples'])}")
            if r["orphans"]:
                lines.append(f"- {r['relation']} orphans: {', '.join(r['orphan_examples'])}")
    return "\n".join(lines) + "\n"


__all__ = ["data_health", "health_markdown"]
