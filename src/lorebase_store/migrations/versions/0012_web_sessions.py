"""Web sessions: short-lived credentials derived from an API key (the web app's sign-in cookie), and
the index the agent sessions list reads.

A web session is a row of api_keys like any key (stored as the digest of its token), with
`parent_key_id` naming the key it was made from and `expires_at` after which it no longer
authenticates. Revoking the parent revokes its sessions (lorebase_store.principals.revoke_key).

Revision ID: 0012
Revises: 0011
"""

from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE api_keys ADD COLUMN expires_at TIMESTAMPTZ")
    op.execute("ALTER TABLE api_keys ADD COLUMN parent_key_id TEXT REFERENCES api_keys (id)")
    op.execute("CREATE INDEX api_keys_parent ON api_keys (parent_key_id) WHERE parent_key_id IS NOT NULL")
    # GET /sessions of one principal: its entries, by session.
    op.execute("CREATE INDEX trace_entries_principal ON trace_entries (principal, session_id)")


def downgrade() -> None:
    op.execute("DROP INDEX trace_entries_principal")
    op.execute("DROP INDEX api_keys_parent")
    op.execute("ALTER TABLE api_keys DROP COLUMN parent_key_id")
    op.execute("ALTER TABLE api_keys DROP COLUMN expires_at")
