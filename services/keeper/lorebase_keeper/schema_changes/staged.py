"""A change set's migration staged over one head, outside the branch's commit lock, and caught up at
its commit with what other commits changed meanwhile.

`stage` runs the whole migration (migrate.py: read, migrate and check, in batches) in one read-only
snapshot of the head (Database.read, REPEATABLE READ), so writes and reads on the branch go on while
it runs. When nothing fails (and it is not a dry run), the rows the commit will write are planned
(`plan_rows`; the Revision id is not known yet, `staged_rows.PLACEHOLDER` stands for it) and COPYed
into PostgreSQL (lorebase_store/staged_rows.py) `ROWS` changes at a time, each chunk dropped from
keeper's memory once sent; keeper keeps what the
answer and the Revision need: the counts (`migrated`, `writes` with its samples, the changes digest
and the changed keys per Kind), the unique values of the migrated Kinds, and the violations.

At the commit, under the branch's lock, `catch_up` asks the branch's history which Records and Links
the commits since the staged head changed (`touched_between`), and migrates those of the Kinds and
Relations the change set migrates again from the head as it is now, in the same way; their staged
rows are replaced by the new ones (and their counts with them), unique values are checked again
across the Kind, and the changes digest is made again from the staged rows. So no write that landed
meanwhile is lost or left unmigrated, and the Revision is still the one step that makes the whole
change visible. The catch-up is refused (409 schema-migration-moved, nothing changed) when more than
`keeper.schema_changes.catch_up_max` Records and Links changed meanwhile, or when it would change a
Record or Link it was not asked to (a derived value of a neighbour): the caller sends the change set
again, and it stages from the new head.

`stage` runs in a process of its own (process.py) for a change set on a branch and for the first
change set a kept merge brings (catch_up.py), and in keeper's transaction for a merge attempt's
catch-up; `catch_up` runs in keeper, under the lock. Both run in slices of a
few milliseconds (lorebase_keeper.writes.pace): no stretch of a million Records' work holds the
process's other requests, and no worker thread takes the GIL from them. The staging, outside the
lock, is paced by `keeper.schema_changes.duty`
(the share of the time it works; it sleeps the rest, in proportion to each slice of work, its
PostgreSQL round trips included), so the foreground keeps the machine's cores; the catch-up, under
the lock, only yields, so the lock is held no longer than the work needs.
"""

from __future__ import annotations

import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import orjson

from lorebase.problems import Problem
from lorebase.schema import DomainSchema
from lorebase.schema.changes import Plan
from lorebase_keeper.schema_changes.counts import StagedCounts
from lorebase_keeper.schema_changes.migrate import (
    SAMPLE,
    Checked,
    Contribution,
    Migration,
    Progress,
    Scope,
    Writes,
    check_unique,
    migrate,
)
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
from lorebase_store import BranchRow, CommitRows, Database, LinkRow, RecordRow, Txn
from lorebase_store.chains import branch_chain
from lorebase_store.staged_rows import PLACEHOLDER
from lorebase_store.stored_form import StoredRows

Ref = tuple[str, str, str]  # (entity, name before the change set, key)
Row = tuple[Any, ...]
# Sends staged rows to PostgreSQL (a transaction of their own, or the merge's).
Put = Callable[[list[Row]], Awaitable[None]]

ROWS = LARGE  # changes planned and sent per COPY while staging
_PLANNED = 100  # changes planned at a time (plan_rows) between two steps of the pacer

logger = logging.getLogger("lorebase.keeper.schema_changes")


@dataclass
class Staged:
    """A migration planned over `head`: its rows staged in the database under `staging` (None: none
    were, a dry run or a refused one), what the Revision's id and event need of its changes
    (`summary`), and what the answer says (`migrated`, `writes`)."""

    head: Head
    migration: Checked  # the Migration itself in this process; what it found, from another
    staging: str | None
    summary: ChangeSummary
    count: int  # staged rows (changes)
    counts: dict[str, int]  # Records and Links migrated (Staged.migrated)
    written: Writes
    caught_up: int = 0  # Records and Links migrated again at the commit
    cleared_meanwhile: list[dict[str, Any]] = field(default_factory=list)  # by the catch-up
    # The (Kind, Attribute) its Record changes name (each lists them, as its history row will).
    named: set[tuple[str, str]] = field(default_factory=set)
    # What its rows do to resolve's value counts (counts.py), once taken; kept up by the catch-up.
    values: StagedCounts | None = None

    @property
    def violations(self) -> list[dict[str, Any]]:
        return self.migration.violations

    @property
    def violation_count(self) -> int:
        return self.migration.violation_count

    @property
    def cleared(self) -> list[dict[str, Any]]:
        """The values on_invalid: clear cleared (the staged migration's and the catch-up's)."""
        # A Record migrated again at the catch-up is named once, as the catch-up left it.
        by_path = {entry["path"]: entry for entry in self.migration.cleared + self.cleared_meanwhile}
        return list(by_path.values())

    def migrated(self) -> dict[str, int]:
        """How many Records and Links the migration changes; one a rename moved (deleted under its
        old name, created under the new one) counts once."""
        return dict(self.counts)

    def writes(self) -> dict[str, Any]:
        """What the migration writes (Migration.writes), over the staged and the caught-up changes."""
        return self.written.document()

    def document(self) -> dict[str, Any]:
        """As JSON, for a staging in a process of its own (process.py) to send back; `of_document`
        makes it again (with `migration` what it found: `Checked`)."""
        written = self.written
        return {
            "head": [self.head.revision, self.head.generation, self.head.schema],
            "migration": Checked.document(self.migration),
            "staging": self.staging,
            "summary": asdict(self.summary),
            "count": self.count,
            "counts": self.counts,
            "written": [
                written.keep,
                written.counts,
                written.derived,
                written.sample,
                written.derived_sample,
            ],
            "named": sorted(self.named),
        }

    @classmethod
    def of_document(cls, document: dict[str, Any]) -> Staged:
        return cls(
            Head(*document["head"]),
            Checked.of_document(document["migration"]),
            document["staging"],
            ChangeSummary(**document["summary"]),
            document["count"],
            document["counts"],
            Writes(*document["written"]),
            named={(kind, name) for kind, name in document["named"]},
        )


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
    changes = await _changes(migration, pacer)
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
    stored = await _stored(migration, pacer)
    for start in range(0, len(changes), ROWS):
        chunk = changes[start : start + ROWS]
        rows = await _plan(staged, migration, chunk, stored, plan.schema, digest, refs, pacer)
        if rows:
            await put(rows)
            await pacer.step()
    staged.summary = digest.done()
    staged.count = len(changes)
    staged.counts = await _counted(refs, pacer)
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


async def catch_up(
    view: BranchView,
    row: BranchRow,
    head: Head,
    staged: Staged,
    plan: Plan,
    on_invalid: str,
    *,
    batch: int,
    limit: int,
    changed_keys_max: int,
) -> Staged:
    """`staged` brought from its head to `head` (the branch's, under its lock): what the commits in
    between changed of the migrated Kinds and Relations, migrated again from `head`, its staged
    rows replaced."""
    assert staged.staging is not None
    chain = await branch_chain(view.txn, row.domain_id, row)
    older = None if staged.head.revision is None else (row.name, staged.head.generation)
    touched = await view.txn.touched_between(row.domain_id, chain, older, (row.name, head.generation))
    kinds = {migration.renamed_from or name for name, migration in plan.kinds.items()} | set(
        plan.removed_kinds
    )
    relations = set(plan.removed_relations) | set(plan.renamed_relations) | set(plan.changed_relations)
    for name, members in plan.changed_relations.items():
        if {"cardinality", "required_from"} & set(members):  # Records added meanwhile count too
            relation = plan.schema.relations[name]
            kinds |= {relation.from_kind, relation.to_kind}
    scope = Scope()
    refs: set[Ref] = set()
    for entity, name, key in touched:
        if entity == "record" and name in kinds:
            scope.records.setdefault(name, []).append(key)
        elif entity == "link" and name in relations:
            from_key, _, to_key = key.partition("->")
            scope.links.setdefault(name, []).append((from_key, to_key))
        else:
            continue
        refs.add((entity, name, key))
    if not refs:
        return replace(staged, head=head)
    if len(refs) > limit:
        raise moved(
            row.name,
            f"{len(refs)} Records and Links of the Kinds and Relations it migrates "
            f"changed meanwhile, more than keeper.schema_changes.catch_up_max ({limit})",
        )
    pacer = Pacer()  # under the lock: yields, never sleeps
    fresh = await migrate(view, plan, on_invalid, batch=batch, scope=scope, pacer=pacer)
    held = _held_without(staged.migration, refs)
    for kind_name, attributes in fresh.unique.items():
        for name, holders in attributes.items():
            target = held.setdefault(kind_name, {}).setdefault(name, {})
            for value, keys in holders.items():
                target.setdefault(value, []).extend(keys)
    again = {
        kind_name: {key for entity, name, key in refs if entity == "record" and name == source}
        for kind_name in fresh.unique
        for source in [_source(fresh, "record", kind_name)]
    }
    await check_unique(fresh, held, again)
    changes = await _changes(fresh, pacer)
    if fresh.violation_count:
        return replace(staged, head=head, migration=fresh)
    strays = sorted(f"{c.name}/{c.key}" for c in changes if _ref(fresh, c) not in refs)
    if strays:
        raise moved(row.name, f"the writes meanwhile change what it derives for {', '.join(strays[:5])}")
    # The staged rows of the refs migrated again, under their names before and after the change set.
    names: dict[tuple[str, str], set[str]] = {}
    for (entity, new), old in staged.migration.sources.items():
        names.setdefault((entity, old), set()).add(new)
    wanted = [
        (entity, name, key)
        for entity, source, key in sorted(refs)
        for name in sorted({source} | names.get((entity, source), set()))
    ]
    values = staged.values
    records = [(name, key) for entity, name, key in wanted if entity == "record"]
    if values is not None:  # the value counts without the share of the rows replaced
        values = await values.caught_up(view.txn, staged.staging, records, -1)
    dropped = await view.txn.drop_staged_rows(staged.staging, wanted)
    written = staged.written.copy()
    written.remove([entry for _, _, _, entries in dropped for entry in entries or []])
    gone = {_ref(staged.migration, Change(e, n, k, "", [], None, None)) for e, n, k, _ in dropped}
    counts = dict(staged.counts)
    for entity, _, _ in gone:
        label = "records" if entity == "record" else "links"
        counts[label] -= 1
    caught = replace(staged, head=head, migration=fresh, written=written)
    fresh_refs: set[Ref] = set()
    stored = await _stored(fresh, pacer)
    rows = await _plan(caught, fresh, changes, stored, plan.schema, None, fresh_refs, pacer)
    await view.txn.stage_rows(row.domain_id, row.name, rows)
    if values is not None:  # and with the share of the rows replacing them
        values = await values.caught_up(view.txn, staged.staging, records, 1)
        values = replace(values, named=values.named | caught.named)
    for label, count in (await _counted(fresh_refs, pacer)).items():
        counts[label] = counts.get(label, 0) + count
    digest = ChangeDigest(changed_keys_max)
    async for entity, name, key, entry in view.txn.staged_elements(staged.staging):
        digest.add(entity, name, key, entry)
        await pacer.step()
    return replace(
        staged,
        head=head,
        summary=digest.done(),
        count=staged.count - len(dropped) + len(rows),
        counts=counts,
        written=written,
        caught_up=staged.caught_up + len(refs),
        cleared_meanwhile=staged.cleared_meanwhile + fresh.cleared,
        values=values,
    )


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


def moved(branch: str, why: str) -> Problem:
    return Problem(
        409,
        "schema-migration-moved",
        f"branch {branch!r} moved while the change set's migration ran and it could not be brought "
        f"up to date: {why}; nothing changed, send the change set again",
        branch=branch,
    )


async def _changes(migration: Migration, pacer: Pacer) -> list[Change]:
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


async def _stored(
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


async def _plan(
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
            refs.add(_ref(migration, change))
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


async def _counted(refs: set[Ref], pacer: Pacer) -> dict[str, int]:
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


def _source(migration: Checked, entity: str, name: str) -> str:
    return migration.sources.get((entity, name), name)


def _ref(migration: Checked, change: Change) -> Ref:
    return (change.entity, _source(migration, change.entity, change.name), change.key)


def _held_without(migration: Checked, refs: set[Ref]) -> dict[str, dict[str, dict[Any, list[str]]]]:
    """The staged unique values, without those of the Records migrated again."""
    out: dict[str, dict[str, dict[Any, list[str]]]] = {}
    for kind_name, attributes in migration.unique.items():
        source = _source(migration, "record", kind_name)
        for name, holders in attributes.items():
            kept = out.setdefault(kind_name, {}).setdefault(name, {})
            for value, keys in holders.items():
                left = [k for k in keys if ("record", source, k) not in refs]
                if left:
                    kept[value] = left
    return out


__all__ = [
    "ROWS",
    "Staged",
    "Staging",
    "catch_up",
    "clear_staged",
    "moved",
    "stage",
    "staging_alive",
    "staging_id",
]
