"""The MCP SDK as Herald uses it, over its two APIs, so that the light distribution (clients/herald)
runs with the SDK a host already has: 2.x and 1.x from 1.10 (docs/herald.md, "MCP SDK versions").

- **2.x**: the `mcp_types` package (snake_case models), handlers given to the low-level
  `Server(on_list_tools=..., on_call_tool=...)`, `MCPError`, `Server.streamable_http_app`.
- **1.x**: `mcp.types` (camelCase models: `inputSchema`, `isError`, `structuredContent`), handlers
  registered per request type. Herald registers them raw (`request_handlers`), not through the
  `call_tool` decorator, which turns every exception into a tool error: an unknown tool must be the
  JSON-RPC error -32602 (`McpError`). Streamable HTTP is the SDK's session manager under a
  Starlette route, with the DNS-rebinding protection 2.x turns on for a loopback host. 1.10 is the
  first with `structuredContent` and streamable HTTP's request in the request context.

Herald's server (lorebase.herald.server) sees only ToolSpec, Result, InvalidParams and the functions
below; the 1.x modules are imported by name, so type checking runs against the 2.x SDK.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

try:
    import mcp_types

    V2 = True
except ImportError:  # mcp 1.x: its types are mcp.types
    V2 = False


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool
    destructive: bool
    idempotent: bool


@dataclass(frozen=True)
class Result:
    """A tool's answer: its text, whether it is an error, and its structured content (a dict)."""

    text: str
    error: bool = False
    data: Any = None


class InvalidParams(Exception):
    """A request the protocol refuses (JSON-RPC -32602), such as a call to an unknown tool."""


# (tool name, arguments, the HTTP request of the MCP message or None over stdio) -> the answer
CallTool = Callable[[str, dict[str, Any], Any], Awaitable[Result]]

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def build_server(
    name: str, *, version: str, title: str, instructions: str, tools: list[ToolSpec], call: CallTool
) -> Any:
    """The low-level MCP server with Herald's tools/list and tools/call."""
    return (_build_v2 if V2 else _build_v1)(name, version, title, instructions, tools, call)


def _build_v2(
    name: str, version: str, title: str, instructions: str, tools: list[ToolSpec], call: CallTool
) -> Any:
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError

    types = mcp_types
    listed = types.ListToolsResult(
        tools=[
            types.Tool(
                name=t.name,
                description=t.description,
                input_schema=t.input_schema,
                annotations=types.ToolAnnotations(
                    read_only_hint=t.read_only,
                    destructive_hint=t.destructive,
                    idempotent_hint=t.idempotent,
                    open_world_hint=False,
                ),
            )
            for t in tools
        ]
    )

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return listed

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        try:
            result = await call(params.name, dict(params.arguments or {}), ctx.request)
        except InvalidParams as exc:
            raise MCPError(types.INVALID_PARAMS, str(exc)) from None
        return types.CallToolResult(
            content=[types.TextContent(text=result.text)],
            structured_content=result.data if isinstance(result.data, dict) else None,
            is_error=result.error,
        )

    return Server(
        name,
        version=version,
        title=title,
        instructions=instructions,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _build_v1(
    name: str, version: str, title: str, instructions: str, tools: list[ToolSpec], call: CallTool
) -> Any:
    types: Any = importlib.import_module("mcp.types")
    server: Any = importlib.import_module("mcp.server.lowlevel").Server(
        name, version=version, instructions=instructions
    )
    mcp_error: Any = importlib.import_module("mcp.shared.exceptions").McpError
    listed = types.ListToolsResult(
        tools=[
            types.Tool(
                name=t.name,
                description=t.description,
                inputSchema=t.input_schema,
                annotations=types.ToolAnnotations(
                    readOnlyHint=t.read_only,
                    destructiveHint=t.destructive,
                    idempotentHint=t.idempotent,
                    openWorldHint=False,
                ),
            )
            for t in tools
        ]
    )

    async def list_tools(request: Any) -> Any:
        return types.ServerResult(listed)

    async def call_tool(request: Any) -> Any:
        http_request = getattr(server.request_context, "request", None)
        params = request.params
        try:
            result = await call(params.name, dict(params.arguments or {}), http_request)
        except InvalidParams as exc:
            raise mcp_error(types.ErrorData(code=types.INVALID_PARAMS, message=str(exc))) from None
        return types.ServerResult(
            types.CallToolResult(
                content=[types.TextContent(type="text", text=result.text)],
                structuredContent=result.data if isinstance(result.data, dict) else None,
                isError=result.error,
            )
        )

    server.request_handlers[types.ListToolsRequest] = list_tools
    server.request_handlers[types.CallToolRequest] = call_tool
    return server


async def run_stdio(server: Any) -> None:
    """Serve one MCP session over stdin and stdout."""
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def streamable_http_app(server: Any, *, host: str) -> Any:
    """The streamable HTTP app serving /mcp with JSON answers (an ASGI app with its lifespan)."""
    if V2:
        return server.streamable_http_app(host=host, json_response=True)
    from starlette.applications import Starlette
    from starlette.routing import Route

    manager_module: Any = importlib.import_module("mcp.server.streamable_http_manager")
    security: Any = None
    if host in LOOPBACK:
        settings: Any = importlib.import_module("mcp.server.transport_security").TransportSecuritySettings
        security = settings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
        )
    manager = manager_module.StreamableHTTPSessionManager(
        app=server, json_response=True, security_settings=security
    )

    class Endpoint:  # an object, not a function: Starlette passes it the raw ASGI call
        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            await manager.handle_request(scope, receive, send)

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        async with manager.run():
            yield

    return Starlette(routes=[Route("/mcp", endpoint=Endpoint())], lifespan=lifespan)


__all__ = [
    "V2",
    "CallTool",
    "InvalidParams",
    "Result",
    "ToolSpec",
    "build_server",
    "run_stdio",
    "streamable_http_app",
]
