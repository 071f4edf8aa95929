"""Vault refs: how a vault value becomes `{"$vault": <ref>}` on its way into a commit.

A ref is `vlt_` + the hex HMAC-SHA256, under the Domain's vault key, of the canonical JSON of
(Domain id, Kind, Record key, Attribute, value). It is deterministic, so the same operation gives the
same Revision id as without a vault (the Revision is content-addressed over refs, and stays the same
when the value is erased), and it tells nothing of the value without the key. The key is 32 random
bytes per Domain, made on the first vault write and stored sealed (`vault_keys`); the values are
sealed too. Both use the sealing of webhook secrets (lorebase.webhook_secrets.Sealer, under
`webhooks.encryption_key`): one key setting for every secret at rest.

A Domain whose schema has no vault Attribute never reaches this module (`Vault.writer` answers None
without a query), so its writes pay nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass, field
from typing import Any

from lorebase.canonical import canonical_json
from lorebase.ids import iso, utc_now
from lorebase.problems import Problem
from lorebase.schema import DomainSchema
from lorebase.settings_model import Webhooks
from lorebase.vault import REF, is_ref
from lorebase.webhook_secrets import Sealer, SecretKeyError
from lorebase_keeper.domains import Domain
from lorebase_store import Database, Txn


def has_vault(schema: DomainSchema) -> bool:
    return any(kind.vault for kind in schema.kinds.values())


@dataclass
class VaultWriter:
    """The refs of one write (a change set): computes each ref and keeps the entry it names."""

    domain_id: int
    key: bytes
    sealer: Sealer
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    by_value: dict[bytes, str] = field(default_factory=dict)  # canonical value -> a ref it got

    def ref(self, kind: str, record_key: str, attribute: str, value: Any) -> dict[str, str]:
        """The stored form of `value` (already a ref: itself)."""
        if is_ref(value):
            return dict(value)
        canonical = canonical_json(value)
        tuple_ = canonical_json([self.domain_id, kind, record_key, attribute, value])
        ref = "vlt_" + hmac.new(self.key, tuple_, hashlib.sha256).hexdigest()
        if ref not in self.entries:
            self.entries[ref] = {
                "ref": ref,
                "kind": kind,
                "record_key": record_key,
                "attribute": attribute,
                "sealed": self.sealer.seal(canonical),
                "created_at": iso(utc_now()),
            }
        self.by_value[canonical] = ref
        return {REF: ref}

    def conceal(self, parameters: dict[str, Any]) -> dict[str, Any]:
        """Operation parameters as stored: a parameter whose value went into the vault holds its
        ref (the invocation, the receipt and the events never keep the value)."""
        if not self.by_value:
            return parameters
        out = dict(parameters)
        for name, value in parameters.items():
            ref = self.by_value.get(canonical_json(value))
            if ref is not None:
                out[name] = {REF: ref}
        return out

    def rows(self) -> list[dict[str, Any]]:
        return list(self.entries.values())


class Vault:
    """Each Domain's vault key (unsealed once per process) and the sealer of values."""

    def __init__(self, db: Database, webhooks: Webhooks) -> None:
        self.db = db
        self._webhooks = webhooks
        self._sealer: Sealer | None = None
        self._keys: dict[int, bytes] = {}

    @property
    def sealer(self) -> Sealer:
        if self._sealer is None:
            try:
                sealer = Sealer.of(self._webhooks)
            except SecretKeyError as exc:
                raise Problem(409, "encryption_key_required", f"vault values are sealed: {exc}") from None
            if sealer.current is None:  # webhooks.allow_unsealed_keys does not apply to the vault
                raise Problem(
                    409,
                    "encryption_key_required",
                    "vault values are sealed under webhooks.encryption_key (a secret:// reference to at "
                    "least 32 characters); set it to write vault Attributes",
                )
            self._sealer = sealer
        return self._sealer

    async def writer(self, domain: Domain) -> VaultWriter | None:
        """A writer for one write to `domain`; None when its schema has no vault Attribute."""
        if not has_vault(domain.schema):
            return None
        return VaultWriter(domain.id, await self.key(domain.id), self.sealer)

    async def key(self, domain_id: int) -> bytes:
        key = self._keys.get(domain_id)
        if key is None:
            sealer = self.sealer
            candidate = sealer.seal(secrets.token_bytes(32))  # 409 without webhooks.encryption_key
            stored = await self.db.run_interaction("vault_key", _vault_key, domain_id, candidate)
            key = self._keys[domain_id] = sealer.unseal(stored)
        return key


async def _vault_key(txn: Txn, domain_id: int, candidate: str) -> str:
    return await txn.vault_key(domain_id, candidate, utc_now())


__all__ = ["REF", "Vault", "VaultWriter", "has_vault", "is_ref"]
