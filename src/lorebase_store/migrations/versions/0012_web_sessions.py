"""Web sessions: short-lived credentials derived from an API key (the web app's sign-in cookie), and
the summary of each agent session that the sessions list reads.

A web session is a row of api_keys like any key (stored as the digest of its token), with
`parent_key_id` naming the key it was made from and `expires_at` after which it no longer
authenticates. Revoking the parent revokes its sessions (lorebase_store.principals.revoke_key).

trace_sessions keeps, per agent session and principal, what GET /sessions shows (first entry,
first and last time, steps, failed steps, notes, Domains), written with each trace entry, so that
listing sessions reads one row per session rather than every entry of the trace. It is filled from
the entries already kept.

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
    op.execute(
        """
CREATE TABLE trace_sessions (
    session_id TEXT NOT NULL,
    principal TEXT NOT NULL,
    first_entry_id BIGINT NOT NULL,
    started_at TIMESTAMP WITH TIME ZONE NOT NULL,
    last_at TIMESTAMP WITH TIME ZONE NOT NULL,
    steps INTEGER NOT NULL,
    errors INTEGER NOT NULL,
    notes INTEGER NOT NULL,
    domains TEXT[] NOT NULL,
    PRIMARY KEY (session_id, principal)
)
        """
    )
    op.execute("CREATE INDEX trace_sessions_recent ON trace_sessions (last_at, session_id)")
    op.execute("CREATE INDEX trace_sessions_principal ON trace_sessions (principal, last_at, session_id)")
    op.execute(
        """
INSERT INTO trace_sessions
SELECT session_id, principal, min(id), min(at), max(at),
       count(*) FILTER (WHERE kind = 'step'),
       count(*) FILTER (WHERE kind = 'step' AND status >= 400),
       count(*) FILTER (WHERE kind = 'note'),
       coalesce(array_agg(DISTINCT domain) FILTER (WHERE domain IS NOT NULL), '{}')
  FROM trace_entries GROUP BY session_id, principal
        """
    )


def downgrade() -> None:
    op.execute("DROP TABLE trace_sessions")
    op.execute("DROP INDEX api_keys_parent")
    op.execute("ALTER TABLE api_keys DROP COLUMN parent_key_id")
    op.execute("ALTER TABLE api_keys DROP COLUMN expires_at")
