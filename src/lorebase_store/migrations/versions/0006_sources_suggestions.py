"""Source syncs, the keys each Source delivered, and Scribe's suggestions from resolve misses.

Revision ID: 0006
Revises: 0005
"""

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
CREATE TABLE source_syncs (
    domain_id INTEGER NOT NULL,
    branch TEXT NOT NULL,
    source TEXT NOT NULL,
    number BIGINT NOT NULL,
    synced_at TIMESTAMP WITH TIME ZONE NOT NULL,
    revision TEXT,
    mode TEXT NOT NULL,
    principal TEXT NOT NULL,
    counts JSONB NOT NULL,
    PRIMARY KEY (domain_id, branch, source, number)
)
        """
    )
    op.execute("CREATE INDEX source_syncs_revision ON source_syncs (domain_id, revision)")
    op.execute(
        """
CREATE TABLE source_keys (
    domain_id INTEGER NOT NULL,
    branch TEXT NOT NULL,
    source TEXT NOT NULL,
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    last_sync BIGINT NOT NULL,
    PRIMARY KEY (domain_id, branch, source, kind, key)
)
        """
    )
    op.execute(
        "CREATE INDEX source_keys_last_sync ON source_keys (domain_id, branch, source, kind, last_sync)"
    )
    op.execute(
        """
CREATE TABLE suggestions (
    id TEXT PRIMARY KEY,
    domain_id INTEGER NOT NULL,
    phrase TEXT NOT NULL,
    type TEXT NOT NULL,
    target JSONB NOT NULL,
    patch JSONB NOT NULL,
    score DOUBLE PRECISION NOT NULL,
    misses BIGINT NOT NULL,
    status TEXT NOT NULL,
    created_at TIMESTAMP WITH TIME ZONE NOT NULL,
    updated_at TIMESTAMP WITH TIME ZONE NOT NULL,
    decided_by TEXT,
    decided_at TIMESTAMP WITH TIME ZONE,
    UNIQUE (domain_id, phrase)
)
        """
    )
    op.execute("CREATE INDEX suggestions_status ON suggestions (domain_id, status, id)")
