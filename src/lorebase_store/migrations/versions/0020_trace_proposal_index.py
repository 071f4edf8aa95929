"""The sessions that opened or added to a Proposal, found by an index (`GET /sessions?proposal=`).

The filter read every step of every session's trace (`details ->> 'proposal'`); an expression
index on it answers from the few steps that name the Proposal. Built CONCURRENTLY, outside the
migration's transaction, so the agents' trace writes go on while it is built (expand only: an old
keeper reads and writes as before).

Revision ID: 0020
Revises: 0019
"""

from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.get_context().autocommit_block():
        op.execute(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS trace_entries_proposal "
            "ON trace_entries ((details ->> 'proposal'))"
        )


def downgrade() -> None:
    with op.get_context().autocommit_block():
        op.execute("DROP INDEX CONCURRENTLY IF EXISTS trace_entries_proposal")
