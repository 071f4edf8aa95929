"""The Conflicts of a Proposal: listing them and resolving one (ours, theirs, or a value).

A resolution is stored with the Conflict's fingerprint; the next merge attempt applies it when it
finds the same Conflict again (merge/merges.py, docs/branches.md).
"""

from __future__ import annotations

from typing import Any

import msgspec

from lorebase.contract.proposals import Resolution
from lorebase.ids import iso, utc_now
from lorebase.problems import Problem
from lorebase.schema import validate_values
from lorebase_keeper.access import Access, Readable, readable
from lorebase_keeper.domains import Domain
from lorebase_keeper.proposals.state import find_proposal, require_open
from lorebase_keeper.runtime import Runtime
from lorebase_store import ConflictRow, Txn


def _sides(row: ConflictRow, view: Readable) -> tuple[str | None, list[Any], bool]:
    """The Attribute and the base, ours and theirs of a Conflict as the caller may read them: values
    it may not read are null and `redacted` true (an Attribute it may not know is not named)."""
    attribute = row.attribute
    sides = [row.details.get(side) for side in ("base", "ours", "theirs")]
    if row.entity == "schema":  # an element of the schema (merge/schema_merge.py): no values in it
        return attribute, sides, False
    if row.entity == "record" and attribute is not None:
        if attribute in view.cleared(row.name):
            return attribute, sides, False
        return (attribute if attribute in view.attributes(row.name) else None), [None] * 3, True
    shown = []
    for side in sides:
        if isinstance(side, dict):
            side = (
                view.values(row.name, side)[0] if row.entity == "record" else view.link_values(row.name, side)
            )
        shown.append(side)
    redacted = any(isinstance(a, dict) and a != b for a, b in zip(sides, shown, strict=True))
    return attribute, shown, redacted


def conflict_document(row: ConflictRow, domain: str, proposal: str, view: Readable) -> dict[str, Any]:
    attribute, (base, ours, theirs), redacted = _sides(row, view)
    return {
        "id": row.id,
        "code": row.code,
        "entity": row.entity,
        "ref": f"{row.name}/{row.key}",
        {"record": "kind", "schema": "element"}.get(row.entity, "relation"): row.name,
        "key": row.key,
        "attribute": attribute,
        "base": base,
        "ours": ours,
        "theirs": theirs,
        **({"redacted": True} if redacted else {}),
        "status": row.status,
        "resolution": row.resolution,
        "resolved_by": row.resolved_by,
        "resolved_at": iso(row.resolved_at) if row.resolved_at else None,
        "href": f"/api/v1/domains/{domain}/proposals/{proposal}/conflicts/{row.id}/resolve",
    }


async def list_conflicts(rt: Runtime, access: Access, domain: Domain, proposal_id: str) -> dict[str, Any]:
    async def read(txn: Txn) -> dict[str, Any]:
        proposal = await find_proposal(txn, access, domain, proposal_id)
        rows = await txn.conflicts_of(proposal.id)
        return {
            "proposal": proposal.id,
            "status": proposal.status,
            "conflicts": [
                conflict_document(c, domain.name, proposal.id, readable(access, domain, proposal.target_ref))
                for c in rows
            ],
        }

    return await rt.db.read("list_conflicts", read)


def _resolution(domain: Domain, conflict: ConflictRow, resolution: Resolution) -> dict[str, Any]:
    """The resolution to store, checked against the Conflict and the schema: a value only with
    `value` (and valid for its Attribute), `theirs` not where it would break a unique Attribute."""
    choice = resolution.resolution
    if conflict.code == "schema_conflict" and choice != "theirs":
        raise Problem(
            422,
            "validation-failed",
            f"a schema Conflict is resolved with theirs: the merge then applies the source's change sets "
            f"to the target's version of {conflict.name} (migrating the target's data as they did); "
            "a merge cannot leave part of a change set out, so to keep the target's version change the "
            "source branch's schema to it (POST /branches/<source>/schema/changes) and the Conflict goes with "
            "the next attempt",
            issues=[{"path": "resolution", "rule": "conflict.schema", "message": "theirs"}],
        )
    if choice != "value":
        if resolution.value is not msgspec.UNSET:
            raise Problem(422, "validation-failed", "value goes with resolution value only")
        if choice == "theirs" and conflict.code == "unique_taken":
            raise Problem(
                422,
                "validation-failed",
                f"{conflict.name}.{conflict.attribute} is unique and {conflict.details.get('ours')} hold "
                f"{conflict.details.get('theirs')!r} on the target; resolve with ours or another value",
            )
        if choice == "theirs" and conflict.code == "required_missing":
            raise Problem(
                422,
                "validation-failed",
                f"{conflict.name}.{conflict.attribute} is required and the source leaves "
                f"{conflict.name}/{conflict.key} without it; resolve with ours or a value",
            )
        return {"choice": choice}
    if conflict.attribute is None:
        raise Problem(
            422,
            "validation-failed",
            f"a {conflict.code} Conflict is about a whole {conflict.entity}; resolve it with ours or theirs",
        )
    attributes = (
        domain.schema.kinds[conflict.name].attributes
        if conflict.entity == "record" and conflict.name in domain.schema.kinds
        else domain.schema.relations[conflict.name].attributes
        if conflict.name in domain.schema.relations
        else {}
    )
    held = attributes.get(conflict.attribute)
    if held is not None and held.vault:  # the resolution would keep the value outside the vault
        raise Problem(
            422,
            "validation-failed",
            f"{conflict.name}.{conflict.attribute} is a vault Attribute: resolve with ours or theirs, then "
            "write another value with an Operation",
            issues=[{"path": "resolution", "rule": "conflict.vault", "message": "ours or theirs"}],
        )
    values, issues = validate_values(
        attributes,
        {conflict.attribute: None if resolution.value is msgspec.UNSET else resolution.value},
        path="value",
        partial=True,
    )
    if issues:
        raise Problem(
            422,
            "validation-failed",
            issues[0].message,
            issues=[{"path": "value", "rule": i.rule, "message": i.message} for i in issues],
        )
    return {"choice": "value", "value": values.get(conflict.attribute)}


async def resolve_conflict(
    rt: Runtime,
    access: Access,
    domain: Domain,
    proposal_id: str,
    conflict_id: str,
    resolution: Resolution,
) -> dict[str, Any]:
    """POST .../conflicts/{id}/resolve: the author (or proposal.merge) resolves an open Conflict."""
    at = utc_now()

    async def txn_fn(txn: Txn) -> dict[str, Any]:
        proposal = await find_proposal(txn, access, domain, proposal_id, lock=True)
        require_open(proposal, "have its Conflicts resolved")
        conflict = await txn.get_conflict(proposal.id, conflict_id, for_update=True)
        if conflict is None:
            raise Problem(404, "not-found", f"unknown Conflict {conflict_id!r} of Proposal {proposal.id}")
        if conflict.status != "open":
            raise Problem(
                409,
                "conflict-resolved",
                f"Conflict {conflict.id} is resolved already",
                resolution=conflict.resolution,
            )
        chosen = _resolution(domain, conflict, resolution)
        await txn.resolve_conflict(conflict.id, chosen, access.principal.id, at)
        await txn.update_proposal(proposal.id, updated_at=at)
        await txn.audit(
            access.principal.id,
            "proposal.update",
            at,
            domain=domain.name,
            target=proposal.id,
            details={"conflict": conflict.id, "resolution": chosen["choice"]},
        )
        resolved = await txn.get_conflict(proposal.id, conflict.id)
        assert resolved is not None
        view = readable(access, domain, proposal.target_ref)
        return conflict_document(resolved, domain.name, proposal.id, view)

    return await rt.db.run_interaction("resolve_conflict", txn_fn)


__all__ = ["conflict_document", "list_conflicts", "resolve_conflict"]
