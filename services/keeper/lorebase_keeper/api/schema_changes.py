"""Handlers of schema change sets (schema_changes/) and of their jobs (schema_changes/jobs.py)."""

from __future__ import annotations

from typing import Any

from lorebase.contract.branches import ChangeSchema, GetSchemaChange, ListSchemaChanges
from lorebase.v1 import keeper_pb2 as pb
from lorebase_keeper.api.call import DomainCall, handler, reply
from lorebase_keeper.schema_changes import accept, get_job, list_jobs, prefers_async
from lorebase_keeper.schema_changes import change_schema as change


@handler("change_schema")
async def change_schema(call: DomainCall[ChangeSchema]) -> pb.Reply:
    request = call.request
    # `Prefer: respond-async`: the same change set, run as a job the client follows.
    run = accept if prefers_async(request.prefer) else change
    outcome = await run(
        call.rt, call.access, call.domain, request.branch, request.body, request.idempotency_key
    )
    return reply(outcome.document, status=outcome.status, revision=outcome.revision, headers=outcome.headers)


@handler("get_schema_change")
async def get_schema_change(call: DomainCall[GetSchemaChange]) -> dict[str, Any]:
    return await get_job(call.rt, call.access, call.domain, call.target.row)


@handler("list_schema_changes")
async def list_schema_changes(call: DomainCall[ListSchemaChanges]) -> dict[str, Any]:
    request = call.request
    return await list_jobs(
        call.rt, call.access, call.domain, branch=request.branch, limit=request.limit, cursor=request.cursor
    )
