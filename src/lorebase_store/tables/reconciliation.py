"""Reconciliation: pairs of Records likely to be the same thing, and the head each scan of a branch saw
(lorebase_store.reconciliation)."""

from __future__ import annotations

from sqlalchemy import Column, DateTime, Float, ForeignKey, Index, Integer, PrimaryKeyConstraint, Table, Text
from sqlalchemy.dialects.postgresql import JSONB

from lorebase_store.tables._metadata import metadata

# Reconciliation (migration 0015): pairs of Records likely to be the same thing, and the head each
# scan of a branch saw (lorebase_store.reconciliation).
reconciliation_candidates = Table(
    "reconciliation_candidates",
    metadata,
    Column("id", Text, primary_key=True),
    Column("domain_id", Integer, ForeignKey("domains.id"), nullable=False),
    Column("branch", Text, nullable=False),
    Column("kind", Text, nullable=False),
    Column("record_a", Text, nullable=False),
    Column("record_b", Text, nullable=False),
    Column("score", Float, nullable=False),
    Column("evidence", JSONB, nullable=False),
    Column("status", Text, nullable=False),
    Column("revision", Text),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Column("decided_by", Text),
    Column("decided_at", DateTime(timezone=True)),
    Column("reason", Text),
    Column("result", JSONB),
    Index("reconciliation_status", "domain_id", "status", "id"),
    Index("reconciliation_pairs", "domain_id", "branch", "kind", "record_a", "record_b"),
)

reconciliation_scans = Table(
    "reconciliation_scans",
    metadata,
    Column("domain_id", Integer, ForeignKey("domains.id"), nullable=False),
    Column("branch", Text, nullable=False),
    Column("revision", Text),
    Column("settings", JSONB, nullable=False),
    Column("scanned_at", DateTime(timezone=True), nullable=False),
    PrimaryKeyConstraint("domain_id", "branch"),
)


__all__ = [
    "reconciliation_candidates",
    "reconciliation_scans",
]
