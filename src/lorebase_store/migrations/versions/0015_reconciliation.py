"""Reconciliation candidates: pairs of Records of one Kind likely to be the same thing, found by
Scribe's reconciliation job on a Domain's default branch, and the scans that found them.

A candidate names its two Records in key order (record_a < record_b, byte order), the rules that matched and
the values compared (`evidence`), a score, and the Revision it was computed at. It is open until a
person or agent accepts it (the Records are merged by one Revision, or a Proposal on a protected
branch: `result`) or dismisses it; a dismissed pair is never proposed again. At most one open
candidate per pair (a partial unique index). `reconciliation_scans` remembers the head each scan
of a branch saw, so a pass over an unchanged branch does nothing.

Revision ID: 0015
Revises: 0014
"""

from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
CREATE TABLE reconciliation_candidates (
    id TEXT PRIMARY KEY,
    domain_id INTEGER NOT NULL REFERENCES domains (id),
    branch TEXT NOT NULL,
    kind TEXT NOT NULL,
    record_a TEXT NOT NULL,
    record_b TEXT NOT NULL,
    score DOUBLE PRECISION NOT NULL,
    evidence JSONB NOT NULL,
    status TEXT NOT NULL,
    revision TEXT,
    created_at TIMESTAMP WITH TIME ZONE NOT NULL,
    updated_at TIMESTAMP WITH TIME ZONE NOT NULL,
    decided_by TEXT,
    decided_at TIMESTAMP WITH TIME ZONE,
    reason TEXT,
    result JSONB,
    CHECK (record_a COLLATE "C" < record_b COLLATE "C"),
    CHECK (status IN ('open', 'accepted', 'dismissed'))
)
        """
    )
    op.execute(
        "CREATE UNIQUE INDEX reconciliation_open_pair ON reconciliation_candidates "
        "(domain_id, branch, kind, record_a, record_b) WHERE status = 'open'"
    )
    # Lists page by id within a Domain and status; the scan looks pairs up by Kind.
    op.execute("CREATE INDEX reconciliation_status ON reconciliation_candidates (domain_id, status, id)")
    op.execute(
        "CREATE INDEX reconciliation_pairs ON reconciliation_candidates "
        "(domain_id, branch, kind, record_a, record_b)"
    )
    op.execute(
        """
CREATE TABLE reconciliation_scans (
    domain_id INTEGER NOT NULL REFERENCES domains (id),
    branch TEXT NOT NULL,
    revision TEXT,
    settings JSONB NOT NULL,
    scanned_at TIMESTAMP WITH TIME ZONE NOT NULL,
    PRIMARY KEY (domain_id, branch)
)
        """
    )


def downgrade() -> None:
    op.execute("DROP TABLE reconciliation_scans")
    op.execute("DROP TABLE reconciliation_candidates")
