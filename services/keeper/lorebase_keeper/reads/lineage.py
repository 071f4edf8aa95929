"""Where values came from: provenance entries resolved to their Revisions and what those name.

A materialised Record keeps, per Attribute, the id of the Revision behind its value; the Revision
holds the origin (operation, import, extraction, source_sync, merge...), the author, the message and
the time; an Operation's invocation names the Operation, a source sync names its Source, and an
extracted value's `$evidence` names its extraction (document, span, model, prompt version,
extractor, confidence). One lookup of the Revisions (and invocations) behind a
Record's values answers its lineage, however many changes came after them.
"""

from __future__ import annotations

from typing import Any

from lorebase.ids import iso
from lorebase_keeper.domains import Domain
from lorebase_store import ExtractionRow, RevisionRow, Txn


def extraction_summary(row: ExtractionRow) -> dict[str, Any]:
    """The evidence of an extracted value, as every read shows it (docs/provenance.md)."""
    return {
        "id": row.id,
        "document": row.document,
        "document_digest": row.document_digest,
        "span": row.span,
        "model": row.model,
        "prompt_version": row.prompt_version,
        "extractor": row.extractor,
        "confidence": row.confidence,
    }


async def evidence_of(
    txn: Txn, domain_id: int, provenances: list[dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """The evidence (by extraction id) the `$evidence` of these provenance entries names."""
    ids = [
        i
        for provenance in provenances
        for i in (provenance.get("$evidence") or {}).values()
        if isinstance(i, str)
    ]
    rows = await txn.get_extractions(domain_id, ids)
    return {i: extraction_summary(row) for i, row in rows.items()}


def revision_summary(revision: RevisionRow) -> dict[str, Any]:
    return {
        "revision": revision.id,
        "at": iso(revision.created_at),
        "author": revision.author,
        "message": revision.message,
        "origin": revision.origin,
    }


async def lineage_of(
    txn: Txn, domain: Domain, provenance: dict[str, Any], shown: dict[str, Any], *, branch: str | None = None
) -> dict[str, Any]:
    """Per shown Attribute: the provenance entry, the Revision of its last change, and what it names.

    A value merged from another branch keeps its provenance; `$via` in the provenance names the merge
    Revision that brought it (with its Proposal and any Conflict resolution). After a fast-forward
    the value's own Revision, made on the source branch, is on this branch: the Proposal merged
    after it from that branch brought it.
    """
    ids = [provenance[name] for name in shown if isinstance(provenance.get(name), str)]
    revisions = await txn.get_revisions(domain.id, ids)
    invocation_ids = [
        r.origin.get("ref", "") for r in revisions.values() if r.origin.get("type") == "operation"
    ]
    invocations = await txn.invocations_by_id(invocation_ids)
    syncs = await txn.source_syncs_of(
        domain.id, [r.id for r in revisions.values() if r.origin.get("type") == "source_sync"]
    )
    via: dict[str, Any] = provenance.get("$via") or {}
    foreign = (
        [(r.id, r.branch, r.created_at) for r in revisions.values() if r.branch.split("~", 1)[0] != branch]
        if branch is not None
        else []
    )
    brought = await txn.proposals_bringing(domain.id, branch, foreign) if foreign and branch else {}
    proposal_ids = {v["proposal"] for v in via.values() if isinstance(v, dict) and v.get("proposal")}
    titles = {
        pid: p.title for pid in proposal_ids if (p := await txn.get_proposal(domain.id, pid)) is not None
    }
    evidence = await evidence_of(txn, domain.id, [provenance])
    held: dict[str, Any] = provenance.get("$evidence") or {}
    lineage: dict[str, Any] = {}
    for name in shown:
        revision = revisions.get(provenance.get(name, ""))
        if revision is None:
            continue
        entry: dict[str, Any] = {
            "revision": revision.id,
            "origin": revision.origin,
            "actor": revision.author,
            "at": iso(revision.created_at),
            "message": revision.message,
        }
        origin_type, ref = revision.origin.get("type"), revision.origin.get("ref", "")
        if origin_type == "operation" and ref in invocations:
            entry["operation"] = {"name": invocations[ref]["operation"], "invocation_id": ref}
        elif origin_type in ("import", "extraction"):
            entry["import"] = {"source": ref}
        elif origin_type == "source_sync":
            sync = syncs.get(revision.id)
            entry["source"] = {
                "name": ref,
                "sync": None if sync is None else sync.number,
                "mode": None if sync is None else sync.mode,
                "synced_at": iso(revision.created_at if sync is None else sync.synced_at),
            }
        note = via.get(name)
        if isinstance(note, dict):
            entry["brought_by"] = note.get("revision")
            pid = note.get("proposal")
            entry["proposal"] = None if pid is None else {"id": pid, "title": titles.get(pid)}
            if note.get("resolution") is not None:
                entry["merge_resolution"] = note["resolution"]
            if note.get("merged_from") is not None:  # filled by a reconciliation merge
                entry["merged_from"] = note["merged_from"]
        elif revision.id in brought:
            proposal = brought[revision.id]
            entry["brought_by"] = revision.id
            entry["proposal"] = {"id": proposal.id, "title": proposal.title}
        else:
            entry["proposal"] = None
        if held.get(name) in evidence:
            entry["extraction"] = evidence[held[name]]
        lineage[name] = entry
    return lineage


__all__ = ["evidence_of", "extraction_summary", "lineage_of", "revision_summary"]
