"""The change feed: outbox indexes for the event stream and the polling changes; webhooks, their
deliveries and the delivery cursor.

Revision ID: 0008
Revises: 0007
"""

from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # The event stream of one branch reads its events after a sequence.
    op.execute("CREATE INDEX outbox_branch ON outbox (domain_id, branch, sequence)")
    # The polling changes find the revision.committed event of each Revision.
    op.execute(
        "CREATE INDEX outbox_revision ON outbox (domain_id, revision) WHERE type = 'revision.committed'"
    )


def downgrade() -> None:
    op.execute("DROP TABLE feed_cursors")
    op.execute("DROP TABLE webhook_deliveries")
    op.execute("DROP TABLE webhooks")
    op.execute("DROP INDEX outbox_revision")
    op.execute("DROP INDEX outbox_branch")
