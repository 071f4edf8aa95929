"""The tables of the Lorebase store (SQLAlchemy Core). Migrations create them; see docs/storage.md."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Identity,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB

metadata = MetaData()

principals = Table(
    "principals",
    metadata,
    Column("id", Text, primary_key=True),
    Column("type", Text, nullable=False),
    Column("name", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    # The tenant its memory namespaces belong to (migration 0008, docs/memory.md).
    Column("tenant", Text, nullable=False, server_default="default"),
)

# Credentials are kept only as SHA-256 digests of the key text.
api_keys = Table(
    "api_keys",
    metadata,
    Column("id", Text, primary_key=True),
    Column("principal_id", Text, ForeignKey("principals.id"), nullable=False),
    Column("digest", Text, nullable=False, unique=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("revoked_at", DateTime(timezone=True)),
    # Migration 0012: a web session is a key derived from another (its parent), valid until expires_at.
    Column("expires_at", DateTime(timezone=True)),
    Column("parent_key_id", Text, ForeignKey("api_keys.id")),
    Index("api_keys_parent", "parent_key_id", postgresql_where="parent_key_id IS NOT NULL"),
)

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

grants = Table(
    "grants",
    metadata,
    Column("id", Text, primary_key=True),
    Column("domain_id", Integer, ForeignKey("domains.id"), nullable=False),
    Column("principal_id", Text, ForeignKey("principals.id"), nullable=False),
    Column("role", Text, nullable=False),
    Column("branches", JSONB, nullable=False),
    Column("kinds", JSONB),
    Column("created_by", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Index("grants_principal", "principal_id", "domain_id"),
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

# The vault (migration 0014): values of vault Attributes, sealed, by ref; each Domain's HMAC key
# for refs (sealed); the erasures that deleted values (lorebase_store.vault).
vault_keys = Table(
    "vault_keys",
    metadata,
    Column("domain_id", Integer, ForeignKey("domains.id"), primary_key=True),
    Column("sealed", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)

erasures = Table(
    "erasures",
    metadata,
    Column("id", Text, primary_key=True),
    Column("domain_id", Integer, ForeignKey("domains.id"), nullable=False),
    Column("seq", BigInteger, Identity(), nullable=False),
    Column("records", JSONB, nullable=False),
    Column("attributes", JSONB, nullable=False),
    Column("refs", Integer, nullable=False),
    Column("reason", Text, nullable=False),
    Column("created_by", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Index("erasures_seq", "domain_id", "seq"),
)

vault_entries = Table(
    "vault_entries",
    metadata,
    Column("ref", Text, primary_key=True),
    Column("domain_id", Integer, ForeignKey("domains.id"), nullable=False),
    Column("kind", Text, nullable=False),
    Column("record_key", Text, nullable=False),
    Column("attribute", Text, nullable=False),
    Column("sealed", Text),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("erased_at", DateTime(timezone=True)),
    Column("erasure_id", Text, ForeignKey("erasures.id")),
    Index("vault_entries_record", "domain_id", "kind", "record_key"),
)

feed_cursors = Table(
    "feed_cursors",
    metadata,
    Column("name", Text, primary_key=True),
    Column("position", BigInteger, nullable=False),
)

__all__ = [
    "api_keys",
    "audit_log",
    "branch_merges",
    "branches",
    "conflicts",
    "domains",
    "erasures",
    "extractions",
    "feed_cursors",
    "grants",
    "history",
    "idempotency_receipts",
    "invocations",
    "links",
    "merge_attempts",
    "metadata",
    "outbox",
    "principals",
    "proposal_reviews",
    "proposals",
    "reconciliation_candidates",
    "reconciliation_scans",
    "records",
    "resolve_misses",
    "revisions",
    "schema_versions",
    "source_keys",
    "source_syncs",
    "statistics",
    "suggestions",
    "tags",
    "trace_entries",
    "trace_sessions",
    "vault_entries",
    "vault_keys",
    "webhook_deliveries",
    "webhooks",
]
