"""The Keeper gRPC servicer: parse, authenticate, authorize, call down, and turn problems into statuses."""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import orjson

from lorebase.grpc_problems import abort_with_problem
from lorebase.problems import Problem
from lorebase.v1 import keeper_pb2 as pb
from lorebase.v1 import keeper_pb2_grpc
from lorebase_keeper import (
    admin,
    branches,
    data_health,
    diff,
    explain,
    history,
    imports,
    neighborhood,
    operations,
    proposal_conflicts,
    proposals,
    query,
    records,
    resolve,
    search,
    sources,
    suggestions,
)
from lorebase_keeper.auth import Access, Principal
from lorebase_keeper.context import context_pack
from lorebase_keeper.domains import Domain, check_branch_name
from lorebase_keeper.embeddings import set_embedding
from lorebase_keeper.runtime import Runtime
from lorebase_keeper.schema_view import visible_schema
from lorebase_keeper.trace import add_note, check_session, get_session, record_step

logger = logging.getLogger("lorebase.keeper.api")


def _json(body: bytes, what: str = "request body") -> dict[str, Any]:
    if not body:
        return {}
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise Problem(400, "malformed-json", f"the {what} is not valid JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise Problem(400, "malformed-json", f"the {what} must be a JSON object")
    return value


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
        "AcceptSuggestion",
        "DismissSuggestion",
    }
)


def rpc(method: Handler) -> Handler:
    """Map Problems (and unexpected failures) to gRPC statuses carrying the problem document."""

    @functools.wraps(method)
    async def wrapper(self: KeeperServicer, request: Any, context: grpc.aio.ServicerContext) -> pb.Reply:
        session = dict(context.invocation_metadata() or ()).get("lorebase-session")
        started = time.perf_counter()
        try:
            if self.rt.limits is not None:
                principal = await self._principal(context)
                if not principal.is_admin:
                    self.rt.limits.charge(principal.id, "writes" if method.__name__ in WRITES else "reads")
            answer = await method(self, request, context)
            if session:
                await self._trace(
                    context, session, method.__name__, request, answer.status, started, answer.body
                )
            return answer
        except Problem as problem:
            if session:
                await self._trace(context, session, method.__name__, request, problem.status, started, None)
            await abort_with_problem(context, problem)
        except Exception:
            logger.exception("keeper %s failed", method.__name__)
            await abort_with_problem(
                context, Problem(500, "internal", "keeper failed to answer; the error is in its log")
            )
        raise AssertionError("unreachable")

    return wrapper


class KeeperServicer(keeper_pb2_grpc.KeeperServicer):
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt

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

    @rpc
    async def AddSessionNote(
        self, request: pb.SessionNoteRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        principal = await self._principal(context)
        return reply(await add_note(self.rt, principal, request.session, _json(request.body)), status=201)

    @rpc
    async def GetSession(self, request: pb.SessionRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        principal = await self._principal(context)
        return reply(await get_session(self.rt, principal, request.session))

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

    @rpc
    async def AuthorizeRead(
        self, request: pb.AuthorizeReadRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        """For the feed: may the caller read this branch, and is any of its grants unnarrowed?"""
        domain, access = await self._domain(context, request.domain)
        branch = check_branch_name(request.branch or domain.default_branch)
        access.require(request.permission or "data.read", branch)
        return reply(
            {
                "principal": access.principal.id,
                "domain": domain.name,
                "domain_id": domain.id,
                "branch": branch,
                "narrowed": access.narrowed(branch),
                "kinds": list(domain.schema.kinds),
                "permissions": sorted(access.permissions(branch)),
            }
        )

    # Administration

    @rpc
    async def CreatePrincipal(
        self, request: pb.CreatePrincipalRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        caller = await self._principal(context)
        return reply(
            await admin.create_principal(
                self.rt, caller, request.id, request.type, request.name, request.tenant
            ),
            status=201,
        )

    @rpc
    async def CreateKey(self, request: pb.CreateKeyRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        caller = await self._principal(context)
        return reply(await admin.create_key(self.rt, caller, request.principal), status=201)

    @rpc
    async def RevokeKey(self, request: pb.RevokeKeyRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        caller = await self._principal(context)
        return reply(await admin.revoke_key(self.rt, caller, request.principal, request.key_id))

    @rpc
    async def CreateDomain(
        self, request: pb.CreateDomainRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        caller = await self._principal(context)
        return reply(await self.rt.domains.create(caller, _json(request.body)), status=201)

    @rpc
    async def ListDomains(
        self, request: pb.ListDomainsRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        caller = await self._principal(context)
        rows = await self.rt.db.read("list_domains", lambda txn: txn.list_domains())
        visible = []
        for row in rows:
            if caller.is_admin or (await self.rt.auth.access(caller, row.id)).grants:
                visible.append({"name": row.name, "default_branch": row.default_branch})
        return reply({"domains": visible})

    @rpc
    async def GetDomain(self, request: pb.DomainRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, _ = await self._domain(context, request.domain)
        return reply(
            {
                "name": domain.name,
                "default_branch": domain.default_branch,
                "description": domain.schema.description,
            }
        )

    @rpc
    async def CreateGrant(
        self, request: pb.CreateGrantRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        return reply(await admin.create_grant(self.rt, access, domain, _json(request.body)), status=201)

    @rpc
    async def DeleteGrant(
        self, request: pb.DeleteGrantRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        return reply(await admin.delete_grant(self.rt, access, domain, request.grant_id))

    # Schema and branches

    @rpc
    async def GetSchema(self, request: pb.GetSchemaRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        branch = request.branch or domain.default_branch
        head = await self.rt.db.read("get_branch", lambda txn: txn.get_branch(domain.id, branch))
        if head is None:
            raise Problem(404, "not-found", f"unknown branch {branch!r}")
        return reply({**visible_schema(access, domain, branch), "revision": head.head})

    @rpc
    async def CreateBranch(
        self, request: pb.CreateBranchRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        return reply(await branches.create_branch(self.rt, access, domain, _json(request.body)), status=201)

    @rpc
    async def ListBranches(self, request: pb.DomainRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        return reply(await branches.list_branches(self.rt, access, domain))

    @rpc
    async def GetBranch(self, request: pb.GetBranchRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        return reply(await branches.get_branch(self.rt, access, domain, request.branch))

    @rpc
    async def UpdateBranch(
        self, request: pb.UpdateBranchRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        return reply(
            await branches.update_branch(self.rt, access, domain, request.branch, _json(request.body))
        )

    @rpc
    async def DeleteBranch(self, request: pb.GetBranchRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        return reply(await branches.delete_branch(self.rt, access, domain, request.branch))

    # Proposals

    @rpc
    async def CreateProposal(
        self, request: pb.ProposalRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        document = await proposals.create_proposal(self.rt, access, domain, _json(request.body))
        return reply(document, status=201, revision="")

    @rpc
    async def ListProposals(self, request: pb.ProposalRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        document = await proposals.list_proposals(
            self.rt,
            access,
            domain,
            status=request.status,
            assigned=request.assigned,
            limit=request.limit,
            cursor=request.cursor,
        )
        return reply(document, revision="")

    @rpc
    async def GetProposal(self, request: pb.ProposalRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        return reply(await proposals.get_proposal(self.rt, access, domain, request.proposal), revision="")

    @rpc
    async def ReviewProposal(
        self, request: pb.ProposalRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        document = await proposals.review_proposal(
            self.rt, access, domain, request.proposal, _json(request.body)
        )
        return reply(document, revision="")

    @rpc
    async def MergeProposal(self, request: pb.ProposalRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        document = await proposals.merge_proposal(self.rt, access, domain, request.proposal)
        return reply(document, revision=document.get("merged_revision") or "")

    @rpc
    async def CloseProposal(self, request: pb.ProposalRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        return reply(await proposals.close_proposal(self.rt, access, domain, request.proposal), revision="")

    @rpc
    async def ListConflicts(self, request: pb.ProposalRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        return reply(
            await proposal_conflicts.list_conflicts(self.rt, access, domain, request.proposal), revision=""
        )

    @rpc
    async def ResolveConflict(
        self, request: pb.ProposalRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        document = await proposal_conflicts.resolve_conflict(
            self.rt, access, domain, request.proposal, request.conflict, _json(request.body)
        )
        return reply(document, revision="")

    # Writes

    @rpc
    async def ExecuteOperation(
        self, request: pb.ExecuteOperationRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        outcome = await operations.execute(
            self.rt, access, domain, request.operation, _json(request.body), request.idempotency_key
        )
        return reply(
            outcome.document, status=outcome.status, revision=outcome.revision, headers=outcome.headers
        )

    @rpc
    async def Import(self, request: pb.ImportRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        outcome = await imports.run_import(
            self.rt, access, domain, _json(request.body), request.idempotency_key
        )
        return reply(
            outcome.document, status=outcome.status, revision=outcome.revision, headers=outcome.headers
        )

    @rpc
    async def SyncSource(self, request: pb.SyncSourceRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        outcome = await sources.sync_source(
            self.rt, access, domain, request.source, _json(request.body), request.idempotency_key
        )
        return reply(
            outcome.document, status=outcome.status, revision=outcome.revision, headers=outcome.headers
        )

    # Governance: Scribe's suggestions from resolve misses

    @rpc
    async def ListSuggestions(
        self, request: pb.ListSuggestionsRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        return reply(await suggestions.list_suggestions(self.rt, access, domain, request.status))

    @rpc
    async def AcceptSuggestion(
        self, request: pb.SuggestionRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        return reply(await suggestions.decide(self.rt, access, domain, request.id, "accept"))

    @rpc
    async def DismissSuggestion(
        self, request: pb.SuggestionRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        return reply(await suggestions.decide(self.rt, access, domain, request.id, "dismiss"))

    # Reads

    @rpc
    async def GetRecord(self, request: pb.GetRecordRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        document = await records.get_record(
            self.rt,
            access,
            domain,
            branch=request.branch or None,
            kind_name=request.kind,
            key=request.key,
            at=request.at or None,
            links=request.links,
            lineage=request.lineage,
        )
        return reply(document)

    @rpc
    async def GetLinks(self, request: pb.GetLinksRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        document = await records.get_links(
            self.rt,
            access,
            domain,
            branch=request.branch or None,
            kind_name=request.kind,
            key=request.key,
            relation_name=request.relation,
            at=request.at or None,
            limit=request.limit,
            cursor=request.cursor or None,
        )
        return reply(document)

    @rpc
    async def GetHistory(self, request: pb.RecordRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        document = await history.get_history(
            self.rt,
            access,
            domain,
            branch=request.branch or None,
            kind_name=request.kind,
            key=request.key,
            at=request.at or None,
            values=request.values,
            limit=request.limit,
            cursor=request.cursor or None,
        )
        return reply(document)

    @rpc
    async def GetLineage(self, request: pb.RecordRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        document = await history.get_lineage(
            self.rt,
            access,
            domain,
            branch=request.branch or None,
            kind_name=request.kind,
            key=request.key,
            at=request.at or None,
        )
        return reply(document)

    @rpc
    async def Explain(self, request: pb.RecordRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        markdown = wants_markdown(request.format)
        domain, access = await self._domain(context, request.domain)
        document = await explain.explain(
            self.rt,
            access,
            domain,
            branch=request.branch or None,
            kind_name=request.kind,
            key=request.key,
            at=request.at or None,
        )
        if markdown:
            return markdown_reply(explain.explain_markdown(document), document["revision"])
        return reply(document)

    @rpc
    async def Diff(self, request: pb.DiffRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        document = await diff.diff(
            self.rt,
            access,
            domain,
            branch=request.branch or None,
            older=request.from_revision,
            newer=request.to_revision,
        )
        return reply(document)

    @rpc
    async def GetHealth(self, request: pb.HealthRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        markdown = wants_markdown(request.format)
        domain, access = await self._domain(context, request.domain)
        document = await data_health.data_health(
            self.rt,
            access,
            domain,
            branch=request.branch or None,
            at=request.at or None,
            kind_name=request.kind or None,
        )
        if markdown:
            return markdown_reply(data_health.health_markdown(document), document["revision"])
        return reply(document)

    @rpc
    async def Neighborhood(self, request: pb.GraphRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        return reply(await neighborhood.neighborhood(self.rt, access, domain, _json(request.body)))

    @rpc
    async def Context(self, request: pb.GraphRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        pack = await context_pack(self.rt, access, domain, _json(request.body))
        return pb.Reply(
            body=pack.body,
            revision=pack.revision,
            content_type=pack.content_type,
            status=200,
            headers={"ETag": pack.etag},
        )

    @rpc
    async def SetEmbedding(self, request: pb.EmbeddingRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        document = await set_embedding(
            self.rt, access, domain, request.kind, request.key, _json(request.body)
        )
        return reply(document)

    @rpc
    async def Resolve(self, request: pb.GraphRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        return reply(await resolve.resolve(self.rt, access, domain, _json(request.body)))

    @rpc
    async def Search(self, request: pb.GraphRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        return reply(await search.search(self.rt, access, domain, _json(request.body)))

    @rpc
    async def Traverse(self, request: pb.GraphRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        return reply(await neighborhood.traverse(self.rt, access, domain, _json(request.body)))

    @rpc
    async def Query(self, request: pb.QueryRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        return reply(await query.run_query(self.rt, access, domain, _json(request.body)))


__all__ = ["KeeperServicer"]
