"""The Conflicts of a Proposal: listing them and resolving one (ours, theirs, or a value).

A resolution is stored with the Conflict's fingerprint; the next merge attempt applies it when it
finds the same Conflict again (merge/merges.py, docs/branches.md). Each Conflict says which
resolutions it takes (`resolutions`, from `choices`), and a resolution it does not take is refused
422 with what to do instead: a schema Conflict takes theirs only; a value that does not fit the
schema it lands in (`schema_migration`) is changed on its branch, then the merge tried again, or,
when the source brings it, resolved with ours (the source's changes of that Record or Link left
out); a value a change set cleared (`schema_cleared`) is found resolved.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from lorebase.contract.proposals import Resolution
from lorebase.ids import iso, utc_now
from lorebase.problems import Problem
from lorebase.schema import Attribute, validate_values
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


Choice = Literal["ours", "theirs", "value"]


def choices(domain: Domain, conflict: ConflictRow) -> list[Choice]:
    """The resolutions a Conflict takes (`_resolution` refuses the others, saying why)."""
    if conflict.code == "schema_conflict":
        return ["theirs"]
    if conflict.code == "schema_migration":  # the merge that found it says (merge/schema_merge.py)
        return ["ours"] if "ours" in (conflict.details.get("takes") or []) else []
    if conflict.code == "schema_cleared":
        return []
    if conflict.code in ("unique_taken", "required_missing"):
        return ["ours", "value"]
    held = _attributes(domain, conflict).get(conflict.attribute or "")
    if conflict.attribute is None or (held is not None and held.vault):
        return ["ours", "theirs"]
    return ["ours", "theirs", "value"]


def _attributes(domain: Domain, conflict: ConflictRow) -> dict[str, Attribute]:
    """The Attributes of the Kind or Relation a Conflict names, in the Domain's schema."""
    if conflict.entity == "record":
        kind = domain.schema.kinds.get(conflict.name)
        return {} if kind is None else kind.attributes
    relation = domain.schema.relations.get(conflict.name)
    return {} if relation is None else relation.attributes


def conflict_document(row: ConflictRow, domain: Domain, proposal: str, view: Readable) -> dict[str, Any]:
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
        "resolutions": choices(domain, row) if row.status == "open" else [],
        "href": f"/api/v1/domains/{domain.name}/proposals/{proposal}/conflicts/{row.id}/resolve",
    }


async def list_conflicts(rt: Runtime, access: Access, domain: Domain, proposal_id: str) -> dict[str, Any]:
    async def read(txn: Txn) -> dict[str, Any]:
        proposal = await find_proposal(txn, access, domain, proposal_id)
        rows = await txn.conflicts_of(proposal.id)
        return {
            "proposal": proposal.id,
            "status": proposal.status,
            "conflicts": [
                conflict_document(c, domain, proposal.id, readable(access, domain, proposal.target_ref))
                for c in rows
            ],
        }

    return await rt.db.read("list_conflicts", read)


def _resolution(domain: Domain, conflict: ConflictRow, resolution: Resolution) -> dict[str, Any]:
    """The resolution to store, checked against the Conflict (`choices`) and the schema: a value
    only with `value`, and valid for its Attribute."""
    choice = resolution.resolution
    if choice not in choices(domain, conflict):
        raise _not_taken(conflict, choice)
    if choice != "value":
        if resolution.value is not msgspec.UNSET:
            raise Problem(422, "validation-failed", "value goes with resolution value only")
        return {"choice": choice}
    assert conflict.attribute is not None  # a whole Record or Link takes no value (`choices`)
    values, issues = validate_values(
        _attributes(domain, conflict),
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


def _not_taken(conflict: ConflictRow, choice: str) -> Problem:
    """422: the Conflict does not take `choice`; what to do instead."""
    what = f"{conflict.name}.{conflict.attribute}"
    if conflict.code == "schema_conflict":
        return _refused(
            "conflict.schema",
            "theirs",
            f"a schema Conflict is resolved with theirs: the merge then applies the source's change sets "
            f"to the target's version of {conflict.name} (migrating the target's data as they did); "
            "a merge cannot leave part of a change set out, so to keep the target's version change the "
            "source branch's schema to it (POST /branches/<source>/schema/changes) and the Conflict goes with "
            "the next attempt",
        )
    if conflict.code in ("schema_migration", "schema_cleared"):
        ours = "ours" in (conflict.details.get("takes") or [])
        return _refused(
            "conflict.migration",
            "ours" if ours else "none",
            f"{conflict.details.get('theirs')}"
            + (
                f"; or resolve with ours: the source's changes of {conflict.name}/{conflict.key} are then "
                "left out of the merge, and the target keeps it as it is"
                if ours
                else " (this Conflict takes no resolution: the next merge attempt, after each move of "
                "either branch or POST .../merge, finds it no more once the value fits)"
            ),
        )
    if conflict.code == "unique_taken":
        return _refused(
            "conflict.unique",
            "ours or value",
            f"{what} is unique and {conflict.details.get('ours')} hold {conflict.details.get('theirs')!r} "
            "on the target; resolve with ours or another value",
        )
    if conflict.code == "required_missing":
        return _refused(
            "conflict.required",
            "ours or value",
            f"{what} is required and the source leaves {conflict.name}/{conflict.key} without it; resolve "
            "with ours or a value",
        )
    if conflict.attribute is None:
        return _refused(
            "conflict.whole",
            "ours or theirs",
            f"a {conflict.code} Conflict is about a whole {conflict.entity}; resolve it with ours or theirs",
        )
    return _refused(  # a vault Attribute: a value given here would be kept outside the vault
        "conflict.vault",
        "ours or theirs",
        f"{what} is a vault Attribute: resolve with ours or theirs, then write another value with an Operation",
    )


def _refused(rule: str, takes: str, detail: str) -> Problem:
    return Problem(
        422, "validation-failed", detail, issues=[{"path": "resolution", "rule": rule, "message": takes}]
    )


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
        return conflict_document(resolved, domain, proposal.id, view)

    return await rt.db.run_interaction("resolve_conflict", txn_fn)


__all__ = ["choices", "conflict_document", "list_conflicts", "resolve_conflict"]
