"""Operation executions: parameters, review, edits, dry runs, idempotency, expected heads, commits."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from lorebase.ids import iso, new_id, utc_now
from lorebase.problems import Problem, invalid
from lorebase.schema import Operation, render_edits, validate_parameters, validate_values
from lorebase_keeper.access import Access, Principal, Readable
from lorebase_keeper.access import readable as readable_view
from lorebase_keeper.domains import Domain, check_branch_name
from lorebase_keeper.runtime import Runtime
from lorebase_keeper.writes import (
    BranchView,
    ChangeSet,
    Head,
    Origin,
    Outcome,
    open_view,
    plan_commit,
    replay,
    request_digest,
)
from lorebase_store import BranchRow, CommitRows, Txn

EXECUTE_MEMBERS = {
    "parameters",
    "dry_run",
    "expected_head",
    "message",
    "branch",
    "idempotency_key",
    "task",
    "intent",
    "auto_propose",
    "auto_merge",
}


def _member(body: dict[str, Any], name: str, kind: type | tuple[type, ...], what: str) -> Any:
    value = body.get(name)
    if value is not None and not isinstance(value, kind):
        raise Problem(
            422,
            "validation-failed",
            f"{name} must be {what}",
            issues=[{"path": name, "rule": "type", "message": f"{name} must be {what}"}],
        )
    return value


def parse_execute(body: dict[str, Any], header_key: str) -> dict[str, Any]:
    unknown = sorted(set(body) - EXECUTE_MEMBERS)
    if unknown:
        raise Problem(
            422,
            "validation-failed",
            f"unknown member(s) {', '.join(unknown)}; an execution takes {', '.join(sorted(EXECUTE_MEMBERS))}",
            issues=[
                {"path": u, "rule": "unknown_member", "message": "not a member of an execution"}
                for u in unknown
            ],
        )
    parameters = _member(body, "parameters", dict, "an object of parameter values") or {}
    key = _member(body, "idempotency_key", str, "a string")
    key = header_key or None if key is None else key
    if key is not None and not (1 <= len(key) <= 255):
        raise Problem(422, "validation-failed", "an idempotency key has 1 to 255 characters")
    for member in ("auto_merge", "intent"):
        if body.get(member) not in (None, False) and not body.get("task"):
            raise Problem(
                422,
                "validation-failed",
                f"{member} goes with a task: name the piece of work (e.g. q4-audit)",
                issues=[{"path": member, "rule": "needs_task", "message": f"{member} needs a task"}],
            )
    return {
        "parameters": parameters,
        "dry_run": bool(_member(body, "dry_run", bool, "true or false")),
        "expected_head": _member(body, "expected_head", str, "a Revision id"),
        "message": _member(body, "message", str, "a string"),
        "branch": _member(body, "branch", str, "a branch name"),
        "idempotency_key": key,
        "task": _member(body, "task", str, "a string"),
        "intent": _member(body, "intent", str, "a string"),
        "auto_propose": _member(body, "auto_propose", bool, "true or false"),
        "auto_merge": _member(body, "auto_merge", bool, "true or false"),
    }


def _next_for_review(domain: Domain, operation: str, reason: str) -> list[dict[str, Any]]:
    """The calls that move a refused write forward: name a task (a task branch and a Proposal in
    one call), or write on a work branch of one's own."""
    steps = [
        {
            "action": "name_a_task",
            "detail": "Send the execution again with a task (and an intent): Keeper runs it on a task "
            "branch and opens a Proposal.",
            "method": "POST",
            "href": f"/api/v1/domains/{domain.name}/operations/{operation}/execute",
            "permission": "proposal.create",
        }
    ]
    if reason == "protected-branch":
        steps.append(
            {
                "action": "create_branch",
                "detail": "Create a work branch from this one and execute the Operation there.",
                "method": "POST",
                "href": f"/api/v1/domains/{domain.name}/branches",
                "permission": "branch.create",
            }
        )
    return steps


def review_required(domain: Domain, operation: str, branch: str, reason: str) -> Problem:
    why = (
        f"branch {branch!r} is protected: agent principals write to it through a Proposal"
        if reason == "protected-branch"
        else f"the review policy of {operation} holds for these parameters: the write needs a review"
    )
    return Problem(
        409,
        "review-required",
        why,
        branch=branch,
        operation=operation,
        reason=reason,
        proposals=[],
        next=_next_for_review(domain, operation, reason),
    )


def _check_readable(operation: Operation, domain: Domain, readable: set[str]) -> None:
    """An Operation editing a Kind the caller cannot see answers like an unknown one."""
    for edit in operation.edits:
        kinds = [edit.kind] if edit.kind else []
        if edit.relation:
            relation = domain.schema.relations[edit.relation]
            kinds += [relation.from_kind, relation.to_kind]
        if any(k not in readable for k in kinds):
            raise Problem(404, "not-found", f"unknown Operation {operation.name!r}")


@dataclass
class Prepared:
    """An execution checked against the schema, its edits rendered: what every step of it runs."""

    domain: Domain
    operation: Operation
    principal: Principal
    parameters: dict[str, Any]
    request: dict[str, Any]
    key: str | None
    digest: str
    edits: list[tuple[Any, dict[str, Any], str]]
    edit_docs: list[dict[str, Any]]
    issues: list[dict[str, Any]]
    invocation_id: str
    at: datetime
    policy_review: bool  # the Operation's review policy holds for these parameters
    readable: Readable  # what the principal may read on the branch (its answer names nothing else)

    @property
    def name(self) -> str:
        return self.operation.name

    def events(self, branch: str) -> list[tuple[str, dict[str, Any]]]:
        return [
            (
                f"operation.{effect}",
                _side_effect_event(
                    self.domain,
                    self.operation,
                    effect,
                    branch,
                    self.invocation_id,
                    self.principal.id,
                    self.parameters,
                    self.edit_docs,
                ),
            )
            for effect in self.operation.side_effects
        ]

    def prefetch(self) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for edit, _, _ in self.edits:
            if edit.kind and edit.key:
                found.setdefault(edit.kind, []).append(edit.key)
        return found


def prepare(access: Access, domain: Domain, name: str, request: dict[str, Any], branch: str) -> Prepared:
    """Check an execution (Operation, grants, parameters, values) and render its edits."""
    operation = domain.schema.operations.get(name)
    if operation is None:
        raise Problem(404, "not-found", f"unknown Operation {name!r}; GET /schema lists the Operations")
    principal = access.principal
    view = readable_view(access, domain, branch)
    _check_readable(operation, domain, set(view.kinds))
    access.require("data.read", branch)
    for permission in operation.permissions or ("operation.execute",):
        access.require(permission, branch)

    parameters, issues = validate_parameters(operation, request["parameters"])
    if issues:
        raise invalid([{"path": i.path, "rule": i.rule, "message": i.message} for i in issues])
    digest_of: dict[str, Any] = {
        "operation": name,
        "branch": branch,
        "parameters": parameters,
        "message": request["message"],
        "expected_head": request["expected_head"],
    }
    if request.get("task"):
        digest_of["task"] = request["task"]
    invocation_id = new_id("inv")
    at = utc_now()
    try:
        edits = render_edits(
            operation, parameters, invocation_id=invocation_id, principal=principal.id, now=iso(at)
        )
    except ValueError as exc:
        raise Problem(422, "validation-failed", str(exc)) from exc
    prepared = []
    issues_out: list[dict[str, Any]] = []
    for index, edit in enumerate(edits):
        path = f"edits[{index}]"
        attrs = (
            domain.schema.kinds[edit.kind].attributes
            if edit.kind
            else domain.schema.relations[edit.relation or ""].attributes
        )
        values, value_issues = validate_values(attrs, edit.values, path=f"{path}.values", partial=True)
        issues_out += [{"path": i.path, "rule": i.rule, "message": i.message} for i in value_issues]
        prepared.append((edit, values, path))
    return Prepared(
        domain=domain,
        operation=operation,
        principal=principal,
        parameters=parameters,
        request=request,
        key=request["idempotency_key"],
        digest=request_digest(digest_of),
        edits=prepared,
        edit_docs=[_edit_document(edit, values) for edit, values, _ in prepared],
        issues=issues_out,
        invocation_id=invocation_id,
        at=at,
        policy_review=operation.review_policy is not None and operation.review_policy.evaluate(parameters),
        readable=view,
    )


def make_work(
    p: Prepared,
    branch: str,
    *,
    dry_run: bool,
    review: bool = True,
    deferred: list[tuple[str, dict[str, Any]]] | None = None,
) -> Any:
    """The commit work of an execution on `branch`.

    `review`: refuse agents on a protected branch (a task branch is not reviewed: its Proposal is).
    `deferred`: collect the operation events instead of writing them (they are written when the
    Proposal merges).
    """
    domain, principal, name, key, request = p.domain, p.principal, p.name, p.key, p.request
    agent_types = domain.settings.get("keeper.agent_writes.principal_types") or ["service"]
    message = request["message"] or f"{name} by {principal.id}"
    origin = Origin("operation", p.invocation_id, principal.id)
    expected = request["expected_head"] if review else None

    async def work(view: BranchView, row: BranchRow, head: Head) -> tuple[Outcome, Head, CommitRows | None]:
        if key is not None and not dry_run:
            receipt = await view.get_receipt(principal.id, key)
            if receipt is not None:
                return replay(receipt, p.digest, key), head, None
        if review and row.protected and principal.type in agent_types:
            raise review_required(domain, name, branch, "protected-branch")
        if expected is not None and expected != head.revision:
            raise Problem(
                409,
                "stale-head",
                f"branch {branch!r} moved: its head is {head.revision}, not the expected "
                f"{expected}; read again and retry with the new head",
                branch=branch,
                head=head.revision,
                expected_head=expected,
            )
        changes = ChangeSet(view, domain.schema, issues=list(p.issues))
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
                changed_keys_max=int(domain.settings.get("agents.feed.changed_keys_max", 100)),
                extra_events=events,
            )
            revision_id = committed.revision.id
            new_head = Head(revision_id, committed.revision.generation)
        stamp = iso(p.at)
        rows.invocations.append(
            {
                "id": p.invocation_id,
                "operation": name,
                "principal": principal.id,
                "parameters": p.parameters,
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


def needs_review(p: Prepared, target: BranchRow | None) -> str | None:
    """Why a write on `target` needs a review (protected-branch, review-policy), or None."""
    if p.policy_review:
        return "review-policy"
    agent_types = p.domain.settings.get("keeper.agent_writes.principal_types") or ["service"]
    if target is not None and target.protected and p.principal.type in agent_types:
        return "protected-branch"
    return None


async def execute(
    rt: Runtime, access: Access, domain: Domain, name: str, body: dict[str, Any], header_key: str
) -> Outcome:
    request = parse_execute(body, header_key)
    branch = check_branch_name(request["branch"] or domain.default_branch)
    if request["task"] is not None or request["auto_propose"]:
        from lorebase_keeper.agent_tasks import execute_task

        return await execute_task(rt, access, domain, name, request, branch)
    p = prepare(access, domain, name, request, branch)
    if p.policy_review:
        raise review_required(domain, name, branch, "review-policy")
    if p.issues and not request["dry_run"]:
        raise invalid(p.issues)
    work = make_work(p, branch, dry_run=request["dry_run"])
    if request["dry_run"]:
        return await dry_run(rt, work, domain.id, branch)
    return await rt.committer.run(domain.id, branch, work, prefetch=p.prefetch())


async def _dry_run(txn: Txn, work: Any, domain_id: int, branch: str) -> Outcome:
    row = await txn.get_branch(domain_id, branch)
    if row is None:
        raise Problem(404, "not-found", f"unknown branch {branch!r}")
    outcome, _, _ = await work(await open_view(txn, row), row, Head(row.head, row.generation))
    return outcome  # Database.read rolls everything back


def _edit_document(edit: Any, values: dict[str, Any]) -> dict[str, Any]:
    doc: dict[str, Any] = {"op": edit.op}
    if edit.kind:
        doc.update(kind=edit.kind, key=edit.key)
    else:
        doc.update({"relation": edit.relation, "from": edit.from_key, "to": edit.to_key})
    if edit.op not in ("delete_record", "delete_link"):
        doc["values"] = values
    return doc


def _change_document(change: Any, readable: Readable) -> dict[str, Any]:
    """A change as the executing principal may know it (a derived Attribute computed over what it
    may not read changes unnamed)."""
    attributes = change.attributes
    if change.entity == "record":
        known = readable.attributes(change.name)
        attributes = [name for name in attributes if name in known]
    return {"ref": change.ref, "entity": change.entity, "change": change.change, "attributes": attributes}


def _side_effect_event(
    domain: Domain,
    operation: Operation,
    effect: str,
    branch: str,
    invocation_id: str,
    principal: str,
    parameters: dict[str, Any],
    edits: list[dict[str, Any]],
) -> dict[str, Any]:
    """The operation.<side effect> event; values of sensitive parameters and Attributes masked."""
    max_edits = int(domain.settings.get("keeper.operations.side_effect_max_edits", 50))
    masked_params = {
        k: ("***" if operation.parameters.get(k) is not None and operation.parameters[k].sensitivity else v)
        for k, v in parameters.items()
    }
    masked_edits = []
    for edit in edits[:max_edits]:
        attrs = (
            domain.schema.kinds[edit["kind"]].attributes
            if "kind" in edit
            else domain.schema.relations[edit["relation"]].attributes
        )
        doc = dict(edit)
        if "values" in doc:
            doc["values"] = {
                k: ("***" if attrs.get(k) is not None and attrs[k].sensitivity else v)
                for k, v in doc["values"].items()
            }
        masked_edits.append(doc)
    return {
        "type": f"operation.{effect}",
        "side_effect": effect,
        "domain": domain.name,
        "branch": branch,
        "operation": operation.name,
        "operation_id": f"opr_{operation.name}",
        "invocation_id": invocation_id,
        "principal": principal,
        "parameters": masked_params,
        "edit_count": len(edits),
        "edits": masked_edits,
        "edits_truncated": len(edits) > max_edits,
    }


__all__ = [
    "Outcome",
    "Prepared",
    "dry_run",
    "execute",
    "make_work",
    "needs_review",
    "parse_execute",
    "prepare",
    "review_required",
]
