"""The agent trace: the calls made with a session id and the notes, and per session what GET /sessions shows
(lorebase_store.trace)."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    DateTime,
    Float,
    Identity,
    Index,
    Integer,
    PrimaryKeyConstraint,
    Table,
    Text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB

from lorebase_store.tables._metadata import metadata

# The agent trace (migration 0004): calls made with a session id, and notes.
trace_entries = Table(
    "trace_entries",
    metadata,
    Column("id", BigInteger, Identity(), primary_key=True),
    Column("session_id", Text, nullable=False),
    Column("principal", Text, nullable=False),
    Column("domain", Text),
    Column("kind", Text, nullable=False),
    Column("call", Text),
    Column("status", Integer),
    Column("latency_ms", Float),
    Column("details", JSONB, nullable=False),
    Column("at", DateTime(timezone=True), nullable=False),
    Index("trace_entries_session", "session_id", "principal", "id"),
)
# The steps that opened or added to a Proposal (migration 0020, built concurrently).
Index("trace_entries_proposal", trace_entries.c.details["proposal"].astext)

# Migration 0012: per agent session and principal, what GET /sessions shows (written with each entry).
trace_sessions = Table(
    "trace_sessions",
    metadata,
    Column("session_id", Text, nullable=False),
    Column("principal", Text, nullable=False),
    Column("first_entry_id", BigInteger, nullable=False),
    Column("started_at", DateTime(timezone=True), nullable=False),
    Column("last_at", DateTime(timezone=True), nullable=False),
    Column("steps", Integer, nullable=False),
    Column("errors", Integer, nullable=False),
    Column("notes", Integer, nullable=False),
    Column("domains", ARRAY(Text), nullable=False),
    PrimaryKeyConstraint("session_id", "principal"),
    Index("trace_sessions_recent", "last_at", "session_id"),
    Index("trace_sessions_principal", "principal", "last_at", "session_id"),
)


__all__ = [
    "trace_entries",
    "trace_sessions",
]
