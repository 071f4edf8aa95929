"""The change feed: outbox indexes for the event stream and the polling changes; webhooks, their
deliveries and the delivery cursor.

Revision ID: 0009
Revises: 0008
"""

from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # The event stream of one branch reads its events after a sequence.
    op.execute("CREATE INDEX outbox_branch ON outbox (domain_id, branch, sequence)")
    # The polling changes find the revision.committed event of each Revision.
    op.execute(
        "CREATE INDEX outbox_revision ON outbox (domain_id, revision) WHERE type = 'revision.committed'"
    )
    op.execute(
        """
CREATE TABLE webhooks (
    id TEXT PRIMARY KEY,
    domain_id INTEGER NOT NULL REFERENCES domains (id),
    url TEXT NOT NULL,
    events JSONB NOT NULL,
    branches JSONB NOT NULL,
    clearances JSONB NOT NULL,
    signing_key TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_at TIMESTAMP WITH TIME ZONE NOT NULL,
    updated_at TIMESTAMP WITH TIME ZONE NOT NULL
)
        """
    )
    op.execute("CREATE INDEX webhooks_domain ON webhooks (domain_id)")
    op.execute(
        """
CREATE TABLE webhook_deliveries (
    id TEXT PRIMARY KEY,
    webhook_id TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    sequence BIGINT NOT NULL,
    type TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    next_attempt_at TIMESTAMP WITH TIME ZONE NOT NULL,
    last_error TEXT,
    last_status INTEGER,
    created_at TIMESTAMP WITH TIME ZONE NOT NULL,
    finished_at TIMESTAMP WITH TIME ZONE,
    UNIQUE (webhook_id, sequence)
)
        """
    )
    op.execute(
        "CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'"
    )
    # Positions of outbox followers that keep their place in the database (the delivery fan-out).
    op.execute("CREATE TABLE feed_cursors (name TEXT PRIMARY KEY, position BIGINT NOT NULL)")


def downgrade() -> None:
    op.execute("DROP TABLE feed_cursors")
    op.execute("DROP TABLE webhook_deliveries")
    op.execute("DROP TABLE webhooks")
    op.execute("DROP INDEX outbox_revision")
    op.execute("DROP INDEX outbox_branch")
