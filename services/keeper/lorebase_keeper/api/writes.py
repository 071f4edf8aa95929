"""Handlers of writes: Operations, imports, Source syncs and embeddings (operations/, imports/,
reads/embeddings.py). Each answers its Outcome: status, Revision and headers (Idempotent-Replayed).

Imports and Source syncs are bulk calls: the dispatcher runs them with the cyclic garbage collector
held off (lorebase.event_loop), since their million objects live until they commit."""

from __future__ import annotations

from typing import Any

from lorebase.contract.writes import ExecuteOperation, Import, SetEmbedding, SyncSource
from lorebase.v1 import keeper_pb2 as pb
from lorebase_keeper import imports, operations
from lorebase_keeper.api.call import DomainCall, handler, reply
from lorebase_keeper.reads import set_embedding as embed
from lorebase_keeper.writes import Outcome


def _outcome(outcome: Outcome) -> pb.Reply:
    return reply(outcome.document, status=outcome.status, revision=outcome.revision, headers=outcome.headers)


@handler("execute_operation")
async def execute_operation(call: DomainCall[ExecuteOperation]) -> pb.Reply:
    request = call.request
    return _outcome(
        await operations.execute(
            call.rt, call.access, call.domain, request.operation, request.body, request.idempotency_key
        )
    )


@handler("import_data")
async def import_data(call: DomainCall[Import]) -> pb.Reply:
    request = call.request
    return _outcome(
        await imports.run_import(call.rt, call.access, call.domain, request.body, request.idempotency_key)
    )


@handler("sync_source")
async def sync_source(call: DomainCall[SyncSource]) -> pb.Reply:
    request = call.request
    return _outcome(
        await imports.sync_source(
            call.rt, call.access, call.domain, request.source, request.body, request.idempotency_key
        )
    )


@handler("set_embedding")
async def set_embedding(call: DomainCall[SetEmbedding]) -> dict[str, Any]:
    request = call.request
    return await embed(call.rt, call.access, call.domain, request.kind, request.key, request.body)
