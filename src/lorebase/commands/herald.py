"""`lorebase herald`: the MCP server (docs/herald.md). The `mcp` SDK is imported only here."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

from lorebase.clients.rest import RestSettings
from lorebase.commands._runtime import domain_of
from lorebase.config import Settings
from lorebase.subcommands import command


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--transport",
        choices=["stdio", "http"],
        default="stdio",
        help="stdio (default: the agent starts Herald) or http (streamable HTTP on /mcp)",
    )
    parser.add_argument("--host", default="127.0.0.1", help="http: the address to listen on")
    parser.add_argument("--port", type=int, default=8765, help="http: the port (default 8765)")
    parser.add_argument("--url", help="the gateway (default: LOREBASE_URL, else http://127.0.0.1:8080)")
    parser.add_argument("--domain", help="the default Domain of the tools (LOREBASE_DOMAIN, else supply)")


@command(
    "herald",
    "the MCP server: Lorebase's reads and Operation writes as tools for agents (stdio or HTTP)",
    _arguments,
    needs_settings=False,
)
def _herald(args: argparse.Namespace, settings: Settings) -> int:
    from lorebase.herald import serve_http, serve_stdio

    rest = RestSettings.from_env(url=args.url)
    domain = domain_of(args)
    try:
        if args.transport == "stdio":
            if not os.environ.get("LOREBASE_KEY"):
                print("lorebase herald: set LOREBASE_KEY (the agent's key)", file=sys.stderr)
                return 1
            asyncio.run(serve_stdio(rest, domain=domain))
        else:
            asyncio.run(serve_http(rest, domain=domain, host=args.host, port=args.port))
    except KeyboardInterrupt:
        return 0
    return 0
