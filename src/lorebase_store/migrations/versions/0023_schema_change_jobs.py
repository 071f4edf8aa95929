"""Schema change jobs (issue 30): a change set a client chose not to wait for.

`POST .../schema/changes` with `Prefer: respond-async` answers 202 with a job; the keeper that
accepted it runs the change set in the background, and any keeper answers
`GET /api/v1/domains/{domain}/schema/changes/{id}` from this table. A job is `running` until its
change set answers: `committed` (its commit transaction marks it so), `dry_run`, or `failed` with
the problem the synchronous call would have answered. `heartbeat_at` is renewed while it runs; a
job whose keeper stopped renewing it is failed by the next keeper that starts or reads it
(lorebase_keeper/schema_changes/jobs.py).

Expand only: an old keeper neither writes nor reads it.

Revision ID: 0023
Revises: 0022
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "schema_change_jobs",
        sa.Column("id", sa.Text, primary_key=True),
        sa.Column("seq", sa.BigInteger, sa.Identity(), nullable=False),
        sa.Column("domain_id", sa.Integer, sa.ForeignKey("domains.id"), nullable=False),
        sa.Column("branch", sa.Text, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("dry_run", sa.Boolean, nullable=False),
        sa.Column("created_by", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True)),
        sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("owner", sa.Text, nullable=False),
        sa.Column("idempotency_key", sa.Text),
        sa.Column("request_digest", sa.Text, nullable=False),
        sa.Column("progress", JSONB),
        sa.Column("answer_status", sa.Integer),
        sa.Column("answer", JSONB),
        sa.Column("revision", sa.Text),
    )
    op.create_index("schema_change_jobs_domain", "schema_change_jobs", ["domain_id", "seq"])
    op.create_index(
        "schema_change_jobs_key",
        "schema_change_jobs",
        ["domain_id", "created_by", "idempotency_key"],
        unique=True,
        postgresql_where=sa.text("idempotency_key IS NOT NULL"),
    )
    op.create_index(
        "schema_change_jobs_running",
        "schema_change_jobs",
        ["status"],
        postgresql_where=sa.text("status = 'running'"),
    )


def downgrade() -> None:
    op.drop_table("schema_change_jobs")
