"""Statistics for coverage: per branch and Kind, the Records and the missing values per Attribute,
counted by Scribe at a Revision.

Revision ID: 0002
Revises: 0001
"""

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
CREATE TABLE statistics (
    domain_id INTEGER NOT NULL,
    branch TEXT NOT NULL,
    kind TEXT NOT NULL,
    revision TEXT,
    records BIGINT NOT NULL,
    missing JSONB NOT NULL,
    counted_at TIMESTAMP WITH TIME ZONE NOT NULL,
    PRIMARY KEY (domain_id, branch, kind)
)
        """
    )
