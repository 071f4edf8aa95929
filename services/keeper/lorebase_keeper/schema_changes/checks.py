"""The checks of a migration over a whole Kind or Relation, beyond each Record's and Link's own
values: a unique value held by more than one Record of its Kind (`check_unique`, over the values
held in `Migration.unique`; the catch-up checks those written meanwhile against them), and a changed
Relation's cardinality and `required_from` over all of its Links (`check_shape`). Each finding is a
violation naming the Record; there is no value to clear.
"""

from __future__ import annotations

from typing import Any

from lorebase.schema import Relation
from lorebase_keeper.schema_changes.outcome import Migration
from lorebase_keeper.writes import BranchView


async def check_shape(
    migration: Migration, view: BranchView, relation: Relation, pairs: list[tuple[str, str]]
) -> None:
    """A violation per Record with more Links than the Relation's cardinality allows, and per `from`
    Record without one when it is required_from (no value to clear: fix the Links first)."""
    many_from = relation.cardinality in ("many_to_one", "one_to_one")
    many_to = relation.cardinality in ("one_to_many", "one_to_one")
    ends = (
        (0, relation.from_kind, relation.to_kind, many_from),
        (1, relation.to_kind, relation.from_kind, many_to),
    )
    for index, kind, other, single in ends:
        if not single:
            continue
        counts: dict[str, int] = {}
        for pair in pairs:
            await migration.changes.pacer.step()
            counts[pair[index]] = counts.get(pair[index], 0) + 1
        for key, count in sorted(counts.items()):
            if count > 1:
                migration.violate(
                    record=f"{kind}/{key}",
                    path=f"{kind}/{key}.{relation.name}",
                    rule="link.cardinality",
                    message=f"{relation.name} becomes {relation.cardinality}: {key} may link to one "
                    f"{other} only and has {count} Links; delete the others first",
                )
    if relation.required_from:
        linked = {from_key for from_key, _ in pairs}
        for key in await view.keys_of_kind(relation.from_kind):
            if key not in linked:
                migration.violate(
                    record=f"{relation.from_kind}/{key}",
                    path=f"{relation.from_kind}/{key}.{relation.name}",
                    rule="link.required",
                    message=f"{relation.name} becomes required_from: {key} has no such Link; add one first",
                )


async def check_unique(
    migration: Migration,
    held: dict[str, dict[str, dict[Any, list[str]]]],
    only: dict[str, set[str]] | None = None,
) -> None:
    """A violation for each Record whose unique value another Record of its Kind holds too, by
    `held` (Kind -> Attribute -> value -> keys); with `only`, for those keys of each Kind alone."""
    for kind_name, attributes in held.items():
        wanted = None if only is None else only.get(kind_name, set())
        for name, holders in attributes.items():
            for value, held_by in holders.items():
                await migration.changes.pacer.step()
                if len(held_by) < 2:
                    continue
                for key in held_by:
                    if wanted is not None and key not in wanted:
                        continue
                    migration.violate(
                        record=f"{kind_name}/{key}",
                        path=f"{kind_name}/{key}.{name}",
                        rule="value.unique",
                        message=f"{name} must be unique on {kind_name}; {value!r} is also held by "
                        f"{', '.join(k for k in held_by if k != key)}",
                    )


__all__ = ["check_shape", "check_unique"]
