"""Webhook targets: which URLs a webhook may be created with, and which addresses a delivery may reach.

One policy for both ends, so that a user learns at once what a delivery would refuse: the feed's
registry checks a target when a webhook is created or its url changes (422 naming `url` and the
reason), and Scribe's sender checks it again at every attempt (a DNS answer may change).

A target must use a scheme of `webhooks.allowed_schemes`, carry no user info, and name a host that
is either a public address or a name. Unless `webhooks.allow_private_targets` (tests and local
development), no address it names or resolves to may be private, loopback, link-local, multicast,
reserved, unspecified, shared (CGNAT 100.64.0.0/10) or documentation space.

How the host is read matters as much as the check: it must be the address the sender would connect
to. `socket.getaddrinfo` (what resolves names) reads IPv4 the way C's inet_aton does, where
`2130706433`, `0x7f.1`, `127.1` and `0177.0.0.1` all mean 127.0.0.1, while Python's `ipaddress`
refuses those forms. So the host is first encoded the way `socket` encodes it (IDNA 2003, which maps
full-width digits to ASCII ones), then read with inet_aton's grammar (`ipv4_literal`); every other
name is resolved and each of its addresses checked. The sender connects only to addresses checked
here (never to the name), so what was checked is what is reached. `localhost` and `*.localhost` are
loopback by definition (RFC 6761) and refused without a lookup.

IPv6 addresses that embed an IPv4 address are judged by the IPv4 address they embed: IPv4-mapped
`::ffff:0:0/96`, IPv4-translated (SIIT) `::ffff:0:0:0/96`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16` and the
deprecated IPv4-compatible `::/96`. Two forms are refused altogether. Teredo `2001::/32`: its
addresses are NAT traversal tunnels of clients, never a service's address, and the IPv4 addresses
in them are obfuscated. Local-use NAT64 `64:ff9b:1::/48` (RFC 8215): it is never globally
reachable, and where the IPv4 address sits depends on the prefix length a network chose.

At creation a name that does not resolve (or not within webhooks.timeout_s) is accepted: it may
exist only later or only where Scribe runs, and every delivery checks it again.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from lorebase.settings_model import Webhooks

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Awaitable[list[str]]]


class TargetRefused(Exception):
    """A target that may not be used; the message says why."""


# -- reading hosts as the sender's resolver reads them ---------------------------------------------

_PART = re.compile(r"0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*")
_NAME = re.compile(r"[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?")


def ipv4_literal(host: str) -> ipaddress.IPv4Address | None:
    """The address of an IPv4 literal in any form inet_aton accepts (`127.1`, `0x7f.1`,
    `0177.0.0.1`, `2130706433`), else None: one to four parts, each decimal, octal (leading 0) or
    hex (0x); the last part fills the bytes the others leave."""
    parts = host.split(".")
    if not 1 <= len(parts) <= 4 or not all(_PART.fullmatch(part) for part in parts):
        return None
    numbers = [
        int(part, 16) if part[:2] in ("0x", "0X") else int(part, 8 if part[0] == "0" else 10)
        for part in parts
    ]
    *leading, last = numbers
    if any(n > 255 for n in leading) or last >= 1 << (8 * (5 - len(parts))):
        return None
    value = 0
    for n in leading:
        value = value << 8 | n
    return ipaddress.IPv4Address(value << (8 * (5 - len(parts))) | last)


def _ascii_host(host: str) -> str:
    """The host as `socket.getaddrinfo` sends it: IDNA-encoded (`１２７.０.０.１` is `127.0.0.1`)."""
    try:
        encoded = host.encode("idna").decode("ascii").lower()
    except UnicodeError:
        raise TargetRefused(f"{host!r} is not a valid host name") from None
    if not _NAME.fullmatch(encoded):
        raise TargetRefused(f"{host!r} is not a valid host name (letters, digits, '-', '_' and '.')")
    return encoded


# -- which addresses are refused -------------------------------------------------------------------

_MAPPED = ipaddress.ip_network("::ffff:0:0/96")
_TRANSLATED = ipaddress.ip_network("::ffff:0:0:0/96")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")
_6TO4 = ipaddress.ip_network("2002::/16")
_TEREDO = ipaddress.ip_network("2001::/32")
_COMPATIBLE = ipaddress.ip_network("::/96")
_SITE_LOCAL = ipaddress.ip_network("fec0::/10")


def _embedded(address: ipaddress.IPv6Address) -> tuple[str, list[ipaddress.IPv4Address]] | None:
    """The form and the IPv4 address(es) an IPv6 address embeds, None when it embeds none."""
    low32 = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address in _MAPPED:
        return "an IPv4-mapped address", [low32]
    if address in _TRANSLATED:
        return "an IPv4-translated (SIIT) address", [low32]
    if address in _NAT64:
        return "a NAT64 address", [low32]
    if address in _6TO4:
        return "a 6to4 address", [ipaddress.IPv4Address((int(address) >> 80) & 0xFFFFFFFF)]
    if address in _COMPATIBLE and int(address) > 1:  # :: and ::1 have names of their own
        return "an IPv4-compatible address", [low32]
    return None


def _reason(address: Address) -> str | None:
    """What makes an address no target (`a loopback address`), None for a public unicast one."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.scope_id:
            address = ipaddress.IPv6Address(str(address).split("%", 1)[0])
        if address in _TEREDO:
            server, client = address.teredo or (None, None)
            return f"a Teredo address (server {server}, client {client}), never a target"
        if address in _NAT64_LOCAL:
            return "a local-use NAT64 address (64:ff9b:1::/48, RFC 8215), never globally reachable"
        embedding = _embedded(address)
        if embedding is not None:
            form, embedded = embedding
            for ipv4 in embedded:
                why = _reason(ipv4)
                if why:
                    return f"{form} of {ipv4}, {why}"
            return None
        if address in _SITE_LOCAL:
            return "a site-local address"
    if address.is_multicast:
        return "a multicast address"
    if address.is_loopback:
        return "a loopback address"
    if address.is_link_local:
        return "a link-local address"
    if address.is_unspecified:
        return "the unspecified address"
    if not address.is_global or address.is_reserved:
        return "a private, shared (CGNAT), documentation or reserved address"
    return None


def refusal(address: Address) -> str | None:
    """Why a webhook must not reach this address (None: a public unicast address)."""
    why = _reason(address)
    return f"{address} is {why}" if why else None


# -- the policy ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """A target URL as the sender reads it: the host to resolve (ASCII) or the address it names."""

    url: str
    scheme: str
    host: str
    port: int
    literal: Address | None


async def system_resolver(host: str, port: int) -> list[str]:
    """The addresses of a name, as the system resolves them."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


@dataclass(frozen=True)
class TargetPolicy:
    allowed_schemes: tuple[str, ...] = ("https",)
    allow_private_targets: bool = False

    @classmethod
    def of(cls, webhooks: Webhooks) -> TargetPolicy:
        """The policy of the `webhooks` settings."""
        return cls(
            allowed_schemes=tuple(webhooks.allowed_schemes),
            allow_private_targets=webhooks.allow_private_targets,
        )

    def parse(self, url: str) -> Target:
        """The target of a URL, checked as far as it can be without a lookup; TargetRefused else."""
        if any(ord(c) <= 0x20 or ord(c) == 0x7F for c in url):
            raise TargetRefused("the URL contains spaces or control characters")
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as exc:
            raise TargetRefused(f"not a valid URL: {exc}") from None
        if parts.scheme not in self.allowed_schemes:
            raise TargetRefused(
                f"the scheme must be {' or '.join(self.allowed_schemes)} (webhooks.allowed_schemes), "
                f"not {parts.scheme!r}"
            )
        if "@" in parts.netloc:
            raise TargetRefused("the URL must not carry a user name or password")
        host = parts.hostname
        if not host:
            raise TargetRefused("the URL has no host")
        if port == 0:
            raise TargetRefused("port 0 cannot be reached")
        port = port or (443 if parts.scheme == "https" else 80)
        written = host
        literal: Address | None
        if parts.netloc.startswith("["):
            try:
                literal = ipaddress.ip_address(unquote(host))
            except ValueError:
                raise TargetRefused(f"[{host}] is not a valid IPv6 address") from None
            host = written = str(literal)
        else:
            host = _ascii_host(host)
            literal = ipv4_literal(host)
            if literal is None and not self.allow_private_targets:
                bare = host.rstrip(".")
                if bare == "localhost" or bare.endswith(".localhost"):
                    raise TargetRefused(f"{host} is a loopback name (webhooks.allow_private_targets is off)")
            host = str(literal) if literal is not None else host
        if literal is not None:
            self.check_address(literal, named=written)
        return Target(url, parts.scheme, host, port, literal)

    def check_address(self, address: Address, *, named: str, resolved: bool = False) -> None:
        """TargetRefused unless the address is public (or private targets are allowed)."""
        if self.allow_private_targets:
            return
        why = _reason(address)
        if why:
            if resolved:
                said = f"{named} resolves to {address}, {why}"
            elif named != str(address):
                said = f"{named} is the address {address}, {why}"
            else:
                said = f"{address} is {why}"
            raise TargetRefused(f"{said} (webhooks.allow_private_targets is off)")

    def _checked(self, target: Target, answers: list[str]) -> list[str]:
        for text in answers:
            self.check_address(ipaddress.ip_address(text), named=target.host, resolved=True)
        return answers

    async def addresses(self, target: Target, resolver: Resolver = system_resolver) -> list[str]:
        """Every address of a target, each checked (the sender connects to these only)."""
        if target.literal is not None:
            return [str(target.literal)]
        try:
            answers = await resolver(target.host, target.port)
        except OSError as exc:
            raise TargetRefused(f"{target.host} does not resolve: {exc}") from None
        if not answers:
            raise TargetRefused(f"{target.host} does not resolve")
        return self._checked(target, answers)

    async def check_new(
        self, url: str, resolver: Resolver = system_resolver, *, lookup_s: float = 10
    ) -> Target:
        """A target about to be stored: parsed, and its name's addresses checked where it resolves
        within `lookup_s` (a name that does not resolve is accepted; each delivery checks again)."""
        target = self.parse(url)
        if target.literal is None and not self.allow_private_targets:
            try:
                async with asyncio.timeout(lookup_s):
                    answers = await resolver(target.host, target.port)
            except (OSError, TimeoutError):
                return target
            self._checked(target, answers)
        return target


__all__ = [
    "Address",
    "Resolver",
    "Target",
    "TargetPolicy",
    "TargetRefused",
    "ipv4_literal",
    "refusal",
    "system_resolver",
]
