"""A change set on a branch: the new schema version and its data migration, committed as one Revision.

The change set is applied to the schema the branch stands on (lorebase.schema.changes; every
problem answers 422 at once). Then the data migration is staged (staged/), in a process of its
own at a lower CPU priority (process.py): every Record and Link it changes is read, migrated and
checked in batches (migrate.py) in a read-only snapshot of the head, outside the branch's commit
lock, so writes and reads on the branch go on meanwhile; keeper holds the staging's liveness mark
until its rows are gone (staged/staging.py `staging_alive`), so a keeper that starts meanwhile leaves them. A
violation refuses the whole change set there (422, nothing changed). Last, in the branch's commit
transaction, what other commits changed meanwhile is migrated too (`catch_up`), and the Revision is
planned with the new version (origin `schema`, its ref the version's digest): one Revision, one head
move, so a read sees the whole old schema or the whole new one. Its event says
`schema_changed: true`, and every later Revision of the branch names the new version until another
change set. A dry run stages only, and answers the same document with `status: dry_run`, the
violations listed instead of refused.

`expected_head` and the idempotency key (body or header) work as for Operations (`expected_head`
is checked when the staging starts and again at the commit). A write prepared under the old schema
that reaches the branch after the change is refused (409 schema-changed,
lorebase_keeper.writes.commit): it would write values the new schema does not know.
"""

from lorebase_keeper.schema_changes.change.apart import JobTracking, staged_apart
from lorebase_keeper.schema_changes.change.commit import ChangeSetCommit, commit_change_set
from lorebase_keeper.schema_changes.change.on_branch import change_schema, plan_of

__all__ = [
    "ChangeSetCommit",
    "JobTracking",
    "change_schema",
    "commit_change_set",
    "plan_of",
    "staged_apart",
]
