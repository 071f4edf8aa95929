"""Where values come from: the syncs of each Source, the Record keys each delivered, and the evidence behind
extracted values (lorebase_store.sources, extractions)."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    PrimaryKeyConstraint,
    Table,
    Text,
)
from sqlalchemy.dialects.postgresql import JSONB

from lorebase_store.tables._metadata import metadata

# Source syncs (migration 0006): one row per sync of a Source on a branch, numbered per Source.
source_syncs = Table(
    "source_syncs",
    metadata,
    Column("domain_id", Integer, nullable=False),
    Column("branch", Text, nullable=False),
    Column("source", Text, nullable=False),
    Column("number", BigInteger, nullable=False),
    Column("synced_at", DateTime(timezone=True), nullable=False),
    Column("revision", Text),
    Column("mode", Text, nullable=False),
    Column("principal", Text, nullable=False),
    Column("counts", JSONB, nullable=False),
    PrimaryKeyConstraint("domain_id", "branch", "source", "number"),
    Index("source_syncs_revision", "domain_id", "revision"),
)

# The Record keys each Source delivered (migration 0006), with the sync that last listed them.
source_keys = Table(
    "source_keys",
    metadata,
    Column("domain_id", Integer, nullable=False),
    Column("branch", Text, nullable=False),
    Column("source", Text, nullable=False),
    Column("kind", Text, nullable=False),
    Column("key", Text, nullable=False),
    Column("last_sync", BigInteger, nullable=False),
    PrimaryKeyConstraint("domain_id", "branch", "source", "kind", "key"),
    Index("source_keys_last_sync", "domain_id", "branch", "source", "kind", "last_sync"),
)

# Extractions (migration 0013): the evidence behind extracted values, once per digest of it;
# provenance names it (`$evidence`: Attribute -> id).
extractions = Table(
    "extractions",
    metadata,
    Column("domain_id", Integer, ForeignKey("domains.id"), nullable=False),
    Column("id", Text, nullable=False),
    Column("document", Text, nullable=False),
    Column("document_digest", Text, nullable=False),
    Column("span", JSONB, nullable=False),
    Column("model", Text, nullable=False),
    Column("prompt_version", Text, nullable=False),
    Column("extractor", Text, nullable=False),
    Column("confidence", Float),
    Column("revision", Text, nullable=False),
    Column("created_by", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    PrimaryKeyConstraint("domain_id", "id"),
    Index("extractions_confidence", "domain_id", "confidence"),
)


__all__ = [
    "extractions",
    "source_keys",
    "source_syncs",
]
