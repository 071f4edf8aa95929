"""Reading Operations: parameters, edits (templates), review policy, side effects and permissions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lorebase.canonical import ValueProblem, canonical_value
from lorebase.schema._attributes import attributes_document, read_attributes
from lorebase.schema._reader import LOWER_NAME, Members, Problems, join, show
from lorebase.schema.model import (
    BUILTINS,
    EDIT_OPS,
    LINK_OPS,
    PERMISSIONS,
    RECORD_OPS,
    Attribute,
    Edit,
    Kind,
    Operation,
    Relation,
)
from lorebase.schema.policy import PolicyError, compile_policy
from lorebase.schema.templates import Reference, parse_template

__all__ = ["operation_document", "read_operation"]

_MEMBERS = ("description", "parameters", "edits", "review_policy", "side_effects", "permissions")
_RECORD_MEMBERS = ("op", "kind", "key", "values")
_LINK_MEMBERS = ("op", "relation", "from", "to", "values")


def read_operation(
    name: str,
    node: Any,
    path: str,
    problems: Problems,
    kinds: dict[str, Kind],
    relations: dict[str, Relation],
) -> Operation:
    problems.name(path, name, LOWER_NAME, "an Operation")
    members = Members(node, path, problems, _MEMBERS)
    parameters = read_attributes(
        members.raw("parameters"), members.at("parameters"), problems, parameters=True
    )
    for parameter in parameters:
        if parameter in BUILTINS:
            problems.add(
                join(members.at("parameters"), parameter), f"{parameter!r} is a builtin; choose another name"
            )
    edits_node = members.raw("edits")
    edits: list[Edit] = []
    if edits_node is not None and not isinstance(edits_node, list):
        problems.add(members.at("edits"), "expected a list of edits")
    for index, edit_node in enumerate(edits_node if isinstance(edits_node, list) else []):
        edit = _read_edit(edit_node, join(members.at("edits"), index), problems, parameters, kinds, relations)
        if edit is not None:
            edits.append(edit)
    policy = None
    source = members.text("review_policy", None)
    if source is not None:
        try:
            policy = compile_policy(source, parameters)
        except PolicyError as exc:
            problems.add(members.at("review_policy"), str(exc))
    permissions = members.words("permissions") if members.has("permissions") else ("operation.execute",)
    for index, permission in enumerate(permissions):
        if permission not in PERMISSIONS:
            problems.add(
                join(members.at("permissions"), index),
                f"unknown permission {permission!r}; expected one of {', '.join(PERMISSIONS)}",
            )
    return Operation(
        name=name,
        description=members.text("description") or "",
        parameters=parameters,
        edits=tuple(edits),
        review_policy=policy,
        side_effects=members.words("side_effects", pattern=LOWER_NAME),
        permissions=permissions,
    )


def _read_edit(
    node: Any,
    path: str,
    problems: Problems,
    parameters: dict[str, Attribute],
    kinds: dict[str, Kind],
    relations: dict[str, Relation],
) -> Edit | None:
    op = node.get("op") if isinstance(node, Mapping) else None
    if op not in EDIT_OPS:
        Members(node, path, problems, _RECORD_MEMBERS + _LINK_MEMBERS)
        if isinstance(node, Mapping):
            message = "required" if op is None else f"unknown op {show(op)}"
            problems.add(join(path, "op"), f"{message}; expected one of {', '.join(EDIT_OPS)}")
        return None
    record = op in RECORD_OPS
    members = Members(node, path, problems, _RECORD_MEMBERS if record else _LINK_MEMBERS)
    attributes: dict[str, Attribute] | None = None
    kind = relation = None
    if record:
        kind = members.text("kind", None, required=True)
        if kind is not None:
            if kind in kinds:
                attributes = kinds[kind].attributes
            else:
                problems.add(members.at("kind"), f"unknown Kind {kind!r}")
        keys = {"key": _key_size(kinds.get(kind or ""))}
    else:
        relation = members.text("relation", None, required=True)
        found = relations.get(relation or "")
        if found is not None:
            attributes = found.attributes
        elif relation is not None:
            problems.add(members.at("relation"), f"unknown Relation {relation!r} (use its forward name)")
        keys = {
            "from": _key_size(kinds.get(found.from_kind) if found else None),
            "to": _key_size(kinds.get(found.to_kind) if found else None),
        }
    for member, size in keys.items():
        _check_key(members, member, size, parameters)
    values: dict[str, Any] = {}
    for name, template in members.entries("values"):
        where = join(members.at("values"), name)
        values[name] = template
        if attributes is not None and name not in attributes:
            problems.add(where, f"unknown attribute; attributes are: {', '.join(attributes) or 'none'}")
            continue
        if op.startswith("delete_"):
            problems.add(where, f"{op} takes no values")
            continue
        if op == "update_record" and kind in kinds and name in kinds[kind].key:
            problems.add(where, "key attributes are immutable; update_record cannot set them")
        attribute = attributes.get(name) if attributes else None
        if attribute is not None and attribute.derived is not None:
            problems.add(
                where,
                f"{name} is derived (computed from its Derivation {attribute.derived!r}); edits cannot set it",
            )
            continue
        values[name] = _check_value(template, where, problems, parameters, attribute)
    return Edit(
        op=op,
        kind=kind,
        relation=relation,
        key=_key_template(members.raw("key")) if record else None,
        from_key=None if record else _key_template(members.raw("from")),
        to_key=None if record else _key_template(members.raw("to")),
        values=values,
    )


def _key_template(template: Any) -> Any:
    """Keys as written, with numbers turned into their text (`42` -> `"42"`)."""
    if isinstance(template, list):
        return [_key_template(item) for item in template]
    if isinstance(template, int) and not isinstance(template, bool):
        return str(template)
    return template


def _key_size(kind: Kind | None) -> int | None:
    return len(kind.key) if kind is not None and kind.key else None


def _check_key(members: Members, member: str, size: int | None, parameters: dict[str, Attribute]) -> None:
    template = members.raw(member)
    where = members.at(member)
    if template is None:
        members.problems.add(where, "required")
        return
    items = template if isinstance(template, list) else [template]
    if isinstance(template, list) and size is not None and len(template) != size:
        members.problems.add(where, f"a list key needs one template per key attribute ({size})")
    for index, item in enumerate(items):
        at = join(where, index) if isinstance(template, list) else where
        if not isinstance(item, str | int) or isinstance(item, bool):
            members.problems.add(at, f"expected a template string, got {show(item)}")
            continue
        _check_names(item, at, members.problems, parameters)


def _check_names(template: Any, path: str, problems: Problems, parameters: dict[str, Attribute]) -> bool:
    """Whether `template` is a literal; unknown `$name`s and malformed templates are problems."""
    if not isinstance(template, str):
        return True
    try:
        parsed = parse_template(template)
    except ValueError as exc:
        problems.add(path, str(exc))
        return False
    names = (parsed.name,) if isinstance(parsed, Reference) else parsed.names
    for name in names:
        if name not in parameters and name not in BUILTINS:
            known = ", ".join([*parameters, *(f"${b}" for b in BUILTINS)])
            problems.add(path, f"${name} is not a parameter; known: {known}")
    return not names


def _check_value(
    template: Any,
    path: str,
    problems: Problems,
    parameters: dict[str, Attribute],
    attribute: Attribute | None,
) -> Any:
    """The value to keep: a template as written, or a literal in canonical form (`$` escaped again)."""
    if isinstance(template, dict | list):
        problems.add(path, f"expected a value or a template string, got {show(template)}")
        return template
    if not _check_names(template, path, problems, parameters) or attribute is None:
        return template
    literal = template.replace("$$", "$") if isinstance(template, str) else template
    try:
        canonical = canonical_value(attribute, literal)
    except ValueProblem as exc:
        problems.add(path, f"{exc.message} ({exc.rule})")
        return template
    return canonical.replace("$", "$$") if isinstance(canonical, str) else canonical


def _edit_document(edit: Edit) -> dict[str, Any]:
    if edit.op in LINK_OPS:
        return {
            "op": edit.op,
            "relation": edit.relation,
            "from": edit.from_key,
            "to": edit.to_key,
            "values": edit.values,
        }
    return {"op": edit.op, "kind": edit.kind, "key": edit.key, "values": edit.values}


def operation_document(operation: Operation) -> dict[str, Any]:
    return {
        "description": operation.description,
        "parameters": attributes_document(operation.parameters, parameters=True),
        "edits": [_edit_document(edit) for edit in operation.edits],
        "review_policy": operation.review_policy.source if operation.review_policy else None,
        "side_effects": list(operation.side_effects),
        "permissions": list(operation.permissions),
    }
