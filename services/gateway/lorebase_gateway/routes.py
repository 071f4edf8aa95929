"""The documented REST routes (docs/rest.md), each one Keeper call."""

from __future__ import annotations

import orjson
from fastapi import FastAPI, Request
from starlette.responses import Response

from lorebase.problems import Problem
from lorebase_gateway.app import (
    Gateway,
    Route,
    add_route,
    answer_response,
    credential,
    flag,
    handled,
    integer,
    routes_of,
)
from lorebase_gateway.feed_routes import register_feed

API = "/api/v1"
DOMAIN = API + "/domains/{domain}"


def _body_read(gw: Gateway, name: str) -> Route:
    async def endpoint(request: Request) -> Response:
        method = getattr(gw.keeper, name)
        answer = await method(
            credential=credential(request), domain=request.path_params["domain"], body=await gw.body(request)
        )
        return answer_response(request, answer)

    endpoint.__name__ = name
    return endpoint


def register(app: FastAPI, gw: Gateway) -> None:
    from lorebase_gateway.memory_routes import register_memory

    register_memory(app, gw)

    route = routes_of(app)

    # Administration

    @route(API + "/principals", "POST")
    async def create_principal(request: Request) -> Response:
        caller = credential(request)
        body = orjson.loads(await gw.body(request))
        for member in ("id", "type"):
            if not isinstance(body.get(member), str):
                raise Problem(
                    422,
                    "validation-failed",
                    f"{member} is required (a string)",
                    issues=[{"path": member, "rule": "required", "message": f"{member} is required"}],
                )
        name = body.get("name") if isinstance(body.get("name"), str) else ""
        tenant = body.get("tenant", "")
        if not isinstance(tenant, str):
            raise Problem(
                422,
                "validation-failed",
                "tenant is a string",
                issues=[{"path": "tenant", "rule": "principal.tenant", "message": "tenant is a string"}],
            )
        answer = await gw.keeper.create_principal(
            credential=caller, id=body["id"], type=body["type"], name=name, tenant=tenant
        )
        return answer_response(request, answer)

    @route(API + "/principals/{principal}/keys", "POST")
    async def create_key(request: Request) -> Response:
        answer = await gw.keeper.create_key(
            credential=credential(request), principal=request.path_params["principal"]
        )
        return answer_response(request, answer)

    @route(API + "/principals/{principal}/keys/{key_id}", "DELETE")
    async def revoke_key(request: Request) -> Response:
        p = request.path_params
        return answer_response(
            request,
            await gw.keeper.revoke_key(
                credential=credential(request), principal=p["principal"], key_id=p["key_id"]
            ),
        )

    @route(API + "/sessions/{session}/notes", "POST")
    async def add_session_note(request: Request) -> Response:
        answer = await gw.keeper.add_session_note(
            credential=credential(request),
            session=request.path_params["session"],
            body=await gw.body(request),
        )
        return answer_response(request, answer)

    @route(API + "/sessions/{session}", "GET")
    async def get_session(request: Request) -> Response:
        answer = await gw.keeper.get_session(
            credential=credential(request), session=request.path_params["session"]
        )
        return answer_response(request, answer)

    @route(API + "/domains", "GET")
    async def list_domains(request: Request) -> Response:
        return answer_response(request, await gw.keeper.list_domains(credential=credential(request)))

    @route(API + "/domains", "POST")
    async def create_domain(request: Request) -> Response:
        return answer_response(
            request,
            await gw.keeper.create_domain(credential=credential(request), body=await gw.body(request)),
        )

    @route(DOMAIN, "GET")
    async def get_domain(request: Request) -> Response:
        return answer_response(
            request,
            await gw.keeper.get_domain(credential=credential(request), domain=request.path_params["domain"]),
        )

    @route(DOMAIN + "/grants", "POST")
    async def create_grant(request: Request) -> Response:
        answer = await gw.keeper.create_grant(
            credential=credential(request), domain=request.path_params["domain"], body=await gw.body(request)
        )
        return answer_response(request, answer)

    @route(DOMAIN + "/grants/{grant_id}", "DELETE")
    async def delete_grant(request: Request) -> Response:
        p = request.path_params
        return answer_response(
            request,
            await gw.keeper.delete_grant(
                credential=credential(request), domain=p["domain"], grant_id=p["grant_id"]
            ),
        )

    # The change feed first: `/branches/{branch:path}` below would take `/changes` and `/events`.
    register_feed(app, gw)

    # Schema and branches

    @route(DOMAIN + "/schema", "GET")
    async def get_schema(request: Request) -> Response:
        answer = await gw.keeper.get_schema(
            credential=credential(request),
            domain=request.path_params["domain"],
            branch=request.query_params.get("branch", ""),
        )
        return answer_response(request, answer, etag=True)

    @route(DOMAIN + "/branches", "POST")
    async def create_branch(request: Request) -> Response:
        answer = await gw.keeper.create_branch(
            credential=credential(request), domain=request.path_params["domain"], body=await gw.body(request)
        )
        return answer_response(request, answer)

    @route(DOMAIN + "/branches", "GET")
    async def list_branches(request: Request) -> Response:
        return answer_response(
            request,
            await gw.keeper.list_branches(
                credential=credential(request), domain=request.path_params["domain"]
            ),
        )

    @route(DOMAIN + "/branches/{branch:path}", "GET")
    async def get_branch(request: Request) -> Response:
        p = request.path_params
        return answer_response(
            request,
            await gw.keeper.get_branch(
                credential=credential(request), domain=p["domain"], branch=p["branch"]
            ),
        )

    @route(DOMAIN + "/branches/{branch:path}", "PATCH")
    async def update_branch(request: Request) -> Response:
        p = request.path_params
        answer = await gw.keeper.update_branch(
            credential=credential(request),
            domain=p["domain"],
            branch=p["branch"],
            body=await gw.body(request),
        )
        return answer_response(request, answer)

    @route(DOMAIN + "/branches/{branch:path}", "DELETE")
    async def delete_branch(request: Request) -> Response:
        p = request.path_params
        answer = await gw.keeper.delete_branch(
            credential=credential(request), domain=p["domain"], branch=p["branch"]
        )
        return answer_response(request, answer)

    # Proposals

    @route(DOMAIN + "/proposals", "POST")
    async def create_proposal(request: Request) -> Response:
        answer = await gw.keeper.create_proposal(
            credential=credential(request), domain=request.path_params["domain"], body=await gw.body(request)
        )
        return answer_response(request, answer)

    @route(DOMAIN + "/proposals", "GET")
    async def list_proposals(request: Request) -> Response:
        q = request.query_params
        answer = await gw.keeper.list_proposals(
            credential=credential(request),
            domain=request.path_params["domain"],
            status=q.get("status", ""),
            assigned=q.get("assigned", ""),
            limit=integer(request, "limit"),
            cursor=q.get("cursor", ""),
        )
        return answer_response(request, answer)

    def _proposal_route(name: str, *, body: bool = False, conflict: bool = False) -> Route:
        async def endpoint(request: Request) -> Response:
            p = request.path_params
            fields = {"credential": credential(request), "domain": p["domain"], "proposal": p["proposal"]}
            if conflict:
                fields["conflict"] = p["conflict"]
            if body:
                fields["body"] = await gw.body(request)
            return answer_response(request, await getattr(gw.keeper, name)(**fields))

        endpoint.__name__ = name
        return endpoint

    for path, method, name, has_body, has_conflict in (
        ("/proposals/{proposal}", "GET", "get_proposal", False, False),
        ("/proposals/{proposal}/reviews", "POST", "review_proposal", True, False),
        ("/proposals/{proposal}/merge", "POST", "merge_proposal", False, False),
        ("/proposals/{proposal}/close", "POST", "close_proposal", False, False),
        ("/proposals/{proposal}/conflicts", "GET", "list_conflicts", False, False),
        ("/proposals/{proposal}/conflicts/{conflict}/resolve", "POST", "resolve_conflict", True, True),
    ):
        route(DOMAIN + path, method)(_proposal_route(name, body=has_body, conflict=has_conflict))

    # Writes

    @route(DOMAIN + "/operations/{operation}/execute", "POST")
    async def execute(request: Request) -> Response:
        p = request.path_params
        answer = await gw.keeper.execute_operation(
            credential=credential(request),
            domain=p["domain"],
            operation=p["operation"],
            body=await gw.body(request),
            idempotency_key=request.headers.get("idempotency-key", ""),
        )
        return answer_response(request, answer)

    @route(DOMAIN + "/imports", "POST")
    async def run_import(request: Request) -> Response:
        answer = await gw.keeper.import_data(
            credential=credential(request),
            domain=request.path_params["domain"],
            body=await gw.body(request, limit=gw.max_import_body_bytes, setting="http.max_import_body_bytes"),
            idempotency_key=request.headers.get("idempotency-key", ""),
        )
        return answer_response(request, answer)

    @route(DOMAIN + "/sources/{source}/sync", "POST")
    async def sync_source(request: Request) -> Response:
        p = request.path_params
        answer = await gw.keeper.sync_source(
            credential=credential(request),
            domain=p["domain"],
            source=p["source"],
            body=await gw.body(request, limit=gw.max_import_body_bytes, setting="http.max_import_body_bytes"),
            idempotency_key=request.headers.get("idempotency-key", ""),
        )
        return answer_response(request, answer)

    # Governance

    @route(DOMAIN + "/suggestions", "GET")
    async def list_suggestions(request: Request) -> Response:
        answer = await gw.keeper.list_suggestions(
            credential=credential(request),
            domain=request.path_params["domain"],
            status=request.query_params.get("status", ""),
        )
        return answer_response(request, answer)

    @route(DOMAIN + "/suggestions/{id}/accept", "POST")
    async def accept_suggestion(request: Request) -> Response:
        p = request.path_params
        answer = await gw.keeper.accept_suggestion(
            credential=credential(request), domain=p["domain"], id=p["id"]
        )
        return answer_response(request, answer)

    @route(DOMAIN + "/suggestions/{id}/dismiss", "POST")
    async def dismiss_suggestion(request: Request) -> Response:
        p = request.path_params
        answer = await gw.keeper.dismiss_suggestion(
            credential=credential(request), domain=p["domain"], id=p["id"]
        )
        return answer_response(request, answer)

    # Reads

    @route(DOMAIN + "/kinds/{kind}/records/{key}", "GET")
    async def get_record(request: Request) -> Response:
        p, q = request.path_params, request.query_params
        answer = await gw.keeper.get_record(
            credential=credential(request),
            domain=p["domain"],
            kind=p["kind"],
            key=p["key"],
            branch=q.get("branch", ""),
            at=q.get("at", ""),
            links=flag(request, "links"),
            lineage=flag(request, "lineage"),
        )
        return answer_response(request, answer, etag=True)

    @route(DOMAIN + "/kinds/{kind}/records/{key}/links/{relation}", "GET")
    async def get_links(request: Request) -> Response:
        p, q = request.path_params, request.query_params
        answer = await gw.keeper.get_links(
            credential=credential(request),
            domain=p["domain"],
            kind=p["kind"],
            key=p["key"],
            relation=p["relation"],
            branch=q.get("branch", ""),
            at=q.get("at", ""),
            limit=integer(request, "limit"),
            cursor=q.get("cursor", ""),
        )
        return answer_response(request, answer, etag=True)

    @route(DOMAIN + "/kinds/{kind}/records/{key}/history", "GET")
    async def get_history(request: Request) -> Response:
        p, q = request.path_params, request.query_params
        answer = await gw.keeper.get_history(
            credential=credential(request),
            domain=p["domain"],
            kind=p["kind"],
            key=p["key"],
            branch=q.get("branch", ""),
            at=q.get("at", ""),
            values=flag(request, "values"),
            limit=integer(request, "limit"),
            cursor=q.get("cursor", ""),
        )
        return answer_response(request, answer, etag=True)

    @route(DOMAIN + "/kinds/{kind}/records/{key}/lineage", "GET")
    async def get_lineage(request: Request) -> Response:
        p, q = request.path_params, request.query_params
        answer = await gw.keeper.get_lineage(
            credential=credential(request),
            domain=p["domain"],
            kind=p["kind"],
            key=p["key"],
            branch=q.get("branch", ""),
            at=q.get("at", ""),
        )
        return answer_response(request, answer, etag=True)

    @route(DOMAIN + "/kinds/{kind}/records/{key}/explain", "GET")
    async def explain(request: Request) -> Response:
        p, q = request.path_params, request.query_params
        answer = await gw.keeper.explain(
            credential=credential(request),
            domain=p["domain"],
            kind=p["kind"],
            key=p["key"],
            branch=q.get("branch", ""),
            at=q.get("at", ""),
            format=q.get("format", ""),
        )
        return answer_response(request, answer, etag=True)

    @route(DOMAIN + "/diff", "GET")
    async def diff(request: Request) -> Response:
        q = request.query_params
        answer = await gw.keeper.diff(
            credential=credential(request),
            domain=request.path_params["domain"],
            branch=q.get("branch", ""),
            from_revision=q.get("from", ""),
            to_revision=q.get("to", ""),
        )
        return answer_response(request, answer, etag=True)

    @route(DOMAIN + "/health", "GET")
    async def get_health(request: Request) -> Response:
        q = request.query_params
        answer = await gw.keeper.get_health(
            credential=credential(request),
            domain=request.path_params["domain"],
            branch=q.get("branch", ""),
            at=q.get("at", ""),
            format=q.get("format", ""),
        )
        return answer_response(request, answer, etag=True)

    @route(DOMAIN + "/kinds/{kind}/health", "GET")
    async def get_kind_health(request: Request) -> Response:
        p, q = request.path_params, request.query_params
        answer = await gw.keeper.get_health(
            credential=credential(request),
            domain=p["domain"],
            kind=p["kind"],
            branch=q.get("branch", ""),
            at=q.get("at", ""),
            format=q.get("format", ""),
        )
        return answer_response(request, answer, etag=True)

    @route(DOMAIN + "/kinds/{kind}/records/{key}/embedding", "PUT")
    async def set_embedding(request: Request) -> Response:
        p = request.path_params
        answer = await gw.keeper.set_embedding(
            credential=credential(request),
            domain=p["domain"],
            kind=p["kind"],
            key=p["key"],
            body=await gw.body(request),
        )
        return answer_response(request, answer)

    # The reads whose whole request is a JSON body: one Keeper method each, of the same name.
    for name in ("context", "neighborhood", "traverse", "search", "resolve"):
        add_route(app, DOMAIN + f"/{name}", "POST", handled(_body_read(gw, name)))

    @route(DOMAIN + "/query", "POST")
    async def query(request: Request) -> Response:
        answer = await gw.keeper.query(
            credential=credential(request), domain=request.path_params["domain"], body=await gw.body(request)
        )
        return answer_response(request, answer)


__all__ = ["register"]
