"""Webhooks: where each one starts in the outbox, and an index for deleting old deliveries.

Revision ID: 0010
Revises: 0009
"""

from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # The last outbox sequence handed out when the webhook was created: fan-out queues only later
    # events for it. Webhooks created before this migration start at 0 (the fan-out cursor alone
    # decides what they receive, as before).
    op.execute("ALTER TABLE webhooks ADD COLUMN start_after BIGINT NOT NULL DEFAULT 0")
    # Retention deletes delivered and dead deliveries by the end of their last attempt.
    op.execute(
        "CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (finished_at) "
        "WHERE status IN ('delivered', 'dead')"
    )


def downgrade() -> None:
    op.execute("DROP INDEX webhook_deliveries_finished")
    op.execute("ALTER TABLE webhooks DROP COLUMN start_after")
