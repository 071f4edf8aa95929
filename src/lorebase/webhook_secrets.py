"""Webhook secrets: the digest that signs deliveries, sealed with AES-256-GCM, and the signature.

A webhook's secret is shown once. Lorebase keeps only SHA-256(secret), the key of the deliveries'
HMAC, and keeps that sealed under `webhooks.encryption_key` (a `secret://` reference to at least
32 characters). Earlier values stay readable through `webhooks.previous_encryption_keys`. Stored
forms: `aesgcm:<key id>:<base64 nonce + ciphertext>` or, with `webhooks.allow_unsealed_keys`
(local development), `plain:<hex digest>`.

`secret://env/NAME` reads the environment variable NAME; `secret://file/PATH` reads a file (its
text without the trailing newline).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from lorebase.problems import Problem
from lorebase.settings_model import Webhooks

MIN_KEY_CHARS = 32


class SecretKeyError(Exception):
    """A key that cannot be used; the message names the setting to fix."""


def resolve_reference(reference: str, setting: str, environ: Mapping[str, str] | None = None) -> str:
    environ = os.environ if environ is None else environ
    if not reference.startswith("secret://"):
        raise SecretKeyError(
            f"{setting} must be a secret:// reference (secret://env/NAME or secret://file/PATH)"
        )
    kind, _, name = reference[len("secret://") :].partition("/")
    if kind == "env" and name:
        value = environ.get(name)
        if value is None:
            raise SecretKeyError(f"{setting} names the environment variable {name}, which is not set")
    elif kind == "file" and name:
        try:
            value = Path("/" + name.lstrip("/")).read_text().rstrip("\n")
        except OSError as exc:
            raise SecretKeyError(
                f"{setting} names the file /{name.lstrip('/')}, which cannot be read: {exc}"
            ) from None
    else:
        raise SecretKeyError(f"{setting} must be secret://env/NAME or secret://file/PATH, not {reference!r}")
    if len(value) < MIN_KEY_CHARS:
        raise SecretKeyError(f"{setting} must hold at least {MIN_KEY_CHARS} characters")
    return value


def _key_id(value: str) -> str:
    return hashlib.sha256(b"lorebase-webhook-key:" + value.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Sealer:
    """The current key (None: unsealed storage allowed, or no key) and the previous ones, by id."""

    current: tuple[str, bytes] | None
    previous: dict[str, bytes]
    allow_unsealed: bool

    @classmethod
    def from_settings(
        cls,
        *,
        encryption_key: str,
        previous_encryption_keys: list[str],
        allow_unsealed_keys: bool,
        environ: Mapping[str, str] | None = None,
    ) -> Sealer:
        current = None
        if encryption_key:
            value = resolve_reference(encryption_key, "webhooks.encryption_key", environ)
            current = (_key_id(value), hashlib.sha256(value.encode()).digest())
        previous: dict[str, bytes] = {}
        for n, reference in enumerate(previous_encryption_keys):
            value = resolve_reference(reference, f"webhooks.previous_encryption_keys[{n}]", environ)
            previous[_key_id(value)] = hashlib.sha256(value.encode()).digest()
        return cls(current, previous, allow_unsealed_keys)

    @classmethod
    def of(cls, webhooks: Webhooks, environ: Mapping[str, str] | None = None) -> Sealer:
        """The sealer of the `webhooks` settings (SecretKeyError names a key that cannot be used)."""
        return cls.from_settings(
            encryption_key=webhooks.encryption_key,
            previous_encryption_keys=webhooks.previous_encryption_keys,
            allow_unsealed_keys=webhooks.allow_unsealed_keys,
            environ=environ,
        )

    def seal(self, digest: bytes) -> str:
        if self.current is None:
            if not self.allow_unsealed:
                raise Problem(
                    409,
                    "encryption_key_required",
                    "webhooks need webhooks.encryption_key (a secret:// reference to at least 32 characters) "
                    "to keep their signing keys sealed; set it, or webhooks.allow_unsealed_keys for local "
                    "development only",
                )
            return "plain:" + digest.hex()
        key_id, key = self.current
        nonce = secrets.token_bytes(12)
        sealed = AESGCM(key).encrypt(nonce, digest, key_id.encode())
        return f"aesgcm:{key_id}:{base64.b64encode(nonce + sealed).decode()}"

    def unseal(self, stored: str) -> bytes:
        form, _, rest = stored.partition(":")
        if form == "plain":
            return bytes.fromhex(rest)
        key_id, _, data = rest.partition(":")
        key = self.previous.get(key_id)
        if self.current is not None and self.current[0] == key_id:
            key = self.current[1]
        if key is None:
            raise SecretKeyError(
                f"the signing key is sealed under encryption key {key_id}, which is neither "
                "webhooks.encryption_key nor in webhooks.previous_encryption_keys; configure that value again"
            )
        raw = base64.b64decode(data)
        return AESGCM(key).decrypt(raw[:12], raw[12:], key_id.encode())

    def needs_resealing(self, stored: str) -> bool:
        """Stored unsealed or under a previous key while a current key is set."""
        return self.current is not None and not stored.startswith(f"aesgcm:{self.current[0]}:")


def new_secret() -> tuple[str, bytes]:
    """A webhook secret (shown once) and its digest (the HMAC key). Its prefix is Lorebase's own: a
    `whsec_` secret is Standard Webhooks' form, which `standard_secret` gives."""
    secret = "lbwh_" + secrets.token_urlsafe(32)
    return secret, hashlib.sha256(secret.encode()).digest()


def standard_secret(digest: bytes) -> str:
    """The Standard Webhooks secret of a webhook (`whsec_` + base64 of the HMAC key, which is the
    digest of its secret): what a Standard Webhooks verifier is given to check `webhook-signature`.
    Shown once with the secret; a client holding the secret can compute it too."""
    return "whsec_" + base64.b64encode(digest).decode()


def signature(digest: bytes, timestamp: int, body: bytes) -> str:
    """`Lorebase-Signature`: t=<unix seconds>,v1=<hex HMAC-SHA256 over "<t>." + body>."""
    mac = hmac.new(digest, f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={mac}"


def standard_headers(digest: bytes, message_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    """The Standard Webhooks headers (standardwebhooks.com): `webhook-id` (the same on every attempt),
    `webhook-timestamp`, and `webhook-signature`: `v1,` + base64 HMAC-SHA256 over
    "<id>.<timestamp>." + body, keyed with the digest (the key of `standard_secret`)."""
    signed = f"{message_id}.{timestamp}.".encode() + body
    mac = base64.b64encode(hmac.new(digest, signed, hashlib.sha256).digest()).decode()
    return {"webhook-id": message_id, "webhook-timestamp": str(timestamp), "webhook-signature": f"v1,{mac}"}


__all__ = [
    "MIN_KEY_CHARS",
    "Sealer",
    "SecretKeyError",
    "new_secret",
    "resolve_reference",
    "signature",
    "standard_headers",
    "standard_secret",
]
