"""`apply_changes`: every item of a change set checked against the document as the items before
it left it, then the result loaded as a schema.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lorebase.schema.changes.backfills import BackfillChanges
from lorebase.schema.changes.kinds import KindChanges
from lorebase.schema.changes.plan import Plan, SchemaChangeError
from lorebase.schema.changes.relations import RelationChanges
from lorebase.schema.changes.traits import TraitChanges
from lorebase.schema.errors import SchemaError
from lorebase.schema.loader import load_schema


class _Changes(KindChanges, BackfillChanges, RelationChanges, TraitChanges):
    """A change set being applied: each op is a method of the mixin of its resource."""


def apply_changes(document: Mapping[str, Any], items: Sequence[Mapping[str, Any]]) -> Plan:
    """The change set `items` applied to the schema `document`; SchemaChangeError lists every problem."""
    if not items:
        raise SchemaChangeError([{"path": "changes", "rule": "change.required", "message": "no changes"}])
    changes = _Changes(document)
    for index, item in enumerate(items):
        changes.apply(index, item)
    if changes.issues:
        raise SchemaChangeError(changes.issues)
    try:
        schema = load_schema(changes.doc)
    except SchemaError as error:
        raise SchemaChangeError(
            [
                {
                    "path": f"schema.{p['path']}" if p.get("path") else "schema",
                    "rule": "schema.invalid",
                    "message": p["message"],
                }
                for p in _problems(error)
            ]
        ) from None
    changes.compile_backfills(schema)
    if changes.issues:
        raise SchemaChangeError(changes.issues)
    return Plan(
        schema=schema,
        kinds={k: m for k, m in changes.kinds.items() if k in schema.kinds},
        removed_kinds=changes.removed_kinds,
        removed_relations=changes.removed_relations,
        summary=changes.summary,
        touches={k: sorted(v) for k, v in changes.touches.items()},
        renamed_kinds={o: n for o, n in changes.renamed_kinds.items() if o != n and n in schema.kinds},
        renamed_relations={
            o: n for o, n in changes.renamed_relations.items() if o != n and n in schema.relations
        },
        renamed_traits={o: n for o, n in changes.renamed_traits.items() if o != n and n in schema.traits},
        changed_relations={
            n: sorted(m) for n, m in changes.changed_relations.items() if n in schema.relations
        },
        link_maps={n: m for n, m in changes.link_maps.items() if n in changes.changed_relations},
        protection=changes.protection,
    )


def _problems(error: SchemaError) -> list[dict[str, str]]:
    out = []
    for problem in error.problems:
        text = str(problem)
        where, sep, message = text.partition(": ")
        out.append({"path": where if sep else "", "message": message if sep else text})
    return out
