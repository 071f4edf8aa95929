"""Webhook targets (lorebase.webhook_targets): one policy at creation and at every delivery, and
the SSRF checks of delivery: every address a target names or resolves to must be public."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import socket
import time

import httpx
import pytest
from lorebase_scribe.webhooks import HttpxSender

from lorebase.webhook_secrets import Sealer, SecretKeyError, new_secret, signature
from lorebase.webhook_targets import TargetPolicy, TargetRefused, ipv4_literal, refusal

# Names a test resolver answers (no DNS in unit tests): what each resolves to.
NAMES = {
    "hooks.example.com": ["93.184.216.34"],
    "dual.example.com": ["93.184.216.34", "2606:4700:4700::1111"],
    "internal.example.com": ["10.0.0.5"],
    "mixed.example.com": ["93.184.216.34", "127.0.0.1"],
    "metadata.example.com": ["169.254.169.254"],
    "mapped.example.com": ["::ffff:10.1.2.3"],
}


async def fake_resolver(host: str, port: int) -> list[str]:
    if host not in NAMES:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    return NAMES[host]


# (target, the words the reason contains); every one is refused at creation and at delivery.
REFUSED = [
    # IPv4 in every form inet_aton (the sender's resolver) reads
    ("https://127.0.0.1/hook", "loopback"),
    ("http://2130706433/", "127.0.0.1, a loopback"),
    ("http://0x7f000001/", "127.0.0.1"),
    ("http://017700000001/", "127.0.0.1"),
    ("http://0x7f.1/", "127.0.0.1"),
    ("http://127.1/", "127.0.0.1"),
    ("http://0177.0.0.1/", "127.0.0.1"),
    ("http://127.0.0.0x1/", "127.0.0.1"),
    ("http://127.65536/", "127.1.0.0"),
    ("https://１２７.０.０.１/", "127.0.0.1"),  # full-width digits: IDNA maps them to ASCII
    ("https://0.0.0.0/", "0.0.0.0"),
    ("https://0/", "0.0.0.0"),
    ("https://10.0.0.1/", "private"),
    ("https://172.16.5.4/", "private"),
    ("https://192.168.1.1/", "private"),
    ("https://169.254.169.254/latest/meta-data", "link-local"),
    ("https://100.64.0.1/", "CGNAT"),
    ("https://100.100.100.200/", "CGNAT"),
    ("https://192.0.2.10/", "documentation"),
    ("https://198.18.0.1/", "reserved"),
    ("https://240.0.0.1/", "reserved"),
    ("https://255.255.255.255/", "255.255.255.255"),
    ("https://224.0.0.1/", "multicast"),
    # names
    ("https://localhost/", "loopback name"),
    ("https://localhost./", "loopback name"),
    ("https://api.localhost/", "loopback name"),
    ("https://LOCALHOST:8443/", "loopback name"),
    ("https://internal.example.com/", "resolves to 10.0.0.5"),
    ("https://mixed.example.com/", "resolves to 127.0.0.1"),
    ("https://metadata.example.com/", "169.254.169.254"),
    ("https://mapped.example.com/", "10.1.2.3"),
    # IPv6
    ("https://[::1]/", "loopback"),
    ("https://[::]/", "unspecified"),
    ("https://[fe80::1%25eth0]/", "link-local"),
    ("https://[fd00::1]/", "private"),
    ("https://[fec0::1]/", "site-local"),
    ("https://[ff02::1]/", "multicast"),
    ("https://[2001:db8::1]/", "documentation"),
    ("https://[100::1]/", "reserved"),
    # IPv6 forms that embed an IPv4 address, judged by it
    ("https://[::ffff:127.0.0.1]/", "IPv4-mapped address of 127.0.0.1"),
    ("https://[::ffff:7f00:1]/", "IPv4-mapped address of 127.0.0.1"),
    ("https://[::ffff:169.254.169.254]/", "IPv4-mapped address of 169.254.169.254"),
    ("https://[::ffff:0:7f00:1]/", "IPv4-translated (SIIT) address of 127.0.0.1"),
    ("https://[::ffff:0:10.0.0.1]/", "SIIT) address of 10.0.0.1"),
    ("https://[64:ff9b::7f00:1]/", "NAT64 address of 127.0.0.1"),
    ("https://[64:ff9b::a9fe:a9fe]/", "NAT64 address of 169.254.169.254"),
    ("https://[64:ff9b:1::808:808]/", "local-use NAT64"),
    ("https://[2002:7f00:1::]/", "6to4 address of 127.0.0.1"),
    ("https://[2002:a00:1::1]/", "6to4 address of 10.0.0.1"),
    ("https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", "Teredo"),
    ("https://[2001::808:808]/", "Teredo"),
    ("https://[::7f00:1]/", "IPv4-compatible address of 127.0.0.1"),
    ("https://[::10.0.0.1]/", "IPv4-compatible address of 10.0.0.1"),
    # the URL itself
    ("https://a@hooks.example.com/", "user name"),
    ("https://user:pass@hooks.example.com/", "user name"),
    ("https://@hooks.example.com/", "user name"),
    ("ws://hooks.example.com/", "scheme"),
    ("file:///etc/passwd", "scheme"),
    ("gopher://hooks.example.com/", "scheme"),
    ("ftp://hooks.example.com/", "scheme"),
    ("javascript:alert(1)", "scheme"),
    ("https:///hook", "no host"),
    ("https://hooks.example.com:0/", "port 0"),
    ("https://hooks.example.com:99999/", "valid URL"),
    ("https://hooks.exa mple.com/", "spaces"),
    ("https://hooks.example.com\n.evil/", "control characters"),  # urlsplit would drop the \n
    ("https://%31%32%37.0.0.1/", "not a valid host name"),
    ("https://[::1/", "valid URL"),
]

# Targets that pass: public addresses, names resolving to public ones, and names that do not
# resolve at creation (checked again at delivery).
ACCEPTED = [
    "https://93.184.216.34/hook",
    "https://hooks.example.com/lorebase",
    "https://hooks.example.com:8443/lorebase?x=1",
    "https://dual.example.com/",
    "https://[2606:4700:4700::1111]/",
    "https://[::ffff:93.184.216.34]/",
    "https://[::ffff:0:93.184.216.34]/",
    "https://[64:ff9b::93.184.216.34]/",
    "https://[2002:5db8:d822::1]/",
    "https://not-yet.example.net/hook",
]

POLICY = TargetPolicy(allowed_schemes=("https", "http"))


def test_the_table_has_at_least_40_targets() -> None:
    assert len(REFUSED) + len(ACCEPTED) >= 40


@pytest.mark.parametrize(("url", "reason"), REFUSED)
async def test_refused_at_creation(url: str, reason: str) -> None:
    with pytest.raises(TargetRefused) as refused:
        await POLICY.check_new(url, fake_resolver)
    assert reason.lower() in str(refused.value).lower(), str(refused.value)


@pytest.mark.parametrize(("url", "reason"), REFUSED)
async def test_refused_at_delivery(url: str, reason: str) -> None:
    async with httpx.AsyncClient(trust_env=False) as client:
        sender = HttpxSender(client, allowed_schemes=("https", "http"), timeout_s=5, resolver=fake_resolver)
        result = await sender.send(url, b"{}", {})
    assert result.status is None and str(result.error).startswith("refused target"), result.error
    assert reason.lower() in str(result.error).lower(), result.error


@pytest.mark.parametrize("url", ACCEPTED)
async def test_accepted_at_creation(url: str) -> None:
    target = await POLICY.check_new(url, fake_resolver)
    assert target.url == url


@pytest.mark.parametrize("url", [u for u in ACCEPTED if "not-yet" not in u])
async def test_accepted_at_delivery(url: str) -> None:
    """The sender would connect to these checked addresses (nothing is sent here)."""
    async with httpx.AsyncClient(trust_env=False) as client:
        sender = HttpxSender(client, resolver=fake_resolver)
        host, port, addresses = await sender.checked_addresses(url)
    assert addresses and all(refusal(ipaddress.ip_address(a)) is None for a in addresses)


async def test_schemes_outside_allowed_schemes_are_refused() -> None:
    with pytest.raises(TargetRefused, match="webhooks.allowed_schemes"):
        TargetPolicy().parse("http://93.184.216.34/hook")
    async with httpx.AsyncClient(trust_env=False) as client:
        result = await HttpxSender(client).send("http://93.184.216.34/hook", b"{}", {})
    assert "webhooks.allowed_schemes" in str(result.error)


async def test_a_name_that_does_not_resolve_is_refused_at_delivery() -> None:
    async with httpx.AsyncClient(trust_env=False) as client:
        result = await HttpxSender(client, resolver=fake_resolver).send(
            "https://not-yet.example.net/", b"{}", {}
        )
    assert "does not resolve" in str(result.error)


async def test_private_targets_pass_when_allowed() -> None:
    """webhooks.allow_private_targets (tests, local development): addresses are not checked, the
    scheme and user info still are."""
    policy = TargetPolicy(allowed_schemes=("http",), allow_private_targets=True)
    for url in ("http://127.0.0.1:8080/hook", "http://localhost/", "http://[::ffff:0:7f00:1]/"):
        await policy.check_new(url, fake_resolver)
    with pytest.raises(TargetRefused, match="user name"):
        await policy.check_new("http://a@127.0.0.1/", fake_resolver)


# Numeric hosts as getaddrinfo reads them (AI_NUMERICHOST: no DNS): the policy reads them the same.
NUMERIC = [
    "127.1", "0x7f.1", "0177.0.0.1", "2130706433", "0x7f000001", "017700000001", "127.0.0.0x1",
    "127.65536", "0", "00", "4294967295", "4294967296", "127.0.0.1.", "08.0.0.1", "0x.0.0.1",
    "1.2.3.4.5", "1.0x100.1", "0x", "256.1.1.1", "1.1.1.256", "93.184.216.34",
]  # fmt: skip


@pytest.mark.parametrize("host", NUMERIC)
def test_ipv4_literals_are_read_as_getaddrinfo_reads_them(host: str) -> None:
    try:
        infos = socket.getaddrinfo(host, 80, flags=socket.AI_NUMERICHOST, type=socket.SOCK_STREAM)
        expected = ipaddress.IPv4Address(infos[0][4][0])
    except socket.gaierror:
        expected = None
    assert ipv4_literal(host) == expected


async def test_a_name_is_resolved_once_and_only_checked_addresses_are_used() -> None:
    """A name that resolves public, then loopback (DNS rebinding): the sender never asks again."""
    answers = [["93.184.216.34"], ["127.0.0.1"]]
    calls: list[str] = []

    async def rebinding(host: str, port: int) -> list[str]:
        calls.append(host)
        return answers[len(calls) - 1]

    async with httpx.AsyncClient(trust_env=False) as client:
        sender = HttpxSender(client, timeout_s=1, connect_timeout_s=0.3, resolver=rebinding)
        result = await sender.send("https://rebind.example/hook", b"{}", {})
    assert calls == ["rebind.example"]
    assert result.status is None and "127.0.0.1" not in str(result.error)
    async with httpx.AsyncClient(trust_env=False) as client:
        sender = HttpxSender(client, resolver=rebinding)
        refused = await sender.send("https://rebind.example/hook", b"{}", {})
    assert str(refused.error).startswith("refused target") and "127.0.0.1" in str(refused.error)


def verified(secret: str, header: str, body: bytes, tolerance_s: int = 300) -> bool:
    """The receiver's check, as the seed prints it."""
    parts = dict(item.split("=", 1) for item in header.split(","))
    timestamp = int(parts["t"])
    if abs(time.time() - timestamp) > tolerance_s:
        return False
    key = hashlib.sha256(secret.encode()).digest()
    expected = hmac.new(key, f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, parts["v1"])


def test_signatures_verify_with_the_seed_receiver_code() -> None:
    secret, digest = new_secret()
    body = b'{"sequence":1}'
    header = signature(digest, int(time.time()), body)
    assert verified(secret, header, body)
    assert not verified(secret, header, body + b" ")


def test_sealing_rotation_and_unknown_keys() -> None:
    old, new = "o" * 40, "n" * 40
    env = {"OLD": old, "NEW": new, "SHORT": "x" * 10}
    _, digest = new_secret()
    sealed_old = Sealer.from_settings(
        encryption_key="secret://env/OLD", previous_encryption_keys=[], allow_unsealed_keys=False, environ=env
    ).seal(digest)
    assert sealed_old.startswith("aesgcm:") and digest.hex() not in sealed_old
    rotated = Sealer.from_settings(
        encryption_key="secret://env/NEW",
        previous_encryption_keys=["secret://env/OLD"],
        allow_unsealed_keys=False,
        environ=env,
    )
    assert rotated.unseal(sealed_old) == digest and rotated.needs_resealing(sealed_old)
    forgot = Sealer.from_settings(
        encryption_key="secret://env/NEW", previous_encryption_keys=[], allow_unsealed_keys=False, environ=env
    )
    with pytest.raises(SecretKeyError, match="webhooks.previous_encryption_keys"):
        forgot.unseal(sealed_old)
    with pytest.raises(SecretKeyError, match="at least 32"):
        Sealer.from_settings(
            encryption_key="secret://env/SHORT",
            previous_encryption_keys=[],
            allow_unsealed_keys=False,
            environ=env,
        )
    with pytest.raises(SecretKeyError, match="secret://"):
        Sealer.from_settings(
            encryption_key="plain-text-key",
            previous_encryption_keys=[],
            allow_unsealed_keys=False,
            environ=env,
        )
