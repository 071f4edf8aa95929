"""Branches: create one from another's head, list them, read one."""

from __future__ import annotations

from typing import Any

from lorebase.ids import iso, utc_now
from lorebase.problems import Problem
from lorebase_keeper.auth import Access
from lorebase_keeper.domains import Domain, check_branch_name
from lorebase_keeper.runtime import Runtime
from lorebase_store import BranchRow, Txn


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


async def create_branch(rt: Runtime, access: Access, domain: Domain, body: dict[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(body) - {"name", "from"})
    if unknown:
        raise Problem(
            422, "validation-failed", f"unknown member(s) {', '.join(unknown)}; a branch takes name and from"
        )
    if not isinstance(body.get("name"), str):
        raise Problem(422, "validation-failed", "name is required: the new branch's name")
    name = check_branch_name(body["name"], member="name")
    source = check_branch_name(body.get("from") or domain.default_branch, member="from")
    access.require("branch.create", name)
    access.require("data.read", source)
    at = utc_now()

    async def txn_fn(txn: Txn) -> BranchRow:
        base = await txn.get_branch(domain.id, source, for_update=True)
        if base is None:
            raise Problem(404, "not-found", f"unknown branch {source!r} to branch from")
        created = await txn.insert_branch(
            domain.id,
            name,
            head=base.head,
            generation=base.generation,
            protected=False,
            from_branch=source,
            fork_generation=base.generation,
            mode="copy",
            by=access.principal.id,
            at=at,
        )
        if not created:
            raise Problem(409, "already-exists", f"branch {name!r} exists already", branch=name)
        await txn.copy_branch_rows(domain.id, source, name)
        await txn.audit(
            access.principal.id,
            "branch.create",
            at,
            domain=domain.name,
            target=name,
            details={"from": source, "head": base.head},
        )
        row = await txn.get_branch(domain.id, name)
        assert row is not None
        return row

    row = await rt.db.run_interaction("create_branch", txn_fn)
    return describe_branch(domain, row)


async def list_branches(rt: Runtime, access: Access, domain: Domain) -> dict[str, Any]:
    rows = await rt.db.read("list_branches", lambda txn: txn.list_branches(domain.id))
    visible = [describe_branch(domain, r) for r in rows if access.can("data.read", r.name)]
    return {"domain": domain.name, "branches": visible}


async def get_branch(rt: Runtime, access: Access, domain: Domain, name: str) -> dict[str, Any]:
    name = check_branch_name(name)
    access.require("data.read", name)
    row = await rt.db.read("get_branch", lambda txn: txn.get_branch(domain.id, name))
    if row is None:
        raise Problem(404, "not-found", f"unknown branch {name!r}; GET /branches lists them")
    return {"domain": domain.name, **describe_branch(domain, row), "revision": row.head}


__all__ = ["create_branch", "describe_branch", "get_branch", "list_branches"]
