"""GET /schema: the schema as the caller may read it (invisible Kinds left out, with what needs them)."""

from __future__ import annotations

from typing import Any

from lorebase_keeper.access import Access, Readable, readable
from lorebase_keeper.domains import Domain


def _listed(members: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"name": name, **doc} for name, doc in members.items()]


def _kind_document(view: Readable, document: dict[str, Any], kind: str) -> dict[str, Any]:
    """A Kind as the caller may read it: a derived Attribute computed over what the caller may not
    read is left out (its expression would name what the caller may not see)."""
    doc = dict(document["kinds"][kind])
    known = view.attributes(kind)
    if len(known) < len(doc["attributes"]):
        doc["attributes"] = {n: a for n, a in doc["attributes"].items() if n in known}
    return {"name": kind, **doc}


def visible_schema(access: Access, domain: Domain, branch: str) -> dict[str, Any]:
    document = domain.schema.document
    view = readable(access, domain, branch)
    kinds, relations = view.kinds, view.relations
    readable_kinds = set(kinds)
    relation_set = set(relations)
    traits = []
    for name, doc in (document.get("traits") or {}).items():
        implementing = [k for k in domain.schema.kinds_implementing(name) if k in readable_kinds]
        if implementing:
            traits.append({"name": name, **doc, "kinds": implementing})
    lenses = []
    for name, doc in (document.get("lenses") or {}).items():
        lens_kinds = [k for k in doc.get("kinds") or [] if k in readable_kinds]
        lens_traits = [t for t in doc.get("traits") or [] if any(t == tr["name"] for tr in traits)]
        if not lens_kinds and not lens_traits:
            continue  # a lens none of whose Kinds is readable is unknown to this caller
        lens_relations = []
        for rel in doc.get("relations") or []:
            named = domain.schema.relation_named(rel)
            if named is not None and named[0].name in relation_set:
                lens_relations.append(rel)
        lenses.append(
            {"name": name, **doc, "kinds": lens_kinds, "traits": lens_traits, "relations": lens_relations}
        )
    operations = []
    for name, op in domain.schema.operations.items():
        touched: set[str] = set()
        for edit in op.edits:
            if edit.kind:
                touched.add(edit.kind)
            if edit.relation:
                relation = domain.schema.relations[edit.relation]
                touched |= {relation.from_kind, relation.to_kind}
        if touched <= readable_kinds:
            operations.append({"name": name, **document["operations"][name]})
    sources = []
    for name, doc in (document.get("sources") or {}).items():
        source_kinds = [k for k in doc["kinds"] if k in readable_kinds]
        if source_kinds:  # a Source none of whose Kinds is readable is unknown to this caller
            sources.append({"name": name, **doc, "kinds": source_kinds})
    return {
        "domain": domain.name,
        "branch": branch,
        "description": document.get("description", ""),
        "kinds": [_kind_document(view, document, k) for k in kinds],
        "relations": [{"name": r, **document["relations"][r]} for r in relations],
        "traits": traits,
        "lenses": lenses,
        "operations": operations,
        "sources": sources,
    }


__all__ = ["visible_schema"]
