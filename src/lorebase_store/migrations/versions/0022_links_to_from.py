"""The Links to some Records in key order of their other end, from an index alone (context packs).

A context pack's last hop ranks the far neighbours it reaches by key and reads whole only the Links
of those it can keep (`RecordsTxn.links_ranked`). Walking a Relation inverse, from the Records the
Links point to, the old index `links_to (domain_id, branch, relation, to_key)` had no `from_key`:
PostgreSQL fetched every Link's row to rank them (~990 at 10,000,000 Records of the bench). The new
index holds both keys, so the ranking and the count of the rest are index-only; it answers every
statement `links_to` answered (its columns are a prefix), which is then dropped. Both built and
dropped CONCURRENTLY, outside the migration's transaction, so writes go on; an old keeper's
statements use the new index as they used the old one.

Revision ID: 0022
Revises: 0021
"""

from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.get_context().autocommit_block():
        op.execute(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS links_to_from "
            "ON links (domain_id, branch, relation, to_key, from_key)"
        )
        op.execute("DROP INDEX CONCURRENTLY IF EXISTS links_to")


def downgrade() -> None:
    with op.get_context().autocommit_block():
        op.execute(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS links_to ON links (domain_id, branch, relation, to_key)"
        )
        op.execute("DROP INDEX CONCURRENTLY IF EXISTS links_to_from")
