"""The change feed routes (docs/rest.md, docs/feed.md): polling changes and the event stream (SSE),
each one Feed call. Registered before the branch routes: `{branch:path}` would take the suffixes."""

from __future__ import annotations

from fastapi import FastAPI, Request
from starlette.responses import Response

from lorebase.problems import Problem
from lorebase_gateway.app import Gateway, answer_response, credential, integer, routes_of
from lorebase_gateway.fanout import EventStreamResponse

DOMAIN = "/api/v1/domains/{domain}"


def register_feed(app: FastAPI, gw: Gateway) -> None:
    route = routes_of(app)

    @route(DOMAIN + "/branches/{branch:path}/changes", "GET")
    async def changes(request: Request) -> Response:
        p, q = request.path_params, request.query_params
        answer = await gw.feed.changes(
            credential=credential(request),
            domain=p["domain"],
            branch=p["branch"],
            since=q.get("since", ""),
            kinds=q.get("kinds", ""),
            limit=integer(request, "limit"),
        )
        return answer_response(request, answer)

    @route(DOMAIN + "/branches/{branch:path}/events", "GET")
    async def events(request: Request) -> Response:
        p, q = request.path_params, request.query_params
        if gw.draining:
            raise Problem(503, "unavailable", "the gateway is stopping; reconnect", retry_after=1)
        follower = await gw.fanout.follow(  # refusals (401, 403, 404, 400) answer as problem details
            credential=credential(request),
            domain=p["domain"],
            branch=p["branch"],
            kinds=q.get("kinds", ""),
            last_event_id=request.headers.get("last-event-id") or q.get("last_event_id", ""),
        )
        return EventStreamResponse(gw.fanout, follower)

    @route(DOMAIN + "/webhooks", "POST")
    async def create_webhook(request: Request) -> Response:
        answer = await gw.feed.create_webhook(
            credential=credential(request), domain=request.path_params["domain"], body=await gw.body(request)
        )
        return answer_response(request, answer)

    @route(DOMAIN + "/webhooks", "GET")
    async def list_webhooks(request: Request) -> Response:
        answer = await gw.feed.list_webhooks(
            credential=credential(request), domain=request.path_params["domain"]
        )
        return answer_response(request, answer)

    @route(DOMAIN + "/webhooks/{id}", "DELETE")
    async def delete_webhook(request: Request) -> Response:
        p = request.path_params
        answer = await gw.feed.delete_webhook(credential=credential(request), domain=p["domain"], id=p["id"])
        return answer_response(request, answer)

    @route(DOMAIN + "/webhooks/{id}", "PATCH")
    async def update_webhook(request: Request) -> Response:
        p = request.path_params
        answer = await gw.feed.update_webhook(
            credential=credential(request), domain=p["domain"], id=p["id"], body=await gw.body(request)
        )
        return answer_response(request, answer)


__all__ = ["register_feed"]
