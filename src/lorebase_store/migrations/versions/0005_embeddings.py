"""Embeddings of Records (pgvector): what POST /search and POST /resolve use with a query_vector.

Revision ID: 0005
Revises: 0004
"""

from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")
    op.execute(
        """
CREATE TABLE embeddings (
    domain_id INTEGER NOT NULL,
    branch TEXT NOT NULL,
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    embedding vector NOT NULL,
    dimensions INTEGER NOT NULL,
    model TEXT NOT NULL,
    revision TEXT,
    updated_at TIMESTAMP WITH TIME ZONE NOT NULL,
    PRIMARY KEY (domain_id, branch, kind, key)
)
        """
    )
