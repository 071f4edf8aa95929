"""Checking the materialised head: `verify(derived=True)` recomputes every derived value of a branch
from the stored Records and Links and lists the ones that differ from what is stored.

The health report only counts missing derived values; this is the thorough (and full-scan) check
behind it, for operators and tests. Derivations are evaluated by the loaded schema
(lorebase.schema.derivations); the store only reads the rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lorebase_store.records import RecordsTxn

if TYPE_CHECKING:
    from lorebase.schema import DomainSchema


@dataclass(frozen=True)
class DerivedMismatch:
    kind: str
    key: str
    attribute: str
    stored: Any  # None: missing
    computed: Any  # None: the Derivation gives no value


async def verify(
    txn: RecordsTxn, domain_id: int, branch: str, schema: DomainSchema, *, derived: bool = True
) -> list[DerivedMismatch]:
    """The derived values of `branch` that differ from what their Derivations compute now."""
    if not derived:
        return []
    records: dict[str, dict[str, dict[str, Any]]] = {}
    pairs: dict[str, list[tuple[str, str]]] = {}

    async def values_of(kind: str) -> dict[str, dict[str, Any]]:
        if kind not in records:
            records[kind] = dict(await txn.records_of_kind(domain_id, branch, kind))
        return records[kind]

    mismatches: list[DerivedMismatch] = []
    for kind in schema.kinds.values():
        if not kind.derivations:
            continue
        own = await values_of(kind.name)
        around: dict[str, dict[str, list[dict[str, Any]]]] = {}  # aggregate name -> key -> neighbours
        for derivation in kind.derivations.values():
            for aggregate in derivation.aggregates:
                if aggregate.name in around:
                    continue
                if aggregate.relation not in pairs:
                    pairs[aggregate.relation] = await txn.link_pairs(domain_id, branch, aggregate.relation)
                others = await values_of(aggregate.neighbour)
                by_anchor: dict[str, list[dict[str, Any]]] = {}
                for from_key, to_key in pairs[aggregate.relation]:
                    anchor, other = (
                        (from_key, to_key) if aggregate.direction == "forward" else (to_key, from_key)
                    )
                    if other in others:
                        by_anchor.setdefault(anchor, []).append(others[other])
                around[aggregate.name] = by_anchor
        for key, values in own.items():
            neighbours = {name: by_anchor.get(key, []) for name, by_anchor in around.items()}
            for name, derivation in kind.derivations.items():
                computed = derivation.evaluate(values, neighbours)
                if values.get(name) != computed:
                    mismatches.append(DerivedMismatch(kind.name, key, name, values.get(name), computed))
    return mismatches


__all__ = ["DerivedMismatch", "verify"]
