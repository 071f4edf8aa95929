"""What Scribe counts and suggests: coverage statistics per branch and Kind, the phrases POST /resolve could
not ground, and the suggestions made from them (lorebase_store.statistics, suggestions)."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    DateTime,
    Float,
    Index,
    Integer,
    PrimaryKeyConstraint,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import JSONB

from lorebase_store.tables._metadata import metadata

# Coverage statistics (migration 0002): Records and missing values per Attribute, per branch and
# Kind, counted by Scribe at `revision`.
statistics = Table(
    "statistics",
    metadata,
    Column("domain_id", Integer, nullable=False),
    Column("branch", Text, nullable=False),
    Column("kind", Text, nullable=False),
    Column("revision", Text),
    Column("records", BigInteger, nullable=False),
    Column("missing", JSONB, nullable=False),
    Column("counted_at", DateTime(timezone=True), nullable=False),
    PrimaryKeyConstraint("domain_id", "branch", "kind"),
)

# Phrases POST /resolve could not ground (migration 0003), for Scribe's alias suggestions.
resolve_misses = Table(
    "resolve_misses",
    metadata,
    Column("domain_id", Integer, nullable=False),
    Column("phrase", Text, nullable=False),
    Column("count", BigInteger, nullable=False),
    Column("first_seen", DateTime(timezone=True), nullable=False),
    Column("last_seen", DateTime(timezone=True), nullable=False),
    PrimaryKeyConstraint("domain_id", "phrase"),
)

# Scribe's suggestions from resolve misses (migration 0006): open, accepted or dismissed.
suggestions = Table(
    "suggestions",
    metadata,
    Column("id", Text, primary_key=True),
    Column("domain_id", Integer, nullable=False),
    Column("phrase", Text, nullable=False),
    Column("type", Text, nullable=False),
    Column("target", JSONB, nullable=False),
    Column("patch", JSONB, nullable=False),
    Column("score", Float, nullable=False),
    Column("misses", BigInteger, nullable=False),
    Column("status", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Column("decided_by", Text),
    Column("decided_at", DateTime(timezone=True)),
    UniqueConstraint("domain_id", "phrase"),
    Index("suggestions_status", "domain_id", "status", "id"),
)


__all__ = [
    "resolve_misses",
    "statistics",
    "suggestions",
]
