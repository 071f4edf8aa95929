"""A change set's commit (`commit_change_set`): its Revision, with the migrated data written from
the staged rows, the renamed Kinds' other rows moved and the change set kept. A change set on a
branch (on_branch.py) and a merge's catch-up (catch_up.py) commit so."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from lorebase.schema.changes import Plan
from lorebase_keeper.domains import Domain, schema_digest
from lorebase_keeper.schema_changes.staged import Staged, moved
from lorebase_keeper.writes import (
    BranchView,
    Committed,
    Head,
    Origin,
    OverlayView,
    RevisionPlan,
    SchemaVersion,
    plan_revision,
)
from lorebase_store import CommitRows


@dataclass(frozen=True)
class ChangeSetCommit:
    """A change set to commit: its plan, its items as kept (schema_change_sets), who, why and when."""

    plan: Plan
    items: list[dict[str, Any]]
    author: str
    message: str
    at: datetime


async def commit_change_set(
    view: BranchView, rows: CommitRows, domain: Domain, head: Head, change: ChangeSetCommit, staged: Staged
) -> Committed:
    """Add the change set's Revision to `rows` (origin `schema`, the new version named) with its
    migrated data (`staged` up to `head`), move the renamed Kinds' other rows on the branch, and keep
    the change set. A change set on a branch (above) and a merge's catch-up (catch_up.py) commit so."""
    plan = change.plan
    new_digest = schema_digest(plan.schema.document)
    version = SchemaVersion(
        new_digest, plan.schema.document, None if new_digest == domain.base_digest else new_digest
    )
    for old, new in plan.renamed_kinds.items():
        await view.txn.move_kind_rows(domain.id, rows.branch, old, new)
    assert staged.staging is not None
    if await view.txn.hold_staged_rows(staged.staging) != staged.count:
        raise moved(
            rows.branch,
            "its staged rows are gone (its staging's mark was lost, and a keeper that started "
            "meanwhile cleared them)",
        )
    revision_plan = RevisionPlan(
        domain.name,
        head,
        change.author,
        change.message,
        Origin("schema", new_digest, change.author),
        change.at,
        schema=version,
    )
    revision_id = revision_plan.revision_id(rows.branch, staged.summary)
    changed_keys_max = domain.settings.model.agents.feed.changed_keys_max
    revision = plan_revision(rows, revision_plan, staged.summary, revision_id, changed_keys_max)
    # The migrated rows are written from the staged ones, by set statements (lorebase_store.staged_rows);
    # on an overlay branch their history rows only: it has no Records' or Links' rows of its own
    # (docs/branches.md), and a renamed Kind's Records are no exception.
    rows.staged.append(
        {
            "staging": staged.staging,
            "revision": revision_id,
            "generation": revision.generation,
            "materialise": not isinstance(view, OverlayView),
            "count": staged.count,
        }
    )
    await view.txn.put_schema_change_set(domain.id, revision_id, change.items, change.at)
    return Committed(revision, [])
