"""Operation executions: parameters, review, edits, dry runs, idempotency, expected heads, commits."""

from __future__ import annotations

from typing import Any

from lorebase.ids import iso, new_id, utc_now
from lorebase.problems import Problem, invalid
from lorebase.schema import Operation, render_edits, validate_parameters, validate_values
from lorebase_keeper.auth import Access
from lorebase_keeper.branch_view import BranchView, open_view
from lorebase_keeper.changes import ChangeSet
from lorebase_keeper.commit import Head, Origin, plan_commit
from lorebase_keeper.domains import Domain, check_branch_name
from lorebase_keeper.outcome import Outcome, replay, request_digest
from lorebase_keeper.runtime import Runtime
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
    asked = [m for m in ("task", "auto_propose", "auto_merge") if body.get(m) not in (None, False)]
    if asked:
        raise Problem(
            422,
            "validation-failed",
            "task branches and automatic Proposals are not available yet; execute on a work branch "
            "(POST /branches) instead",
            issues=[
                {"path": m, "rule": "not_available", "message": "the agent task flow is not built yet"}
                for m in asked
            ],
        )
    parameters = _member(body, "parameters", dict, "an object of parameter values") or {}
    key = _member(body, "idempotency_key", str, "a string")
    key = header_key or None if key is None else key
    if key is not None and not (1 <= len(key) <= 255):
        raise Problem(422, "validation-failed", "an idempotency key has 1 to 255 characters")
    return {
        "parameters": parameters,
        "dry_run": bool(_member(body, "dry_run", bool, "true or false")),
        "expected_head": _member(body, "expected_head", str, "a Revision id"),
        "message": _member(body, "message", str, "a string"),
        "branch": _member(body, "branch", str, "a branch name"),
        "idempotency_key": key,
        "task": _member(body, "task", str, "a string"),
    }


def _next_for_review(domain: Domain, reason: str) -> list[dict[str, Any]]:
    """The calls that move a refused write forward.

    The agent task flow (name_a_task: a task branch and a Proposal in one call) is a later issue;
    until then a protected branch is written through a work branch of one's own, and a write that
    the Operation's review policy holds back has no way forward but other parameters.
    """
    if reason != "protected-branch":
        return []
    return [
        {
            "action": "create_branch",
            "detail": "Create a work branch from this one and execute the Operation there.",
            "method": "POST",
            "href": f"/api/v1/domains/{domain.name}/branches",
            "permission": "branch.create",
        },
    ]


def _review_required(domain: Domain, operation: str, branch: str, reason: str) -> Problem:
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
        next=_next_for_review(domain, reason),
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


async def execute(
    rt: Runtime, access: Access, domain: Domain, name: str, body: dict[str, Any], header_key: str
) -> Outcome:
    request = parse_execute(body, header_key)
    operation = domain.schema.operations.get(name)
    if operation is None:
        raise Problem(404, "not-found", f"unknown Operation {name!r}; GET /schema lists the Operations")
    branch = check_branch_name(request["branch"] or domain.default_branch)
    principal = access.principal
    readable = set(access.readable_kinds(branch, list(domain.schema.kinds)))
    _check_readable(operation, domain, readable)
    access.require("data.read", branch)
    for permission in operation.permissions or ("operation.execute",):
        access.require(permission, branch)

    parameters, issues = validate_parameters(operation, request["parameters"])
    if issues:
        raise invalid([{"path": i.path, "rule": i.rule, "message": i.message} for i in issues])

    key = request["idempotency_key"]
    digest = request_digest(
        {
            "operation": name,
            "branch": branch,
            "parameters": parameters,
            "message": request["message"],
            "expected_head": request["expected_head"],
        }
    )
    if operation.review_policy is not None and operation.review_policy.evaluate(parameters):
        raise _review_required(domain, name, branch, "review-policy")
    agent_types = domain.settings.get("keeper.agent_writes.principal_types") or ["service"]
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
    edit_docs = [_edit_document(edit, values) for edit, values, _ in prepared]
    if issues_out and not request["dry_run"]:
        raise invalid(issues_out)

    message = request["message"] or f"{name} by {principal.id}"
    origin = Origin("operation", invocation_id, principal.id)

    async def work(view: BranchView, row: BranchRow, head: Head) -> tuple[Outcome, Head, CommitRows | None]:
        if key is not None and not request["dry_run"]:
            receipt = await view.get_receipt(principal.id, key)
            if receipt is not None:
                return replay(receipt, digest, key), head, None
        if row.protected and principal.type in agent_types:
            raise _review_required(domain, name, branch, "protected-branch")
        if request["expected_head"] is not None and request["expected_head"] != head.revision:
            raise Problem(
                409,
                "stale-head",
                f"branch {branch!r} moved: its head is {head.revision}, not the expected "
                f"{request['expected_head']}; read again and retry with the new head",
                branch=branch,
                head=head.revision,
                expected_head=request["expected_head"],
            )
        changes = ChangeSet(view, domain.schema, issues=list(issues_out))
        for edit, values, path in prepared:
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
        if request["dry_run"]:
            document = {
                "status": "dry_run",
                "dry_run": True,
                "operation": name,
                "branch": branch,
                "head": head.revision,
                "valid": not changes.issues,
                "edits": edit_docs,
                "violations": changes.issues,
                "changes": [_change_document(c) for c in change_list],
                "edit_count": len(edit_docs),
                "revision": None,
            }
            return Outcome(200, document, head.revision, {}), head, None
        if changes.issues:
            raise invalid(changes.issues)
        revision_id: str | None = None
        new_head = head
        rows = CommitRows(domain.id, branch)
        if change_list:
            extra = [
                (
                    f"operation.{effect}",
                    _side_effect_event(
                        domain, operation, effect, branch, invocation_id, principal.id, parameters, edit_docs
                    ),
                )
                for effect in operation.side_effects
            ]
            committed = plan_commit(
                rows,
                domain=domain.name,
                head=head,
                changes=change_list,
                author=principal.id,
                message=message,
                origin=origin,
                at=at,
                stored=changes.stored(),
                changed_keys_max=int(domain.settings.get("agents.feed.changed_keys_max", 100)),
                extra_events=extra,
            )
            revision_id = committed.revision.id
            new_head = Head(revision_id, committed.revision.generation)
        stamp = iso(at)
        rows.invocations.append(
            {
                "id": invocation_id,
                "operation": name,
                "principal": principal.id,
                "parameters": parameters,
                "revision": revision_id,
                "created_at": stamp,
            }
        )
        document = {
            "status": "committed",
            "operation": name,
            "branch": branch,
            "invocation_id": invocation_id,
            "revision": revision_id,
            "revisions": [revision_id] if revision_id else [],
            "head": new_head.revision,
            "edit_count": len(edit_docs),
            "changes": [_change_document(c) for c in change_list],
            "replayed": False,
        }
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
            action="operation.invoke",
            domain=domain.name,
            target=name,
            details={"branch": branch, "invocation_id": invocation_id, "revision": revision_id},
            at=stamp,
        )
        return Outcome(200, document, revision_id, {}), new_head, rows

    if request["dry_run"]:
        return await rt.db.read("dry_run", _dry_run, work, domain.id, branch)
    prefetch: dict[str, list[str]] = {}
    for edit, _, _ in prepared:
        if edit.kind and edit.key:
            prefetch.setdefault(edit.kind, []).append(edit.key)
    return await rt.committer.run(domain.id, branch, work, prefetch=prefetch)


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


def _change_document(change: Any) -> dict[str, Any]:
    return {
        "ref": change.ref,
        "entity": change.entity,
        "change": change.change,
        "attributes": change.attributes,
    }


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


__all__ = ["Outcome", "execute", "parse_execute"]
