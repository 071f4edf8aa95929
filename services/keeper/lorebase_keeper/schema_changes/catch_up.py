"""A merge's catch-up: the change sets the source committed since the merge base that the target has
not, committed on the target inside the merge's transaction, before the three-way merge.

Each is replayed on the schema the target stands on and migrates the target's data as a change set
on the target would (change/: renames, conversions, backfills, unique and required checks), as a
schema Revision of its own (origin `schema`, authored by the merger, its message naming the source's
Revision); the merge Revision that follows stands on the schema they make. A value of the target
that does not fit becomes a `schema_migration` Conflict naming its Record (or Link), and the
merge commits nothing, unless the change set was sent with `on_invalid: clear` (kept with its items):
it is replayed so, and each value it clears is named (code `schema_cleared`; kept as a resolved
Conflict of the Proposal, so it blocks nothing, until an attempt no longer clears it:
proposals/attempts.py) (Proposals run merges in a savepoint, rolled back on Conflicts). A change set
that does not apply to the target's schema answers 409 `schema-conflict` with the changes, as
before.

A merge that is kept stages its migration ahead (issue 30): before the merge's transaction, the
first change set it brings is applied to the target's schema and its migration staged over the
target's head the way a change set on a branch is (change/apart.py `staged_apart`: a process of its own,
outside every lock, so the target takes writes meanwhile), and the catch-up (`Ahead`) only brings
it up to the target's head under the lock (staged/at_commit.py `catch_up`: what was written meanwhile is
migrated again, a value that does not fit is the same `schema_migration` Conflict) before it commits
it. The staging is used only while it still fits: the same change set, on the same branch, whose
schema has not changed since (else, or when too much changed meanwhile for a catch-up, the change
set is staged inside the transaction as before). The change sets after the first (a Proposal
carrying several) are staged inside the transaction, under the locks, as before: each stands on
the schema the one before makes. A merge attempt that is not kept stages inside its savepoint, on a
stand-in for the target (proposals/attempts.py).
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from lorebase.ids import iso
from lorebase.problems import Problem
from lorebase.schema.changes import Plan, SchemaChangeError, apply_changes, kept_on_invalid
from lorebase_keeper.domains import Domain
from lorebase_keeper.merge import Found, MergeRequest
from lorebase_keeper.runtime import Runtime
from lorebase_keeper.schema_changes.change import ChangeSetCommit, commit_change_set, staged_apart
from lorebase_keeper.schema_changes.staged import Staged, Staging, stage, staging_id
from lorebase_keeper.schema_changes.staged import catch_up as staged_catch_up
from lorebase_keeper.writes import BranchView, Head, open_view
from lorebase_store import BranchRow, CommitRows, RevisionRow, Txn

logger = logging.getLogger("lorebase.keeper.schema_changes")


@dataclass(frozen=True)
class ToStage:
    """The first change set a kept merge brings (the source's Revision and its items as kept), and
    the target's branch and schema (digest and document) to stage it on."""

    revision: str
    items: list[dict[str, Any]]
    branch: str
    schema: str | None
    document: dict[str, Any]


@dataclass(frozen=True)
class Ahead:
    """A change set staged ahead of its merge: its Revision on the source, the target and its schema
    digest it was applied to, and the migration staged (at `staged.head`)."""

    revision: str
    branch: str
    schema: str | None
    staged: Staged


async def to_stage(
    txn: Txn, domain: Domain, target: BranchRow, revision: RevisionRow, items: list[dict[str, Any]]
) -> ToStage | None:
    """The change set of `revision` to stage ahead on `target` as it stands; None when it does not
    apply to the target's schema (the merge answers 409 schema-conflict itself)."""
    document = await txn.schema_document(domain.row, target.schema_digest)
    try:
        apply_changes(document, items)
    except SchemaChangeError:
        return None
    return ToStage(revision.id, items, target.name, target.schema_digest, document)


@contextlib.asynccontextmanager
async def staged_ahead(rt: Runtime, domain: Domain, to_stage: ToStage | None) -> AsyncIterator[Ahead | None]:
    """`to_stage` staged outside every lock (change/apart.py `staged_apart`) for the block, in which the
    merge commits it (its staged rows then go with the merge's commit) or does not (they are
    forgotten as the block ends); None: nothing to stage."""
    if to_stage is None:
        yield None
        return
    async with staged_apart(
        rt, domain, to_stage.branch, to_stage.document, to_stage.items, kept_on_invalid(to_stage.items)
    ) as staged:
        logger.info(
            "merge: the change set of %s staged on %s ahead of the merge's transaction",
            to_stage.revision[:12],
            to_stage.branch,
        )
        yield Ahead(to_stage.revision, to_stage.branch, to_stage.schema, staged)


async def catch_up(
    txn: Txn,
    request: MergeRequest,
    target: BranchRow,
    change_sets: list[tuple[RevisionRow, list[Any]]],
    ahead: Ahead | None = None,
) -> tuple[list[Found], list[Found]]:
    """Commit `change_sets` (oldest first) on `target`: the Conflicts of its values that do not fit,
    and the values a change set sent with `on_invalid: clear` cleared (code `schema_cleared`).
    `ahead`: the first, staged before the merge's transaction (the module's docstring)."""
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
        on_invalid = kept_on_invalid(items)
        staged = await _brought_up(view, row, head, plan, on_invalid, ahead, revision, domain)
        if staged is None:
            staging = Staging(
                staging_id(),
                # In the merge's transaction: gone with it whatever it ends in.
                functools.partial(txn.stage_rows, domain.id, row.name),
                domain.settings.model.keeper.schema_changes.batch_records,
                None,
                domain.settings.model.agents.feed.changed_keys_max,
            )
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


async def _brought_up(
    view: BranchView,
    row: BranchRow,
    head: Head,
    plan: Plan,
    on_invalid: str,
    ahead: Ahead | None,
    revision: RevisionRow,
    domain: Domain,
) -> Staged | None:
    """The change set's migration staged ahead, brought up to the target's `head` (under the lock);
    None when there is none that fits (another change set or branch, a schema changed since, a
    violation at its head that writes since may have settled, or more changed meanwhile than a
    catch-up takes): it is staged here."""
    if ahead is None or ahead.revision != revision.id or ahead.branch != row.name:
        return None
    staged = ahead.staged
    if not (ahead.schema == staged.head.schema == row.schema_digest):
        logger.info("merge: the change set staged ahead on %s no longer fits: its schema changed", row.name)
        return None
    if staged.head.revision == head.revision:
        return staged
    if staged.staging is None:
        return None
    limits = domain.settings.model.keeper.schema_changes
    try:
        return await staged_catch_up(
            view,
            row,
            head,
            staged,
            plan,
            on_invalid,
            batch=limits.batch_records,
            limit=limits.catch_up_max,
            changed_keys_max=domain.settings.model.agents.feed.changed_keys_max,
        )
    except Problem as problem:
        if problem.code != "schema-migration-moved":
            raise
        logger.info("merge: the change set staged ahead on %s could not catch up (%s)", row.name, problem)
        return None


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


__all__ = ["Ahead", "ToStage", "catch_up", "staged_ahead", "to_stage"]
