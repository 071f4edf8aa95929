"""The REST client's routes: each method registered with its HTTP method and path template.

The templates are the gateway's (`{branch}` may hold `/`), so the parity test can hold the two lists
side by side (tests/unit/test_parity.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

API = "/api/v1"
DOMAIN = API + "/domains/{domain}"
RECORD = DOMAIN + "/kinds/{kind}/records/{key}"
PROPOSAL = DOMAIN + "/proposals/{proposal}"


@dataclass(frozen=True)
class RestRoute:
    method: str
    path: str


ROUTES: dict[str, RestRoute] = {}
F = TypeVar("F", bound=Callable[..., Any])


def route(method: str, path: str) -> Callable[[F], F]:
    def register(fn: F) -> F:
        ROUTES[fn.__name__] = RestRoute(method, path)
        return fn

    return register


__all__ = ["API", "DOMAIN", "PROPOSAL", "RECORD", "ROUTES", "RestRoute", "route"]
