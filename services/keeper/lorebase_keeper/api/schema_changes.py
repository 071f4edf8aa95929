"""Handlers of schema change sets (schema_changes/)."""

from __future__ import annotations

from lorebase.contract.branches import ChangeSchema
from lorebase.v1 import keeper_pb2 as pb
from lorebase_keeper.api.call import DomainCall, handler, reply
from lorebase_keeper.schema_changes import change_schema as change


@handler("change_schema")
async def change_schema(call: DomainCall[ChangeSchema]) -> pb.Reply:
    request = call.request
    outcome = await change(
        call.rt, call.access, call.domain, request.branch, request.body, request.idempotency_key
    )
    return reply(outcome.document, status=outcome.status, revision=outcome.revision, headers=outcome.headers)
