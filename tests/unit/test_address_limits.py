"""The gateway's allowance of requests without a valid credential, per client address."""

from __future__ import annotations

import pytest
from lorebase_gateway.address_limits import AddressLimits, address_of
from starlette.requests import Request

from lorebase.credentials import unknown_credential
from lorebase.problems import Problem

REFUSED = unknown_credential()  # the 401 of a credential that authenticates nobody


def request(host: str, key: str | None = None) -> Request:
    headers = [(b"authorization", f"Bearer {key}".encode())] if key else []
    return Request({"type": "http", "method": "GET", "path": "/", "headers": headers, "client": (host, 1)})


@pytest.mark.parametrize(
    ("host", "key"),
    [
        ("203.0.113.7", "203.0.113.7"),
        ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),
        ("2001:db8:1:2:bbbb::9", "2001:db8:1:2::/64"),  # one host's /64 counts once
        ("::ffff:203.0.113.7", "203.0.113.7"),
        ("fe80::1%eth0", "fe80::/64"),
        ("not an address", "not an address"),
    ],
)
def test_the_key_of_an_address(host: str, key: str) -> None:
    assert address_of(host) == key


def test_401s_spend_the_allowance_and_known_credentials_still_pass() -> None:
    limits = AddressLimits(per_second=0.001, burst=2)
    limits.observe(request("203.0.113.7", "good"), 200)
    for _ in range(2):
        limits.admit(request("203.0.113.7", "bad"))
        limits.observe(request("203.0.113.7", "bad"), 401, REFUSED)
    for refused in (request("203.0.113.7", "bad"), request("203.0.113.7"), request("203.0.113.7", "new")):
        with pytest.raises(Problem) as problem:
            limits.admit(refused)
        assert problem.value.status == 429 and problem.value.extra["rate_class"] == "unauthenticated"
    limits.admit(request("203.0.113.7", "good"))
    limits.admit(request("198.51.100.1", "bad"))  # another address
    limits.observe(request("203.0.113.7", "good"), 401, REFUSED)  # revoked since: no longer known
    with pytest.raises(Problem):
        limits.admit(request("203.0.113.7", "good"))


def test_answers_that_prove_nothing_change_nothing() -> None:
    limits = AddressLimits(per_second=0.001, burst=1)
    limits.observe(request("203.0.113.7", "bad"), 400)  # e.g. a bad parameter before any lookup
    limits.observe(request("203.0.113.7", "bad"), 404)
    limits.admit(request("203.0.113.7", "bad"))
    limits.observe(request("203.0.113.7", "bad"), 401, REFUSED)
    with pytest.raises(Problem):
        limits.admit(request("203.0.113.7", "bad"))


def test_a_live_key_refused_for_another_reason_stays_known() -> None:
    """An API key where a web session is needed answers 401 without `credential: refused`: it takes
    no token and the key still passes while its address is refused."""
    limits = AddressLimits(per_second=0.001, burst=1)
    limits.observe(request("203.0.113.7", "good"), 200)
    not_a_session = Problem(401, "unauthenticated", "no web session")
    for _ in range(3):
        limits.observe(request("203.0.113.7", "good"), 401, not_a_session)
    limits.admit(request("203.0.113.7", "bad"))  # no token was taken
    limits.observe(request("203.0.113.7", "bad"), 401, REFUSED)
    with pytest.raises(Problem):
        limits.admit(request("203.0.113.7", "bad"))
    limits.admit(request("203.0.113.7", "good"))
