"""The staging of a change set's migration over one head, outside the branch's lock (`stage`): its
changes planned into rows and COPYed into PostgreSQL a chunk at a time, what keeper holds of them
let go as it goes; the staging's liveness mark (`staging_alive`) and the clearing of the rows of a
keeper that is gone (`clear_staged`). The catch-up at the commit (at_commit.py) plans its rows with
the same helpers."""

from __future__ import annotations

import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import orjson

from lorebase.schema import DomainSchema
from lorebase.schema.changes import Plan
from lorebase_keeper.schema_changes.migrate import (
    SAMPLE,
    Checked,
    Contribution,
    Migration,
    Progress,
    Writes,
    migrate,
)
from lorebase_keeper.schema_changes.staged.result import Staged
from lorebase_keeper.writes import (
    LARGE,
    BranchView,
    Change,
    ChangeDigest,
    ChangeSummary,
    Head,
    Pacer,
    element,
    plan_rows,
    sorted_paced,
)
from lorebase_store import CommitRows, Database, LinkRow, RecordRow, Txn
from lorebase_store.staged_rows import PLACEHOLDER
from lorebase_store.stored_form import StoredRows

Ref = tuple[str, str, str]  # (entity, name before the change set, key)
Row = tuple[Any, ...]
# Sends staged rows to PostgreSQL (a transaction of their own, or the merge's).
Put = Callable[[list[Row]], Awaitable[None]]

ROWS = LARGE  # changes planned and sent per COPY while staging
_PLANNED = 100  # changes planned at a time (plan_rows) between two steps of the pacer

logger = logging.getLogger("lorebase.keeper.schema_changes")


@dataclass(frozen=True)
class Staging:
    """Where and how a migration is staged: its staging id (None: a dry run, nothing staged), what
    sends its rows there, its batch size (keeper.schema_changes.batch_records), who hears of its
    progress, the changed keys its event lists, how many samples of `writes` it keeps for the
    catch-up to take back (SAMPLE, plus keeper.schema_changes.catch_up_max when it may run), and the
    share of the time it works (keeper.schema_changes.duty; 1 inside a merge's transaction)."""

    id: str | None
    put: Put
    batch: int
    progress: Progress | None
    changed_keys_max: int
    keep: int = SAMPLE
    duty: float = 1.0


def staging_id() -> str:
    return f"schema-{uuid.uuid4().hex}"


async def stage(view: BranchView, head: Head, plan: Plan, on_invalid: str, staging: Staging) -> Staged:
    """The migration of `plan` over the branch as `view` reads it (a snapshot at `head`); its rows
    staged unless it is a dry run or something fails."""
    started = time.perf_counter()
    pacer = Pacer(staging.duty)
    migration = await migrate(
        view, plan, on_invalid, batch=staging.batch, progress=staging.progress, pacer=pacer
    )
    changes = await commit_changes(migration, pacer)
    logger.info(
        "schema change: %d changes migrated and checked in %.1f s; staging their rows",
        len(changes),
        time.perf_counter() - started,
    )
    staged = Staged(
        head,
        migration,
        None if migration.violation_count else staging.id,
        ChangeSummary(),
        0,
        {},
        Writes(staging.keep),
    )
    put = staging.put
    changed_keys_max = staging.changed_keys_max
    digest = ChangeDigest(changed_keys_max)
    refs: set[Ref] = set()
    stored = await stored_before(migration, pacer)
    for start in range(0, len(changes), ROWS):
        chunk = changes[start : start + ROWS]
        rows = await planned_rows(staged, migration, chunk, stored, plan.schema, digest, refs, pacer)
        if rows:
            await put(rows)
            await pacer.step()
    staged.summary = digest.done()
    staged.count = len(changes)
    staged.counts = await counted(refs, pacer)
    chunk = []
    # The snapshot's view keeps every Record it read: done with (a catch-up reads through its own).
    read = migration.changes.view.stored_records
    if staged.staging is None:
        await _let_go(pacer, refs, *stored, read, changes)
    else:  # the rows are in the database now; the unique values, names and violations stay
        await _let_go(
            pacer,
            refs,
            *stored,
            read,
            changes,
            migration.deletions,
            migration.changes.records,
            migration.changes.links,
            migration.deleted_records,
            migration.deleted_links,
            migration.moved_records,
            migration.moved_links,
        )
    if pacer.paused_s:
        logger.info("schema change: the staging slept %.1f s (keeper.schema_changes.duty)", pacer.paused_s)
    return staged


@contextlib.asynccontextmanager
async def staging_alive(db: Database, staging: str | None) -> AsyncIterator[None]:
    """`staging`'s liveness mark held for the block (a lease named by its id, on a connection of
    keeper's own: lorebase_store.staged_rows): a keeper that starts meanwhile leaves its rows, and
    they are cleared once the mark goes with this process or its connection. None (a dry run,
    nothing staged): no mark."""
    if staging is None:
        yield
        return
    async with db.lease(staging):  # a staging id is new: held, unless a hash of another name collides
        yield


async def clear_staged(db: Database) -> int:
    """Remove the rows of every staging whose keeper is gone, its liveness mark free (a keeper
    starting: what a stopped keeper staged is of no use); a live keeper's stagings go on."""
    return await db.run_interaction("clear_staged_rows", _clear)


async def _clear(txn: Txn) -> int:
    return await txn.clear_staged_rows()


async def commit_changes(migration: Migration, pacer: Pacer) -> list[Change]:
    """The migration's changes in commit order (none when it found violations), with the ChangeSet's
    own checks."""
    changes = [] if migration.violations else await migration.changes.finish()
    for issue in migration.changes.issues:
        record = issue["path"].split(".", 1)[0]
        migration.violate(record=record, **issue)
    if migration.violation_count:
        return []

    # Seconds of CPU at a million Records: in slices, so the process serves its other requests.
    return await sorted_paced([*changes, *migration.deletions], _order, pacer)


async def stored_before(
    migration: Migration, pacer: Pacer
) -> tuple[dict[tuple[str, str], RecordRow], dict[tuple[str, str, str], LinkRow]]:
    """The rows as they were before the migration's changes (what plan_rows builds on)."""
    records: dict[tuple[str, str], RecordRow] = {}
    for ref, state in migration.changes.records.items():
        if state.before is not None:
            records[ref] = state.before
        await pacer.step()
    links: dict[tuple[str, str, str], LinkRow] = {}
    for pair, link in migration.changes.links.items():
        if link.before is not None:
            links[pair] = link.before
        await pacer.step()
    records.update(migration.deleted_records)
    records.update(migration.moved_records)
    links.update(migration.deleted_links)
    links.update(migration.moved_links)
    return records, links


async def planned_rows(
    staged: Staged,
    migration: Migration,
    changes: list[Change],
    stored: tuple[dict[tuple[str, str], RecordRow], dict[tuple[str, str, str], LinkRow]],
    schema: DomainSchema,
    digest: ChangeDigest | None,
    refs: set[Ref],
    pacer: Pacer,
) -> list[Row]:
    """The staged rows of `changes` (staged_rows.COLUMNS), counted into `staged.written`, `digest`
    and `refs` on the way; `_PLANNED` changes at a time between steps of `pacer`."""
    staging = staged.staging
    form = StoredRows([])
    out: list[Row] = []
    for start in range(0, len(changes), _PLANNED):
        part = changes[start : start + _PLANNED]
        planned = CommitRows(0, "")
        if staging is not None:
            plan_rows(planned, part, stored, PLACEHOLDER, 0, migration.provenance_of)
        created = {(r["kind"], r["key"]): r["created_revision"] for r in planned.records}
        for index, change in enumerate(part):
            contributions: list[Contribution] = migration.contributions(change, schema)
            for contribution in contributions:
                staged.written.add(*contribution)
            refs.add(ref_of(migration, change))
            if staging is None:
                continue
            if change.entity == "record":
                staged.named.update((change.name, name) for name in change.attributes)
            entry = element(change)
            if digest is not None:
                digest.add(change.entity, change.name, change.key, entry)
            history = planned.history[index]
            record = change.entity == "record"
            created_revision = created.get((change.name, change.key)) if record else None
            out.append(
                (
                    staging,
                    0 if record else 1,
                    change.name,
                    change.key,
                    change.entity,
                    change.change,
                    _json(change.attributes),
                    _json(change.before),
                    _json(change.after),
                    _json(form.provenance(change.after, history["provenance"])),
                    None if created_revision == PLACEHOLDER else created_revision,
                    None,
                    change.change == "created",
                    entry,
                    _json(contributions) if contributions else None,
                )
            )
        await pacer.step()
    return out


def _json(value: Any) -> str | None:
    return None if value is None else orjson.dumps(value).decode()


async def counted(refs: set[Ref], pacer: Pacer) -> dict[str, int]:
    records = 0
    for entity, _, _ in refs:
        records += entity == "record"
        await pacer.step()
    return {"records": records, "links": len(refs) - records}


_FREED = 1_000  # objects let go of at a time


async def _let_go(pacer: Pacer, *held: list[Any] | dict[Any, Any] | set[Any]) -> None:
    """Empty each of `held` a thousand items at a time: freeing a million Records in one go (when
    the last reference goes) holds the loop for a second."""
    for items in held:
        while items:
            if isinstance(items, list):
                del items[-_FREED:]
            else:
                for _ in range(min(_FREED, len(items))):
                    items.pop() if isinstance(items, set) else items.popitem()
            await pacer.step()


def _order(change: Change) -> tuple[bool, str, str]:
    """A commit's order of changes: Records first, then by name and key."""
    return (change.entity != "record", change.name, change.key)


def source_of(migration: Checked, entity: str, name: str) -> str:
    return migration.sources.get((entity, name), name)


def ref_of(migration: Checked, change: Change) -> Ref:
    return (change.entity, source_of(migration, change.entity, change.name), change.key)
