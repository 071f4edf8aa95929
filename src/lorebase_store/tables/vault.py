"""The vault: each Domain's sealed key for refs, the erasures that deleted values, and the sealed values of
vault Attributes by ref (lorebase_store.vault)."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, DateTime, ForeignKey, Identity, Index, Integer, Table, Text
from sqlalchemy.dialects.postgresql import JSONB

from lorebase_store.tables._metadata import metadata

# The vault (migration 0014): values of vault Attributes, sealed, by ref; each Domain's HMAC key
# for refs (sealed); the erasures that deleted values (lorebase_store.vault).
vault_keys = Table(
    "vault_keys",
    metadata,
    Column("domain_id", Integer, ForeignKey("domains.id"), primary_key=True),
    Column("sealed", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)

erasures = Table(
    "erasures",
    metadata,
    Column("id", Text, primary_key=True),
    Column("domain_id", Integer, ForeignKey("domains.id"), nullable=False),
    Column("seq", BigInteger, Identity(), nullable=False),
    Column("records", JSONB, nullable=False),
    Column("attributes", JSONB, nullable=False),
    Column("refs", Integer, nullable=False),
    Column("reason", Text, nullable=False),
    Column("created_by", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Index("erasures_seq", "domain_id", "seq"),
)

vault_entries = Table(
    "vault_entries",
    metadata,
    Column("ref", Text, primary_key=True),
    Column("domain_id", Integer, ForeignKey("domains.id"), nullable=False),
    Column("kind", Text, nullable=False),
    Column("record_key", Text, nullable=False),
    Column("attribute", Text, nullable=False),
    Column("sealed", Text),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("erased_at", DateTime(timezone=True)),
    Column("erasure_id", Text, ForeignKey("erasures.id")),
    Index("vault_entries_record", "domain_id", "kind", "record_key"),
)


__all__ = [
    "erasures",
    "vault_entries",
    "vault_keys",
]
