"""Herald, the MCP server (docs/herald.md): Lorebase's REST reads and Operation writes as MCP tools,
over stdio or streamable HTTP, built on the official `mcp` SDK's low-level server (2.x, or 1.x from
1.10: lorebase.herald.sdk hides the difference).

Herald holds no credential of its own. Over stdio it sends the LOREBASE_KEY of the process that
started it (the agent's); over HTTP it forwards the `Authorization` header of each MCP request to
REST, and a request without one gets a tool error, never Herald's environment's key. So every tool
call is authorized by Keeper exactly like the caller's own REST call: Herald never widens what a
key may read.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import jsonschema
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from lorebase import __version__
from lorebase.clients.rest import RestClient, RestSettings
from lorebase.herald import sdk
from lorebase.herald.problems import for_agents
from lorebase.herald.sdk import InvalidParams, Result, ToolSpec, run_stdio, streamable_http_app
from lorebase.herald.tools import TOOLS, TOOLS_BY_NAME, HeraldTool
from lorebase.problems import Problem

INSTRUCTIONS = """\
Lorebase holds a typed, versioned knowledge graph. The loop:
1. lorebase_context for the Records the task is about (a lens such as supplier_risk helps).
2. Targeted reads when the pack is not enough: lorebase_resolve the words, then lorebase_query;
   lorebase_search; lorebase_record. Read coverage notes before concluding "none".
3. lorebase_explain, lorebase_history and lorebase_lineage before acting on a surprising value.
4. Write only with lorebase_execute: dry run first, then dry_run false with a task and an intent;
   a write that needs review opens a Proposal (follow it with lorebase_proposals).
5. lorebase_changes with the revision of your pack to refresh only what changed.
"""


def _text(text: str, *, error: bool = False, data: Any = None) -> Result:
    return Result(text, error=error, data=data)


def _problem_result(problem: Problem) -> Result:
    """A problem as a tool error the model can act on: its detail names tools, not REST routes."""
    document = problem.document()
    if isinstance(document.get("detail"), str):
        document["detail"] = for_agents(document["detail"])
    text = f"{problem.title}: {document.get('detail', problem.detail)}\n{json.dumps(document)}"
    return _text(text, error=True, data=document)


def _authorization(request: Any, *, http: bool) -> str | None:
    """The credential of this MCP request: its Authorization header over HTTP (None without one)."""
    if not http:
        return ""
    headers = getattr(request, "headers", None)
    value = headers.get("authorization") if headers is not None else None
    return value or None


def _invalid(tool: HeraldTool, arguments: dict[str, Any]) -> str | None:
    validator = jsonschema.Draft202012Validator(tool.input_schema)
    errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
    if not errors:
        return None
    return "; ".join(
        f"{'.'.join(str(p) for p in error.absolute_path) or 'arguments'}: {error.message}" for error in errors
    )


def build_server(settings: RestSettings, *, domain: str, http: bool = False) -> Any:
    """The MCP server: `settings` say where the gateway is (and, over stdio, the key)."""
    if http:
        settings = replace(settings, key="")  # over HTTP only the caller's header counts

    async def call_tool(name: str, arguments: dict[str, Any], request: Any) -> Result:
        tool = TOOLS_BY_NAME.get(name)
        if tool is None:  # a protocol error (the MCP spec: unknown tools are -32602), not a tool's answer
            raise InvalidParams(f"unknown tool {name!r}; tools/list names them: {', '.join(TOOLS_BY_NAME)}")
        invalid = _invalid(tool, arguments)
        if invalid:
            return _text(f"invalid arguments for {tool.name}: {invalid}", error=True)
        authorization = _authorization(request, http=http)
        if authorization is None:
            return _text(
                "Herald forwards your credential to Lorebase: send 'Authorization: Bearer <key>' with the "
                "MCP request",
                error=True,
            )
        call_settings = replace(settings, authorization=authorization) if authorization else settings
        async with RestClient(call_settings) as client:
            try:
                answer = await tool.run(client, arguments.get("domain") or domain, arguments)
            except Problem as problem:
                return _problem_result(problem)
        return _text(answer.text, data=answer.data)

    tools = [
        ToolSpec(t.name, t.description, t.input_schema, t.read_only, t.destructive, t.idempotent)
        for t in TOOLS
    ]
    return sdk.build_server(
        "lorebase-herald",
        version=__version__,
        title="Lorebase Herald",
        instructions=INSTRUCTIONS,
        tools=tools,
        call=call_tool,
    )


async def serve_stdio(settings: RestSettings, *, domain: str) -> None:
    await run_stdio(build_server(settings, domain=domain))


PROTECTED_RESOURCE_PATH = "/.well-known/oauth-protected-resource"


def _origin(scope: Scope) -> str:
    """The scheme and host the client used (behind a proxy: X-Forwarded-Proto and Host)."""
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
    scheme = str(headers.get("x-forwarded-proto") or scope.get("scheme") or "http").split(",")[0].strip()
    host = headers.get("host") or "127.0.0.1"
    return f"{scheme}://{host}"


def protected_resource(origin: str, authorization_servers: Sequence[str] = ()) -> dict[str, Any]:
    """The OAuth 2.0 Protected Resource Metadata (RFC 9728) of Herald's MCP endpoint: Lorebase is
    the resource, and its bearer tokens are Lorebase API keys or access tokens of the identity
    providers Lorebase trusts (keeper.auth.oidc), named as its `authorization_servers` so that an
    MCP host with OAuth signs in there (docs/herald.md, "Signing in with OAuth")."""
    metadata: dict[str, Any] = {
        "resource": f"{origin}/mcp",
        "resource_name": "Lorebase (Herald MCP server)",
        "bearer_methods_supported": ["header"],
        "resource_documentation": "https://github.com/lorebase/lorebase/blob/main/docs/herald.md",
    }
    if authorization_servers:
        metadata["authorization_servers"] = list(authorization_servers)
    return metadata


def with_authorization(app: ASGIApp, authorization_servers: Sequence[str] = ()) -> ASGIApp:
    """The MCP authorization spec's side of a resource server: a request to /mcp without a credential
    is answered 401 with `WWW-Authenticate: Bearer resource_metadata=...`, and the metadata document
    is served at /.well-known/oauth-protected-resource (and .../mcp), so a stock MCP client learns
    how to authenticate. A request with a credential goes to the MCP app, which forwards it."""

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        path = scope.get("path", "")
        if path in (PROTECTED_RESOURCE_PATH, PROTECTED_RESOURCE_PATH + "/mcp"):
            await JSONResponse(protected_resource(_origin(scope), authorization_servers))(
                scope, receive, send
            )
            return
        has_credential = any(name.lower() == b"authorization" and value for name, value in scope["headers"])
        if path.startswith("/mcp") and not has_credential:
            metadata = _origin(scope) + PROTECTED_RESOURCE_PATH + "/mcp"
            answer = JSONResponse(
                {
                    "error": "invalid_request",
                    "error_description": "send a Lorebase API key as 'Authorization: Bearer <key>' "
                    "(lorebase keys create makes one), or sign in with an authorization server the "
                    "metadata names",
                },
                status_code=401,
                headers={"WWW-Authenticate": f'Bearer resource_metadata="{metadata}"'},
            )
            await answer(scope, receive, send)
            return
        await app(scope, receive, send)

    return guarded


def http_app(
    settings: RestSettings, *, domain: str, host: str = "127.0.0.1", authorization_servers: Sequence[str] = ()
) -> Any:
    """The streamable HTTP app (an ASGI app serving /mcp), behind `with_authorization`."""
    server = build_server(settings, domain=domain, http=True)
    # lifespan passes through
    return with_authorization(streamable_http_app(server, host=host), authorization_servers)


async def serve_http(
    settings: RestSettings, *, domain: str, host: str, port: int, authorization_servers: Sequence[str] = ()
) -> None:
    import uvicorn

    app = http_app(settings, domain=domain, host=host, authorization_servers=authorization_servers)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve()


__all__ = [
    "INSTRUCTIONS",
    "build_server",
    "http_app",
    "protected_resource",
    "serve_http",
    "serve_stdio",
    "with_authorization",
]
