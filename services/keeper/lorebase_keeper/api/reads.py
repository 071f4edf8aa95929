"""Handlers of reads: a Record, its Links, history and lineage, explain, diff, data health, and the
reads of the graph (neighbourhoods, walks, context packs, resolve, search, query) (reads/, context/).

Each handler hands the typed request, as the dispatcher decoded it past the endpoint's policy, to one
function of reads/ or context/, and makes the answer from what it returns: nothing is unpacked here.
"""

from __future__ import annotations

from typing import Any

from lorebase.contract.endpoint import READ_ORDER_HEADER
from lorebase.contract.reads import (
    Context,
    Diff,
    Explain,
    GetHistory,
    GetLinks,
    GetRecord,
    GetRevision,
    Health,
    KindHealth,
    ListLinks,
    ListRecords,
    Neighborhood,
    QueryCall,
    RecordAt,
    Resolve,
    Search,
    Traverse,
)
from lorebase.v1 import keeper_pb2 as pb
from lorebase_keeper import reads
from lorebase_keeper.api.call import DomainCall, handler, reply
from lorebase_keeper.context import context_pack


def _markdown(text: str, revision: str | None) -> pb.Reply:
    return pb.Reply(
        body=text.encode(), revision=revision or "", content_type="text/markdown; charset=utf-8", status=200
    )


@handler("get_record")
async def get_record(call: DomainCall[GetRecord]) -> pb.Reply:
    document, order = await reads.get_record(call.rt, call.access, call.domain, call.request)
    return reply(document, headers=None if order is None else {READ_ORDER_HEADER: order})


@handler("get_links")
async def get_links(call: DomainCall[GetLinks]) -> dict[str, Any]:
    return await reads.get_links(call.rt, call.access, call.domain, call.request)


@handler("list_records")
async def list_records(call: DomainCall[ListRecords]) -> dict[str, Any]:
    return await reads.list_records(call.rt, call.access, call.domain, call.request)


@handler("list_links")
async def list_links(call: DomainCall[ListLinks]) -> dict[str, Any]:
    return await reads.list_links(call.rt, call.access, call.domain, call.request)


@handler("get_revision")
async def get_revision(call: DomainCall[GetRevision]) -> pb.Reply:
    document = await reads.revision_view(call.rt, call.access, call.domain, call.branch, call.request)
    return reply(document, revision=document["revision"]["id"])


@handler("get_history")
async def get_history(call: DomainCall[GetHistory]) -> dict[str, Any]:
    return await reads.get_history(call.rt, call.access, call.domain, call.request)


@handler("get_lineage")
async def get_lineage(call: DomainCall[RecordAt]) -> dict[str, Any]:
    return await reads.get_lineage(call.rt, call.access, call.domain, call.request)


@handler("explain")
async def explain(call: DomainCall[Explain]) -> pb.Reply | dict[str, Any]:
    document = await reads.explain(call.rt, call.access, call.domain, call.request)
    if call.request.format == "markdown":
        return _markdown(reads.explain_markdown(document), document["revision"])
    return document


@handler("diff")
async def diff(call: DomainCall[Diff]) -> dict[str, Any]:
    return await reads.diff(call.rt, call.access, call.domain, call.request)


async def _health(call: DomainCall[Health] | DomainCall[KindHealth]) -> pb.Reply | dict[str, Any]:
    document = await reads.data_health(call.rt, call.access, call.domain, call.request)
    if call.request.format == "markdown":
        return _markdown(reads.health_markdown(document), document["revision"])
    return document


@handler("get_health")
async def get_health(call: DomainCall[Health]) -> pb.Reply | dict[str, Any]:
    return await _health(call)


@handler("get_kind_health")
async def get_kind_health(call: DomainCall[KindHealth]) -> pb.Reply | dict[str, Any]:
    return await _health(call)


@handler("neighborhood")
async def neighborhood(call: DomainCall[Neighborhood]) -> dict[str, Any]:
    return await reads.neighborhood(call.rt, call.access, call.domain, call.request.body)


@handler("context")
async def context(call: DomainCall[Context]) -> pb.Reply:
    pack = await context_pack(call.rt, call.access, call.domain, call.request.body)
    return pb.Reply(
        body=pack.body,
        revision=pack.revision,
        content_type=pack.content_type,
        status=200,
        headers={"ETag": pack.etag},
    )


@handler("resolve")
async def resolve(call: DomainCall[Resolve]) -> dict[str, Any]:
    return await reads.resolve(call.rt, call.access, call.domain, call.request.body)


@handler("search")
async def search(call: DomainCall[Search]) -> dict[str, Any]:
    return await reads.search(call.rt, call.access, call.domain, call.request.body)


@handler("traverse")
async def traverse(call: DomainCall[Traverse]) -> dict[str, Any]:
    return await reads.traverse(call.rt, call.access, call.domain, call.request.body)


@handler("query")
async def query(call: DomainCall[QueryCall]) -> dict[str, Any]:
    return await reads.run_query(call.rt, call.access, call.domain, call.request.body)
