"""Schema versions (issue 30): the schema a Revision was committed under.

- `schema_versions` keeps every schema document a Domain has had, keyed by the SHA-256 of its
  canonical JSON (content-addressed, so a schema written twice is one row);
- `revisions.schema_digest` names the version a Revision was committed under. NULL (every Revision
  written before this migration, and by a keeper that predates it) means the Domain's creation
  schema, `domains.schema`, which no schema change rewrites.

Expand only: old keepers keep serving (they read `domains.schema`, write NULL digests).

Revision ID: 0018
Revises: 0017
"""

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "schema_versions",
        sa.Column("domain_id", sa.Integer, sa.ForeignKey("domains.id"), nullable=False),
        sa.Column("digest", sa.Text, nullable=False),
        sa.Column("document", sa.JSON, nullable=False),  # JSON: declaration order matters
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("domain_id", "digest"),
    )
    op.add_column("revisions", sa.Column("schema_digest", sa.Text, nullable=True))


def downgrade() -> None:
    op.drop_column("revisions", "schema_digest")
    op.drop_table("schema_versions")
