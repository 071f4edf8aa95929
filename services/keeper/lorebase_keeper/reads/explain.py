"""Explain a Record (seed section 3): why it exists and why its values are what they are.

The Revision that created it with its origin, per Attribute the provenance and Revision of its last
change, its Links with the Revision that made each, the number of changes on the branch, and the
merged Proposals that changed it; as JSON, or as the seed's Markdown.
"""

from __future__ import annotations

from typing import Any

from lorebase.contract.reads import RecordAt
from lorebase.ids import iso_seconds
from lorebase_keeper.access import Access, readable
from lorebase_keeper.domains import Domain
from lorebase_keeper.reads.lineage import lineage_of
from lorebase_keeper.reads.records import links_along, read_record, record_kind, title_of
from lorebase_keeper.reads.snapshots import ReadPoint
from lorebase_keeper.runtime import Runtime
from lorebase_store import Txn


async def explain(rt: Runtime, access: Access, domain: Domain, request: RecordAt) -> dict[str, Any]:
    cap = domain.settings.model.read.history.lineage_count_max
    max_links = domain.settings.model.agents.explain.max_links
    key = request.key
    kind = record_kind(access, domain, request)

    async def read(txn: Txn) -> dict[str, Any]:
        found = await read_record(txn, access, domain, request, kind)
        point, shown, redacted = found.point, found.shown, found.redacted
        lineage = await lineage_of(txn, domain, found.provenance, shown, branch=point.branch.name)
        created_row = await txn.entity_created(domain.id, point.chain, point.at, "record", kind.name, key)
        created = None
        if created_row is not None:
            revision = (await txn.get_revisions(domain.id, [created_row.revision]))[created_row.revision]
            created = {
                "revision": revision.id,
                "at": iso_seconds(revision.created_at),
                "author": revision.author,
                "origin": revision.origin,
                "message": revision.message,
            }
        count = await txn.count_entity_history(
            domain.id, point.chain, point.at, "record", kind.name, key, cap=cap
        )
        links, truncated = await _record_links(txn, access, domain, point, kind.name, key, max_links)
        doc: dict[str, Any] = {
            "domain": domain.name,
            "branch": point.branch.name,
            "revision": point.revision,
            "ref": f"{kind.name}/{key}",
            "title": title_of(kind, shown),
            "changes": min(count, cap),
            "changes_truncated": count > cap,
            "created": created,
            "attributes": [
                {"name": name, "value": shown[name], **lineage[name]} for name in shown if name in lineage
            ],
            "links": links,
            "links_truncated": truncated,
            "proposals": sorted(
                {
                    entry["proposal"]["id"]: entry["proposal"]
                    for entry in lineage.values()
                    if entry.get("proposal")
                }.values(),
                key=lambda p: p["id"],
            ),
        }
        if redacted:
            doc["redacted"] = redacted
        return doc

    return await rt.db.read("explain", read)


async def _record_links(
    txn: Txn, access: Access, domain: Domain, point: ReadPoint, kind: str, key: str, cap: int
) -> tuple[list[dict[str, Any]], bool]:
    relations = readable(access, domain, point.branch.name).relations
    found: list[dict[str, Any]] = []
    for name in relations:
        relation = domain.schema.relations[name]
        for direction, end in (("forward", relation.from_kind), ("inverse", relation.to_kind)):
            if end != kind:
                continue
            for row in await links_along(
                txn, domain, point, relation.name, direction, key, limit=cap + 1 - len(found)
            ):
                found.append(
                    {
                        "relation": relation.name,
                        "from": f"{relation.from_kind}/{row.from_key}",
                        "to": f"{relation.to_kind}/{row.to_key}",
                        "revision": row.revision,
                    }
                )
            if len(found) > cap:
                return found[:cap], True
    return found, False


def _cell(value: Any) -> str:
    text = "true" if value is True else "false" if value is False else str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def _origin(origin: dict[str, Any], entry: dict[str, Any] | None = None) -> str:
    if origin.get("type") == "operation" and entry is not None and entry.get("operation"):
        return f"operation {entry['operation']['name']}"
    return f"{origin.get('type')} {origin.get('ref')}".strip()


def extraction_line(evidence: dict[str, Any]) -> str:
    """One line of extraction evidence: the document, the span, and what read it."""
    span = evidence["span"]
    where = []
    if span.get("start") is not None:
        where.append(f"characters {span['start']}-{span['end']}")
    if span.get("quote"):
        where.append(f'"{_cell(span["quote"])}"')
    confidence = evidence.get("confidence")
    return (
        f"{_cell(evidence['document'])} ({evidence['document_digest'][:19]}), {', '.join(where)}; "
        f"model {_cell(evidence['model'])}, prompt {_cell(evidence['prompt_version'])}, "
        f"extractor {_cell(evidence['extractor'])}"
        + ("" if confidence is None else f", confidence {confidence}")
    )


def explain_markdown(doc: dict[str, Any]) -> str:
    """The seed's Markdown layout; Revisions inside sections are shortened to 12 hex digits."""
    title = f"{doc['ref']}: {doc['title']}" if doc.get("title") else doc["ref"]
    changes = f"{doc['changes']}{'+' if doc['changes_truncated'] else ''}"
    lines = [
        f"# Explain: {title}",
        f"{doc['domain']}/{doc['branch']} at revision {doc['revision']}; {changes} changes on this branch",
        "",
    ]
    created = doc.get("created")
    if created:
        lines += [
            "## Created",
            f"In {created['revision'][:12]} at {created['at']} by {created['author']} "
            f"({_origin(created['origin'])}): {created['message']}",
            "",
        ]
    lines += [
        "## Attributes",
        "| attribute | value | last change | at | by | origin | message |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for attr in doc["attributes"]:
        lines.append(
            f"| {attr['name']} | {_cell(attr['value'])} | {attr['revision'][:12]} | {attr['at'][:19]}Z | "
            f"{attr['actor']} | {attr['origin'].get('type')} | {_cell(attr['message'])} |"
        )
    extracted = [attr for attr in doc["attributes"] if attr.get("extraction")]
    if extracted:
        lines += ["", "## Extraction evidence"]
        lines += [f"- {attr['name']}: {extraction_line(attr['extraction'])}" for attr in extracted]
    if doc["links"]:
        lines += ["", "## Links", "| relation | from | to | since |", "| --- | --- | --- | --- |"]
        for link in doc["links"]:
            lines.append(f"| {link['relation']} | {link['from']} | {link['to']} | {link['revision'][:12]} |")
        if doc["links_truncated"]:
            lines.append("- (more Links: agents.explain.max_links)")
    if doc["proposals"]:
        lines += ["", "## Proposals"] + [f"- {p['id']}: {p['title']}" for p in doc["proposals"]]
    return "\n".join(lines) + "\n"


__all__ = ["explain", "explain_markdown", "extraction_line"]
