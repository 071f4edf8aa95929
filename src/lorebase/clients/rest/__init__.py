"""The REST client of the gateway (docs/rest.md): what the CLI and Herald call.

One generic call made from the endpoint declarations (lorebase.contract): `client.call(name, ...)`
builds the request of the endpoint `name` from keywords checked against its model (`request`),
sends it over the connection (`connection`: settings, sending, answers) and answers a `Reply`;
`client.<name>(...)` is the same call answering the body (`client`). Answers that are not a success
raise `Problem` with the problem document's members; a gateway that does not answer raises
`Problem(503, "unreachable", ...)`.

`REST_ONLY` lists the endpoints that neither a CLI command nor a Herald tool wraps, for one reason
that holds for both; the parity test (tests/unit/test_parity.py) reads it with each surface's own list.
"""

from lorebase.clients.rest.client import RestClient
from lorebase.clients.rest.connection import DEFAULT_DOMAIN, DEFAULT_URL, Reply, RestSettings
from lorebase.clients.rest.request import HttpRequest, build
from lorebase.contract import memory as _memory
from lorebase.contract import web as _web

_MEMORY = "agent memory has its own consumer protocol (docs/memory.md), used by agents over REST"
_WEB = "the web app's sign-in cookie (docs/security.md): the CLI and agents send their key itself"

REST_ONLY: dict[str, str] = {
    **{endpoint.name: _MEMORY for endpoint in _memory.ENDPOINTS},
    **{endpoint.name: _WEB for endpoint in _web.ENDPOINTS},
}

__all__ = [
    "DEFAULT_DOMAIN",
    "DEFAULT_URL",
    "REST_ONLY",
    "HttpRequest",
    "Reply",
    "RestClient",
    "RestSettings",
    "build",
]
