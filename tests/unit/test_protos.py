"""Generated gRPC code is never stale, and every Keeper RPC has a client method and a REST route."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from lorebase.clients import KeeperClient
from lorebase.v1 import keeper_pb2

ROOT = Path(__file__).resolve().parents[2]

# RPCs that have no REST route of their own, and why.
NO_ROUTE: dict[str, str] = {
    "Feed.Status": "operator-facing publication state (published_through, pending, fence)",
    "Keeper.AuthorizeRead": "service to service: the feed asks Keeper whether a caller may read a branch",
    "Scribe.ListJobs": "operator-facing job state, read by health checks and the CLI, not by agents",
}


def test_generated_code_is_up_to_date(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_protos.py"), "--out", str(tmp_path)],
        check=True,
        capture_output=True,
    )
    fresh = tmp_path / "lorebase" / "v1"
    committed = ROOT / "src" / "lorebase" / "v1"
    names = sorted(p.name for p in fresh.iterdir() if p.is_file())
    assert names == sorted(p.name for p in committed.iterdir() if p.is_file() and p.suffix in (".py", ".pyi"))
    for name in names:
        assert (fresh / name).read_text() == (committed / name).read_text(), (
            f"{name} is stale: run make protos"
        )


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")


def test_every_keeper_rpc_has_a_client_method_and_a_route() -> None:
    from lorebase_gateway.app import Gateway, create_app

    service = keeper_pb2.DESCRIPTOR.services_by_name["Keeper"]
    app = create_app(Gateway(max_body_bytes=1024))
    endpoints = {
        getattr(route, "endpoint", None).__name__ for route in app.routes if getattr(route, "endpoint", None)
    }
    aliases = {"Import": "import_data", "ExecuteOperation": "execute_operation"}
    route_names = {"Import": "run_import", "ExecuteOperation": "execute"}
    missing = []
    for method in service.methods:
        client_name = aliases.get(method.name, _snake(method.name))
        if not hasattr(KeeperClient, client_name):
            missing.append(f"client {client_name}")
        route = route_names.get(method.name, _snake(method.name))
        if f"Keeper.{method.name}" not in NO_ROUTE and route not in endpoints:
            missing.append(f"route {route}")
    assert missing == []


def test_feed_and_scribe_rpcs_have_clients_and_routes() -> None:
    from lorebase_gateway.app import Gateway, create_app

    from lorebase.clients import FeedClient, ScribeClient
    from lorebase.v1 import feed_pb2, scribe_pb2

    app = create_app(Gateway(max_body_bytes=1024))
    endpoints = {
        getattr(route, "endpoint", None).__name__ for route in app.routes if getattr(route, "endpoint", None)
    }
    for module, service, client in ((feed_pb2, "Feed", FeedClient), (scribe_pb2, "Scribe", ScribeClient)):
        for method in module.DESCRIPTOR.services_by_name[service].methods:
            assert hasattr(client, _snake(method.name)), f"{service}.{method.name} has no client method"
            assert f"{service}.{method.name}" in NO_ROUTE or _snake(method.name) in endpoints, (
                f"{service}.{method.name} needs a REST route or a reason"
            )


def test_every_memory_rpc_has_a_client_method_and_a_route() -> None:
    from lorebase_gateway.app import Gateway, create_app

    from lorebase.clients import MemoryJournalClient, MemoryStoreClient
    from lorebase.v1 import memory_pb2

    app = create_app(Gateway(max_body_bytes=1024))
    endpoints = {
        getattr(route, "endpoint", None).__name__ for route in app.routes if getattr(route, "endpoint", None)
    }
    missing = []
    for service, client in (("MemoryStore", MemoryStoreClient), ("MemoryJournal", MemoryJournalClient)):
        for method in memory_pb2.DESCRIPTOR.services_by_name[service].methods:
            name = _snake(method.name)
            if not hasattr(client, name):
                missing.append(f"client {service}.{name}")
            if f"{service}.{method.name}" not in NO_ROUTE and name not in endpoints:
                missing.append(f"route {name}")
    assert missing == []


def test_feed_routes_come_before_the_branch_routes() -> None:
    """`/branches/{branch:path}` would swallow `/changes` and `/events` of a branch named with '/'."""
    from lorebase_gateway.app import Gateway, create_app
    from starlette.routing import Match

    app = create_app(Gateway(max_body_bytes=1024))
    for path, name in (
        ("/api/v1/domains/supply/branches/agent/agt_risk/q4/changes", "changes"),
        ("/api/v1/domains/supply/branches/main/events", "events"),
        ("/api/v1/domains/supply/branches/agent/agt_risk/q4", "get_branch"),
    ):
        scope = {"type": "http", "path": path, "method": "GET", "root_path": ""}
        first = next(r for r in app.routes if r.matches(scope)[0] == Match.FULL)
        assert first.endpoint.__name__ == name, path
