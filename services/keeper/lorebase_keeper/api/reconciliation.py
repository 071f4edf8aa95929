"""Keeper RPCs of reconciliation (governance/reconciliation.py, record_merge.py)."""

from __future__ import annotations

import grpc

from lorebase.contract.reconciliation import Accept, Dismiss
from lorebase.v1 import keeper_pb2 as pb
from lorebase_keeper.api.rpc import KeeperRpc, body_of, reply, rpc
from lorebase_keeper.governance import reconciliation, record_merge


class ReconciliationRpcs(KeeperRpc):
    """Reconciliation candidates: list, read, accept, dismiss, scan now."""

    @rpc
    async def ListReconciliation(
        self, request: pb.ListReconciliationRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        return reply(
            await reconciliation.list_candidates(
                self.rt,
                access,
                domain,
                status=request.status,
                kind=request.kind,
                assigned=request.assigned,
                limit=request.limit,
                cursor=request.cursor,
            )
        )

    @rpc
    async def GetReconciliation(
        self, request: pb.ReconciliationRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        return reply(await reconciliation.get_candidate(self.rt, access, domain, request.id))

    @rpc
    async def AcceptReconciliation(
        self, request: pb.ReconciliationRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        body = body_of("accept_reconciliation", request.body, Accept)
        domain, access = await self._domain(context, request.domain)
        outcome = await record_merge.accept(self.rt, access, domain, request.id, body)
        return reply(outcome.document, status=outcome.status, revision=outcome.revision)

    @rpc
    async def DismissReconciliation(
        self, request: pb.ReconciliationRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        body = body_of("dismiss_reconciliation", request.body, Dismiss)
        domain, access = await self._domain(context, request.domain)
        return reply(await reconciliation.dismiss(self.rt, access, domain, request.id, body))

    @rpc
    async def ScanReconciliation(
        self, request: pb.ScanReconciliationRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        return reply(await reconciliation.scan(self.rt, access, domain))


__all__ = ["ReconciliationRpcs"]
