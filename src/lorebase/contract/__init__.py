"""The REST contract: every endpoint declared once (lorebase.contract.endpoint), by area.

`ENDPOINTS` is the whole surface in the order the gateway routes it (the change feed's
`/branches/{branch}/changes` and `/events` before `/branches/{branch}`, which would take them).
The gateway's routes, the gRPC messages, the REST client's routes, the parity test and
`GET /openapi.json` all come from it.
"""

from __future__ import annotations

from lorebase.contract import (
    admin,
    answers,
    branches,
    erasures,
    feed,
    governance,
    memory,
    proposals,
    reads,
    reconciliation,
    tags,
    web,
    writes,
)
from lorebase.contract.endpoint import Endpoint, Header, In, Parameter, Path, Query, Request
from lorebase.contract.policy import anyone


class Health(Request, frozen=True, kw_only=True):
    pass


GATEWAY = [
    Endpoint(
        "health",
        "GET",
        "/health",
        "gateway",
        "",
        Health,
        "Whether every service answers",
        "service",
        policy=anyone(),
        description='200 `{"status": "ok"|"degraded", "version"}` once keeper, feed and scribe '
        "pass their health checks (`degraded` names a service that works less well than it should); "
        "503 naming the services that are down.",
        problems=(503,),
        response=answers.admin.GatewayHealth,
        other_answers=((503, answers.admin.GatewayDown),),
    ),
]

ENDPOINTS: list[Endpoint] = [
    *GATEWAY,
    *admin.ENDPOINTS,
    *feed.ENDPOINTS,
    *branches.ENDPOINTS,
    *tags.ENDPOINTS,
    *proposals.ENDPOINTS,
    *writes.ENDPOINTS,
    *erasures.ENDPOINTS,
    *governance.ENDPOINTS,
    *reconciliation.ENDPOINTS,
    *reads.ENDPOINTS,
    *memory.ENDPOINTS,
    *web.ENDPOINTS,
]
BY_NAME: dict[str, Endpoint] = {endpoint.name: endpoint for endpoint in ENDPOINTS}
if len(BY_NAME) != len(ENDPOINTS):
    raise RuntimeError("two endpoints share a name")

__all__ = [
    "BY_NAME",
    "ENDPOINTS",
    "Endpoint",
    "Header",
    "In",
    "Parameter",
    "Path",
    "Query",
    "Request",
]
