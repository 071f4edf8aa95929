"""Herald's command line, shared by `lorebase herald` (the full distribution) and `lorebasehq-herald`
(the light one, clients/herald: Herald alone against a remote Lorebase). It imports only what the
light distribution ships: the REST client, the contract and the MCP SDK (docs/herald.md)."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence

from lorebase.clients.rest import DEFAULT_DOMAIN, RestSettings

ENVIRONMENT = """\
environment:
  LOREBASE_URL     the Lorebase gateway (default http://127.0.0.1:8080)
  LOREBASE_KEY     the agent's API key (stdio: required; http: each caller sends its own)
  LOREBASE_DOMAIN  the tools' default Domain (default supply)
  LOREBASE_AUTHORIZATION_SERVERS  http: the identity providers (issuer URLs, space-separated) whose
                   access tokens Lorebase accepts (keeper.auth.oidc), named in the RFC 9728 metadata
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
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
    parser.add_argument(
        "--authorization-server",
        action="append",
        default=[],
        help="http: an identity provider (issuer URL) whose tokens Lorebase accepts; MCP hosts with OAuth "
        "sign in there (LOREBASE_AUTHORIZATION_SERVERS)",
    )


def run(args: argparse.Namespace, *, program: str = "lorebase herald") -> int:
    """Serve until stdin closes (stdio) or the process is stopped (http)."""
    from lorebase.herald.server import serve_http, serve_stdio

    rest = RestSettings.from_env(url=args.url)
    domain = str(args.domain or os.environ.get("LOREBASE_DOMAIN") or DEFAULT_DOMAIN)
    try:
        if args.transport == "stdio":
            if not os.environ.get("LOREBASE_KEY"):
                print(f"{program}: set LOREBASE_KEY (the agent's key)", file=sys.stderr)
                return 1
            asyncio.run(serve_stdio(rest, domain=domain))
        else:
            servers = (
                list(args.authorization_server)
                or os.environ.get("LOREBASE_AUTHORIZATION_SERVERS", "").split()
            )
            asyncio.run(
                serve_http(rest, domain=domain, host=args.host, port=args.port, authorization_servers=servers)
            )
    except KeyboardInterrupt:
        return 0
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """`lorebasehq-herald`: Herald, Lorebase's MCP server, against a remote Lorebase."""
    parser = argparse.ArgumentParser(
        prog="lorebasehq-herald",
        description="Herald, Lorebase's MCP server: its reads and Operation writes as tools for agents.",
        epilog=ENVIRONMENT,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(parser)
    return run(parser.parse_args(argv), program="lorebasehq-herald")


if __name__ == "__main__":
    raise SystemExit(main())

__all__ = ["ENVIRONMENT", "add_arguments", "main", "run"]
