"""The tables of agent memory (migration 0008; docs/memory.md and docs/storage.md)."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, DateTime, Identity, Integer, PrimaryKeyConstraint, Table, Text
from sqlalchemy.dialects.postgresql import JSONB

from lorebase_store.tables import metadata

memory_grants = Table(
    "memory_grants",
    metadata,
    Column("id", Text, primary_key=True),
    Column("tenant", Text, nullable=False),
    Column("principal_id", Text, nullable=False),
    Column("project_id", Text, nullable=False),
    Column("mission_id", Text),
    Column("agent_id", Text, nullable=False),
    Column("capabilities", JSONB, nullable=False),
    Column("created_by", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)

# One journal per namespace (tenant, project, mission, agent, visibility, private subject).
memory_journals = Table(
    "memory_journals",
    metadata,
    Column("id", Text, primary_key=True),
    Column("namespace_key", Text, nullable=False, unique=True),
    Column("tenant", Text, nullable=False),
    Column("project_id", Text, nullable=False),
    Column("mission_id", Text),
    Column("agent_id", Text, nullable=False),
    Column("visibility", Text, nullable=False),
    Column("subject", Text, nullable=False),
    Column("last_sequence", BigInteger, nullable=False),
    Column("last_chain", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)

memory_journal_entries = Table(
    "memory_journal_entries",
    metadata,
    Column("journal_id", Text, nullable=False),
    Column("sequence", BigInteger, nullable=False),
    Column("schema_version", Integer, nullable=False),
    Column("kind", Text, nullable=False),
    Column("record_id", Text, nullable=False),
    Column("record_revision", BigInteger, nullable=False),
    Column("author", Text, nullable=False),
    Column("committed_at_millis", BigInteger, nullable=False),
    Column("change_digest", Text, nullable=False),
    Column("chain_digest", Text, nullable=False),
    PrimaryKeyConstraint("journal_id", "sequence"),
)

memory_records = Table(
    "memory_records",
    metadata,
    Column("id", Text, primary_key=True),
    Column("namespace_key", Text, nullable=False),
    Column("tenant", Text, nullable=False),
    Column("project_id", Text, nullable=False),
    Column("mission_id", Text),
    Column("agent_id", Text, nullable=False),
    Column("visibility", Text, nullable=False),
    Column("subject", Text, nullable=False),
    Column("record_revision", BigInteger, nullable=False),
    Column("status", Text, nullable=False),
    Column("content", JSONB),
    Column("content_digest", Text),
    Column("derived_from", JSONB, nullable=False),
    Column("valid_until_millis", BigInteger),
    Column("embedding", JSONB),
    Column("review", JSONB),
    Column("created_by", Text, nullable=False),
    Column("created_at_millis", BigInteger, nullable=False),
    Column("updated_by", Text, nullable=False),
    Column("updated_at_millis", BigInteger, nullable=False),
)

memory_reviews = Table(
    "memory_reviews",
    metadata,
    Column("seq", BigInteger, Identity(), primary_key=True),
    Column("record_id", Text, nullable=False),
    Column("record_revision", BigInteger, nullable=False),
    Column("decision", Text, nullable=False),
    Column("reason", Text, nullable=False),
    Column("reviewer", Text, nullable=False),
    Column("created_at_millis", BigInteger, nullable=False),
)

# The integrity index: the digest of each record's current state and the journal entry that made it.
memory_integrity = Table(
    "memory_integrity",
    metadata,
    Column("record_id", Text, primary_key=True),
    Column("journal_id", Text, nullable=False),
    Column("record_revision", BigInteger, nullable=False),
    Column("state_digest", Text, nullable=False),
    Column("last_sequence", BigInteger, nullable=False),
)

memory_receipts = Table(
    "memory_receipts",
    metadata,
    Column("tenant", Text, nullable=False),
    Column("principal", Text, nullable=False),
    Column("key", Text, nullable=False),
    Column("command", Text, nullable=False),
    Column("request_digest", Text, nullable=False),
    Column("status", Integer, nullable=False),
    Column("response", JSONB, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    PrimaryKeyConstraint("tenant", "principal", "key"),
)

memory_checkpoints = Table(
    "memory_checkpoints",
    metadata,
    Column("tenant", Text, nullable=False),
    Column("subject", Text, nullable=False),
    Column("consumer", Text, nullable=False),
    Column("journal_id", Text, nullable=False),
    Column("scope", JSONB, nullable=False),
    Column("contract_version", Integer, nullable=False),
    Column("sequence", BigInteger, nullable=False),
    Column("prefix_digest", Text),
    Column("revision", BigInteger, nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    PrimaryKeyConstraint("tenant", "subject", "consumer"),
)

__all__ = [
    "memory_checkpoints",
    "memory_grants",
    "memory_integrity",
    "memory_journal_entries",
    "memory_journals",
    "memory_receipts",
    "memory_records",
    "memory_reviews",
]
