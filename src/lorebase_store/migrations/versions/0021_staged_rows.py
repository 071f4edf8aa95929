"""The rows of a large commit staged in PostgreSQL before it (lorebase_store/staged_rows.py, issue 30).

A change set's migration writes the rows it will commit here while it is staged, outside the
branch's commit lock; its commit then writes the Records, Links and history rows with set
statements from this table. UNLOGGED: the rows are a working copy that a crash may lose (the commit
then answers 409 `schema-migration-moved`, send the change set again), and they cost no WAL.
Expand only: an old keeper never reads it.

Revision ID: 0021
Revises: 0020
"""

from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        CREATE UNLOGGED TABLE IF NOT EXISTS staged_rows (
            staging TEXT NOT NULL,
            part SMALLINT NOT NULL,
            name TEXT NOT NULL,
            key TEXT NOT NULL,
            entity TEXT NOT NULL,
            change TEXT NOT NULL,
            attributes JSONB NOT NULL,
            before JSONB,
            after JSONB,
            provenance JSONB NOT NULL,
            created_revision TEXT,
            updated_revision TEXT,
            upsert BOOLEAN NOT NULL,
            element BYTEA,
            writes JSONB,
            staged_at TIMESTAMPTZ NOT NULL DEFAULT now(),
            PRIMARY KEY (staging, part, name, key)
        )
        """
    )
    # The commit's order of changes: Records first, then by name and key in byte order.
    op.execute(
        'CREATE INDEX IF NOT EXISTS staged_rows_order ON staged_rows (staging, part, name COLLATE "C", key COLLATE "C")'
    )


def downgrade() -> None:
    op.execute("DROP TABLE IF EXISTS staged_rows")
