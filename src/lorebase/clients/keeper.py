"""The async client of Keeper: one method per RPC, keyword-only arguments, `Problem` on failure."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from lorebase.clients._channel import ServiceClient
from lorebase.v1 import keeper_pb2 as pb
from lorebase.v1 import keeper_pb2_grpc


@dataclass(frozen=True)
class Answer:
    """A successful Keeper answer: the document and what the REST surface sends with it."""

    body: bytes
    revision: str
    content_type: str
    status: int
    headers: dict[str, str]

    def json(self) -> Any:
        return orjson.loads(self.body)


def _answer(reply: pb.Reply) -> Answer:
    return Answer(
        reply.body,
        reply.revision,
        reply.content_type or "application/json",
        reply.status or 200,
        dict(reply.headers),
    )


def _body(document: Any) -> bytes:
    return document if isinstance(document, bytes) else orjson.dumps(document)


class KeeperClient(ServiceClient):
    service = "keeper"

    def __init__(self, settings: Any) -> None:
        super().__init__(settings)
        self._stub = keeper_pb2_grpc.KeeperStub(self.channel)

    async def create_principal(
        self, *, credential: str, id: str, type: str, name: str, tenant: str = ""
    ) -> Answer:
        return _answer(
            await self._call(
                self._stub.CreatePrincipal,
                pb.CreatePrincipalRequest(id=id, type=type, name=name, tenant=tenant),
                credential=credential,
            )
        )

    async def create_key(self, *, credential: str, principal: str) -> Answer:
        return _answer(
            await self._call(
                self._stub.CreateKey, pb.CreateKeyRequest(principal=principal), credential=credential
            )
        )

    async def revoke_key(self, *, credential: str, principal: str, key_id: str) -> Answer:
        return _answer(
            await self._call(
                self._stub.RevokeKey,
                pb.RevokeKeyRequest(principal=principal, key_id=key_id),
                credential=credential,
            )
        )

    async def create_domain(self, *, credential: str, body: Any) -> Answer:
        return _answer(
            await self._call(
                self._stub.CreateDomain, pb.CreateDomainRequest(body=_body(body)), credential=credential
            )
        )

    async def list_domains(self, *, credential: str) -> Answer:
        return _answer(
            await self._call(self._stub.ListDomains, pb.ListDomainsRequest(), credential=credential)
        )

    async def get_domain(self, *, credential: str, domain: str) -> Answer:
        return _answer(
            await self._call(self._stub.GetDomain, pb.DomainRequest(domain=domain), credential=credential)
        )

    async def create_grant(self, *, credential: str, domain: str, body: Any) -> Answer:
        return _answer(
            await self._call(
                self._stub.CreateGrant,
                pb.CreateGrantRequest(domain=domain, body=_body(body)),
                credential=credential,
            )
        )

    async def delete_grant(self, *, credential: str, domain: str, grant_id: str) -> Answer:
        return _answer(
            await self._call(
                self._stub.DeleteGrant,
                pb.DeleteGrantRequest(domain=domain, grant_id=grant_id),
                credential=credential,
            )
        )

    async def get_schema(self, *, credential: str, domain: str, branch: str = "") -> Answer:
        return _answer(
            await self._call(
                self._stub.GetSchema, pb.GetSchemaRequest(domain=domain, branch=branch), credential=credential
            )
        )

    async def create_branch(self, *, credential: str, domain: str, body: Any) -> Answer:
        return _answer(
            await self._call(
                self._stub.CreateBranch,
                pb.CreateBranchRequest(domain=domain, body=_body(body)),
                credential=credential,
            )
        )

    async def list_branches(self, *, credential: str, domain: str) -> Answer:
        return _answer(
            await self._call(self._stub.ListBranches, pb.DomainRequest(domain=domain), credential=credential)
        )

    async def get_branch(self, *, credential: str, domain: str, branch: str) -> Answer:
        return _answer(
            await self._call(
                self._stub.GetBranch, pb.GetBranchRequest(domain=domain, branch=branch), credential=credential
            )
        )

    async def update_branch(self, *, credential: str, domain: str, branch: str, body: Any) -> Answer:
        return _answer(
            await self._call(
                self._stub.UpdateBranch,
                pb.UpdateBranchRequest(domain=domain, branch=branch, body=_body(body)),
                credential=credential,
            )
        )

    async def delete_branch(self, *, credential: str, domain: str, branch: str) -> Answer:
        return _answer(
            await self._call(
                self._stub.DeleteBranch,
                pb.GetBranchRequest(domain=domain, branch=branch),
                credential=credential,
            )
        )

    async def _proposal_call(self, method: Any, credential: str, **fields: Any) -> Answer:
        if "body" in fields:
            fields["body"] = _body(fields["body"])
        return _answer(await self._call(method, pb.ProposalRequest(**fields), credential=credential))

    async def create_proposal(self, *, credential: str, domain: str, body: Any) -> Answer:
        return await self._proposal_call(self._stub.CreateProposal, credential, domain=domain, body=body)

    async def list_proposals(
        self,
        *,
        credential: str,
        domain: str,
        status: str = "",
        assigned: str = "",
        limit: int = 0,
        cursor: str = "",
    ) -> Answer:
        return await self._proposal_call(
            self._stub.ListProposals,
            credential,
            domain=domain,
            status=status,
            assigned=assigned,
            limit=limit,
            cursor=cursor,
        )

    async def get_proposal(self, *, credential: str, domain: str, proposal: str) -> Answer:
        return await self._proposal_call(self._stub.GetProposal, credential, domain=domain, proposal=proposal)

    async def review_proposal(self, *, credential: str, domain: str, proposal: str, body: Any) -> Answer:
        return await self._proposal_call(
            self._stub.ReviewProposal, credential, domain=domain, proposal=proposal, body=body
        )

    async def merge_proposal(self, *, credential: str, domain: str, proposal: str) -> Answer:
        return await self._proposal_call(
            self._stub.MergeProposal, credential, domain=domain, proposal=proposal
        )

    async def close_proposal(self, *, credential: str, domain: str, proposal: str) -> Answer:
        return await self._proposal_call(
            self._stub.CloseProposal, credential, domain=domain, proposal=proposal
        )

    async def list_conflicts(self, *, credential: str, domain: str, proposal: str) -> Answer:
        return await self._proposal_call(
            self._stub.ListConflicts, credential, domain=domain, proposal=proposal
        )

    async def resolve_conflict(
        self, *, credential: str, domain: str, proposal: str, conflict: str, body: Any
    ) -> Answer:
        return await self._proposal_call(
            self._stub.ResolveConflict,
            credential,
            domain=domain,
            proposal=proposal,
            conflict=conflict,
            body=body,
        )

    async def execute_operation(
        self, *, credential: str, domain: str, operation: str, body: Any, idempotency_key: str = ""
    ) -> Answer:
        request = pb.ExecuteOperationRequest(
            domain=domain, operation=operation, body=_body(body), idempotency_key=idempotency_key
        )
        return _answer(await self._call(self._stub.ExecuteOperation, request, credential=credential))

    async def import_data(
        self, *, credential: str, domain: str, body: Any, idempotency_key: str = ""
    ) -> Answer:
        request = pb.ImportRequest(domain=domain, body=_body(body), idempotency_key=idempotency_key)
        return _answer(await self._call(self._stub.Import, request, credential=credential, bulk=True))

    async def sync_source(
        self, *, credential: str, domain: str, source: str, body: Any, idempotency_key: str = ""
    ) -> Answer:
        request = pb.SyncSourceRequest(
            domain=domain, source=source, body=_body(body), idempotency_key=idempotency_key
        )
        return _answer(await self._call(self._stub.SyncSource, request, credential=credential, bulk=True))

    async def list_suggestions(self, *, credential: str, domain: str, status: str = "") -> Answer:
        request = pb.ListSuggestionsRequest(domain=domain, status=status)
        return _answer(await self._call(self._stub.ListSuggestions, request, credential=credential))

    async def accept_suggestion(self, *, credential: str, domain: str, id: str) -> Answer:
        request = pb.SuggestionRequest(domain=domain, id=id)
        return _answer(await self._call(self._stub.AcceptSuggestion, request, credential=credential))

    async def dismiss_suggestion(self, *, credential: str, domain: str, id: str) -> Answer:
        request = pb.SuggestionRequest(domain=domain, id=id)
        return _answer(await self._call(self._stub.DismissSuggestion, request, credential=credential))

    async def get_record(
        self,
        *,
        credential: str,
        domain: str,
        kind: str,
        key: str,
        branch: str = "",
        at: str = "",
        links: bool = False,
        lineage: bool = False,
    ) -> Answer:
        request = pb.GetRecordRequest(
            domain=domain, branch=branch, kind=kind, key=key, at=at, links=links, lineage=lineage
        )
        return _answer(await self._call(self._stub.GetRecord, request, credential=credential))

    async def get_links(
        self,
        *,
        credential: str,
        domain: str,
        kind: str,
        key: str,
        relation: str,
        branch: str = "",
        at: str = "",
        limit: int = 0,
        cursor: str = "",
    ) -> Answer:
        request = pb.GetLinksRequest(
            domain=domain,
            branch=branch,
            kind=kind,
            key=key,
            relation=relation,
            at=at,
            limit=limit,
            cursor=cursor,
        )
        return _answer(await self._call(self._stub.GetLinks, request, credential=credential))

    async def get_history(
        self,
        *,
        credential: str,
        domain: str,
        kind: str,
        key: str,
        branch: str = "",
        at: str = "",
        values: bool = False,
        limit: int = 0,
        cursor: str = "",
    ) -> Answer:
        request = pb.RecordRequest(
            domain=domain, branch=branch, kind=kind, key=key, at=at, values=values, limit=limit, cursor=cursor
        )
        return _answer(await self._call(self._stub.GetHistory, request, credential=credential))

    async def get_lineage(
        self, *, credential: str, domain: str, kind: str, key: str, branch: str = "", at: str = ""
    ) -> Answer:
        request = pb.RecordRequest(domain=domain, branch=branch, kind=kind, key=key, at=at)
        return _answer(await self._call(self._stub.GetLineage, request, credential=credential))

    async def explain(
        self,
        *,
        credential: str,
        domain: str,
        kind: str,
        key: str,
        branch: str = "",
        at: str = "",
        format: str = "",
    ) -> Answer:
        request = pb.RecordRequest(domain=domain, branch=branch, kind=kind, key=key, at=at, format=format)
        return _answer(await self._call(self._stub.Explain, request, credential=credential))

    async def diff(
        self, *, credential: str, domain: str, from_revision: str, to_revision: str, branch: str = ""
    ) -> Answer:
        request = pb.DiffRequest(
            domain=domain, branch=branch, from_revision=from_revision, to_revision=to_revision
        )
        return _answer(await self._call(self._stub.Diff, request, credential=credential))

    async def get_health(
        self,
        *,
        credential: str,
        domain: str,
        kind: str = "",
        branch: str = "",
        at: str = "",
        format: str = "",
    ) -> Answer:
        request = pb.HealthRequest(domain=domain, branch=branch, kind=kind, at=at, format=format)
        return _answer(await self._call(self._stub.GetHealth, request, credential=credential))

    async def neighborhood(self, *, credential: str, domain: str, body: Any) -> Answer:
        request = pb.GraphRequest(domain=domain, body=_body(body))
        return _answer(await self._call(self._stub.Neighborhood, request, credential=credential))

    async def context(self, *, credential: str, domain: str, body: Any) -> Answer:
        request = pb.GraphRequest(domain=domain, body=_body(body))
        return _answer(await self._call(self._stub.Context, request, credential=credential))

    async def set_embedding(self, *, credential: str, domain: str, kind: str, key: str, body: Any) -> Answer:
        request = pb.EmbeddingRequest(domain=domain, kind=kind, key=key, body=_body(body))
        return _answer(await self._call(self._stub.SetEmbedding, request, credential=credential))

    async def resolve(self, *, credential: str, domain: str, body: Any) -> Answer:
        request = pb.GraphRequest(domain=domain, body=_body(body))
        return _answer(await self._call(self._stub.Resolve, request, credential=credential))

    async def search(self, *, credential: str, domain: str, body: Any) -> Answer:
        request = pb.GraphRequest(domain=domain, body=_body(body))
        return _answer(await self._call(self._stub.Search, request, credential=credential))

    async def traverse(self, *, credential: str, domain: str, body: Any) -> Answer:
        request = pb.GraphRequest(domain=domain, body=_body(body))
        return _answer(await self._call(self._stub.Traverse, request, credential=credential))

    async def add_session_note(self, *, credential: str, session: str, body: Any) -> Answer:
        request = pb.SessionNoteRequest(session=session, body=_body(body))
        return _answer(await self._call(self._stub.AddSessionNote, request, credential=credential))

    async def get_session(self, *, credential: str, session: str) -> Answer:
        return _answer(
            await self._call(self._stub.GetSession, pb.SessionRequest(session=session), credential=credential)
        )

    async def query(self, *, credential: str, domain: str, body: Any) -> Answer:
        return _answer(
            await self._call(
                self._stub.Query, pb.QueryRequest(domain=domain, body=_body(body)), credential=credential
            )
        )

    async def authorize_read(
        self, *, credential: str, domain: str, branch: str = "", permission: str = ""
    ) -> Answer:
        """For the feed: whether the caller holds `permission` (data.read) on the branch (a Problem
        when not)."""
        request = pb.AuthorizeReadRequest(domain=domain, branch=branch, permission=permission)
        return _answer(await self._call(self._stub.AuthorizeRead, request, credential=credential))


__all__ = ["Answer", "KeeperClient"]
