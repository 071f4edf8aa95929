"""The tables of the Lorebase store (SQLAlchemy Core). Migrations create them; see docs/storage.md.

One module per table family (each says which store modules read and write them), all declared on
one `metadata` (`_metadata.py`); every table is imported from here (`from lorebase_store.tables
import records`):

- `access.py`: principals, api_keys, grants
- `graph.py`: domains, branches, revisions, records, links, history, tags
- `schema.py`: schema_versions, schema_change_sets, schema_change_jobs
- `receipts.py`: invocations, idempotency_receipts, audit_log
- `feed.py`: outbox, webhooks, webhook_deliveries, feed_cursors
- `coverage.py`: statistics, resolve_misses, suggestions
- `sources.py`: source_syncs, source_keys, extractions
- `trace.py`: trace_entries, trace_sessions
- `merges.py`: proposals, proposal_reviews, merge_attempts, conflicts, branch_merges
- `reconciliation.py`: reconciliation_candidates, reconciliation_scans
- `vault.py`: vault_keys, erasures, vault_entries

The tables of agent memory are lorebase_store.memory_tables, on the same `metadata`.
"""

from __future__ import annotations

from lorebase_store.tables._metadata import metadata
from lorebase_store.tables.access import api_keys, grants, principals
from lorebase_store.tables.coverage import resolve_misses, statistics, suggestions
from lorebase_store.tables.feed import feed_cursors, outbox, webhook_deliveries, webhooks
from lorebase_store.tables.graph import branches, domains, history, links, records, revisions, tags
from lorebase_store.tables.merges import branch_merges, conflicts, merge_attempts, proposal_reviews, proposals
from lorebase_store.tables.receipts import audit_log, idempotency_receipts, invocations
from lorebase_store.tables.reconciliation import reconciliation_candidates, reconciliation_scans
from lorebase_store.tables.schema import schema_change_jobs, schema_change_sets, schema_versions
from lorebase_store.tables.sources import extractions, source_keys, source_syncs
from lorebase_store.tables.trace import trace_entries, trace_sessions
from lorebase_store.tables.vault import erasures, vault_entries, vault_keys

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
    "schema_change_jobs",
    "schema_change_sets",
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
