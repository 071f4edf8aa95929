"""Parity of the REST surface with the CLI and Herald: every gateway route has a REST client method
(and the other way round), and every client method is used by a CLI command and by a Herald tool,
or is on that surface's written exclusion list with a reason."""

from __future__ import annotations

import re
from pathlib import Path

from lorebase_gateway.app import create_app
from lorebase_gateway.gateway import Gateway
from starlette.routing import Route

from lorebase.clients.rest import ROUTES
from lorebase.commands import NOT_IN_CLI
from lorebase.herald.tools import NOT_IN_HERALD

SRC = Path(__file__).resolve().parents[2] / "src" / "lorebase"
CALL = re.compile(r"\bclient\.(\w+)\(")


def _gateway_routes() -> set[tuple[str, str]]:
    app = create_app(Gateway(max_body_bytes=1024))
    found = set()
    for route in app.routes:
        if isinstance(route, Route) and (route.path.startswith("/api/") or route.path == "/health"):
            for method in route.methods or ():
                if method != "HEAD":
                    found.add((method, route.path.replace(":path}", "}")))
    return found


def _used(*files: Path) -> set[str]:
    return {name for path in files for name in CALL.findall(path.read_text()) if name in ROUTES}


def test_every_gateway_route_has_one_client_method() -> None:
    client = [(r.method, r.path) for r in ROUTES.values()]
    assert len(client) == len(set(client)), "two client methods for one route"
    gateway = _gateway_routes()
    assert gateway - set(client) == set(), "routes without a REST client method (lorebase.clients.rest)"
    assert set(client) - gateway == set(), "client methods for routes the gateway does not serve"


def test_every_route_has_a_cli_command_or_a_reason() -> None:
    used = _used(*(SRC / "commands").glob("*.py"))
    missing = set(ROUTES) - used - set(NOT_IN_CLI)
    assert not missing, (
        f"REST routes with no CLI command: add one, or a reason to NOT_IN_CLI: {sorted(missing)}"
    )
    stale = used & set(NOT_IN_CLI)
    assert not stale, f"on NOT_IN_CLI but used by a command: {sorted(stale)}"
    assert set(NOT_IN_CLI) <= set(ROUTES) and all(NOT_IN_CLI.values())


def test_every_route_has_a_herald_tool_or_a_reason() -> None:
    used = _used(SRC / "herald" / "tools.py")
    missing = set(ROUTES) - used - set(NOT_IN_HERALD)
    assert not missing, (
        f"REST routes with no MCP tool: add one, or a reason to NOT_IN_HERALD: {sorted(missing)}"
    )
    stale = used & set(NOT_IN_HERALD)
    assert not stale, f"on NOT_IN_HERALD but used by a tool: {sorted(stale)}"
    assert set(NOT_IN_HERALD) <= set(ROUTES) and all(NOT_IN_HERALD.values())


def test_the_seed_tools_are_there() -> None:
    from lorebase.herald import TOOLS_BY_NAME

    seed = {
        "lorebase_context",
        "lorebase_search",
        "lorebase_schema",
        "lorebase_resolve",
        "lorebase_query",
        "lorebase_explain",
        "lorebase_history",
        "lorebase_lineage",
        "lorebase_health",
        "lorebase_execute",
        "lorebase_changes",
    }
    assert seed <= set(TOOLS_BY_NAME)
