"""What a write leaves behind: the invocation of each Operation, the idempotency receipt that answers its
retries once, and the audit log (lorebase_store.receipts)."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Column,
    DateTime,
    Identity,
    Index,
    Integer,
    PrimaryKeyConstraint,
    Table,
    Text,
)
from sqlalchemy.dialects.postgresql import JSONB

from lorebase_store.tables._metadata import metadata

invocations = Table(
    "invocations",
    metadata,
    Column("id", Text, primary_key=True),
    Column("domain_id", Integer, nullable=False),
    Column("operation", Text, nullable=False),
    Column("principal", Text, nullable=False),
    Column("branch", Text, nullable=False),
    Column("parameters", JSONB, nullable=False),
    Column("revision", Text),
    Column("created_at", DateTime(timezone=True), nullable=False),
)

idempotency_receipts = Table(
    "idempotency_receipts",
    metadata,
    Column("domain_id", Integer, nullable=False),
    Column("principal", Text, nullable=False),
    Column("key", Text, nullable=False),
    Column("request_digest", Text, nullable=False),
    Column("status", Integer, nullable=False),
    Column("response", JSON, nullable=False),  # JSON keeps the member order of the original answer
    Column("revision", Text),
    Column("created_at", DateTime(timezone=True), nullable=False),
    PrimaryKeyConstraint("domain_id", "principal", "key"),
)

audit_log = Table(
    "audit_log",
    metadata,
    Column("id", BigInteger, Identity(), primary_key=True),
    Column("at", DateTime(timezone=True), nullable=False),
    Column("principal", Text, nullable=False),
    Column("action", Text, nullable=False),
    Column("domain", Text),
    Column("target", Text),
    Column("details", JSONB, nullable=False),
    Index("audit_log_domain", "domain", "id"),
)


__all__ = [
    "audit_log",
    "idempotency_receipts",
    "invocations",
]
