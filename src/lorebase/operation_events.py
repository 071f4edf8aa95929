"""Operation events for webhooks with clearances (docs/feed.md, "Clearances").

Keeper writes every `operation.<side effect>` event masked: the value of any Attribute with
sensitivity tags is `***`. That document is what the outbox, NATS, the event stream and every
webhook without clearances see. The clear values are never stored a second time: at delivery, a
webhook whose clearances cover every tag of an Attribute gets its value re-rendered from the
invocation (the `invocations` row keeps the canonical parameters, the principal and the time that
the Operation's templates used) with the Domain's schema.

A value is revealed only when the re-rendered edit is the stored one: same op, Kind or Relation,
key (or from and to), the same value names, and every unmasked value equal. Any difference (the
Operation changed since, the invocation is gone) leaves the edit as it was stored, masked. The
`parameters` member stays masked for everyone.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from datetime import datetime
from typing import Any

import orjson

from lorebase.ids import iso
from lorebase.schema import DomainSchema, RenderedEdit, render_edits, validate_values
from lorebase.vault import is_ref

MASK = "***"


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON (what the receiver gets)."""
    return bool(orjson.loads(orjson.dumps(a)) == orjson.loads(orjson.dumps(b)))


def _revealed_edit(
    schema: DomainSchema, stored: Mapping[str, Any], rendered: RenderedEdit, cleared: set[str]
) -> dict[str, Any] | None:
    """The stored edit with the values `cleared` may see; None when `rendered` is not that edit."""
    if stored.get("op") != rendered.op:
        return None
    if rendered.kind:
        if (stored.get("kind"), stored.get("key")) != (rendered.kind, rendered.key):
            return None
        kind = schema.kinds.get(rendered.kind)
        attributes = kind.attributes if kind is not None else None
    else:
        identity = (stored.get("relation"), stored.get("from"), stored.get("to"))
        if identity != (rendered.relation, rendered.from_key, rendered.to_key):
            return None
        relation = schema.relations.get(rendered.relation or "")
        attributes = relation.attributes if relation is not None else None
    stored_values = stored.get("values")
    if attributes is None or not isinstance(stored_values, dict):
        return None
    # A vault value was rendered from its parameter's ref (the invocation keeps refs): it is not
    # validated, and is revealed when the delivery is sent (lorebase_scribe.webhook_vault).
    refs = {name: value for name, value in rendered.values.items() if is_ref(value)}
    plain = {name: value for name, value in rendered.values.items() if name not in refs}
    values, issues = validate_values(attributes, plain, path="edit.values", partial=True)
    values.update(refs)
    if issues or set(values) != set(stored_values):
        return None
    out: dict[str, Any] = {}
    for name, shown in stored_values.items():
        attribute = attributes.get(name)
        tags = set(attribute.sensitivity) if attribute is not None else set()
        if shown == MASK and tags:
            out[name] = values[name] if tags <= cleared else MASK
        elif _same(shown, values[name]):
            out[name] = shown
        else:
            return None
    return {**stored, "values": out}


def revealed(
    event: Mapping[str, Any],
    schema: DomainSchema,
    invocation: Mapping[str, Any],
    clearances: Collection[str],
) -> dict[str, Any]:
    """`event` (an operation event as stored) with the sensitive edit values that `clearances`
    cover, re-rendered from `invocation` (id, principal, parameters, created_at)."""
    document = dict(event)
    cleared = set(clearances)
    edits = document.get("edits")
    if not cleared or not str(document.get("type", "")).startswith("operation.") or not edits:
        return document
    operation = schema.operations.get(str(document.get("operation", "")))
    if operation is None or invocation.get("id") != document.get("invocation_id"):
        return document
    created_at = invocation["created_at"]
    try:
        rendered = render_edits(
            operation,
            invocation["parameters"],
            invocation_id=str(invocation["id"]),
            principal=str(invocation["principal"]),
            now=iso(created_at) if isinstance(created_at, datetime) else str(created_at),
        )
    except ValueError:
        return document
    out = []
    for index, stored in enumerate(edits):
        found = (
            _revealed_edit(schema, stored, rendered[index], cleared)
            if index < len(rendered) and isinstance(stored, dict) and "values" in stored
            else None
        )
        out.append(found if found is not None else stored)
    document["edits"] = out
    return document


__all__ = ["MASK", "revealed"]
