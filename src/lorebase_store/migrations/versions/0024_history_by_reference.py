"""A schema migration's modified history rows stored by reference (lorebase_store/stored_form.py,
issue 30): the history row a change set's migration writes for each Record it modifies stores
`after` NULL, read through the Record's row on its branch last updated by that Revision, as a
created Record's row already was (0017); the statement that next changes or deletes the Record, or
archives its branch, fills it first.

Upgrade changes no stored row (the rows written before keep `after`). Downgrade writes `after`
whole again in every modified row stored so (older code reads only created rows through the Record).

Revision ID: 0024
Revises: 0023
"""

from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    op.execute(
        """
UPDATE history h SET after = r."values"
  FROM records r
 WHERE h.entity = 'record' AND h.change = 'modified' AND h.after IS NULL
   AND r.domain_id = h.domain_id AND r.branch = h.branch AND r.kind = h.name AND r.key = h.key
   AND r.updated_revision = h.revision
"""
    )
