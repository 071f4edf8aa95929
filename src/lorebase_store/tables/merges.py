"""Proposals: a request to merge one branch into another, its reviews, merge attempts and Conflicts, and
where the last merge of a source into a target stood (lorebase_store.proposals)."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    ForeignKey,
    Identity,
    Integer,
    PrimaryKeyConstraint,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import JSONB

from lorebase_store.tables._metadata import metadata

# Proposals (migration 0007): a request to merge one branch into another, with its reviews, merge
# attempts and Conflicts; branch_merges keeps where the last merge of a source into a target stood.
proposals = Table(
    "proposals",
    metadata,
    Column("id", Text, primary_key=True),
    Column("domain_id", Integer, nullable=False),
    Column("source_ref", Text, nullable=False),
    Column("target_ref", Text, nullable=False),
    Column("title", Text, nullable=False),
    Column("description", Text, nullable=False),
    Column("intent", Text),
    Column("task", Text),
    Column("status", Text, nullable=False),
    Column("author", Text, nullable=False),
    Column("review_policy", Boolean, nullable=False),
    Column("executions", JSONB, nullable=False),
    Column("kinds", JSONB, nullable=False),
    Column("merged_revision", Text),
    Column("merged_by", Text),
    Column("merged_at", DateTime(timezone=True)),
    Column("closed_by", Text),
    Column("closed_at", DateTime(timezone=True)),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)

proposal_reviews = Table(
    "proposal_reviews",
    metadata,
    Column("seq", BigInteger, Identity(), primary_key=True),
    Column("proposal_id", Text, ForeignKey("proposals.id"), nullable=False),
    Column("reviewer", Text, nullable=False),
    Column("decision", Text, nullable=False),
    Column("comment", Text),
    Column("created_at", DateTime(timezone=True), nullable=False),
)

merge_attempts = Table(
    "merge_attempts",
    metadata,
    Column("id", Text, primary_key=True),
    Column("proposal_id", Text, ForeignKey("proposals.id"), nullable=False),
    Column("result", Text, nullable=False),
    Column("counts", JSONB, nullable=False),
    Column("open_conflicts", Integer, nullable=False),
    Column("resolved_conflicts", Integer, nullable=False),
    Column("revision", Text),
    Column("by", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    # Migration 0013: the heads the attempt merged (null before it), to tell when it is out of date.
    Column("source_head", Text),
    Column("target_head", Text),
)

conflicts = Table(
    "conflicts",
    metadata,
    Column("id", Text, primary_key=True),
    Column("proposal_id", Text, ForeignKey("proposals.id"), nullable=False),
    Column("fingerprint", Text, nullable=False),
    Column("code", Text, nullable=False),
    Column("entity", Text, nullable=False),
    Column("name", Text, nullable=False),
    Column("key", Text, nullable=False),
    Column("attribute", Text),
    Column("details", JSONB, nullable=False),
    Column("status", Text, nullable=False),
    Column("resolution", JSONB),
    Column("resolved_by", Text),
    Column("resolved_at", DateTime(timezone=True)),
    Column("created_at", DateTime(timezone=True), nullable=False),
    UniqueConstraint("proposal_id", "fingerprint"),
)

branch_merges = Table(
    "branch_merges",
    metadata,
    Column("domain_id", Integer, nullable=False),
    Column("source", Text, nullable=False),
    Column("target", Text, nullable=False),
    Column("source_generation", BigInteger, nullable=False),
    Column("target_generation", BigInteger, nullable=False),
    Column("merged_at", DateTime(timezone=True), nullable=False),
    PrimaryKeyConstraint("domain_id", "source", "target"),
)


__all__ = [
    "branch_merges",
    "conflicts",
    "merge_attempts",
    "proposal_reviews",
    "proposals",
]
