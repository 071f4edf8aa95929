"""Accepting a reconciliation candidate: the two Records merged by one Revision (docs/reconciliation.md).

The Revision keeps `keep`, fills its empty Attributes from the other Record (where both hold a value
the survivor's wins, and the answer lists the conflict), moves every Link of the other Record to the
survivor, and deletes the other Record. A Link is dropped instead of moved when the survivor holds
it already, when it would link the survivor to itself, or when a single-valued Relation would refuse
a second one (the answer says which and why). Provenance keeps both histories: a filled value keeps
the Revision that set it on the other Record, with a `$via` note naming the merge Revision and
`merged_from`; the deletion's history row holds `$merged_into`, which history shows as `merged_into`.

The candidate must still hold at commit time: both Records exist and at least one rule still
matches (lorebase.reconciliation.pair_evidence); otherwise 409 `candidate-stale`. The check, the
Revision and the candidate's decision happen in one commit transaction (the candidate row is locked
there), so two accepts cannot both merge. On a protected branch an agent principal gets a task branch
and a Proposal instead, as its Operation writes do (lorebase_keeper.operations.agent_tasks); a user
holding operation.execute commits directly, as it does with Operations.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from lorebase.contract.reconciliation import Accept
from lorebase.ids import iso, new_id, utc_now
from lorebase.problems import Problem, invalid
from lorebase.reconciliation import pair_evidence
from lorebase.schema import Kind, Relation
from lorebase_keeper.access import Access, Readable
from lorebase_keeper.domains import Domain
from lorebase_keeper.governance.proposing import propose_merge
from lorebase_keeper.governance.reconciliation import (
    OPERATION,
    candidate_document,
    find_candidate,
    require_open,
)
from lorebase_keeper.runtime import Runtime
from lorebase_keeper.writes import BranchView, Change, ChangeSet, Head, Origin, Outcome, plan_commit
from lorebase_store import BranchRow, CandidateRow, CommitRows, RecordRow, Txn


def stale(row_id: str, why: str) -> Problem:
    return Problem(
        409,
        "candidate-stale",
        f"candidate {row_id} no longer holds: {why}; read the Records again, then dismiss the candidate "
        "or wait for the next reconciliation scan (POST /reconciliation/scan runs one now)",
        candidate=row_id,
    )


async def still_holds(
    txn: Txn, candidate: CandidateRow, kind: Kind, stored: dict[str, RecordRow], threshold: float
) -> None:
    """409 candidate-stale unless both Records exist and a rule still matches them."""
    missing = [k for k in (candidate.record_a, candidate.record_b) if k not in stored]
    if missing:
        raise stale(candidate.id, f"{kind.name} {', '.join(missing)} was deleted")
    a, b = stored[candidate.record_a].values, stored[candidate.record_b].values
    if not await pair_evidence(txn, kind, a, b, threshold):
        raise stale(candidate.id, "the Records changed and no rule matches them any more")


def _single(relation: Relation, end: str) -> bool:
    if end == "from":
        return relation.cardinality in ("many_to_one", "one_to_one")
    return relation.cardinality in ("one_to_many", "one_to_one")


async def _move_links(
    view: BranchView, changes: ChangeSet, domain: Domain, kind: Kind, keep: str, removed: str
) -> tuple[int, list[dict[str, str]]]:
    """Plan the Links of `removed` onto `keep`; (moved, dropped). The old Links go with the Record."""
    moved, dropped = 0, []
    for relation in domain.schema.relations.values():
        old: dict[tuple[str, str], dict[str, Any]] = {}
        if relation.from_kind == kind.name:
            old.update(
                {
                    (r.from_key, r.to_key): r.values
                    for r in await view.links_of(relation.name, from_keys=[removed])
                }
            )
        if relation.to_kind == kind.name:
            old.update(
                {
                    (r.from_key, r.to_key): r.values
                    for r in await view.links_of(relation.name, to_keys=[removed])
                }
            )
        if not old:
            continue
        taken: dict[str, set[str]] = {
            "from": set(),
            "to": set(),
        }  # survivor's ends of single-valued Relations
        for end in ("from", "to"):
            if _single(relation, end) and (
                kind.name == (relation.from_kind if end == "from" else relation.to_kind)
            ):
                rows = await view.links_of(
                    relation.name, **({"from_keys": [keep]} if end == "from" else {"to_keys": [keep]})
                )
                if any(removed not in (r.from_key, r.to_key) for r in rows):
                    taken[end].add(keep)
        for (from_key, to_key), values in sorted(old.items()):
            new_from = keep if from_key == removed and relation.from_kind == kind.name else from_key
            new_to = keep if to_key == removed and relation.to_kind == kind.name else to_key
            name = f"{relation.name}:{from_key}->{to_key}"
            why = None
            if new_from == new_to and relation.from_kind == relation.to_kind:
                why = "it would link the survivor to itself"
            elif (await view.get_links(relation.name, [(new_from, new_to)])).get(
                (new_from, new_to)
            ) is not None:
                why = "the survivor holds this Link already"
            elif new_from == keep and new_from in taken["from"]:
                why = f"{relation.name} is {relation.cardinality}: the survivor has its one Link already"
            elif new_to == keep and new_to in taken["to"]:
                why = f"{relation.name} is {relation.cardinality}: the survivor has its one Link already"
            if why is not None:
                dropped.append({"relation": relation.name, "link": name, "reason": why})
                continue
            await changes.upsert_link(relation, new_from, new_to, dict(values), f"links.{name}")
            for end, key in (("from", new_from), ("to", new_to)):
                if key == keep and _single(relation, end):
                    taken[end].add(keep)
            moved += 1
    return moved, dropped


def _provenance_of(
    kind: str, keep: str, removed: str, filled: list[str], removed_provenance: dict[str, Any]
) -> Callable[[Change, dict[str, Any], str], dict[str, Any]]:
    """Both histories in the provenance: `$merged_into` on the deletion, and each filled value with
    the Revision that set it on the removed Record and a `$via` note naming the merge."""

    def provenance_of(change: Change, provenance: dict[str, Any], revision: str) -> dict[str, Any]:
        if change.entity != "record" or change.name != kind:
            return provenance
        if change.key == removed and change.change == "deleted":
            return {**provenance, "$merged_into": keep}
        if change.key != keep:
            return provenance
        via = dict(provenance.get("$via") or {})
        evidence = dict(provenance.get("$evidence") or {})
        source_evidence = removed_provenance.get("$evidence") or {}
        for name in filled:
            if name not in change.attributes:
                continue
            original = removed_provenance.get(name)
            if isinstance(original, str):
                provenance[name] = original
            via[name] = {"revision": revision, "merged_from": f"{kind}/{removed}"}
            if name in source_evidence:
                evidence[name] = source_evidence[name]
        if via:
            provenance["$via"] = via
        if evidence:
            provenance["$evidence"] = evidence
        return provenance

    return provenance_of


def merge_work(
    domain: Domain,
    access: Access,
    view_of: Readable,
    candidate_id: str,
    body: Accept,
    *,
    target: str,
    invocation_id: str,
    at: datetime,
) -> Any:
    """The commit work of an accept on the branch it runs on (`target`: the candidate's branch)."""
    principal = access.principal
    threshold = domain.settings.model.scribe.reconciliation.similarity

    async def work(view: BranchView, row: BranchRow, head: Head) -> tuple[dict[str, Any], Head, CommitRows]:
        candidate = await view.txn.get_candidate(domain.id, candidate_id, lock=True)
        if candidate is None:
            raise Problem(404, "not-found", f"unknown reconciliation candidate {candidate_id!r}")
        require_open(candidate, "accept")
        kind = domain.schema.kinds.get(candidate.kind)
        if kind is None:
            raise stale(candidate_id, f"Kind {candidate.kind} is no longer in the schema")
        keep = body.keep
        removed = candidate.record_b if keep == candidate.record_a else candidate.record_a
        stored = await view.get_records(kind.name, [candidate.record_a, candidate.record_b])
        await still_holds(view.txn, candidate, kind, stored, threshold)
        kept_values, removed_values = stored[keep].values, stored[removed].values
        fill: dict[str, Any] = {}
        conflicts = []
        for name, value in sorted(removed_values.items()):
            attribute = kind.attributes.get(name)
            if attribute is None or name in kind.key or attribute.derived is not None or value is None:
                continue
            if kept_values.get(name) is None:
                fill[name] = value
            elif kept_values[name] != value:
                conflicts.append({"attribute": name, "kept": kept_values[name], "dropped": value})
        changes = ChangeSet(view, domain.schema)
        if fill:
            await changes.update_record(kind, keep, fill, "keep")
        moved, dropped = await _move_links(view, changes, domain, kind, keep, removed)
        await changes.delete_record(kind, removed, "remove")
        change_list = await changes.finish()
        if changes.issues:
            raise invalid(changes.issues)
        rows = CommitRows(domain.id, row.name)
        committed = plan_commit(
            rows,
            domain=domain.name,
            head=head,
            changes=change_list,
            author=principal.id,
            message=f"Merge {kind.name}/{removed} into {kind.name}/{keep} (reconciliation {candidate_id})",
            origin=Origin("operation", invocation_id, principal.id),
            at=at,
            stored=changes.stored(),
            changed_keys_max=domain.settings.model.agents.feed.changed_keys_max,
            provenance_of=_provenance_of(
                kind.name, keep, removed, sorted(fill), dict(stored[removed].provenance)
            ),
        )
        revision = committed.revision.id
        stamp = iso(at)
        parameters = {"candidate": candidate_id, "kind": kind.name, "keep": keep, "remove": removed}
        rows.invocations.append(
            {
                "id": invocation_id,
                "operation": OPERATION,
                "principal": principal.id,
                "parameters": parameters,
                "revision": revision,
                "created_at": stamp,
            }
        )
        rows.audit(
            principal=principal.id,
            action="reconciliation.accept",
            domain=domain.name,
            target=candidate_id,
            details={**parameters, "branch": row.name, "revision": revision, "reason": body.reason},
            at=stamp,
        )
        result = {"branch": row.name, "revision": revision, "invocation_id": invocation_id}
        # The decision goes with the Revision: written last, once every check above has passed.
        await view.txn.decide_candidate(
            domain.id,
            candidate_id,
            status="accepted",
            principal=principal.id,
            at=at,
            reason=body.reason,
            result=result,
        )
        decided = await view.txn.get_candidate(domain.id, candidate_id)
        assert decided is not None
        cleared = view_of.cleared(kind.name)
        document = {
            "domain": domain.name,
            "candidate": candidate_document(domain, view_of, decided),
            "kept": f"{kind.name}/{keep}",
            "removed": f"{kind.name}/{removed}",
            "branch": row.name,
            "target": target,
            "invocation_id": invocation_id,
            "revision": revision,
            "filled": sorted(name for name in fill if name in view_of.attributes(kind.name)),
            "conflicts": [
                c if c["attribute"] in cleared else {**c, "kept": "***", "dropped": "***", "redacted": True}
                for c in conflicts
                if c["attribute"] in view_of.attributes(kind.name)
            ],
            "moved_links": moved,
            "dropped_links": dropped,
        }
        return document, Head.of(committed.revision), rows

    return work


async def accept(rt: Runtime, access: Access, domain: Domain, candidate_id: str, body: Accept) -> Outcome:
    """Accept a candidate: merge on its branch, or on a task branch with a Proposal (proposing.py)."""
    row, view = await rt.db.read(
        "reconciliation_candidate", lambda txn: find_candidate(txn, access, domain, candidate_id)
    )
    require_open(row, "accept")
    if body.keep not in (row.record_a, row.record_b):
        raise Problem(
            422,
            "validation-failed",
            f"keep names the Record that survives: {row.record_a!r} or {row.record_b!r}, not {body.keep!r}",
            issues=[
                {"path": "keep", "rule": "candidate.record", "message": f"{row.record_a} or {row.record_b}"}
            ],
        )
    branch = row.branch
    threshold = domain.settings.model.scribe.reconciliation.similarity

    async def check(txn: Txn) -> BranchRow:
        """Checked before anything is written (a task branch included); the commit checks again."""
        branch_row = await txn.get_branch(domain.id, branch)
        kind = domain.schema.kinds.get(row.kind)
        if branch_row is None or kind is None:
            raise stale(candidate_id, f"branch {branch!r} or Kind {row.kind} is gone")
        stored = await txn.get_records(domain.id, branch, kind.name, [row.record_a, row.record_b])
        await still_holds(txn, row, kind, stored, threshold)
        return branch_row

    branch_row = await rt.db.read("reconciliation_check", check)
    invocation_id = new_id("inv")
    at = utc_now()
    agents = domain.settings.model.keeper.agent_writes.principal_types
    if branch_row.protected and access.principal.type in agents:

        def on(task_branch: str) -> Any:
            return merge_work(
                domain, access, view, candidate_id, body, target=branch, invocation_id=invocation_id, at=at
            )

        return await propose_merge(rt, access, domain, row, body, on, invocation_id=invocation_id, at=at)
    work = merge_work(
        domain, access, view, candidate_id, body, target=branch, invocation_id=invocation_id, at=at
    )
    document = await rt.committer.run(
        domain.id,
        branch,
        work,
        prefetch={row.kind: [row.record_a, row.record_b]},
        schema=domain.stored_digest,
    )
    removed = document["removed"].split("/", 1)[1]
    document = {
        "status": "merged",
        **document,
        "next": merged_next(domain, row.kind, body.keep, removed, branch),
    }
    return Outcome(200, document, document["revision"], {})


def merged_next(domain: Domain, kind: str, keep: str, removed: str, branch: str) -> list[dict[str, Any]]:
    base = f"/api/v1/domains/{domain.name}/kinds/{kind}/records"
    return [
        {
            "action": "get_record",
            "detail": f"Read the survivor {kind}/{keep} with its Links.",
            "method": "GET",
            "href": f"{base}/{keep}?branch={branch}&links=true",
            "permission": "data.read",
        },
        {
            "action": "get_history",
            "detail": f"The history of {kind}/{removed} ends with its deletion, which names merged_into.",
            "method": "GET",
            "href": f"{base}/{removed}/history?branch={branch}",
            "permission": "data.read",
        },
    ]


__all__ = ["accept", "merge_work", "merged_next", "stale"]
