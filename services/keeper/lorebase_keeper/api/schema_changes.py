"""Handlers of schema change sets (schema_changes/) and of their jobs (schema_changes/jobs.py)."""

from __future__ import annotations

from typing import Any

from lorebase.contract.branches import ChangeSchema, GetSchemaChange, ListSchemaChanges
from lorebase.contract.endpoint import COMMITTED_HEADER
from lorebase.v1 import keeper_pb2 as pb
from lorebase_keeper.api.call import DomainCall, handler, reply
from lorebase_keeper.schema_changes import accept, get_job, list_jobs, preferences
from lorebase_keeper.schema_changes import change_schema as change

PROBLEM_TYPE = "application/problem+json"  # RFC 9457, as the gateway answers every other problem


@handler("change_schema")
async def change_schema(call: DomainCall[ChangeSchema]) -> pb.Reply:
    request = call.request
    arguments = (call.rt, call.access, call.domain, request.branch, request.body, request.idempotency_key)
    # `Prefer: respond-async`: the same change set, run as a job the client follows (or, with
    # `wait=N`, waits for up to N seconds).
    prefer = preferences(request.prefer)
    if prefer.respond_async:
        outcome = await accept(*arguments, wait=prefer.wait)
    else:
        outcome = await change(*arguments)
    answer = reply(
        outcome.document, status=outcome.status, revision=outcome.revision, headers=outcome.headers
    )
    if outcome.status >= 400:  # a job that ended failed while the call waited: its problem
        answer.content_type = PROBLEM_TYPE
    return answer


def _telling_commits(document: dict[str, Any], jobs: list[dict[str, Any]]) -> pb.Reply:
    """A job read, telling the gateway of the Revisions its committed jobs wrote: a job commits
    outside any request, so this is how a gateway hears of it and drops the cached reads it made
    before (lorebase.contract.endpoint.COMMITTED_HEADER), as a synchronous change set's answer
    passing through it does."""
    committed = [job["revision"] for job in jobs if job["status"] == "committed" and job["revision"]]
    return reply(document, headers={COMMITTED_HEADER: ",".join(committed)} if committed else None)


@handler("get_schema_change")
async def get_schema_change(call: DomainCall[GetSchemaChange]) -> pb.Reply:
    job = await get_job(call.rt, call.access, call.domain, call.target.row)
    return _telling_commits(job, [job])


@handler("list_schema_changes")
async def list_schema_changes(call: DomainCall[ListSchemaChanges]) -> pb.Reply:
    request = call.request
    listed = await list_jobs(
        call.rt, call.access, call.domain, branch=request.branch, limit=request.limit, cursor=request.cursor
    )
    return _telling_commits(listed, listed["jobs"])
