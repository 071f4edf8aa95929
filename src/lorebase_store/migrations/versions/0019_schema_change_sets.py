"""Schema change sets (issue 30): the change set each schema-changing Revision applied.

A three-way merge across schema versions needs more than the two documents: what each side's change
sets renamed, converted and backfilled, to migrate the values the other side brings over. Keeper
writes one row per change set Revision, in its commit transaction.

Expand only: an old keeper writes no rows (a merge across its change sets answers 409
schema-conflict, as before), and reads nothing here.

Revision ID: 0019
Revises: 0018
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "schema_change_sets",
        sa.Column("domain_id", sa.Integer, sa.ForeignKey("domains.id"), nullable=False),
        sa.Column("revision", sa.Text, nullable=False),
        sa.Column("changes", JSONB, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("domain_id", "revision"),
    )


def downgrade() -> None:
    op.drop_table("schema_change_sets")
