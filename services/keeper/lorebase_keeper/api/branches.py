"""Handlers of the schema, branches and tags (reads/schema_view.py, branches/)."""

from __future__ import annotations

from typing import Any

from lorebase.contract.branches import CreateBranch, GetBranch, GetSchema, ListBranches, UpdateBranch
from lorebase.contract.tags import CreateTag, ListTags, TagCall
from lorebase.problems import Problem
from lorebase.v1 import keeper_pb2 as pb
from lorebase_keeper import branches
from lorebase_keeper.api.call import DomainCall, handler
from lorebase_keeper.branches import describe_tag
from lorebase_keeper.reads import read_point, visible_schema


@handler("get_schema")
async def get_schema(call: DomainCall[GetSchema]) -> dict[str, Any]:
    """The schema of the branch's head, or of the Revision `at` names (the dispatcher chose it)."""
    domain, branch, at = call.domain, call.branch, call.request.at
    if at:
        point = await call.rt.db.read("read_point", lambda txn: read_point(txn, domain, branch, at))
        revision = point.revision
    else:
        head = await call.rt.db.read("get_branch", lambda txn: txn.get_branch(domain.id, branch))
        if head is None:
            raise Problem(404, "not-found", f"unknown branch {branch!r}")
        revision = head.head
    return {
        **visible_schema(call.access, domain, branch),
        "revision": revision,
        "schema_version": domain.schema_digest,
    }


@handler("create_branch")
async def create_branch(call: DomainCall[CreateBranch]) -> dict[str, Any]:
    return await branches.create_branch(call.rt, call.access, call.domain, call.request.body)


@handler("list_branches")
async def list_branches(call: DomainCall[ListBranches]) -> dict[str, Any]:
    return await branches.list_branches(call.rt, call.access, call.domain)


@handler("get_branch")
async def get_branch(call: DomainCall[GetBranch]) -> dict[str, Any]:
    return await branches.get_branch(call.rt, call.domain, call.request.branch)


@handler("update_branch")
async def update_branch(call: DomainCall[UpdateBranch]) -> dict[str, Any]:
    request = call.request
    return await branches.update_branch(call.rt, call.access, call.domain, request.branch, request.body)


@handler("delete_branch")
async def delete_branch(call: DomainCall[GetBranch]) -> dict[str, Any]:
    return await branches.delete_branch(call.rt, call.access, call.domain, call.request.branch)


@handler("create_tag")
async def create_tag(call: DomainCall[CreateTag]) -> dict[str, Any]:
    return await branches.create_tag(call.rt, call.access, call.domain, call.request.body)


@handler("list_tags")
async def list_tags(call: DomainCall[ListTags]) -> dict[str, Any]:
    request = call.request
    return await branches.list_tags(
        call.rt, call.access, call.domain, limit=request.limit, cursor=request.cursor
    )


@handler("get_tag")
async def get_tag(call: DomainCall[TagCall]) -> dict[str, Any]:
    """The tag the policy found (on a branch the caller may read)."""
    return describe_tag(call.domain, *call.target.row)


@handler("delete_tag")
async def delete_tag(call: DomainCall[TagCall]) -> pb.Reply:
    await branches.delete_tag(call.rt, call.access, call.domain, call.request.tag)
    return pb.Reply(body=b"", status=204, content_type="application/json")
