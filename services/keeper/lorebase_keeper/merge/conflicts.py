"""The Conflicts of a merged state beyond its Attributes: a Link whose end Record the other side
deleted (`link_end_deleted`), a unique value another Record holds (`unique_taken`: on the target,
or given to two Records by the merge) and a required value a changed Record is left without
(`required_missing`), each under the schema the merge commits under.

Each is looked for after the three-way merge of the Attributes (three_way_merge.py). A Conflict
resolved earlier (same fingerprint) applies its resolution to the merged state; any other is
returned, and stops the merge.
"""

from __future__ import annotations

from typing import Any

from lorebase.canonical import canonical_json
from lorebase_keeper.domains import Domain
from lorebase_keeper.merge.attempt import Found, MergeRequest
from lorebase_keeper.merge.base import Ref, Side, current_values
from lorebase_keeper.merge.provenance import via_note
from lorebase_keeper.writes import BranchView, link_key


async def link_end_conflicts(
    view: BranchView,
    s_side: Side,
    t_side: Side,
    results: dict[Ref, dict[str, Any] | None],
    request: MergeRequest,
) -> list[Found]:
    """Links of the merged state whose end Record the other side deleted."""
    found: list[Found] = []
    schema = request.domain.schema
    deleted = {
        (name, key) for (entity, name, key), after in results.items() if entity == "record" and after is None
    }
    deleted |= {
        (ref[1], ref[2])
        for ref in t_side.rows
        if ref[0] == "record" and t_side.final(ref) is None and ref not in s_side.rows
    }
    if not deleted:
        return found

    async def keep_ends(kind_keys: list[tuple[str, str]]) -> None:
        """A Link kept keeps its ends: an end the source deleted stays as the target has it, an end
        the target deleted comes back as it was before."""
        for kind, key in kind_keys:
            ref = ("record", kind, key)
            if (kind, key) not in deleted:
                continue
            if ref in s_side.rows:
                results[ref] = await current_values(view, ref)
            elif ref in t_side.rows:
                results[ref] = t_side.rows[ref][-1].before

    for (entity, name, key), after in sorted(results.items()):
        if entity != "link" or after is None:
            continue
        relation = schema.relations.get(name)
        if relation is None:
            continue
        from_key, _, to_key = key.partition("->")
        if (relation.from_kind, from_key) in deleted or (relation.to_kind, to_key) in deleted:
            conflict = Found("link_end_deleted", "link", name, key, None, None, after)
            if conflict.fingerprint in request.resolutions:
                if request.resolutions[conflict.fingerprint]["choice"] == "ours":
                    results[(entity, name, key)] = await current_values(view, (entity, name, key))
                else:
                    await keep_ends([(relation.from_kind, from_key), (relation.to_kind, to_key)])
                continue
            found.append(conflict)
    # Links the target holds to Records the source deleted.
    for kind, key in sorted(deleted):
        if ("record", kind, key) not in s_side.rows or s_side.final(("record", kind, key)) is not None:
            continue
        for relation in schema.relations.values():
            ends = []
            if relation.from_kind == kind:
                ends += await view.links_of(relation.name, from_keys=[key])
            if relation.to_kind == kind:
                ends += await view.links_of(relation.name, to_keys=[key])
            for link in ends:
                ref = ("link", relation.name, link_key(link.from_key, link.to_key))
                if ref in results:
                    continue
                conflict = Found(
                    "link_end_deleted", "link", relation.name, ref[2], None, dict(link.values), None
                )
                choice = request.resolutions.get(conflict.fingerprint, {}).get("choice")
                if choice == "theirs":
                    results[ref] = None
                elif choice == "ours":
                    await keep_ends([(kind, key)])
                else:
                    found.append(conflict)
    return found


class _Given:
    """The values of a unique Attribute the merged state gives Records the merge changed, indexed
    (Kind, Attribute) -> value -> keys, kept up to date as resolutions change them."""

    def __init__(self, results: dict[Ref, dict[str, Any] | None]) -> None:
        self._results = results
        self._index: dict[tuple[str, str], dict[bytes, set[str]]] = {}

    def holders(self, kind: str, attribute: str, value: Any) -> set[str]:
        index = self._index.get((kind, attribute))
        if index is None:
            index = self._index[(kind, attribute)] = {}
            for (entity, name, key), merged in self._results.items():
                if entity == "record" and name == kind and merged and merged.get(attribute) is not None:
                    index.setdefault(canonical_json(merged[attribute]), set()).add(key)
        return index.get(canonical_json(value), set())

    def moved(self, kind: str, attribute: str, key: str, old: Any, new: Any) -> None:
        index = self._index.get((kind, attribute))
        if index is None:
            return
        if old is not None:
            index.get(canonical_json(old), set()).discard(key)
        if new is not None:
            index.setdefault(canonical_json(new), set()).add(key)


async def _holders(
    view: BranchView,
    results: dict[Ref, dict[str, Any] | None],
    given: _Given,
    ref: Ref,
    attribute: str,
    value: Any,
) -> list[str]:
    """The other Records of the merged state that hold `value` of a unique Attribute: on the target
    and not changed by the merge, or given it by the merge (two Records the source set it on)."""
    _, name, key = ref
    others = set()
    for other in (await view.keys_with_value(name, attribute, [value])).get(value, []):
        if other == key:
            continue
        merged = results.get(("record", name, other), ...)
        if merged is not ... and (merged is None or merged.get(attribute) != value):
            continue
        others.add(other)
    others |= given.holders(name, attribute, value) - {key}
    return sorted(others)


async def unique_value_conflicts(
    view: BranchView,
    domain: Domain,
    results: dict[Ref, dict[str, Any] | None],
    taken: dict[Ref, dict[str, dict[str, Any]]],
    request: MergeRequest,
) -> list[Found]:
    """A unique value the source set that another Record of the merged state holds. Resolutions
    apply in a first pass, so resolving one of two Records given the same value frees the other
    whichever comes first."""
    found: list[Found] = []
    given = _Given(results)
    for final in (False, True):
        found = []
        for ref, notes in sorted(taken.items()):
            entity, name, key = ref
            after = results.get(ref)
            if entity != "record" or after is None:
                continue
            kind = domain.schema.kinds.get(name)
            if kind is None:
                continue
            for attribute in sorted(notes):
                spec = kind.attributes.get(attribute)
                value = after.get(attribute)
                if spec is None or not spec.unique or value is None:
                    continue
                others = await _holders(view, results, given, ref, attribute, value)
                if not others:
                    continue
                conflict = Found("unique_taken", "record", name, key, attribute, others, value)
                resolution = request.resolutions.get(conflict.fingerprint)
                for _ in range(10):  # a value chosen may be held elsewhere too: a Conflict of its own
                    if resolution is None or resolution["choice"] != "value":
                        break
                    given.moved(name, attribute, key, value, resolution.get("value"))
                    value = after[attribute] = resolution.get("value")
                    others = (
                        await _holders(view, results, given, ref, attribute, value)
                        if value is not None
                        else []
                    )
                    if not others:
                        break
                    conflict = Found("unique_taken", "record", name, key, attribute, others, value)
                    resolution = request.resolutions.get(conflict.fingerprint)
                if resolution is None or (resolution["choice"] == "value" and others):
                    if final:
                        found.append(conflict)
                elif resolution["choice"] == "ours":
                    current = await current_values(view, ref)
                    kept = None if current is None else current.get(attribute)
                    given.moved(name, attribute, key, after.get(attribute), kept)
                    if kept is None:
                        after.pop(attribute, None)
                    else:
                        after[attribute] = kept
                    notes.pop(attribute, None)
    return found


async def required_value_conflicts(
    view: BranchView,
    domain: Domain,
    results: dict[Ref, dict[str, Any] | None],
    taken: dict[Ref, dict[str, dict[str, Any]]],
    request: MergeRequest,
) -> list[Found]:
    """A required Attribute the merged state leaves without a value on a Record the source changed
    (it cleared one the target's schema requires): `required_missing`, resolved with `ours` (the
    target's value, when it has one) or a `value`."""
    found: list[Found] = []
    for ref in sorted(taken):
        entity, name, key = ref
        after = results.get(ref)
        kind = domain.schema.kinds.get(name)
        if entity != "record" or after is None or kind is None:
            continue
        for attribute, spec in sorted(kind.attributes.items()):
            if not spec.required or spec.derived is not None or after.get(attribute) is not None:
                continue
            current = await current_values(view, ref)
            ours = None if current is None else current.get(attribute)
            conflict = Found("required_missing", "record", name, key, attribute, ours, None)
            resolution = request.resolutions.get(conflict.fingerprint) or {}
            value = ours if resolution.get("choice") == "ours" else resolution.get("value")
            if resolution.get("choice") not in ("ours", "value") or value is None:
                found.append(conflict)
                continue
            after[attribute] = value
            taken[ref][attribute] = via_note(request, resolution)
    return found


__all__ = ["link_end_conflicts", "required_value_conflicts", "unique_value_conflicts"]
