"""A change set on a branch: the new schema version and its data migration, committed as one Revision.

The change set is applied to the schema the branch stands on (lorebase.schema.changes; every
problem answers 422 at once). Then the data migration is staged (staged.py), in a process of its
own at a lower CPU priority (process.py): every Record and Link it changes is read, migrated and
checked in batches (migrate.py) in a read-only snapshot of the head, outside the branch's commit
lock, so writes and reads on the branch go on meanwhile; keeper holds the staging's liveness mark
until its rows are gone (staged.py `staging_alive`), so a keeper that starts meanwhile leaves them. A
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

from __future__ import annotations

import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime
from fnmatch import fnmatchcase
from typing import Any

import msgspec

from lorebase.contract.branches import SchemaChangeSet
from lorebase.ids import iso, utc_now
from lorebase.problems import Problem, invalid
from lorebase.schema.changes import Plan, SchemaChangeError, apply_changes, kept_items
from lorebase_keeper.access import Access
from lorebase_keeper.domains import Domain, check_branch_name, schema_digest
from lorebase_keeper.runtime import Runtime
from lorebase_keeper.schema_changes.counts import StagedCounts, counted_before, of_staged
from lorebase_keeper.schema_changes.counts import moved as moved_counts
from lorebase_keeper.schema_changes.migrate import SAMPLE, log_progress
from lorebase_keeper.schema_changes.process import Apart, stage_apart
from lorebase_keeper.schema_changes.staged import Staged, catch_up, moved, staging_alive, staging_id
from lorebase_keeper.writes import (
    ANALYZE_AFTER,
    BranchView,
    Committed,
    CountsMoved,
    Head,
    KeptCounts,
    Origin,
    Outcome,
    OverlayView,
    RevisionPlan,
    SchemaVersion,
    check_expected_head,
    idempotency_key,
    plan_revision,
    replay,
    request_digest,
)
from lorebase_store import BranchRow, CommitRows, Txn
from lorebase_store.chains import branch_chain

logger = logging.getLogger("lorebase.keeper.schema_changes")


def plan_of(domain: Domain, body: SchemaChangeSet) -> Plan:
    """The change set applied to the branch's schema, or 422 with every problem."""
    items = [msgspec.to_builtins(item) for item in body.changes]
    try:
        return apply_changes(domain.schema.document, items)
    except SchemaChangeError as error:
        raise invalid(error.issues) from None


@dataclass
class JobTracking:
    """A change set run as a job (jobs.py). Its commit marks the job committed in the commit's own
    transaction; its progress is kept for the job's heartbeat; and it stops at its next batch,
    never in its commit, once `stop` is set or its deadline (`time.monotonic()`) has passed."""

    id: str
    deadline: float
    stop: Problem | None = None
    progress: dict[str, Any] | None = None
    committing: bool = False  # its commit transaction marked the job (and may be committing it)

    def check(self, branch: str) -> None:
        if self.stop is not None:
            raise self.stop
        if time.monotonic() > self.deadline:
            raise Problem(
                409,
                "schema-migration-moved",
                f"the change set's job on branch {branch!r} passed its deadline "
                "(keeper.schema_changes.job_deadline_s) while it migrated; nothing changed, send it "
                "again (and raise the deadline for a migration this large)",
                branch=branch,
                reason="deadline",
            )


@contextlib.asynccontextmanager
async def staged_apart(
    rt: Runtime,
    domain: Domain,
    branch: str,
    schema: dict[str, Any],
    items: list[dict[str, Any]],
    on_invalid: str,
    *,
    expected_head: str | None = None,
    dry_run: bool = False,
    job: JobTracking | None = None,
) -> AsyncIterator[Staged]:
    """`items` applied to `schema` (the branch's) and their migration staged over the branch's head
    in a process of its own (process.py), outside the branch's lock; its staging's liveness mark
    held, and its staged rows forgotten when the block ends without a commit that wrote them (gone
    with it otherwise). Each batch is logged (a line per tenth of each Kind's Records) and told to
    `rt.schema_progress` (and to `job`, which may stop it). A change set on a branch (below) and a
    kept merge's catch-up (catch_up.py, `staged_ahead`) stage so."""
    limits = domain.settings.model.keeper.schema_changes
    logged: dict[str, int] = {}

    async def told(kind: str, done: int, total: int) -> None:
        if logged.get(kind) != (tenth := done * 10 // total):
            logged[kind] = tenth
            await log_progress(kind, done, total)
        if job is not None:
            job.progress = {"kind": kind, "done": done, "total": total}
            job.check(branch)
        for listener in rt.schema_progress:
            await listener(kind, done, total)

    staging = None if dry_run else staging_id()
    database = rt.settings.model.database
    apart = Apart(
        database.url,
        database.statement_timeout_s,
        domain.id,
        branch,
        schema,
        items,
        on_invalid,
        expected_head,
        staging,
        staging or f"schema-dry-run-{uuid.uuid4().hex}",
        limits.batch_records,
        domain.settings.model.agents.feed.changed_keys_max,
        SAMPLE + limits.catch_up_max,
        limits.duty,
        limits.nice,
    )
    # Its staging's liveness mark, held until its rows are gone: a keeper that starts meanwhile
    # clears only the rows of stagings whose keeper is gone (staged.py, lorebase_store.staged_rows).
    async with staging_alive(rt.db, staging):
        try:
            started = time.perf_counter()
            staged = await stage_apart(apart, rt.db, told)
            logger.info(
                "schema change on %s: %d changes staged in %.1f s, outside the branch's lock",
                branch,
                staged.count,
                time.perf_counter() - started,
            )
            yield staged
        finally:
            # Gone with the commit's transaction when it committed; here after a dry run's end, a
            # refusal or an error (a chunk of a failed staging included).
            if staging is not None:
                await rt.db.run_interaction("schema_change_forget_staged", _forget_staged_rows, staging)


async def change_schema(
    rt: Runtime,
    access: Access,
    domain: Domain,
    branch: str,
    body: SchemaChangeSet,
    header_key: str,
    job: JobTracking | None = None,
) -> Outcome:
    branch = check_branch_name(branch or domain.default_branch)
    key = idempotency_key(body.idempotency_key, header_key)
    digest = (
        "" if key is None else request_digest({"change_schema": msgspec.to_builtins(body), "branch": branch})
    )
    principal = access.principal
    if key is not None and not body.dry_run:
        # A retry after the change landed: the branch stands on the new schema, which the change set
        # no longer applies to; its receipt answers it.
        receipt = await rt.db.read("get_receipt", lambda txn: txn.get_receipt(domain.id, principal.id, key))
        if receipt is not None:
            return replay(receipt, digest, key)
    plan = plan_of(domain, body)
    items = [msgspec.to_builtins(item) for item in body.changes]
    new_digest = schema_digest(plan.schema.document)
    message = body.message or "; ".join(_describe(item) for item in plan.summary)[:4096]
    at = utc_now()
    touches, widened = await rt.db.read("schema_touches", _touches, domain, plan, branch)
    limits = domain.settings.model.keeper.schema_changes
    changed_keys_max = domain.settings.model.agents.feed.changed_keys_max
    async with staged_apart(
        rt,
        domain,
        branch,
        domain.schema.document,
        items,
        body.on_invalid,
        expected_head=body.expected_head,
        dry_run=body.dry_run,
        job=job,
    ) as staged:
        if body.dry_run:
            return Outcome(200, await _document(domain, branch, plan, new_digest, staged, touches), None, {})
        if staged.violation_count:
            raise _refused(staged)
        kept = rt.kept_counts[0] if rt.kept_counts else None
        if kept is not None:
            # Resolve's value counts of what it changes, from its staged rows (counts.py), outside the lock.
            started = time.perf_counter()
            staged.values = await rt.db.read(
                "schema_change_counts", _staged_counts, kept, domain, branch, staged, plan
            )
            logger.info(
                "schema change on %s: the value counts of %d Attributes taken from its staged rows in %.1f s",
                branch,
                len(staged.values.limits) if staged.values is not None else 0,
                time.perf_counter() - started,
            )
        if job is not None:
            job.check(branch)  # the last moment a job stops: its commit, once queued, runs to its end

        held: dict[str, float] = {"at": 0.0, "caught_up": 0.0, "refs": 0}  # the work under the lock
        counts_moved: list[CountsMoved] = []  # what its commit tells resolve's kept counts

        async def work(
            view: BranchView, row: BranchRow, head: Head
        ) -> tuple[Outcome, Head, CommitRows | None]:
            counts_moved.clear()
            if key is not None:
                receipt = await view.get_receipt(principal.id, key)
                if receipt is not None:
                    return replay(receipt, digest, key), head, None
            check_expected_head(body.expected_head, branch, head.revision)
            # Nobody waits on the hold's statements but the writes its lock holds back: reads go first.
            await view.txn.lower_priority(limits.nice)
            held["at"] = time.perf_counter()
            logger.info("schema change on %s: the branch's lock taken", branch)
            final = staged
            if head.revision != staged.head.revision:
                final = await catch_up(
                    view,
                    row,
                    head,
                    staged,
                    plan,
                    body.on_invalid,
                    batch=limits.batch_records,
                    limit=limits.catch_up_max,
                    changed_keys_max=changed_keys_max,
                )
                if final.violation_count:
                    raise _refused(final)
                held.update(caught_up=time.perf_counter() - held["at"], refs=final.caught_up)
            values, chain = None, None
            if kept is not None and final.values is not None and not isinstance(view, OverlayView):
                chain = await branch_chain(view.txn, row.domain_id, row)
                values = await counted_before(
                    kept, view.txn, domain, row, chain, head.generation, final.values
                )
            document = await _document(domain, branch, plan, new_digest, final, touches)
            for grant_id, kinds in widened:  # a grant narrowed to a renamed Kind reaches its new name
                await view.txn.set_grant_kinds(domain.id, grant_id, kinds)
            # A large change set's value index entries may stay pending, as a load's do: the ANALYZE
            # after it merges them (writes/planner_statistics.py).
            rows = CommitRows(domain.id, branch, defer_index=rt.statistics is not None)
            committed = await commit_change_set(
                view,
                rows,
                domain,
                head,
                ChangeSetCommit(plan, kept_items(items, body.on_invalid), principal.id, message, at),
                final,
            )
            revision_id = committed.revision.id
            if values is not None and chain is not None:
                counts_moved.append(
                    moved_counts(domain, row, chain, head.generation, committed.revision.generation, values)
                )
            document.update(status="committed", revision=revision_id, head=revision_id)
            if job is not None:
                # Marked in the commit's transaction, only while it still runs: a job failed
                # meanwhile (jobs.py) refuses the commit, so a job never says other than the head.
                job.committing = True
                if not await view.txn.finish_schema_job(
                    job.id, status="committed", answer_status=200, answer=document, revision=revision_id
                ):
                    raise moved(branch, f"its job {job.id} was failed meanwhile (a keeper started)")
            stamp = iso(at)
            if key is not None:
                rows.receipt(
                    principal=principal.id,
                    key=key,
                    request_digest=digest,
                    status=200,
                    response=document,
                    revision=revision_id,
                    at=stamp,
                )
            rows.audit(
                principal=principal.id,
                action="schema.change",
                domain=domain.name,
                target=branch,
                details={
                    "revision": revision_id,
                    "schema_version": new_digest,
                    "previous_schema_version": domain.schema_digest,
                    "changes": plan.summary,
                    "caught_up": final.caught_up,
                },
                at=stamp,
            )
            return Outcome(200, document, revision_id, {}), Head.of(committed.revision), rows

        outcome = await rt.committer.run(
            domain.id, branch, work, bulk=True, schema=domain.stored_digest, alone=True
        )
        logger.info(
            "schema change on %s: committed, the branch's lock held %.1f s (of which %.1f s catching up %d "
            "Records and Links changed meanwhile)",
            branch,
            time.perf_counter() - held["at"],
            held["caught_up"],
            held["refs"],
        )
        if kept is not None and counts_moved and outcome.revision is not None:
            kept.committed(counts_moved[0])  # before the answer: the next resolve finds them
        if staged.count >= ANALYZE_AFTER and outcome.revision and rt.statistics:
            rt.statistics.refresh_soon()
        rt.domains.forget(domain.name)
        if widened:
            rt.auth.forget()
        return outcome


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


async def _staged_counts(
    txn: Txn, kept: KeptCounts, domain: Domain, branch: str, staged: Staged, plan: Plan
) -> StagedCounts | None:
    """What the staged rows do to resolve's value counts, with the counts before of the Attributes
    they convert brought to the head (counted there if none were kept); None on an overlay branch."""
    row = await txn.get_branch(domain.id, branch)
    if row is None or row.mode == "overlay":
        return None
    assert staged.staging is not None
    counts = await of_staged(txn, staged.staging, staged.named, domain, plan)
    chain = await branch_chain(txn, domain.id, row)
    return await counted_before(kept, txn, domain, row, chain, row.generation, counts)


async def _forget_staged_rows(txn: Txn, staging: str) -> None:
    await txn.forget_staged_rows(staging)


def _refused(staged: Staged) -> Problem:
    """422: the Records and Links that would not fit the new schema; nothing changed."""
    violations, count = staged.violations, staged.violation_count
    first = "; ".join(f"{v['path']}: {v['message']}" for v in violations[:3])
    more = count - 3
    return Problem(
        422,
        "schema-migration-failed",
        f"{count} Records or Links would not fit the new schema, so "
        f"nothing changed: {first}{f' (and {more} more)' if more > 0 else ''}. Fix them first, "
        "give a backfill or a map, or say on_invalid: clear",
        records=sorted({v["record"] for v in violations if "record" in v}),
        links=sorted({v["link"] for v in violations if "link" in v}),
        violations=violations,
        violation_count=count,
    )


async def _document(
    domain: Domain,
    branch: str,
    plan: Plan,
    new_digest: str,
    staged: Staged,
    touches: dict[str, list[str]],
) -> dict[str, Any]:
    writes = staged.writes()
    return {
        "status": "dry_run",
        "branch": branch,
        "revision": None,
        "head": staged.head.revision,
        "schema_version": new_digest,
        "previous_schema_version": domain.schema_digest,
        "valid": staged.violation_count == 0,
        "changes": plan.summary,
        "migrated": staged.migrated(),
        "violations": staged.violations,
        "violation_count": staged.violation_count,
        "touches": touches,
        "replayed": False,
        "writes": writes,
        "protection": plan.protection,
        "cleared": staged.cleared,
    }


async def _touches(
    txn: Txn, domain: Domain, plan: Plan, branch: str
) -> tuple[dict[str, list[str]], list[tuple[str, list[str]]]]:
    """What else the change set reaches: the Operations and lenses it rewrote (and those the old
    schema had over a removed Kind or Relation), grants narrowed to a removed or renamed Kind, and
    the webhooks of the branch (they see its Revision, `schema_changed: true`). Second, the grants
    narrowed to a renamed Kind with the Kinds they reach once it commits: the new name is added
    beside the old one (grants are Domain-wide; other branches may still use the old name)."""
    removed = set(plan.removed_kinds)
    operations = set(plan.touches.get("operations", []))
    lenses = set(plan.touches.get("lenses", []))
    for name, operation in domain.schema.operations.items():
        if any(e.kind in removed or e.relation in plan.removed_relations for e in operation.edits):
            operations.add(name)
    for name, lens in domain.schema.lenses.items():
        if removed & set(lens.kinds) or set(plan.removed_relations) & set(lens.relations):
            lenses.add(name)
    grants: list[str] = []
    widened: list[tuple[str, list[str]]] = []
    for grant in await txn.grants_in(domain.id):
        if not grant.kinds:
            continue
        added = [plan.renamed_kinds[k] for k in grant.kinds if k in plan.renamed_kinds]
        added = [k for k in added if k not in grant.kinds]
        if added:
            widened.append((grant.id, [*grant.kinds, *added]))
        if added or removed & set(grant.kinds):
            grants.append(grant.id)
    webhooks = [
        w.id
        for w in await txn.list_webhooks(domain.id)
        if any(fnmatchcase(branch, pattern) for pattern in w.branches)
    ]
    document = {
        "operations": sorted(operations),
        "lenses": sorted(lenses),
        "grants": sorted(grants),
        "webhooks": sorted(webhooks),
    }
    return document, widened


def _describe(item: dict[str, Any]) -> str:
    text = f"{item['op']} {item['target']}"
    return f"{text} to {item['to']}" if "to" in item else text


__all__ = [
    "ChangeSetCommit",
    "JobTracking",
    "change_schema",
    "commit_change_set",
    "plan_of",
    "staged_apart",
]
