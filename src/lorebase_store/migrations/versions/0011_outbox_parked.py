"""Outbox events the relay could not publish: parked with their error, so that one event cannot stop
the relay (lorebase_feed.relay).

Revision ID: 0011
Revises: 0010
"""

from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A parked event is marked published (the relay goes on past it) and keeps why it was parked.
    op.execute("ALTER TABLE outbox ADD COLUMN parked_at TIMESTAMPTZ")
    op.execute("ALTER TABLE outbox ADD COLUMN publish_error TEXT")
    op.execute("CREATE INDEX outbox_parked ON outbox (sequence) WHERE parked_at IS NOT NULL")


def downgrade() -> None:
    op.execute("DROP INDEX outbox_parked")
    op.execute("ALTER TABLE outbox DROP COLUMN publish_error")
    op.execute("ALTER TABLE outbox DROP COLUMN parked_at")
