"""POST /context: a token-budgeted context pack (seed section 1, "Context packs" and "Lenses and Traits").

One seed selector (refs, query or search) picks the seed Records; the pack adds their neighbourhood
(depth, Relations, the Kinds of a lens or of Traits), the Links grouped by Relation, the schema of
what is in it, recent changes and lineage, then fits a token budget (budget.py). Request
members win over the lens's, the lens's over the settings; a lens is not a permission. The same
request at the same Revision answers the same bytes; packs are cached per Revision in keeper.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import orjson

from lorebase.canonical import canonical_json, sha256_hex
from lorebase.problems import Problem
from lorebase_keeper.access import Access, readable, readable_kind
from lorebase_keeper.context.budget import SECTIONS, Budget, fit, pack_markdown, trimmed_whole
from lorebase_keeper.context.sections import assemble, recent_changes, recent_changes_max
from lorebase_keeper.domains import Domain
from lorebase_keeper.reads import (
    Caps,
    Ref,
    check_query_members,
    load_records,
    parse_ref,
    query_in,
    read_point,
    search_refs,
    steps_for,
    walk,
)
from lorebase_keeper.runtime import Runtime
from lorebase_store import Txn

MEMBERS = {
    "refs",
    "query",
    "search",
    "branch",
    "budget_tokens",
    "depth",
    "relations",
    "traits",
    "lens",
    "include_schema",
    "include_recent_changes",
    "include_lineage",
    "since",
    "format",
}
OPTIONAL = ("include_schema", "include_recent_changes", "include_lineage")
_CACHE: OrderedDict[str, tuple[str, bytes, str]] = OrderedDict()
_CACHE_SIZE = 256


@dataclass(frozen=True)
class Pack:
    body: bytes
    content_type: str
    revision: str
    etag: str


def _problem(path: str, message: str, *, code: str = "validation-failed", status: int = 422) -> Problem:
    return Problem(status, code, message, issues=[{"path": path, "rule": code, "message": message}])


def _check(body: dict[str, Any]) -> None:
    unknown = sorted(set(body) - MEMBERS)
    if unknown:
        raise _problem(
            unknown[0],
            f"unknown member(s) {', '.join(unknown)}; a context pack takes {', '.join(sorted(MEMBERS))}",
        )
    selectors = [s for s in ("refs", "query", "search") if body.get(s) is not None]
    if len(selectors) != 1:
        raise _problem("refs", "give exactly one seed selector: refs, query or search")
    for name in ("budget_tokens", "depth"):
        value = body.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise _problem(name, f"{name} is a whole number from 0")
    for name in OPTIONAL:
        if body.get(name) is not None and not isinstance(body[name], bool):
            raise _problem(name, f"{name} is true or false")
    for name in ("relations", "traits"):
        value = body.get(name)
        if value is not None and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise _problem(name, f"{name} is a list of names")
    for name in ("branch", "lens", "since", "search"):
        if body.get(name) is not None and not isinstance(body[name], str):
            raise _problem(name, f"{name} is a string")
    if body.get("format", "json") not in ("json", "markdown"):
        raise _problem("format", "format is json or markdown")
    if body.get("query") is not None and not isinstance(body["query"], dict):
        raise _problem("query", "query is a query document: {kind or trait, where, order_by}")


async def context_pack(rt: Runtime, access: Access, domain: Domain, body: dict[str, Any]) -> Pack:
    _check(body)
    if body.get("query") is not None:
        check_query_members(body["query"], "query.")
    return await rt.db.read("context", _build, rt, access, domain, body)


async def _build(txn: Txn, rt: Runtime, access: Access, domain: Domain, body: dict[str, Any]) -> Pack:
    s = domain.settings
    point = await read_point(txn, domain, body.get("branch"), None)
    branch = point.branch.name
    access.require("data.read", branch)
    view = readable(access, domain, branch)
    kinds_readable, relations_readable = view.kinds, view.relations
    format_ = body.get("format", "json")
    # The pack depends on what the caller may read: its Kinds and its clearances.
    who = {
        "principal": access.principal.id,
        "kinds": list(kinds_readable),
        "permissions": sorted(view.permissions),
    }
    digest = sha256_hex(canonical_json({"request": body, **who}))[:16]
    etag = f'"{point.revision or "empty"}.{digest}"'
    cache_key = f"{domain.id}:{branch}:{etag}"
    if cache_key in _CACHE:
        _CACHE.move_to_end(cache_key)
        cached = _CACHE[cache_key]
        return Pack(cached[1], cached[0], cached[2], etag)

    capped = False
    lens = None
    lens_kinds: set[str] | None = None
    if body.get("lens") is not None:
        lens = domain.schema.lenses.get(body["lens"])
        if lens is not None:
            lens_kinds = {k for k in lens.kinds if k in kinds_readable}
            for trait in lens.traits:
                lens_kinds |= {k for k in domain.schema.kinds_implementing(trait) if k in kinds_readable}
        if lens is None or not lens_kinds:
            raise Problem(
                422,
                "lens_unknown",
                f"unknown lens {body['lens']!r}; GET /schema lists the lenses",
                lens=body["lens"],
            )
    kinds_filter = lens_kinds
    if body.get("traits") is not None:
        kinds_filter = set()
        for index, trait in enumerate(body["traits"]):
            if trait not in domain.schema.traits or not any(
                k in kinds_readable for k in domain.schema.kinds_implementing(trait)
            ):
                raise _problem(f"traits[{index}]", f"unknown Trait {trait!r}; GET /schema lists the Traits")
            kinds_filter |= {k for k in domain.schema.kinds_implementing(trait) if k in kinds_readable}

    def setting(name: str, lens_value: Any, default: Any) -> Any:
        if body.get(name) is not None:
            return body[name]
        return lens_value if lens_value is not None else default

    depth = setting("depth", lens.depth if lens else None, int(s.get("agents.context.default_depth", 1)))
    max_depth = int(s.get("agents.context.max_depth", 3))
    if depth > max_depth:
        depth, capped = max_depth, True
    limit = setting(
        "budget_tokens",
        lens.budget_tokens if lens else None,
        int(s.get("agents.context.default_budget_tokens", 4000)),
    )
    max_budget = int(s.get("agents.context.max_budget_tokens", 32000))
    if limit > max_budget:
        limit, capped = max_budget, True
    lens_includes = (
        (lens.include_schema, lens.include_recent_changes, lens.include_lineage) if lens else (None,) * 3
    )
    included = [
        name
        for name, lens_value in zip(OPTIONAL, lens_includes, strict=True)
        if setting(name, lens_value, True)
    ]

    if body.get("relations") is not None:
        steps = steps_for(access, domain, branch, body["relations"])
    elif lens is not None:
        # A lens Relation is followed in both directions; unreadable ones are dropped from the lens.
        wanted = set()
        for name in lens.relations:
            named = domain.schema.relation_named(name)
            if named is not None and named[0].name in relations_readable:
                wanted.add(named[0].name)
        steps = [step for step in steps_for(access, domain, branch, None) if step.relation in wanted]
    else:
        steps = steps_for(access, domain, branch, None)

    seeds = await _seeds(
        txn, access, domain, point, body, kinds_filter, int(s.get("agents.context.max_seeds", 50))
    )
    caps = Caps.of(
        domain,
        max_records=len(seeds) + int(s.get("agents.context.max_neighbors", 200)),
        max_links=int(s.get("agents.context.max_links", 500)),
    )
    result = await walk(txn, domain, point, seeds, depth=depth, steps=steps, caps=caps, kinds=kinds_filter)
    capped |= result.capped
    values = await load_records(txn, domain, point, list(result.depth_of))
    names = ["seeds", "neighbors", "links"] + [
        n for n in ("schema", "recent_changes", "lineage") if f"include_{n}" in included
    ]
    pack = await assemble(
        txn,
        access,
        domain,
        point,
        seeds,
        result.depth_of,
        result.links,
        values,
        body,
        steps,
        lineage="lineage" in names,
    )
    budget = Budget(limit, float(s.get("agents.context.chars_per_token", 4.0)), format_, capped=capped)
    trim_order = list(s.get("agents.context.trim_order") or [])
    pack["recent_changes"] = []
    omitted: dict[str, int] = {}
    if "recent_changes" in names:
        refs = list(result.depth_of)
        if (
            trimmed_whole(pack, budget, names, trim_order, "recent_changes")
            and not body.get("since")
            and (len(refs) >= recent_changes_max(domain))
        ):
            # Every Record has at least its creation on the history: the section would hold
            # exactly recent_changes_max entries, all trimmed. Skip reading them.
            omitted["recent_changes"] = recent_changes_max(domain)
        else:
            pack["recent_changes"] = await recent_changes(txn, domain, point, refs, body, access)
    fit(pack, budget, names, trim_order, omitted=omitted)
    if format_ == "markdown":
        text = pack_markdown(pack, names, budget).encode()
        content_type = "text/markdown; charset=utf-8"
    else:
        document: dict[str, Any] = {
            "domain": domain.name,
            "branch": branch,
            "revision": point.revision,
            "etag": etag,
        }
        document.update({name: pack[name] for name in SECTIONS if name in names})
        document["budget"] = budget.document()
        text = orjson.dumps(document)
        content_type = "application/json"
    _CACHE[cache_key] = (content_type, text, point.revision or "")
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return Pack(text, content_type, point.revision or "", etag)


async def _seeds(
    txn: Txn,
    access: Access,
    domain: Domain,
    point: Any,
    body: dict[str, Any],
    kinds_filter: set[str] | None,
    max_seeds: int,
) -> list[Ref]:
    branch = point.branch.name
    if body.get("refs") is not None:
        raw = body["refs"]
        if not isinstance(raw, list) or not raw or len(raw) > max_seeds:
            raise _problem(
                "refs", f"refs is a list of 1 to {max_seeds} Record references (agents.context.max_seeds)"
            )
        refs = list(dict.fromkeys(parse_ref(v, f"refs[{i}]") for i, v in enumerate(raw)))
        for kind, _ in refs:
            readable_kind(access, domain, branch, kind)
        found = await load_records(txn, domain, point, refs)
        for kind, key in refs:
            if (kind, key) not in found:
                raise Problem(404, "not-found", f"no {kind} with key {key!r} on branch {branch!r}")
        return refs  # refs seeds are kept whatever their Kind
    if body.get("query") is not None:
        query = {**body["query"], "limit": max_seeds, "branch": branch, "coverage": False}
        query.pop("at", None)
        answer = await query_in(txn, access, domain, query)
        refs = [(r["kind"], r["key"]) for r in answer.get("records", [])]
    else:
        kinds = [
            k for k in readable(access, domain, branch).kinds if kinds_filter is None or k in kinds_filter
        ]
        text_ = body["search"].strip()
        if not text_:
            raise _problem("search", "search needs some text")
        refs = [ref for ref, _ in await search_refs(txn, access, domain, point, text_, kinds, max_seeds)]
    return [ref for ref in refs if kinds_filter is None or ref[0] in kinds_filter]


__all__ = ["Pack", "context_pack"]
