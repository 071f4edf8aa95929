"""Generated gRPC code is never stale, and every Keeper RPC has a client method and a REST route."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from lorebase.v1 import keeper_pb2

ROOT = Path(__file__).resolve().parents[2]

# RPCs that have no REST route of their own, and why.
NO_ROUTE: dict[str, str] = {
    "Feed.Status": "operator-facing publication state (published_through, pending, fence)",
    "Keeper.Authenticate": "service to service: the gateway asks who a credential is before it reads a large body",
    "Keeper.Authorize": "service to service: the feed asks keeper whether a call passes its endpoint's policy",
    "Keeper.AuthorizeRead": "deprecated for one release: the previous release's feed asks it during a rolling upgrade",
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


def test_every_rpc_has_an_endpoint_or_a_reason() -> None:
    """Each RPC of the services behind the REST surface is a declared endpoint's (lorebase.contract),
    or on NO_ROUTE with the reason it has none."""
    from lorebase.contract import ENDPOINTS
    from lorebase.v1 import feed_pb2, memory_pb2, scribe_pb2

    declared = {(SERVICE_NAMES[e.service], e.rpc) for e in ENDPOINTS if e.service != "gateway"}
    missing = []
    for module, service in (
        (keeper_pb2, "Keeper"),
        (feed_pb2, "Feed"),
        (memory_pb2, "MemoryStore"),
        (memory_pb2, "MemoryJournal"),
        (scribe_pb2, "Scribe"),
    ):
        for method in module.DESCRIPTOR.services_by_name[service].methods:
            if (service, method.name) not in declared and f"{service}.{method.name}" not in NO_ROUTE:
                missing.append(f"{service}.{method.name}")
    assert missing == [], "RPCs with no endpoint: declare one in lorebase.contract, or a reason in NO_ROUTE"


SERVICE_NAMES = {
    "keeper": "Keeper",
    "feed": "Feed",
    "memory_store": "MemoryStore",
    "memory_journal": "MemoryJournal",
}


def test_every_endpoint_maps_onto_its_rpc() -> None:
    """Every parameter of a declared endpoint has a field of the same name in its RPC's message."""
    from lorebase.clients.calls import rpc_of
    from lorebase.contract import ENDPOINTS

    for endpoint in ENDPOINTS:
        if endpoint.service != "gateway" and endpoint.name != "events":  # events: the fan-out's stream
            rpc_of(endpoint)


def test_feed_routes_come_before_the_branch_routes() -> None:
    """`/branches/{branch:path}` would swallow `/changes` and `/events` of a branch named with '/'."""
    from lorebase_gateway.app import create_app
    from lorebase_gateway.gateway import Gateway
    from starlette.routing import Match, Route

    app = create_app(Gateway(max_body_bytes=1024))
    for path, name in (
        ("/api/v1/domains/supply/branches/agent/agt_risk/q4/changes", "changes"),
        ("/api/v1/domains/supply/branches/main/events", "events"),
        ("/api/v1/domains/supply/branches/agent/agt_risk/q4", "get_branch"),
    ):
        scope = {"type": "http", "path": path, "method": "GET", "root_path": ""}
        first = next(r for r in app.routes if r.matches(scope)[0] == Match.FULL)
        assert isinstance(first, Route) and first.endpoint.__name__ == name, path
