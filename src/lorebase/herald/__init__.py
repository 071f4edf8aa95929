"""Herald, Lorebase's MCP server (docs/herald.md): `lorebase herald` over stdio or streamable HTTP."""

from lorebase.herald.server import INSTRUCTIONS, build_server, http_app, serve_http, serve_stdio
from lorebase.herald.tools import TOOLS, TOOLS_BY_NAME, Answer, HeraldTool, idempotency_key

__all__ = [
    "INSTRUCTIONS",
    "TOOLS",
    "TOOLS_BY_NAME",
    "Answer",
    "HeraldTool",
    "build_server",
    "http_app",
    "idempotency_key",
    "serve_http",
    "serve_stdio",
]
