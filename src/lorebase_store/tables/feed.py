"""Events leaving the store: the outbox the feed publishes to JetStream in commit order, the webhooks
registered per Domain and their deliveries, and the feed's cursors (lorebase_store.outbox, webhooks)."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    DateTime,
    ForeignKey,
    Identity,
    Index,
    Integer,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import JSONB

from lorebase_store.tables._metadata import metadata

# Committed events in commit order of their sequence; the feed publishes them to JetStream.
outbox = Table(
    "outbox",
    metadata,
    Column("sequence", BigInteger, Identity(), primary_key=True),
    Column("domain_id", Integer, nullable=False),
    Column("branch", Text, nullable=False),
    Column("type", Text, nullable=False),
    Column("revision", Text),
    Column("event", JSONB, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("published_at", DateTime(timezone=True)),
    # Migration 0011: an event the relay could not publish, marked published and parked with its error.
    Column("parked_at", DateTime(timezone=True)),
    Column("publish_error", Text),
    # Migration 0016: the W3C traceparent of the commit that wrote the event (NULL: not traced).
    Column("traceparent", Text),
    Index("outbox_unpublished", "sequence", postgresql_where="published_at IS NULL"),
    Index("outbox_parked", "sequence", postgresql_where="parked_at IS NOT NULL"),
    # Migration 0009: a branch's events after a sequence; the revision.committed event of a Revision.
    Index("outbox_branch", "domain_id", "branch", "sequence"),
    Index("outbox_revision", "domain_id", "revision", postgresql_where="type = 'revision.committed'"),
)

# Webhooks (migration 0009): endpoints registered per Domain, their signing key sealed
# (lorebase.webhook_secrets), one delivery row per event and webhook, and the fan-out cursor.
webhooks = Table(
    "webhooks",
    metadata,
    Column("id", Text, primary_key=True),
    Column("domain_id", Integer, ForeignKey("domains.id"), nullable=False),
    Column("url", Text, nullable=False),
    Column("events", JSONB, nullable=False),
    Column("branches", JSONB, nullable=False),
    Column("clearances", JSONB, nullable=False),
    Column("signing_key", Text, nullable=False),
    Column("created_by", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    # Migration 0010: the last outbox sequence handed out at its creation; fan-out skips up to it.
    Column("start_after", BigInteger, nullable=False, server_default="0"),
    Index("webhooks_domain", "domain_id"),
)

webhook_deliveries = Table(
    "webhook_deliveries",
    metadata,
    Column("id", Text, primary_key=True),
    Column("webhook_id", Text, ForeignKey("webhooks.id", ondelete="CASCADE"), nullable=False),
    Column("sequence", BigInteger, nullable=False),
    Column("type", Text, nullable=False),
    Column("status", Text, nullable=False),  # pending, delivered, dead
    Column("attempts", Integer, nullable=False),
    Column("next_attempt_at", DateTime(timezone=True), nullable=False),
    Column("last_error", Text),
    Column("last_status", Integer),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("finished_at", DateTime(timezone=True)),
    UniqueConstraint("webhook_id", "sequence"),
    Index("webhook_deliveries_due", "next_attempt_at", postgresql_where="status = 'pending'"),
    # Migration 0010: retention deletes delivered and dead deliveries by finished_at.
    Index(
        "webhook_deliveries_finished",
        "finished_at",
        postgresql_where="status IN ('delivered', 'dead')",
    ),
)

feed_cursors = Table(
    "feed_cursors",
    metadata,
    Column("name", Text, primary_key=True),
    Column("position", BigInteger, nullable=False),
)


__all__ = [
    "feed_cursors",
    "outbox",
    "webhook_deliveries",
    "webhooks",
]
