"""load_schema: a schema document (YAML text or a mapping) to a checked DomainSchema.

Every problem found is collected with its path ("kinds.Supplier.attributes.risk_score.type: unknown
type 'int'") and raised together as one SchemaError. The loaded schema carries its normalised
document: every member spelled out, null where absent, literals in canonical form.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from lorebase.schema._attributes import attributes_document, read_attributes
from lorebase.schema._operations import operation_document, read_operation
from lorebase.schema._reader import LOWER_NAME, UPPER_NAME, Members, Problems, join, show
from lorebase.schema.derivations import Derivation, DerivationError, compile_derivation
from lorebase.schema.durations import parse_duration
from lorebase.schema.errors import SchemaError
from lorebase.schema.model import (
    ATTRIBUTE_TYPES,
    CARDINALITIES,
    DomainSchema,
    Kind,
    Lens,
    Relation,
    Source,
    Trait,
)
from lorebase.schema.yaml_text import parse_yaml

__all__ = ["load_schema", "schema_document"]

_TOP = ("description", "kinds", "relations", "traits", "lenses", "operations", "sources")
_SOURCE = ("description", "kinds", "stale_after")
_KIND = ("description", "key", "title", "aliases", "implements", "stewards", "attributes")
_RELATION = ("from", "to", "inverse", "cardinality", "description", "required_from", "attributes")
_TRAIT = ("description", "attributes")
_LENS = (
    "description",
    "kinds",
    "traits",
    "relations",
    "depth",
    "budget_tokens",
    "include_schema",
    "include_recent_changes",
    "include_lineage",
)


def load_schema(document: Mapping[str, Any] | str) -> DomainSchema:
    """The DomainSchema of `document` (a mapping, or YAML/JSON text); SchemaError lists every problem."""
    if isinstance(document, str):
        document = parse_yaml(document)
    problems = Problems()
    top = Members(document, "", problems, _TOP)
    traits = {
        name: _read_trait(name, node, join("traits", name), problems) for name, node in top.entries("traits")
    }
    kinds = {
        name: _read_kind(name, node, join("kinds", name), problems, traits)
        for name, node in top.entries("kinds")
    }
    _check_kind_aliases(kinds, problems)
    relations = {
        name: _read_relation(name, node, join("relations", name), problems, kinds)
        for name, node in top.entries("relations")
    }
    _check_relation_names(relations, problems)
    kinds = {name: _compile_derivations(kind, kinds, relations, problems) for name, kind in kinds.items()}
    lenses = {
        name: _read_lens(name, node, join("lenses", name), problems, kinds, traits, relations)
        for name, node in top.entries("lenses")
    }
    operations = {
        name: read_operation(name, node, join("operations", name), problems, kinds, relations)
        for name, node in top.entries("operations")
    }
    sources = {
        name: _read_source(name, node, join("sources", name), problems, kinds)
        for name, node in top.entries("sources")
    }
    description = top.text("description") or ""
    if problems:
        raise SchemaError(problems.items)
    schema = DomainSchema(description, kinds, relations, traits, lenses, operations, sources)
    return dataclasses.replace(schema, document=schema_document(schema))


def _read_trait(name: str, node: Any, path: str, problems: Problems) -> Trait:
    problems.name(path, name, UPPER_NAME, "a Trait")
    members = Members(node, path, problems, _TRAIT)
    attributes = read_attributes(members.raw("attributes"), members.at("attributes"), problems)
    return Trait(name, members.text("description") or "", attributes)


def _read_kind(name: str, node: Any, path: str, problems: Problems, traits: dict[str, Trait]) -> Kind:
    problems.name(path, name, UPPER_NAME, "a Kind")
    members = Members(node, path, problems, _KIND)
    attributes = read_attributes(
        members.raw("attributes"), members.at("attributes"), problems, derivable=True
    )
    key = members.words("key", single=True)
    if not key and members.ok:
        problems.add(members.at("key"), "required; name one or more key attributes")
    for index, attribute in enumerate(key):
        where = join(members.at("key"), index)
        if attribute not in attributes:
            problems.add(where, f"{attribute!r} is not an attribute of {name}")
            continue
        if attributes[attribute].derived is not None:
            problems.add(
                join(join(members.at("attributes"), attribute), "derived"), "key attributes cannot be derived"
            )
        spec = members.raw("attributes")[attribute]
        if isinstance(spec, Mapping) and spec.get("required") is False:
            problems.add(
                join(join(members.at("attributes"), attribute), "required"), "key attributes are required"
            )
        attributes[attribute] = dataclasses.replace(attributes[attribute], required=True)
    title = members.text("title", None)
    if title is not None and title not in attributes:
        problems.add(members.at("title"), f"{title!r} is not an attribute of {name}")
    for held in (*key, title):
        if held is not None and held in attributes and attributes[held].vault:
            problems.add(
                join(join(members.at("attributes"), held), "vault"),
                "a key or title Attribute cannot be a vault Attribute (it names the Record everywhere)",
            )
    implements = members.words("implements")
    for index, trait_name in enumerate(implements):
        where = join(members.at("implements"), index)
        trait = traits.get(trait_name)
        if trait is None:
            problems.add(where, f"unknown Trait {trait_name!r}")
            continue
        for attribute_name, wanted in trait.attributes.items():
            declared = attributes.get(attribute_name)
            if declared is None:
                problems.add(
                    where,
                    f"{name} must declare {trait_name}'s attribute {attribute_name} ({wanted.type_name})",
                )
            elif {declared.type, wanted.type} <= set(
                ATTRIBUTE_TYPES
            ) and declared.type_name != wanted.type_name:
                problems.add(
                    join(join(members.at("attributes"), attribute_name), "type"),
                    f"{trait_name} declares {attribute_name} as {wanted.type_name}, not {declared.type_name}",
                )
    return Kind(
        name=name,
        description=members.text("description") or "",
        key=key,
        title=title,
        aliases=members.words("aliases"),
        implements=implements,
        stewards=members.words("stewards"),
        attributes=attributes,
    )


def _compile_derivations(
    kind: Kind, kinds: dict[str, Kind], relations: dict[str, Relation], problems: Problems
) -> Kind:
    derivations: dict[str, Derivation] = {}
    attributes = dict(kind.attributes)
    for name, attribute in kind.attributes.items():
        if attribute.derived is None or name in kind.key:
            continue
        try:
            derivation = compile_derivation(attribute.derived, attribute, kind, kinds, relations)
        except DerivationError as exc:
            problems.add(join(join(join(join("kinds", kind.name), "attributes"), name), "derived"), str(exc))
            continue
        read_vault = [read for read in derivation.reads if kind.attributes[read].vault] + [
            f"{aggregate.neighbour}.{read}"
            for aggregate in derivation.aggregates
            for read in aggregate.reads
            if (held := kinds[aggregate.neighbour].attributes.get(read)) is not None and held.vault
        ]
        if read_vault:
            problems.add(
                join(join(join(join("kinds", kind.name), "attributes"), name), "derived"),
                f"a Derivation cannot read a vault Attribute ({', '.join(read_vault)}): its values are refs",
            )
            continue
        derivations[name] = derivation
        # A derived value is as sensitive as what it reads, and tells about the Kinds it counts over.
        tags = set(attribute.sensitivity)
        tags.update(t for read in derivation.reads for t in kind.attributes[read].sensitivity)
        for aggregate in derivation.aggregates:
            neighbour = kinds[aggregate.neighbour].attributes
            tags.update(
                t for read in aggregate.reads if read in neighbour for t in neighbour[read].sensitivity
            )
        attributes[name] = dataclasses.replace(
            attribute,
            sensitivity=tuple(sorted(tags)),
            reads_kinds=tuple(sorted({a.neighbour for a in derivation.aggregates})),
            reads_relations=tuple(sorted({a.relation for a in derivation.aggregates})),
        )
    if not derivations:
        return kind
    return dataclasses.replace(kind, attributes=attributes, derivations=derivations)


def _check_kind_aliases(kinds: dict[str, Kind], problems: Problems) -> None:
    owners = {name.lower(): name for name in kinds}
    for kind in kinds.values():
        for index, alias in enumerate(kind.aliases):
            owner = owners.setdefault(alias.lower(), kind.name)
            if owner != kind.name:
                problems.add(
                    join(join(join("kinds", kind.name), "aliases"), index), f"{alias!r} already names {owner}"
                )


def _read_relation(name: str, node: Any, path: str, problems: Problems, kinds: dict[str, Kind]) -> Relation:
    problems.name(path, name, LOWER_NAME, "a Relation")
    members = Members(node, path, problems, _RELATION)
    ends = []
    for end in ("from", "to"):
        kind = members.text(end, None, required=members.ok)
        if kind is not None and kind not in kinds:
            problems.add(members.at(end), f"unknown Kind {kind!r}")
        ends.append(kind or "")
    inverse = members.text("inverse", None)
    if inverse is not None:
        problems.name(members.at("inverse"), inverse, LOWER_NAME, "an inverse")
    cardinality = members.text("cardinality", "many_to_many") or "many_to_many"
    if cardinality not in CARDINALITIES:
        problems.add(
            members.at("cardinality"),
            f"unknown cardinality {show(cardinality)}; expected one of {', '.join(CARDINALITIES)}",
        )
    return Relation(
        name=name,
        from_kind=ends[0],
        to_kind=ends[1],
        inverse=inverse,
        cardinality=cardinality,
        description=members.text("description") or "",
        attributes=read_attributes(members.raw("attributes"), members.at("attributes"), problems),
        required_from=bool(members.flag("required_from")),
    )


def _check_relation_names(relations: dict[str, Relation], problems: Problems) -> None:
    """Inverse names are unique among all relation names and inverses."""
    owners = {name: f"the Relation {name}" for name in relations}
    for relation in relations.values():
        if relation.inverse is None:
            continue
        where = join(join("relations", relation.name), "inverse")
        owner = owners.get(relation.inverse)
        if owner is not None:
            problems.add(where, f"{relation.inverse!r} is already {owner}")
        else:
            owners[relation.inverse] = f"the inverse of {relation.name}"


def _read_lens(
    name: str,
    node: Any,
    path: str,
    problems: Problems,
    kinds: dict[str, Kind],
    traits: dict[str, Trait],
    relations: dict[str, Relation],
) -> Lens:
    problems.name(path, name, LOWER_NAME, "a lens")
    members = Members(node, path, problems, _LENS)
    relation_names = set(relations) | {r.inverse for r in relations.values() if r.inverse}
    for member, known, what in (
        ("kinds", kinds, "Kind"),
        ("traits", traits, "Trait"),
        ("relations", relation_names, "Relation"),
    ):
        for index, item in enumerate(members.words(member)):
            if item not in known:
                problems.add(join(members.at(member), index), f"unknown {what} {item!r}")
    return Lens(
        name=name,
        description=members.text("description") or "",
        kinds=members.words("kinds"),
        traits=members.words("traits"),
        relations=members.words("relations"),
        depth=members.count("depth", minimum=0),
        budget_tokens=members.count("budget_tokens", minimum=1),
        include_schema=members.flag("include_schema", None),
        include_recent_changes=members.flag("include_recent_changes", None),
        include_lineage=members.flag("include_lineage", None),
    )


def _read_source(name: str, node: Any, path: str, problems: Problems, kinds: dict[str, Kind]) -> Source:
    problems.name(path, name, LOWER_NAME, "a Source")
    members = Members(node, path, problems, _SOURCE)
    declared = members.words("kinds")
    if not declared and members.ok:
        problems.add(members.at("kinds"), "required; name the Kinds this Source delivers")
    for index, kind in enumerate(declared):
        if kind not in kinds:
            problems.add(join(members.at("kinds"), index), f"unknown Kind {kind!r}")
    stale_after = members.text("stale_after", None, required=members.ok) or ""
    seconds = 0.0
    if stale_after:
        try:
            seconds = parse_duration(stale_after)
        except ValueError as exc:
            problems.add(members.at("stale_after"), str(exc))
    return Source(
        name=name,
        kinds=declared,
        stale_after=stale_after,
        stale_after_s=seconds,
        description=members.text("description") or "",
    )


def schema_document(schema: DomainSchema) -> dict[str, Any]:
    """The normalised document of `schema` (JSON-serialisable; loading it gives an equal schema)."""
    return {
        "description": schema.description,
        "kinds": {
            kind.name: {
                "description": kind.description,
                "key": list(kind.key),
                "title": kind.title,
                "aliases": list(kind.aliases),
                "implements": list(kind.implements),
                "stewards": list(kind.stewards),
                "attributes": attributes_document(kind.attributes, derivable=True),
            }
            for kind in schema.kinds.values()
        },
        "relations": {
            relation.name: {
                "from": relation.from_kind,
                "to": relation.to_kind,
                "inverse": relation.inverse,
                "cardinality": relation.cardinality,
                "description": relation.description,
                "required_from": relation.required_from,
                "attributes": attributes_document(relation.attributes),
            }
            for relation in schema.relations.values()
        },
        "traits": {
            trait.name: {
                "description": trait.description,
                "attributes": attributes_document(trait.attributes),
            }
            for trait in schema.traits.values()
        },
        "lenses": {lens.name: _lens_document(lens) for lens in schema.lenses.values()},
        "operations": {
            operation.name: operation_document(operation) for operation in schema.operations.values()
        },
        "sources": {
            source.name: {
                "description": source.description,
                "kinds": list(source.kinds),
                "stale_after": source.stale_after,
            }
            for source in schema.sources.values()
        },
    }


def _lens_document(lens: Lens) -> dict[str, Any]:
    document = dataclasses.asdict(lens)
    del document["name"]
    return {member: list(value) if isinstance(value, tuple) else value for member, value in document.items()}
