"""Handlers of reconciliation candidates: list, read, accept, dismiss, scan now
(governance/reconciliation.py, record_merge.py)."""

from __future__ import annotations

from typing import Any

from lorebase.contract.reconciliation import (
    AcceptCandidate,
    CandidateCall,
    DismissCandidate,
    ListReconciliation,
    ScanReconciliation,
)
from lorebase.v1 import keeper_pb2 as pb
from lorebase_keeper.api.call import DomainCall, handler, reply
from lorebase_keeper.governance import reconciliation, record_merge


@handler("list_reconciliation")
async def list_reconciliation(call: DomainCall[ListReconciliation]) -> dict[str, Any]:
    request = call.request
    return await reconciliation.list_candidates(
        call.rt,
        call.access,
        call.domain,
        status=request.status,
        kind=request.kind,
        assigned=request.assigned,
        limit=request.limit,
        cursor=request.cursor,
    )


@handler("get_reconciliation")
async def get_reconciliation(call: DomainCall[CandidateCall]) -> dict[str, Any]:
    return await reconciliation.get_candidate(call.rt, call.access, call.domain, call.request.id)


@handler("accept_reconciliation")
async def accept_reconciliation(call: DomainCall[AcceptCandidate]) -> pb.Reply:
    request = call.request
    outcome = await record_merge.accept(call.rt, call.access, call.domain, request.id, request.body)
    return reply(outcome.document, status=outcome.status, revision=outcome.revision)


@handler("dismiss_reconciliation")
async def dismiss_reconciliation(call: DomainCall[DismissCandidate]) -> dict[str, Any]:
    request = call.request
    return await reconciliation.dismiss(call.rt, call.access, call.domain, request.id, request.body)


@handler("scan_reconciliation")
async def scan_reconciliation(call: DomainCall[ScanReconciliation]) -> dict[str, Any]:
    return await reconciliation.scan(call.rt, call.access, call.domain)
