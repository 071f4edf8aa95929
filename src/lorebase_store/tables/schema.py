"""Schema versions: every schema a Domain has had, the change set each schema-changing Revision applied, and
the jobs of change sets a client chose not to wait for (lorebase_store.schema_versions, schema_jobs)."""

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
)
from sqlalchemy.dialects.postgresql import JSONB

from lorebase_store.tables._metadata import metadata

# Every schema a Domain has had, by the SHA-256 of its canonical JSON (migration 0018).
schema_versions = Table(
    "schema_versions",
    metadata,
    Column("domain_id", Integer, ForeignKey("domains.id"), nullable=False),
    Column("digest", Text, nullable=False),
    Column("document", JSON, nullable=False),  # JSON, not JSONB: declaration order matters
    Column("created_at", DateTime(timezone=True), nullable=False),
    PrimaryKeyConstraint("domain_id", "digest"),
)

# The change set each schema-changing Revision applied, as it was sent (migration 0019): a merge
# across schema versions replays the other side's on the data it brings over.
schema_change_sets = Table(
    "schema_change_sets",
    metadata,
    Column("domain_id", Integer, ForeignKey("domains.id"), nullable=False),
    Column("revision", Text, nullable=False),
    Column("changes", JSONB, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    PrimaryKeyConstraint("domain_id", "revision"),
)

# Change sets a client chose not to wait for (migration 0023): the job's state, so any keeper
# answers it (lorebase_store/schema_jobs.py).
schema_change_jobs = Table(
    "schema_change_jobs",
    metadata,
    Column("id", Text, primary_key=True),
    Column("seq", BigInteger, Identity(), nullable=False),
    Column("domain_id", Integer, ForeignKey("domains.id"), nullable=False),
    Column("branch", Text, nullable=False),
    Column("status", Text, nullable=False),
    Column("dry_run", Boolean, nullable=False),
    Column("created_by", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("finished_at", DateTime(timezone=True)),
    Column("heartbeat_at", DateTime(timezone=True), nullable=False),
    Column("owner", Text, nullable=False),
    Column("idempotency_key", Text),
    Column("request_digest", Text, nullable=False),
    Column("progress", JSONB),
    Column("answer_status", Integer),
    Column("answer", JSONB),
    Column("revision", Text),
    Index("schema_change_jobs_domain", "domain_id", "seq"),
)


__all__ = [
    "schema_change_jobs",
    "schema_change_sets",
    "schema_versions",
]
