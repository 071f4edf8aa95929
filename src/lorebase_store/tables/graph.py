"""The versioned graph: Domains, their branches, the Revisions committed on them (and the tags naming some),
the materialised head of each branch (records, links) and the history of every change
(lorebase_store.domains, records, revisions, tags)."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    DateTime,
    ForeignKey,
    Identity,
    Index,
    Integer,
    PrimaryKeyConstraint,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import JSONB

from lorebase_store.tables._metadata import metadata

domains = Table(
    "domains",
    metadata,
    Column("id", Integer, Identity(), primary_key=True),
    Column("name", Text, nullable=False, unique=True),
    Column("default_branch", Text, nullable=False),
    Column("schema", JSON, nullable=False),  # JSON, not JSONB: declaration order matters
    Column("settings", JSONB, nullable=False),
    Column("created_by", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)

branches = Table(
    "branches",
    metadata,
    Column("domain_id", Integer, ForeignKey("domains.id"), nullable=False),
    Column("name", Text, nullable=False),
    Column("head", Text),
    Column("generation", BigInteger, nullable=False),
    Column("protected", Boolean, nullable=False),
    Column("required_approvals", Integer, nullable=False),
    Column("from_branch", Text),
    Column("fork_generation", BigInteger),
    Column("mode", Text, nullable=False),
    Column("created_by", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    # The first-parent chain (migration 0007): [[branch, first generation, last or null], ...].
    Column("chain", JSONB),
    PrimaryKeyConstraint("domain_id", "name"),
)

revisions = Table(
    "revisions",
    metadata,
    Column("domain_id", Integer, ForeignKey("domains.id"), nullable=False),
    Column("id", Text, nullable=False),
    Column("branch", Text, nullable=False),
    Column("generation", BigInteger, nullable=False),
    Column("parents", JSONB, nullable=False),
    Column("author", Text, nullable=False),
    Column("message", Text, nullable=False),
    Column("origin", JSONB, nullable=False),
    Column("changes_digest", Text, nullable=False),
    Column("stats", JSONB, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    # Migration 0018: the schema version it was committed under (schema_versions.digest); NULL is the
    # Domain's creation schema (domains.schema).
    Column("schema_digest", Text),
    PrimaryKeyConstraint("domain_id", "id"),
    UniqueConstraint("domain_id", "branch", "generation", name="revisions_branch_generation"),
)

# The materialised head of each branch: one row per live Record. `provenance` maps each Attribute
# to the id of the Revision behind its value (origin, author and time are that Revision's).
records = Table(
    "records",
    metadata,
    Column("domain_id", Integer, nullable=False),
    Column("branch", Text, nullable=False),
    Column("kind", Text, nullable=False),
    Column("key", Text, nullable=False),
    Column("values", JSONB, nullable=False),
    Column("provenance", JSONB, nullable=False),
    Column("created_revision", Text, nullable=False),
    Column("updated_revision", Text, nullable=False),
    PrimaryKeyConstraint("domain_id", "branch", "kind", "key"),
    Index("records_values", "values", postgresql_using="gin", postgresql_ops={"values": "jsonb_path_ops"}),
)

links = Table(
    "links",
    metadata,
    Column("domain_id", Integer, nullable=False),
    Column("branch", Text, nullable=False),
    Column("relation", Text, nullable=False),
    Column("from_key", Text, nullable=False),
    Column("to_key", Text, nullable=False),
    Column("values", JSONB, nullable=False),
    Column("provenance", JSONB, nullable=False),
    Column("revision", Text, nullable=False),
    PrimaryKeyConstraint("domain_id", "branch", "relation", "from_key", "to_key"),
    Index("links_to_from", "domain_id", "branch", "relation", "to_key", "from_key"),
)

# One row per changed Record or Link per Revision, on the branch that committed it.
history = Table(
    "history",
    metadata,
    Column("seq", BigInteger, Identity(), primary_key=True),
    Column("domain_id", Integer, nullable=False),
    Column("branch", Text, nullable=False),
    Column("generation", BigInteger, nullable=False),
    Column("revision", Text, nullable=False),
    Column("entity", Text, nullable=False),
    Column("name", Text, nullable=False),
    Column("key", Text, nullable=False),
    Column("change", Text, nullable=False),
    Column("attributes", JSONB, nullable=False),
    Column("before", JSONB),
    Column("after", JSONB),
    Column("provenance", JSONB, nullable=False),
    Index("history_entity", "domain_id", "branch", "entity", "name", "key", "generation"),
    Index("history_generation", "domain_id", "branch", "generation"),
)

# Tags (migration 0013): immutable names of Revisions, newest first by seq.
tags = Table(
    "tags",
    metadata,
    Column("domain_id", Integer, ForeignKey("domains.id"), nullable=False),
    Column("name", Text, nullable=False),
    Column("revision", Text, nullable=False),
    Column("seq", BigInteger, Identity(), nullable=False),
    Column("created_by", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    PrimaryKeyConstraint("domain_id", "name"),
    Index("tags_seq", "domain_id", "seq"),
)


__all__ = [
    "branches",
    "domains",
    "history",
    "links",
    "records",
    "revisions",
    "tags",
]
