"""Parity of the REST surface with the CLI and Herald, from the endpoint declarations
(lorebase.contract): the gateway serves exactly the declared endpoints, the REST client has a method
for each, and every endpoint is called by a CLI command and by a Herald tool, or is on that
surface's written exclusion list with a reason."""

from __future__ import annotations

import re
from pathlib import Path

from lorebase_gateway.app import create_app
from lorebase_gateway.gateway import Gateway
from starlette.routing import Route

from lorebase.clients.rest import RestClient
from lorebase.commands import NOT_IN_CLI
from lorebase.contract import BY_NAME, ENDPOINTS
from lorebase.herald.tools import NOT_IN_HERALD

SRC = Path(__file__).resolve().parents[2] / "src" / "lorebase"
# `client.get_record(` or `client.call("get_record"`
CALL = re.compile(r"\bclient\.(?:call\(\s*\"(\w+)\"|(\w+)\()")


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
    return {
        called or method
        for path in files
        for called, method in CALL.findall(path.read_text())
        if (called or method) in BY_NAME
    }


def test_the_gateway_serves_the_declared_endpoints_and_the_client_calls_each() -> None:
    declared = [(e.method, e.openapi_path) for e in ENDPOINTS]
    assert len(declared) == len(set(declared)), "two endpoints declared for one route"
    gateway = _gateway_routes()
    assert gateway - set(declared) == set(), "gateway routes with no declaration (lorebase.contract)"
    assert set(declared) - gateway == set(), "declared endpoints the gateway does not serve"
    assert all(callable(getattr(RestClient, e.name, None)) for e in ENDPOINTS)


def test_every_route_has_a_cli_command_or_a_reason() -> None:
    used = _used(*(SRC / "commands").rglob("*.py"))
    missing = set(BY_NAME) - used - set(NOT_IN_CLI)
    assert not missing, (
        f"REST endpoints with no CLI command: add one, or a reason to NOT_IN_CLI: {sorted(missing)}"
    )
    stale = used & set(NOT_IN_CLI)
    assert not stale, f"on NOT_IN_CLI but used by a command: {sorted(stale)}"
    assert set(NOT_IN_CLI) <= set(BY_NAME) and all(NOT_IN_CLI.values())


def test_every_route_has_a_herald_tool_or_a_reason() -> None:
    used = _used(*(SRC / "herald" / "tools").glob("*.py"))
    missing = set(BY_NAME) - used - set(NOT_IN_HERALD)
    assert not missing, (
        f"REST endpoints with no MCP tool: add one, or a reason to NOT_IN_HERALD: {sorted(missing)}"
    )
    stale = used & set(NOT_IN_HERALD)
    assert not stale, f"on NOT_IN_HERALD but used by a tool: {sorted(stale)}"
    assert set(NOT_IN_HERALD) <= set(BY_NAME) and all(NOT_IN_HERALD.values())


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
