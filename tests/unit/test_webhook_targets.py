"""The SSRF checks of webhook delivery: every address a target resolves to must be public."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import time

import httpx
import pytest
from lorebase_scribe.webhooks import HttpxSender, refusal

from lorebase.webhook_secrets import Sealer, SecretKeyError, new_secret, signature

MATRIX = [
    "127.0.0.1",
    "localhost",
    "0.0.0.0",
    "2130706433",
    "0x7f000001",
    "017700000001",
    "127.1",
    "[::1]",
    "[::ffff:127.0.0.1]",
    "[64:ff9b::7f00:1]",
    "[2002:7f00:1::]",
    "[fd00::1]",
    "169.254.169.254",
    "100.100.100.200",
    "10.0.0.1",
    "[::7f00:1]",
    "[2001:db8::1]",
    "192.0.2.10",
    "224.0.0.1",
    "[ff02::1]",
]


@pytest.mark.parametrize("host", MATRIX)
async def test_private_targets_are_refused(host: str) -> None:
    async with httpx.AsyncClient(trust_env=False) as client:
        sender = HttpxSender(client, allowed_schemes=("https", "http"), timeout_s=5)
        result = await sender.send(f"https://{host}/hook", b"{}", {})
    assert result.status is None and result.error is not None
    assert result.error.startswith("refused target"), result.error


def test_public_addresses_pass() -> None:
    for text in ("93.184.216.34", "2606:4700:4700::1111"):
        assert refusal(ipaddress.ip_address(text)) is None


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


async def test_schemes_outside_allowed_schemes_are_refused() -> None:
    async with httpx.AsyncClient(trust_env=False) as client:
        result = await HttpxSender(client).send("http://93.184.216.34/hook", b"{}", {})
    assert "webhooks.allowed_schemes" in str(result.error)


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
