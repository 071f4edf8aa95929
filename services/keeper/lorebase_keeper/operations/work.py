"""The commit work of a prepared execution on a branch: the receipt of its idempotency key, the
protection and expected-head checks, its edits applied to a change set, and the Revision, the
invocation, the receipt and the audit row it writes; or, for a dry run, what it would do.
"""

from __future__ import annotations

from typing import Any

from lorebase.ids import iso
from lorebase.problems import Problem, invalid
from lorebase_keeper.access import Readable
from lorebase_keeper.imports.evidence import Extracted
from lorebase_keeper.operations.prepare import Prepared
from lorebase_keeper.operations.review import review_note, review_required
from lorebase_keeper.runtime import Runtime
from lorebase_keeper.writes import (
    BranchView,
    ChangeSet,
    Head,
    Origin,
    Outcome,
    check_expected_head,
    open_view,
    plan_commit,
    replay,
)
from lorebase_store import BranchRow, CommitRows, Txn


def make_work(
    p: Prepared,
    branch: str,
    *,
    dry_run: bool,
    review: bool = True,
    deferred: list[tuple[str, dict[str, Any]]] | None = None,
) -> Any:
    """The commit work of an execution on `branch`.

    `review`: refuse agents on a protected branch and writes the review policy holds for (a task
    branch is not reviewed: its Proposal is); a dry run is not refused but says so in `review`.
    `deferred`: collect the operation events instead of writing them (they are written when the
    Proposal merges).
    """
    domain, principal, name, key, request = p.domain, p.principal, p.name, p.key, p.request
    agent_types = domain.settings.model.keeper.agent_writes.principal_types
    message = request.message or f"{name} by {principal.id}"
    origin = Origin("operation", p.invocation_id, principal.id)
    # Extracted values: every value the execution sets carries the evidence (imports/evidence.py).
    extracted = Extracted.of_every_value(request.extraction) if request.extraction is not None else None
    expected = request.expected_head if review else None

    async def work(view: BranchView, row: BranchRow, head: Head) -> tuple[Outcome, Head, CommitRows | None]:
        if key is not None and not dry_run:
            receipt = await view.get_receipt(principal.id, key)
            if receipt is not None:
                return replay(receipt, p.digest, key), head, None
        needs: str | None = None
        if review and p.policy_review:
            needs = "review-policy"
        elif review and row.protected and principal.type in agent_types:
            needs = "protected-branch"
        if needs is not None and not dry_run:
            raise review_required(domain, name, branch, needs)
        check_expected_head(expected, branch, head.revision)
        changes = ChangeSet(view, domain.schema, issues=list(p.issues), vault=p.vault)
        for edit, values, path in p.edits:
            if edit.kind:
                kind = domain.schema.kinds[edit.kind]
                if edit.op == "delete_record":
                    await changes.delete_record(kind, edit.key or "", path)
                elif edit.op == "update_record":
                    await changes.update_record(kind, edit.key or "", values, path)
                else:
                    await changes.upsert_record(kind, edit.key or "", values, path)
            else:
                relation = domain.schema.relations[edit.relation or ""]
                if edit.op == "delete_link":
                    await changes.delete_link(relation, edit.from_key or "", edit.to_key or "", path)
                else:
                    await changes.upsert_link(relation, edit.from_key or "", edit.to_key or "", values, path)
        change_list = await changes.finish()
        if dry_run:
            document = {
                "status": "dry_run",
                "dry_run": True,
                "operation": name,
                "branch": branch,
                "head": head.revision,
                "valid": not changes.issues,
                "edits": p.edit_docs,
                "violations": changes.issues,
                "changes": [_change_document(c, p.readable) for c in change_list],
                "edit_count": len(p.edit_docs),
                "revision": None,
            }
            if needs is not None:
                document["review"] = review_note(domain, name, branch, needs)
            return Outcome(200, document, head.revision, {}), head, None
        if changes.issues:
            raise invalid(changes.issues)
        revision_id: str | None = None
        new_head = head
        rows = CommitRows(domain.id, branch)
        if change_list:
            events = p.events(branch)
            if deferred is not None:
                deferred.extend(events)
                events = []
            committed = plan_commit(
                rows,
                domain=domain.name,
                head=head,
                changes=change_list,
                author=principal.id,
                message=message,
                origin=origin,
                at=p.at,
                stored=changes.stored(),
                changed_keys_max=domain.settings.model.agents.feed.changed_keys_max,
                extra_events=events,
                provenance_of=None if extracted is None else extracted.provenance_of(),
            )
            revision_id = committed.revision.id
            if extracted is not None:
                rows.extractions = extracted.rows(revision_id, principal.id, p.at)
            if p.vault is not None:
                rows.vault_entries = p.vault.rows()
            new_head = Head.of(committed.revision)
        stamp = iso(p.at)
        rows.invocations.append(
            {
                "id": p.invocation_id,
                "operation": name,
                "principal": principal.id,
                "parameters": p.stored_parameters(),
                "revision": revision_id,
                "created_at": stamp,
            }
        )
        document = {
            "status": "committed",
            "operation": name,
            "branch": branch,
            "invocation_id": p.invocation_id,
            "revision": revision_id,
            "revisions": [revision_id] if revision_id else [],
            "head": new_head.revision,
            "edit_count": len(p.edit_docs),
            "changes": [_change_document(c, p.readable) for c in change_list],
            "replayed": False,
        }
        if key is not None:
            rows.receipt(
                principal=principal.id,
                key=key,
                request_digest=p.digest,
                status=200,
                response=document,
                revision=revision_id,
                at=stamp,
            )
        rows.audit(
            principal=principal.id,
            action="operation.invoke",
            domain=domain.name,
            target=name,
            details={"branch": branch, "invocation_id": p.invocation_id, "revision": revision_id},
            at=stamp,
        )
        return Outcome(200, document, revision_id, {}), new_head, rows

    return work


async def dry_run(rt: Runtime, work: Any, domain_id: int, branch: str) -> Outcome:
    """Run a work in a read transaction: it checks and plans, and nothing is written."""
    return await rt.db.read("dry_run", _dry_run, work, domain_id, branch)


async def _dry_run(txn: Txn, work: Any, domain_id: int, branch: str) -> Outcome:
    row = await txn.get_branch(domain_id, branch)
    if row is None:
        raise Problem(404, "not-found", f"unknown branch {branch!r}")
    outcome, _, _ = await work(
        await open_view(txn, row), row, Head(row.head, row.generation, row.schema_digest)
    )
    return outcome  # Database.read rolls everything back


def _change_document(change: Any, readable: Readable) -> dict[str, Any]:
    """A change as the executing principal may know it (a derived Attribute computed over what it
    may not read changes unnamed)."""
    attributes = change.attributes
    if change.entity == "record":
        known = readable.attributes(change.name)
        attributes = [name for name in attributes if name in known]
    return {"ref": change.ref, "entity": change.entity, "change": change.change, "attributes": attributes}


__all__ = ["dry_run", "make_work"]
