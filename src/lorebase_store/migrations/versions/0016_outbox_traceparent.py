"""The trace of each outbox event: the W3C `traceparent` of the commit that wrote it, so the feed's
publish to NATS, the event stream's frames and the webhook deliveries of the event are spans of the
request that caused them (docs/observability.md). NULL when that request was not traced (tracing
off in keeper): then nothing downstream makes a span for the event.

Revision ID: 0016
Revises: 0015
"""

from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A column without a default: adding it rewrites nothing (PostgreSQL stores no value for old rows).
    op.execute("ALTER TABLE outbox ADD COLUMN traceparent TEXT")


def downgrade() -> None:
    op.execute("ALTER TABLE outbox DROP COLUMN traceparent")
