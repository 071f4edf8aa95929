"""What every Keeper RPC shares: the `rpc` decorator (rate limits, the session trace, and Problems
turned into gRPC statuses), the typed body, replies, and the caller's principal and Domain.

A body is decoded here into its endpoint's model (lorebase.contract), with the rules and problems
the gateway applies at the edge (lorebase.contract.decode): a gRPC caller that skips the gateway
gets the same answer, and the logic below takes the typed object, never a dict."""

from __future__ import annotations

import functools
import time
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import orjson

from lorebase.contract.decode import body_of
from lorebase.grpc_problems import problems_as_status
from lorebase.problems import Problem
from lorebase.v1 import keeper_pb2 as pb
from lorebase.vault import holds_refs
from lorebase_keeper.access import Access, Principal
from lorebase_keeper.domains import Domain
from lorebase_keeper.governance import check_session, record_step
from lorebase_keeper.runtime import Runtime
from lorebase_keeper.vault.reveal import reveal_reply


def reply(
    document: Any, *, status: int = 200, revision: str | None = None, headers: dict[str, str] | None = None
) -> pb.Reply:
    if revision is None and isinstance(document, dict):
        revision = document.get("revision")
    return pb.Reply(
        body=orjson.dumps(document),
        revision=revision or "",
        content_type="application/json",
        status=status,
        headers=headers or {},
    )


def wants_markdown(format_: str) -> bool:
    if format_ not in ("", "json", "markdown"):
        raise Problem(
            400, "invalid-parameter", f"format is json or markdown, not {format_!r}", parameter="format"
        )
    return format_ == "markdown"


def markdown_reply(text: str, revision: str | None) -> pb.Reply:
    return pb.Reply(
        body=text.encode(), revision=revision or "", content_type="text/markdown; charset=utf-8", status=200
    )


Handler = Callable[..., Awaitable[pb.Reply]]

# Calls never kept as steps of an agent session: the web app's sign-in answers carry its CSRF token.
UNTRACED = frozenset({"StartWebSession", "GetWebSession", "EndWebSession"})

# The calls counted in the writes class of the rate limits; every other call is a read.
WRITES = frozenset(
    {
        "CreatePrincipal",
        "CreateKey",
        "RevokeKey",
        "CreateDomain",
        "CreateGrant",
        "DeleteGrant",
        "CreateBranch",
        "UpdateBranch",
        "DeleteBranch",
        "CreateTag",
        "DeleteTag",
        "CreateErasure",
        "CreateProposal",
        "ReviewProposal",
        "MergeProposal",
        "CloseProposal",
        "ResolveConflict",
        "ExecuteOperation",
        "Import",
        "SyncSource",
        "SetEmbedding",
        "AddSessionNote",
        "StartWebSession",
        "EndWebSession",
        "AcceptSuggestion",
        "DismissSuggestion",
        "AcceptReconciliation",
        "DismissReconciliation",
        "ScanReconciliation",
    }
)


def rpc(method: Handler) -> Handler:
    """Charge the caller's rate limit, trace the call of a session, and answer failures through
    lorebase.grpc_problems (a Problem as its status; anything else as a 500, logged once)."""

    @functools.wraps(method)
    async def wrapper(self: KeeperRpc, request: Any, context: grpc.aio.ServicerContext) -> pb.Reply:
        async with problems_as_status(context, "keeper", method.__name__):
            session = dict(context.invocation_metadata() or ()).get("lorebase-session")
            if method.__name__ in UNTRACED:
                session = None
            started = time.perf_counter()
            try:
                if self.rt.limits is not None:
                    principal = await self._principal(context)
                    if not principal.is_admin:
                        self.rt.limits.charge(
                            principal.id, "writes" if method.__name__ in WRITES else "reads"
                        )
                answer = await method(self, request, context)
                if session:
                    await self._trace(
                        context, session, method.__name__, request, answer.status, started, answer.body
                    )
                if holds_refs(answer.body):  # vault refs, shown as the caller may see them
                    answer = await self._reveal(context, request, answer)
                return answer
            except Problem as problem:
                if session:
                    await self._trace(
                        context, session, method.__name__, request, problem.status, started, None
                    )
                raise

    return wrapper


class KeeperRpc:
    """The base of the Keeper servicer's RPCs: its Runtime, the caller, the Domain, the trace."""

    rt: Runtime

    async def _trace(
        self,
        context: grpc.aio.ServicerContext,
        session: str,
        call: str,
        request: Any,
        status: int,
        started: float,
        body: bytes | None,
    ) -> None:
        try:
            principal = await self._principal(context)
            check_session(session)
        except Problem:
            return  # an unauthenticated call or a bad session id is not traced
        await record_step(
            self.rt,
            session=session,
            principal=principal,
            call=call,
            request=request,
            status=status,
            latency_ms=(time.perf_counter() - started) * 1000,
            reply_body=body,
        )

    async def _reveal(self, context: grpc.aio.ServicerContext, request: Any, answer: pb.Reply) -> pb.Reply:
        """The answer with its vault refs revealed for the caller in the Domain the request names
        (none named: every ref masked)."""
        domain: Domain | None = None
        permissions: frozenset[str] = frozenset()
        name = getattr(request, "domain", "")
        if isinstance(name, str) and name:
            domain, access = await self._domain(context, name)
            branch = getattr(request, "branch", "")
            permissions = access.permissions(
                branch if isinstance(branch, str) and branch else domain.default_branch
            )
        return await reveal_reply(self.rt, answer, domain=domain, permissions=permissions)

    async def _principal(self, context: grpc.aio.ServicerContext) -> Principal:
        metadata = dict(context.invocation_metadata() or ())
        return await self.rt.auth.authenticate(metadata.get("authorization"))

    async def _domain(self, context: grpc.aio.ServicerContext, name: str) -> tuple[Domain, Access]:
        principal = await self._principal(context)
        domain = await self.rt.domains.get(name)
        access = await self.rt.auth.access(principal, domain.id)
        if not principal.is_admin and not access.grants:
            # A Domain the caller holds no grant in answers like an unknown one.
            raise Problem(404, "not-found", f"unknown Domain {name!r}; GET /api/v1/domains lists them")
        return domain, access


__all__ = [
    "WRITES",
    "Handler",
    "KeeperRpc",
    "body_of",
    "markdown_reply",
    "reply",
    "rpc",
    "wants_markdown",
]
