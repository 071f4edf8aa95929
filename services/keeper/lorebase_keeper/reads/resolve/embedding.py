"""The embedding level of resolve: only when no other level matched and the request carries a
query_vector, the indexed values of the Records nearest to it."""

from __future__ import annotations

from typing import Any

from lorebase_keeper.access import Access
from lorebase_keeper.domains import Domain
from lorebase_keeper.reads.resolve.ground import candidate
from lorebase_keeper.reads.resolve.vocabulary import Term, vocabulary
from lorebase_store import Txn


async def nearest_values(
    txn: Txn, access: Access, domain: Domain, branch: str, kinds: list[str], vector: list[float], matched: str
) -> list[dict[str, Any]]:
    """The indexed values of the Records nearest to the query vector, as candidates."""
    limit = domain.settings.model.read.resolve.nearest_records
    nearest = await txn.nearest(domain.id, branch, kinds, vector, limit=limit)
    if not nearest:
        return []
    vocab = await vocabulary(txn, access, domain, branch, sorted({kind for kind, _, _ in nearest}))
    indexed = {(t.kind, t.attribute) for terms in vocab.exact.values() for t in terms if t.target == "value"}
    by_kind: dict[str, list[str]] = {}
    for kind, key, _ in nearest:
        by_kind.setdefault(kind, []).append(key)
    values: dict[tuple[str, str], dict[str, Any]] = {}
    for kind, keys in by_kind.items():
        for key, row in (await txn.get_records(domain.id, branch, kind, keys)).items():
            values[(kind, key)] = row.values
    merged: dict[tuple[str, str], tuple[Term, float]] = {}
    for kind, key, distance in nearest:
        attributes = domain.schema.kinds[kind].attributes
        for name, value in values.get((kind, key), {}).items():
            if (kind, name) not in indexed:
                continue
            ident = (kind, name)
            known, best = merged.get(ident, (Term("value", kind, name, attributes[name].type_name, {}), 0.0))
            known.values[str(value)] = known.values.get(str(value), 0) + 1
            merged[ident] = (known, max(best, 1 - distance))
    return [candidate(term, "embedding", score, matched) for term, score in merged.values()]


__all__ = ["nearest_values"]
