"""Who may read and write: principals, their API keys (SHA-256 digests only; a web session is a key derived
from another) and their grants per Domain (lorebase_store.principals)."""

from __future__ import annotations

from sqlalchemy import Column, DateTime, ForeignKey, Index, Integer, Table, Text
from sqlalchemy.dialects.postgresql import JSONB

from lorebase_store.tables._metadata import metadata

principals = Table(
    "principals",
    metadata,
    Column("id", Text, primary_key=True),
    Column("type", Text, nullable=False),
    Column("name", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    # The tenant its memory namespaces belong to (migration 0008, docs/memory.md).
    Column("tenant", Text, nullable=False, server_default="default"),
)

# Credentials are kept only as SHA-256 digests of the key text.
api_keys = Table(
    "api_keys",
    metadata,
    Column("id", Text, primary_key=True),
    Column("principal_id", Text, ForeignKey("principals.id"), nullable=False),
    Column("digest", Text, nullable=False, unique=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("revoked_at", DateTime(timezone=True)),
    # Migration 0012: a web session is a key derived from another (its parent), valid until expires_at.
    Column("expires_at", DateTime(timezone=True)),
    Column("parent_key_id", Text, ForeignKey("api_keys.id")),
    Index("api_keys_parent", "parent_key_id", postgresql_where="parent_key_id IS NOT NULL"),
)

grants = Table(
    "grants",
    metadata,
    Column("id", Text, primary_key=True),
    Column("domain_id", Integer, ForeignKey("domains.id"), nullable=False),
    Column("principal_id", Text, ForeignKey("principals.id"), nullable=False),
    Column("role", Text, nullable=False),
    Column("branches", JSONB, nullable=False),
    Column("kinds", JSONB),
    Column("created_by", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Index("grants_principal", "principal_id", "domain_id"),
)


__all__ = [
    "api_keys",
    "grants",
    "principals",
]
