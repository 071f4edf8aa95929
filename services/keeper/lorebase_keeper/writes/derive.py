"""Materialising derived Attributes on commit: the Records a change set affects get their Derivations
recomputed, and the new values become ordinary changed Attributes of the Revision.

A Record is recomputed when
* it is created (every Derivation), modified (the Derivations reading a changed Attribute), or read
  by the change set while a derived value is missing (so a missing value heals on the next write);
* a Link is created or deleted on a Relation one of its Derivations aggregates over (the Record at
  that end);
* a neighbour, through such a Relation, changed an Attribute the aggregate reads.
Deleted Records are not recomputed. Reads are batched: one `links_of` per Relation and chunk of
Records, one read per Kind of neighbours; a pure `count(rel)` reads Links only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from lorebase.schema import DomainSchema
from lorebase.schema.derivations import Aggregate
from lorebase_keeper.writes.states import ChangeState

_CHUNK = 10000

Ref = tuple[str, str]  # (Kind, key)


@dataclass(frozen=True)
class _Use:
    """One aggregate of one Derivation: `attribute` of `kind` aggregates over `aggregate`."""

    kind: str
    attribute: str
    aggregate: Aggregate


def _uses(schema: DomainSchema) -> list[_Use]:
    return [
        _Use(kind.name, name, aggregate)
        for kind in schema.kinds.values()
        for name, derivation in kind.derivations.items()
        for aggregate in derivation.aggregates
    ]


def _changed(before: dict[str, Any], after: dict[str, Any]) -> set[str]:
    return {n for n in set(before) | set(after) if before.get(n) != after.get(n)}


async def materialize(changes: ChangeState) -> None:
    """Recompute the derived Attributes of every Record `changes` affects, in place."""
    schema = changes.schema
    if not any(kind.derivations for kind in schema.kinds.values()):
        return
    uses = _uses(schema)
    wanted: dict[Ref, set[str]] = {}
    await _own_changes(changes, wanted)
    await _link_changes(changes, uses, wanted)
    await _neighbour_changes(changes, uses, wanted)
    by_kind: dict[str, list[str]] = {}
    for kind, key in wanted:
        by_kind.setdefault(kind, []).append(key)
    for kind_name, keys in by_kind.items():
        await changes.preload_records(kind_name, keys)
        live = [k for k in keys if changes.records[(kind_name, k)].values is not None]
        await _recompute(changes, kind_name, {k: wanted[(kind_name, k)] for k in live})


async def _own_changes(changes: ChangeState, wanted: dict[Ref, set[str]]) -> None:
    for state in changes.records.values():
        await changes.pacer.step()
        kind = changes.schema.kinds[state.kind]
        if not kind.derivations or state.values is None:
            continue
        if state.before is None:
            wanted.setdefault((state.kind, state.key), set()).update(kind.derivations)
            continue
        before = state.before.values
        changed = _changed(before, state.values) if state.values != before else set()
        names = {
            name
            for name, derivation in kind.derivations.items()
            if name not in before
            or (changed and (not derivation.aggregates or changed & set(derivation.reads)))
        }
        if names:
            wanted.setdefault((state.kind, state.key), set()).update(names)


async def _link_changes(changes: ChangeState, uses: list[_Use], wanted: dict[Ref, set[str]]) -> None:
    by_relation: dict[str, list[_Use]] = {}
    for use in uses:
        by_relation.setdefault(use.aggregate.relation, []).append(use)
    for link in changes.links.values():
        await changes.pacer.step()
        if (link.before is None) == (link.values is None):
            continue  # neither created nor deleted: what an aggregate reads did not change
        for use in by_relation.get(link.relation, []):
            anchor = link.from_key if use.aggregate.direction == "forward" else link.to_key
            wanted.setdefault((use.kind, anchor), set()).add(use.attribute)


async def _neighbour_changes(changes: ChangeState, uses: list[_Use], wanted: dict[Ref, set[str]]) -> None:
    modified: dict[str, list[tuple[str, set[str]]]] = {}
    for state in changes.records.values():
        await changes.pacer.step()
        if state.before is not None and state.values is not None and state.values != state.before.values:
            modified.setdefault(state.kind, []).append(
                (state.key, _changed(state.before.values, state.values))
            )
    for use in uses:
        aggregate = use.aggregate
        reads = set(aggregate.reads)
        keys = [key for key, changed in modified.get(aggregate.neighbour, []) if changed & reads]
        if not keys:
            continue
        forward = aggregate.direction == "forward"
        for chunk in _chunks(keys):
            rows = await changes.view.links_of(
                aggregate.relation, from_keys=None if forward else chunk, to_keys=chunk if forward else None
            )
            for row in rows:
                anchor = row.from_key if forward else row.to_key
                wanted.setdefault((use.kind, anchor), set()).add(use.attribute)


async def _recompute(changes: ChangeState, kind_name: str, wanted: dict[str, set[str]]) -> None:
    kind = changes.schema.kinds[kind_name]
    # Per aggregate name (several Derivations may aggregate one Relation), what they read together
    # and the Records that need it.
    needed: dict[str, Aggregate] = {}
    anchors: dict[str, list[str]] = {}
    for key, names in wanted.items():
        for written in {a.name for n in names for a in kind.derivations[n].aggregates}:
            anchors.setdefault(written, []).append(key)
    for derivation in kind.derivations.values():
        for aggregate in derivation.aggregates:
            known = needed.get(aggregate.name)
            reads = tuple(sorted(set(aggregate.reads) | set(known.reads if known else ())))
            needed[aggregate.name] = replace(aggregate, reads=reads)
    neighbours: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for written, keys in anchors.items():
        neighbours[written] = await _neighbours(changes, needed[written], keys)
    for key, names in wanted.items():
        await changes.pacer.step()
        state = changes.records[(kind_name, key)]
        assert state.values is not None
        around = {name: rows.get(key, []) for name, rows in neighbours.items()}
        for name in sorted(names):
            value = kind.derivations[name].evaluate(state.values, around)
            if value is None:
                state.values.pop(name, None)
            else:
                state.values[name] = value


async def _neighbours(
    changes: ChangeState, aggregate: Aggregate, anchors: list[str]
) -> dict[str, list[dict[str, Any]]]:
    """Per anchor key, the values of its live neighbours through `aggregate` (stored and in flight)."""
    forward = aggregate.direction == "forward"
    pairs: dict[str, set[str]] = {}  # anchor -> neighbour keys
    for chunk in _chunks(anchors):
        rows = await changes.view.links_of(
            aggregate.relation, from_keys=chunk if forward else None, to_keys=None if forward else chunk
        )
        for row in rows:
            anchor, other = (row.from_key, row.to_key) if forward else (row.to_key, row.from_key)
            pairs.setdefault(anchor, set()).add(other)
    wanted = set(anchors)
    for link in changes.links.values():
        if link.relation != aggregate.relation:
            continue
        anchor, other = (link.from_key, link.to_key) if forward else (link.to_key, link.from_key)
        if anchor not in wanted:
            continue
        if link.values is None:
            pairs.get(anchor, set()).discard(other)
        else:
            pairs.setdefault(anchor, set()).add(other)
    if not aggregate.reads:  # count(rel): the Links are enough
        return {anchor: [{}] * len(others) for anchor, others in pairs.items()}
    values = await _values(changes, aggregate.neighbour, {k for others in pairs.values() for k in others})
    return {anchor: [values[k] for k in sorted(others) if k in values] for anchor, others in pairs.items()}


async def _values(changes: ChangeState, kind: str, keys: set[str]) -> dict[str, dict[str, Any]]:
    """The current values of Records of `kind`: the change set's state first, then the branch's."""
    found: dict[str, dict[str, Any]] = {}
    stored: list[str] = []
    for key in sorted(keys):
        state = changes.records.get((kind, key))
        if state is None:
            stored.append(key)
        elif state.values is not None:
            found[key] = state.values
    for chunk in _chunks(stored):
        for key, row in (await changes.view.get_records(kind, chunk)).items():
            found[key] = row.values
    return found


def _chunks(keys: Iterable[str]) -> Iterable[list[str]]:
    items = list(keys)
    for start in range(0, len(items), _CHUNK):
        yield items[start : start + _CHUNK]


__all__ = ["materialize"]
