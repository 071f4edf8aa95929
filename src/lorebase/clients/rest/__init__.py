"""The REST client of the gateway (docs/rest.md): what the CLI and Herald call, one method per route.

Every method is registered in ROUTES with its HTTP method and path template, the same templates as
the gateway's routes (`{branch}` may hold `/`), so the parity test can hold the two lists side by
side. Answers that are not a success raise `Problem` with the problem document's members; a gateway
that does not answer raises `Problem(503, "unreachable", ...)`.

The client is one class per surface (`admin`, `branches`, `writes`, `reads`, `feed`, `memory`) over
the connection (`connection`: settings, sending, answers), composed into `RestClient` (`client`).
"""

from lorebase.clients.rest.client import RestClient
from lorebase.clients.rest.connection import DEFAULT_DOMAIN, DEFAULT_URL, Reply, RestSettings
from lorebase.clients.rest.routes import ROUTES, RestRoute

__all__ = ["DEFAULT_DOMAIN", "DEFAULT_URL", "ROUTES", "Reply", "RestClient", "RestRoute", "RestSettings"]
