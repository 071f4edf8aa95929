"""Words that POST /resolve could not ground, kept for Scribe's suggestions.

Revision ID: 0003
Revises: 0002
"""

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
CREATE TABLE resolve_misses (
    domain_id INTEGER NOT NULL,
    phrase TEXT NOT NULL,
    count BIGINT NOT NULL,
    first_seen TIMESTAMP WITH TIME ZONE NOT NULL,
    last_seen TIMESTAMP WITH TIME ZONE NOT NULL,
    PRIMARY KEY (domain_id, phrase)
)
        """
    )
