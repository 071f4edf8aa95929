"""Branches: create one from another's head (copy or overlay), list, read, protect and delete them.

A copy branch starts with a copy of every materialised row of its base; an overlay branch stores only
its own history and reads fall through to the base at the fork point (writes/view.py: OverlayView).
Deleting a branch keeps its Revisions: they move to an archive name (`<name>~<ms>`) that no live
branch can take, so the name can be used again without meeting the old history.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from lorebase.contract.branches import BranchUpdate, NewBranch
from lorebase.ids import iso, utc_now
from lorebase.problems import Problem
from lorebase_keeper.access import Access
from lorebase_keeper.domains import Domain, check_branch_name
from lorebase_keeper.runtime import Runtime
from lorebase_store import BranchRow, Txn
from lorebase_store.chains import branch_chain


def describe_branch(domain: Domain, row: BranchRow) -> dict[str, Any]:
    return {
        "name": row.name,
        "head": row.head,
        "generation": row.generation,
        "default": row.name == domain.default_branch,
        "protected": row.protected,
        "required_approvals": row.required_approvals,
        "from": row.from_branch,
        "mode": row.mode,
        "created_by": row.created_by,
        "created_at": iso(row.created_at),
    }


async def fork_branch(
    txn: Txn,
    domain: Domain,
    base: BranchRow,
    name: str,
    *,
    mode: str,
    by: str,
    at: datetime,
    protected: bool = False,
    required_approvals: int | None = None,
) -> BranchRow | None:
    """Create `name` at the head of `base` (locked by the caller); None when the name is taken."""
    chain = (await branch_chain(txn, domain.id, base)).upto(base.generation)
    created = await txn.insert_branch(
        domain.id,
        name,
        head=base.head,
        generation=base.generation,
        protected=protected,
        from_branch=base.name,
        fork_generation=base.generation,
        mode=mode,
        by=by,
        at=at,
        chain=[[name, base.generation + 1, None], *chain.document()],
        required_approvals=required_approvals,
    )
    if not created:
        return None
    if mode == "copy":
        if base.mode == "overlay":
            raise Problem(
                422,
                "validation-failed",
                f"branch {base.name!r} is an overlay branch; branch from it with mode overlay",
            )
        await txn.copy_branch_rows(domain.id, base.name, name)
    await txn.audit(
        by,
        "branch.create",
        at,
        domain=domain.name,
        target=name,
        details={"from": base.name, "head": base.head},
    )
    return await txn.get_branch(domain.id, name)


async def create_branch(rt: Runtime, access: Access, domain: Domain, new: NewBranch) -> dict[str, Any]:
    """POST /branches: a branch at the head of another (the model has checked the new name against
    the branch grammar, the mode and the protection)."""
    name = new.name
    source = check_branch_name(new.from_ or domain.default_branch, member="from")
    mode = new.mode or "copy"
    protected, approvals = new.protected, new.required_approvals
    at = utc_now()

    async def txn_fn(txn: Txn) -> BranchRow:
        base = await txn.get_branch(domain.id, source, for_update=True)
        if base is None:
            raise Problem(404, "not-found", f"unknown branch {source!r} to branch from")
        row = await fork_branch(
            txn,
            domain,
            base,
            name,
            mode=mode,
            by=access.principal.id,
            at=at,
            protected=bool(protected),
            required_approvals=approvals,
        )
        if row is None:
            raise Problem(409, "already-exists", f"branch {name!r} exists already", branch=name)
        return row

    row = await rt.db.run_interaction("create_branch", txn_fn)
    return describe_branch(domain, row)


async def list_branches(rt: Runtime, access: Access, domain: Domain) -> dict[str, Any]:
    rows = await rt.db.read("list_branches", lambda txn: txn.list_branches(domain.id))
    visible = [describe_branch(domain, r) for r in rows if access.can("data.read", r.name)]
    return {"domain": domain.name, "branches": visible}


async def get_branch(rt: Runtime, domain: Domain, name: str) -> dict[str, Any]:
    name = check_branch_name(name)
    row = await rt.db.read("get_branch", lambda txn: txn.get_branch(domain.id, name))
    if row is None:
        raise Problem(404, "not-found", f"unknown branch {name!r}; GET /branches lists them")
    return {"domain": domain.name, **describe_branch(domain, row), "revision": row.head}


async def update_branch(
    rt: Runtime, access: Access, domain: Domain, name: str, change: BranchUpdate
) -> dict[str, Any]:
    """PATCH /branches/{b}: protection and the approvals its Proposals need (domain.settings)."""
    name = check_branch_name(name)
    protected, approvals = change.protected, change.required_approvals
    if protected is None and approvals is None:
        raise Problem(
            422,
            "validation-failed",
            "nothing to change: give protected (true or false) or required_approvals (a number)",
            issues=[{"path": "protected", "rule": "required", "message": "protected or required_approvals"}],
        )
    at = utc_now()

    async def txn_fn(txn: Txn) -> BranchRow:
        row = await txn.get_branch(domain.id, name, for_update=True)
        if row is None:
            raise Problem(404, "not-found", f"unknown branch {name!r}; GET /branches lists them")
        values: dict[str, Any] = {}
        if protected is not None:
            values["protected"] = protected
        if approvals is not None:
            values["required_approvals"] = approvals
        await txn.update_branch(domain.id, name, **values)
        await txn.audit(
            access.principal.id, "branch.update", at, domain=domain.name, target=name, details=values
        )
        updated = await txn.get_branch(domain.id, name)
        assert updated is not None
        return updated

    row = await rt.db.run_interaction("update_branch", txn_fn)
    return {"domain": domain.name, **describe_branch(domain, row), "revision": row.head}


async def remove_branch(txn: Txn, domain: Domain, name: str, by: str, at: datetime) -> None:
    """Delete a branch, its materialised rows and statistics; its Revisions stay under an archive name."""
    await txn.archive_branch(domain.id, name, f"{name}~{int(at.timestamp() * 1000)}")
    await txn.audit(by, "branch.delete", at, domain=domain.name, target=name, details={})


async def delete_branch(rt: Runtime, access: Access, domain: Domain, name: str) -> dict[str, Any]:
    """DELETE /branches/{b}: its creator (holding branch.create) or domain.settings. A name from
    before the name grammar (lorebase.names) is accepted here, so such a branch can be removed."""
    if "\x00" in name or not 0 < len(name) <= 255:
        name = check_branch_name(name)
    if name == domain.default_branch:
        raise Problem(409, "default-branch", f"{name!r} is the default branch of {domain.name}; it stays")
    at = utc_now()

    async def txn_fn(txn: Txn) -> dict[str, Any]:
        row = await txn.get_branch(domain.id, name, for_update=True)
        if row is None:
            raise Problem(404, "not-found", f"unknown branch {name!r}; GET /branches lists them")
        using = [p.id for p in await txn.proposals_from(domain.id, name)]
        using += [
            p.id
            for p in await txn.list_proposals(domain.id, status="open", after=None, limit=1000)
            if p.target_ref == name
        ]
        if using:
            raise Problem(
                409,
                "branch-in-use",
                f"open Proposals use branch {name!r}: {', '.join(sorted(set(using)))}; merge or close them first",
                proposals=sorted(set(using)),
            )
        await remove_branch(txn, domain, name, access.principal.id, at)
        return {"domain": domain.name, "branch": name, "deleted": True, "head": row.head}

    return await rt.db.run_interaction("delete_branch", txn_fn)


__all__ = [
    "create_branch",
    "delete_branch",
    "describe_branch",
    "fork_branch",
    "get_branch",
    "list_branches",
    "remove_branch",
    "update_branch",
]
