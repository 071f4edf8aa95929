"""An Operation execution checked before it runs: the request (typed: lorebase.contract.writes), the
Operation, the caller's grants and clearances, the parameters and the values of the rendered edits (`prepare`); and the
`operation.<side effect>` events it will emit, sensitive values masked.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import msgspec

from lorebase.contract.evidence import span_problem
from lorebase.contract.writes import Execution
from lorebase.ids import iso, new_id, utc_now
from lorebase.problems import Problem, invalid
from lorebase.schema import Operation, render_edits, validate_parameters, validate_values
from lorebase_keeper.access import Access, Principal, Readable
from lorebase_keeper.access import readable as readable_view
from lorebase_keeper.domains import Domain
from lorebase_keeper.vault import VaultWriter
from lorebase_keeper.writes import idempotency_key, request_digest


def parse_execute(body: Execution, header_key: str) -> Execution:
    """The execution with its idempotency key (the body's, else the header's); 422 for `intent` or
    `auto_merge` without a task. The model has checked the members and their types."""
    for member, value in (("auto_merge", body.auto_merge), ("intent", body.intent)):
        if value not in (None, False) and not body.task:
            raise Problem(
                422,
                "validation-failed",
                f"{member} goes with a task: name the piece of work (e.g. q4-audit)",
                issues=[{"path": member, "rule": "needs_task", "message": f"{member} needs a task"}],
            )
    if body.extraction is not None and (problem := span_problem(body.extraction.span)) is not None:
        raise Problem(
            422,
            "validation-failed",
            f"extraction.span: {problem}",
            issues=[{"path": "extraction.span", "rule": "evidence.span", "message": problem}],
        )
    key = idempotency_key(body.idempotency_key, header_key)
    return body if key == body.idempotency_key else msgspec.structs.replace(body, idempotency_key=key)


def unknown_operation(name: str) -> Problem:
    """The answer for an Operation that does not exist, or edits a Kind the caller may not read."""
    return Problem(404, "not-found", f"unknown Operation {name!r}; GET /schema lists the Operations")


def operation_kinds(domain: Domain, operation: Operation) -> tuple[str, ...]:
    """The Kinds an Operation edits, the ends of the Relations it links included: a caller must
    read them all to see it (the policy point, lorebase_keeper.api.targets)."""
    kinds: dict[str, None] = {}
    for edit in operation.edits:
        if edit.kind:
            kinds[edit.kind] = None
        if edit.relation:
            relation = domain.schema.relations[edit.relation]
            kinds[relation.from_kind] = kinds[relation.to_kind] = None
    return tuple(kinds)


@dataclass
class Prepared:
    """An execution checked against the schema, its edits rendered: what every step of it runs."""

    domain: Domain
    operation: Operation
    principal: Principal
    parameters: dict[str, Any]
    request: Execution
    key: str | None
    digest: str
    edits: list[tuple[Any, dict[str, Any], str]]
    edit_docs: list[dict[str, Any]]
    issues: list[dict[str, Any]]
    invocation_id: str
    at: datetime
    policy_review: bool  # the Operation's review policy holds for these parameters
    readable: Readable  # what the principal may read on the branch (its answer names nothing else)
    vault: VaultWriter | None = None  # the refs of its vault values (set by the caller; vault/)

    @property
    def name(self) -> str:
        return self.operation.name

    def stored_parameters(self) -> dict[str, Any]:
        """The parameters as the invocation, the events and the receipt keep them: those whose value
        went into the vault hold its ref."""
        return self.parameters if self.vault is None else self.vault.conceal(self.parameters)

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
                    self.stored_parameters(),
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


def prepare(access: Access, domain: Domain, name: str, request: Execution, branch: str) -> Prepared:
    """Check an execution (Operation, grants, parameters, values) and render its edits."""
    operation = domain.schema.operations.get(name)
    if operation is None:
        raise unknown_operation(name)
    principal = access.principal

    parameters, issues = validate_parameters(operation, request.parameters)
    if issues:
        raise invalid([{"path": i.path, "rule": i.rule, "message": i.message} for i in issues])
    digest_of: dict[str, Any] = {
        "operation": name,
        "branch": branch,
        "parameters": parameters,
        "message": request.message,
        "expected_head": request.expected_head,
    }
    if request.task:
        digest_of["task"] = request.task
    if request.extraction is not None:
        digest_of["extraction"] = msgspec.to_builtins(request.extraction)
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
        key=request.idempotency_key,
        digest=request_digest(digest_of),
        edits=prepared,
        edit_docs=[_edit_document(edit, values) for edit, values, _ in prepared],
        issues=issues_out,
        invocation_id=invocation_id,
        at=at,
        policy_review=operation.review_policy is not None and operation.review_policy.evaluate(parameters),
        readable=readable_view(access, domain, branch),
    )


def _edit_document(edit: Any, values: dict[str, Any]) -> dict[str, Any]:
    doc: dict[str, Any] = {"op": edit.op}
    if edit.kind:
        doc.update(kind=edit.kind, key=edit.key)
    else:
        doc.update({"relation": edit.relation, "from": edit.from_key, "to": edit.to_key})
    if edit.op not in ("delete_record", "delete_link"):
        doc["values"] = values
    return doc


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
    max_edits = domain.settings.model.keeper.operations.side_effect_max_edits
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


__all__ = ["Prepared", "operation_kinds", "parse_execute", "prepare", "unknown_operation"]
