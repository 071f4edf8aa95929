"""A change set on a branch (`change_schema`): applied to the branch's schema (`plan_of`), its
migration staged apart (apart.py), caught up and committed under the branch's lock (commit.py), its
answer (answer.py) kept with the idempotency key; resolve's value counts of what it changes taken
from its staged rows, outside the lock."""

from __future__ import annotations

import logging
import time
from typing import Any

import msgspec

from lorebase.contract.branches import SchemaChangeSet
from lorebase.ids import iso, utc_now
from lorebase.problems import invalid
from lorebase.schema.changes import Plan, SchemaChangeError, apply_changes, kept_items
from lorebase_keeper.access import Access
from lorebase_keeper.domains import Domain, check_branch_name, schema_digest
from lorebase_keeper.runtime import Runtime
from lorebase_keeper.schema_changes.change.answer import answer_document, refused, schema_touches
from lorebase_keeper.schema_changes.change.apart import JobTracking, staged_apart
from lorebase_keeper.schema_changes.change.commit import ChangeSetCommit, commit_change_set
from lorebase_keeper.schema_changes.counts import StagedCounts, counted_before, of_staged
from lorebase_keeper.schema_changes.counts import moved as moved_counts
from lorebase_keeper.schema_changes.staged import Staged, catch_up, moved
from lorebase_keeper.writes import (
    ANALYZE_AFTER,
    BranchView,
    CountsMoved,
    Head,
    KeptCounts,
    Outcome,
    OverlayView,
    check_expected_head,
    idempotency_key,
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
    touches, widened = await rt.db.read("schema_touches", schema_touches, domain, plan, branch)
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
            return Outcome(
                200, await answer_document(domain, branch, plan, new_digest, staged, touches), None, {}
            )
        if staged.violation_count:
            raise refused(staged)
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
            if kept is not None:  # an earlier run of this work, its transaction retried, lands never
                for earlier in counts_moved:
                    kept.abandoned(earlier)
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
                    raise refused(final)
                held.update(caught_up=time.perf_counter() - held["at"], refs=final.caught_up)
            values, chain = None, None
            if kept is not None and final.values is not None and not isinstance(view, OverlayView):
                chain = await branch_chain(view.txn, row.domain_id, row)
                values = await counted_before(
                    kept, view.txn, domain, row, chain, head.generation, final.values
                )
            document = await answer_document(domain, branch, plan, new_digest, final, touches)
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
            if values is not None and chain is not None and kept is not None:
                counts_moved.append(
                    moved_counts(domain, row, chain, head.generation, committed.revision.generation, values)
                )
                # A resolve that reads the new head before its counts are handed over waits for them.
                kept.landing(counts_moved[0])
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

        try:
            outcome = await rt.committer.run(
                domain.id, branch, work, bulk=True, schema=domain.stored_digest, alone=True
            )
        except BaseException:
            if kept is not None and counts_moved:
                kept.abandoned(counts_moved[0])
            raise
        logger.info(
            "schema change on %s: committed, the branch's lock held %.1f s (of which %.1f s catching up %d "
            "Records and Links changed meanwhile)",
            branch,
            time.perf_counter() - held["at"],
            held["caught_up"],
            held["refs"],
        )
        if kept is not None and counts_moved:  # before the answer: the next resolve finds them
            (kept.committed if outcome.revision is not None else kept.abandoned)(counts_moved[0])
        if staged.count >= ANALYZE_AFTER and outcome.revision and rt.statistics:
            rt.statistics.refresh_soon()
        rt.domains.forget(domain.name)
        if widened:
            rt.auth.forget()
        return outcome


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


def _describe(item: dict[str, Any]) -> str:
    text = f"{item['op']} {item['target']}"
    return f"{text} to {item['to']}" if "to" in item else text
