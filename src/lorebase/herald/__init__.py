"""Herald, Lorebase's MCP server (docs/herald.md): `lorebase herald` (or `lorebasehq-herald`, the light
distribution) over stdio or streamable HTTP.

The names below are imported on first use (PEP 562): `lorebase.herald.cli` is imported by every
`lorebase` command line, and the MCP SDK only when Herald runs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lorebase.herald.server import INSTRUCTIONS, build_server, http_app, serve_http, serve_stdio
    from lorebase.herald.tools import TOOLS, TOOLS_BY_NAME, Answer, HeraldTool, idempotency_key

_MODULES = {
    "INSTRUCTIONS": "server",
    "build_server": "server",
    "http_app": "server",
    "serve_http": "server",
    "serve_stdio": "server",
    "TOOLS": "tools",
    "TOOLS_BY_NAME": "tools",
    "Answer": "tools",
    "HeraldTool": "tools",
    "idempotency_key": "tools",
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module 'lorebase.herald' has no attribute {name!r}")
    return getattr(importlib.import_module(f"lorebase.herald.{module}"), name)


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
