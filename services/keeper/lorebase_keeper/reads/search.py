"""POST /search: Records by text, by Kind, Trait or lens (seed section 2).

Lexical: substring, PostgreSQL full-text ('simple' configuration) and trigram word similarity over
the values of each Kind's readable, non-sensitive string, text and enum Attributes, ranked by the
better of the full-text rank and the similarity, then Kind and key, so the order is stable.
A Trait stands for the Kinds implementing it that the caller may read; kinds and traits together
search the union; a lens supplies the Kinds only when the request names neither.
"""

from __future__ import annotations

from typing import Any

from lorebase.contract.reads import SearchBody
from lorebase.problems import Problem
from lorebase_keeper.access import Access, readable, readable_kind
from lorebase_keeper.domains import Domain
from lorebase_keeper.reads.embeddings import check_vector
from lorebase_keeper.reads.graph import Ref, load_records
from lorebase_keeper.reads.records import title_of
from lorebase_keeper.reads.snapshots import ReadPoint, read_point
from lorebase_keeper.runtime import Runtime
from lorebase_store import Txn

TEXTUAL = {"string", "text", "enum"}


def _problem(path: str, message: str, status: int = 422, code: str = "validation-failed") -> Problem:
    return Problem(status, code, message, issues=[{"path": path, "rule": code, "message": message}])


def search_kinds(
    access: Access,
    domain: Domain,
    branch: str,
    kinds: list[str] | None,
    traits: list[str] | None,
    lens: str | None,
) -> list[str]:
    """The readable Kinds a search covers (kinds and traits together; else the lens's; else all)."""
    readable_kinds = readable(access, domain, branch).kinds
    chosen: set[str] = set()
    for kind in kinds or []:
        chosen.add(readable_kind(access, domain, branch, kind).name)
    for index, trait in enumerate(traits or []):
        implementing = (
            [k for k in domain.schema.kinds_implementing(trait) if k in readable_kinds]
            if trait in domain.schema.traits
            else []
        )
        if not implementing:
            raise _problem(f"traits[{index}]", f"unknown Trait {trait!r}; GET /schema lists the Traits")
        chosen.update(implementing)
    if not kinds and not traits and lens is not None:
        found = domain.schema.lenses.get(lens)
        lens_kinds = set()
        if found is not None:
            lens_kinds = {k for k in found.kinds if k in readable_kinds}
            for trait in found.traits:
                lens_kinds |= {k for k in domain.schema.kinds_implementing(trait) if k in readable_kinds}
        if not lens_kinds:
            raise Problem(
                422, "lens_unknown", f"unknown lens {lens!r}; GET /schema lists the lenses", lens=lens
            )
        chosen = lens_kinds
    if not kinds and not traits and lens is None:
        chosen = set(readable_kinds)
    return [k for k in domain.schema.kinds if k in chosen]


async def search_refs(
    txn: Txn, access: Access, domain: Domain, point: ReadPoint, text_: str, kinds: list[str], limit: int
) -> list[tuple[Ref, float]]:
    view = readable(access, domain, point.branch.name)
    fields = {
        kind: [
            name
            for name, attr in view.attributes(kind).items()
            if attr.type in TEXTUAL and not attr.sensitivity
        ]
        for kind in kinds
    }
    found = await txn.search_records(
        domain.id, point.branch.name, fields, text_, limit=limit, snapshot=point.snapshot
    )
    return [((kind, key), score) for kind, key, score in found]


async def search(rt: Runtime, access: Access, domain: Domain, request: SearchBody) -> dict[str, Any]:
    """Records by text or by nearness to `query_vector` (with both: the nearest that match the text)."""
    text_ = request.text
    vector = check_vector(request.query_vector, "query_vector") if request.query_vector is not None else None
    if vector is None and (text_ is None or not text_.strip()):
        raise _problem("text", "text is required (or a query_vector): the words to look for")
    page = domain.settings.model.read.search
    limit = page.default_limit if request.limit is None else request.limit
    if not 1 <= limit <= page.max_limit:
        raise _problem("limit", f"limit is a whole number from 1 to {page.max_limit} (read.search.max_limit)")

    async def read(txn: Txn) -> dict[str, Any]:
        point = await read_point(txn, domain, request.branch, None)
        kinds = search_kinds(access, domain, point.branch.name, request.kinds, request.traits, request.lens)
        if vector is None:
            found = await search_refs(txn, access, domain, point, (text_ or "").strip(), kinds, limit)
        else:
            # nearest first; with text too, only the nearest that also match the text
            wide = limit * 20 if text_ else limit
            nearest = await txn.nearest(domain.id, point.branch.name, kinds, vector, limit=wide)
            found = [((kind, key), round(1 - distance, 6)) for kind, key, distance in nearest]
            if text_ and text_.strip():
                lexical = await search_refs(txn, access, domain, point, text_.strip(), kinds, wide)
                matching = {ref for ref, _ in lexical}
                found = [item for item in found if item[0] in matching][:limit]
        values = await load_records(txn, domain, point, [ref for ref, _ in found])
        view = readable(access, domain, point.branch.name)
        results = []
        for (kind_name, key), score in found:
            kind = domain.schema.kinds[kind_name]
            shown, _ = view.values(kind_name, values.get((kind_name, key), {}))
            entry: dict[str, Any] = {
                "ref": f"{kind_name}/{key}",
                "kind": kind_name,
                "key": key,
                "title": title_of(kind, shown),
                "score": score,
            }
            if request.values:
                entry["values"] = shown
            results.append(entry)
        return {
            "domain": domain.name,
            "branch": point.branch.name,
            "revision": point.revision,
            "text": text_,
            "kinds": kinds,
            "results": results,
            "count": len(results),
        }

    return await rt.db.read("search", read)


__all__ = ["search", "search_kinds", "search_refs"]
