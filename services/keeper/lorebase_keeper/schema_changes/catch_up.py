"""A merge's catch-up: the change sets the source committed since the merge base that the target has
not, committed on the target inside the merge's transaction, before the three-way merge.

Each is replayed on the schema the target stands on and migrates the target's data as a change set
on the target would (change.py: renames, conversions, backfills, unique and required checks), as a
schema Revision of its own (origin `schema`, authored by the merger, its message naming the source's
Revision); the merge Revision that follows stands on the schema they make. A value of the target
that does not fit becomes a `schema_migration` Conflict naming its Record (or Link), and the
merge commits nothing, unless the change set was sent with `on_invalid: clear` (kept with its items):
it is replayed so, and each value it clears is named (code `schema_cleared`; kept as a resolved
Conflict of the Proposal, so it blocks nothing, until an attempt no longer clears it:
proposals/attempts.py) (Proposals run merges in a savepoint, rolled back on Conflicts). A change set
that does not apply to the target's schema answers 409 `schema-conflict` with the changes, as
before.
"""

from __future__ import annotations

import functools
from typing import Any

from lorebase.ids import iso
from lorebase.problems import Problem
from lorebase.schema.changes import SchemaChangeError, apply_changes, kept_on_invalid
from lorebase_keeper.merge import Found, MergeRequest
from lorebase_keeper.schema_changes.change import ChangeSetCommit, commit_change_set
from lorebase_keeper.schema_changes.staged import Staging, stage, staging_id
from lorebase_keeper.writes import Head, open_view
from lorebase_store import BranchRow, CommitRows, RevisionRow, Txn


async def catch_up(
    txn: Txn, request: MergeRequest, target: BranchRow, change_sets: list[tuple[RevisionRow, list[Any]]]
) -> tuple[list[Found], list[Found]]:
    """Commit `change_sets` (oldest first) on `target`: the Conflicts of its values that do not fit,
    and the values a change set sent with `on_invalid: clear` cleared (code `schema_cleared`)."""
    domain = request.domain
    cleared: list[Found] = []
    for revision, items in change_sets:
        row = await txn.get_branch(domain.id, target.name)
        assert row is not None  # locked by the merge
        document = await txn.schema_document(domain.row, row.schema_digest)
        try:
            plan = apply_changes(document, items)
        except SchemaChangeError as error:
            raise Problem(
                409,
                "schema-conflict",
                f"the schema change of {request.source} in Revision {revision.id[:12]} does not apply to "
                f"the schema of {request.target}: {error}; change {request.target}'s schema so it does "
                f"(POST /branches/{request.target}/schema/changes), or {request.source}'s, then merge",
                source=request.source,
                target=request.target,
                changes=items,
            ) from None
        view = await open_view(txn, row)
        head = Head(row.head, row.generation, row.schema_digest)
        staging = Staging(
            staging_id(),
            # In the merge's transaction: gone with it whatever it ends in.
            functools.partial(txn.stage_rows, domain.id, row.name),
            domain.settings.model.keeper.schema_changes.batch_records,
            None,
            domain.settings.model.agents.feed.changed_keys_max,
        )
        on_invalid = kept_on_invalid(items)
        staged = await stage(view, head, plan, on_invalid, staging)
        if staged.violation_count:
            return [_conflict(violation, request, revision) for violation in staged.violations], []
        cleared += [_conflict(entry, request, revision, "schema_cleared") for entry in staged.cleared]
        message = (
            f"{revision.message} (the schema change of {request.source} in {revision.id[:12]}, "
            f"applied to {request.target} by its merge)"
        )[:4096]
        rows = CommitRows(domain.id, row.name)
        committed = await commit_change_set(
            view,
            rows,
            domain,
            head,
            ChangeSetCommit(plan, items, request.author, message, request.at),
            staged,
        )
        rows.heads.append({"head": committed.revision.id, "generation": committed.revision.generation})
        rows.audit(
            principal=request.author,
            action="schema.change",
            domain=domain.name,
            target=row.name,
            details={
                "revision": committed.revision.id,
                "from_revision": revision.id,
                "merge": request.proposal or request.source,
                "changes": plan.summary,
                "on_invalid": on_invalid,
                "cleared": staged.cleared,
            },
            at=iso(request.at),
        )
        await txn.write_commit_rows(rows)
    return [], cleared


def _conflict(
    violation: dict[str, Any], request: MergeRequest, revision: RevisionRow, code: str = "schema_migration"
) -> Found:
    entity = "record" if "record" in violation else "link"
    ref = str(violation.get(entity, ""))
    name, _, key = ref.partition("/")
    path = str(violation.get("path", ""))
    attribute = path[len(ref) + 1 :] if path.startswith(ref + ".") else None
    why = (
        f"{violation.get('message', '')} under the schema of {request.source} (Revision "
        f"{revision.id[:12]}); change the value on {request.target}, then merge again"
        if code == "schema_migration"
        else f"cleared: {violation.get('message', '')} under the schema of {request.source} (Revision "
        f"{revision.id[:12]}, sent with on_invalid: clear)"
    )
    return Found(code, entity, name, key, attribute or None, None, why, None)


__all__ = ["catch_up"]
