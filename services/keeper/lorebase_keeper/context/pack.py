"""POST /context: a token-budgeted context pack (seed section 1, "Context packs" and "Lenses and Traits").

One seed selector (refs, query or search) picks the seed Records; the pack adds their neighbourhood
(depth, Relations, the Kinds of a lens or of Traits), the Links grouped by Relation, the schema of
what is in it, recent changes and lineage, then fits a token budget (budget.py). Request
members win over the lens's, the lens's over the settings; a lens is not a permission. The same
request at the same Revision answers the same bytes; packs are kept per Revision in keeper's read cache
(lorebase_keeper.read_cache).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import msgspec
import orjson

from lorebase.canonical import canonical_json, sha256_hex
from lorebase.contract.reads import ContextBody
from lorebase.problems import Problem
from lorebase_keeper.access import Access, readable, readable_kind
from lorebase_keeper.context.budget import SECTIONS, Budget, fit, pack_markdown, trimmed_whole
from lorebase_keeper.context.sections import (
    assemble,
    far_values,
    lineage,
    lineage_count,
    pack_rows,
    recent_changes,
    recent_changes_max,
    show_far_values,
)
from lorebase_keeper.domains import Domain
from lorebase_keeper.reads import (
    Caps,
    Ref,
    Step,
    parse_ref,
    query_in,
    read_point,
    search_refs,
    steps_for,
    walk,
)
from lorebase_keeper.runtime import Runtime
from lorebase_store import Txn

OPTIONAL = ("include_schema", "include_recent_changes", "include_lineage")
# How many far neighbours of each Relation a pack's last hop reads whole: one per RANKED_CHARS
# characters of the budget (a far neighbour and its Link take 100 characters or more), at least
# RANKED_MIN. More only costs reads; fewer, a second read when the pack shows more of them.
RANKED_CHARS = 100
RANKED_MIN = 16


@dataclass(frozen=True)
class Pack:
    body: bytes
    content_type: str
    revision: str
    etag: str


def _problem(path: str, message: str, *, code: str = "validation-failed", status: int = 422) -> Problem:
    return Problem(status, code, message, issues=[{"path": path, "rule": code, "message": message}])


async def context_pack(rt: Runtime, access: Access, domain: Domain, request: ContextBody) -> Pack:
    """The pack `request` asks for (the model has checked its members): exactly one seed selector."""
    selectors = [s for s in (request.refs, request.query, request.search) if s is not None]
    if len(selectors) != 1:
        raise _problem("refs", "give exactly one seed selector: refs, query or search")
    return await rt.db.read("context", _build, rt, access, domain, request)


async def _build(txn: Txn, rt: Runtime, access: Access, domain: Domain, request: ContextBody) -> Pack:
    context = domain.settings.model.agents.context
    point = await read_point(txn, domain, request.branch, None)
    branch = point.branch.name
    view = readable(access, domain, branch)
    kinds_readable, relations_readable = view.kinds, view.relations
    format_ = request.format
    # The pack depends on what the caller may read: its Kinds and its clearances.
    who = {
        "principal": access.principal.id,
        "kinds": list(kinds_readable),
        "permissions": sorted(view.permissions),
    }
    digest = sha256_hex(canonical_json({"request": msgspec.to_builtins(request), **who}))[:16]
    etag = f'"{point.revision or "empty"}.{digest}"'
    cache_key = rt.read_cache.key(domain, branch, point.revision, access, ("context", etag))
    cached = rt.read_cache.get(cache_key, domain)
    if cached is not None:
        return Pack(cached[1], cached[0], cached[2], etag)

    capped = False
    lens = None
    lens_kinds: set[str] | None = None
    if request.lens is not None:
        lens = domain.schema.lenses.get(request.lens)
        if lens is not None:
            lens_kinds = {k for k in lens.kinds if k in kinds_readable}
            for trait in lens.traits:
                lens_kinds |= {k for k in domain.schema.kinds_implementing(trait) if k in kinds_readable}
        if lens is None or not lens_kinds:
            raise Problem(
                422,
                "lens_unknown",
                f"unknown lens {request.lens!r}; GET /schema lists the lenses",
                lens=request.lens,
            )
    kinds_filter = lens_kinds
    if request.traits is not None:
        kinds_filter = set()
        for index, trait in enumerate(request.traits):
            if trait not in domain.schema.traits or not any(
                k in kinds_readable for k in domain.schema.kinds_implementing(trait)
            ):
                raise _problem(f"traits[{index}]", f"unknown Trait {trait!r}; GET /schema lists the Traits")
            kinds_filter |= {k for k in domain.schema.kinds_implementing(trait) if k in kinds_readable}

    def setting(name: str, lens_value: Any, default: Any) -> Any:
        asked = getattr(request, name)
        if asked is not None:
            return asked
        return lens_value if lens_value is not None else default

    depth = setting("depth", lens.depth if lens else None, context.default_depth)
    max_depth = context.max_depth
    if depth > max_depth:
        depth, capped = max_depth, True
    limit = setting(
        "budget_tokens",
        lens.budget_tokens if lens else None,
        context.default_budget_tokens,
    )
    max_budget = context.max_budget_tokens
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

    if request.relations is not None:
        steps = steps_for(access, domain, branch, request.relations)
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

    seeds = await _seeds(txn, access, domain, point, request, kinds_filter, context.max_seeds)
    names = ["seeds", "neighbors", "links"] + [
        n for n in ("schema", "recent_changes", "lineage") if f"include_{n}" in included
    ]
    budget = Budget(limit, context.chars_per_token, format_, capped=capped)
    # The far neighbours' Links are read whole only for the first of each Relation by key, as many
    # as the budget could show (the pack keeps its neighbours in key order); when the fitted pack
    # shows none of the others, nor needs them to decide where the trim stopped, it is the pack the
    # whole read gives (fit's `unseen`). Otherwise it is read again whole.
    ranked = max(RANKED_MIN, math.ceil(limit * context.chars_per_token / RANKED_CHARS))
    pack = await _fitted(
        txn, access, domain, point, request, seeds, steps, depth, kinds_filter, names, budget, ranked
    )
    if pack is None:
        budget = Budget(limit, context.chars_per_token, format_, capped=capped)
        pack = await _fitted(
            txn, access, domain, point, request, seeds, steps, depth, kinds_filter, names, budget, None
        )
        assert pack is not None
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
    rt.read_cache.put(cache_key, domain, (content_type, text, point.revision or ""))
    return Pack(text, content_type, point.revision or "", etag)


async def _fitted(
    txn: Txn,
    access: Access,
    domain: Domain,
    point: Any,
    request: ContextBody,
    seeds: list[Ref],
    steps: list[Step],
    depth: int,
    kinds_filter: set[str] | None,
    names: list[str],
    budget: Budget,
    ranked: int | None,
) -> dict[str, Any] | None:
    """The pack of `seeds` walked `depth` hops along `steps`, fitted to `budget`; with `ranked`
    (walk's), None when the answer might depend on a Link read by its keys alone."""
    context = domain.settings.model.agents.context
    branch = point.branch.name
    caps = Caps.of(
        domain,
        max_records=len(seeds) + context.max_neighbors,
        max_links=context.max_links,
    )
    result = await walk(
        txn, domain, point, seeds, depth=depth, steps=steps, caps=caps, kinds=kinds_filter, ranked=ranked
    )
    if result.incomplete:
        return None
    budget.capped |= result.capped
    # The far neighbours' values are read last, and only when the budget keeps some of them: a pack
    # over budget even without its history sections and their values shows none of them.
    far = [ref for ref, depth in result.depth_of.items() if depth > 1 and ref not in seeds]
    near = [ref for ref, depth in result.depth_of.items() if depth == 1 and ref not in seeds]
    rows = await pack_rows(txn, access, domain, point, seeds, near, far)
    if request.refs is not None:  # refs seeds must exist (read with the neighbours, one round trip)
        for kind, key in seeds:
            if (kind, key) not in rows.values:
                raise Problem(404, "not-found", f"no {kind} with key {key!r} on branch {branch!r}")
    pack = await assemble(access, domain, point, seeds, result.depth_of, result.links, rows, steps)
    trim_order: list[str] = list(context.trim_order)
    pack["recent_changes"] = []
    omitted: dict[str, int] = {}
    # Each section the budget may trim whole is decided in trim order's sense before it is read: a
    # probe with the sections not read yet left empty can only be smaller than the pack, so when it
    # is over budget the section would go whatever it held (budget.trimmed_whole).
    if "lineage" in names:
        if trimmed_whole(pack, budget, names, trim_order, "lineage"):
            omitted["lineage"] = lineage_count(pack)
        else:
            pack["lineage"] = await lineage(txn, domain, pack)
    if "recent_changes" in names:
        refs = list(result.depth_of)
        if (
            trimmed_whole(pack, budget, names, trim_order, "recent_changes")
            and not request.since
            and (len(refs) >= recent_changes_max(domain))
        ):
            # Every Record has at least its creation on the history: the section would hold
            # exactly recent_changes_max entries, all trimmed. Skip reading them.
            omitted["recent_changes"] = recent_changes_max(domain)
        else:
            pack["recent_changes"] = await recent_changes(txn, domain, point, refs, request.since, access)
    if far:
        whole = trimmed_whole(pack, budget, names, trim_order, "far_neighbor_values")
        shown = await far_values(txn, access, domain, point, far, rows.existing, whole=whole)
        if shown.values is None:
            omitted["far_neighbor_values"] = shown.count
        else:
            show_far_values(pack, access, domain, point, shown.values)
    unseen = fit(pack, budget, names, trim_order, omitted=omitted)
    for relation, from_key, to_key in result.unread:
        relation_ = domain.schema.relations[relation]
        if not {f"{relation_.from_kind}/{from_key}", f"{relation_.to_kind}/{to_key}"} & unseen:
            return None
    return pack


async def _seeds(
    txn: Txn,
    access: Access,
    domain: Domain,
    point: Any,
    request: ContextBody,
    kinds_filter: set[str] | None,
    max_seeds: int,
) -> list[Ref]:
    """The seed Records: the `refs`, or those a `query` or a `search` finds (at most max_seeds)."""
    branch = point.branch.name
    if request.refs is not None:
        if len(request.refs) > max_seeds:
            raise _problem(
                "refs", f"refs is a list of 1 to {max_seeds} Record references (agents.context.max_seeds)"
            )
        refs = list(dict.fromkeys(parse_ref(v, f"refs[{i}]") for i, v in enumerate(request.refs)))
        for kind, _ in refs:
            readable_kind(access, domain, branch, kind)
        return refs  # kept whatever their Kind; that they exist is checked with the walk's reads
    if request.query is not None:
        query = msgspec.structs.replace(
            request.query, limit=max_seeds, branch=branch, at=None, coverage=False
        )
        answer = await query_in(txn, access, domain, query)
        refs = [(r["kind"], r["key"]) for r in answer.get("records", [])]
    else:
        kinds = [
            k for k in readable(access, domain, branch).kinds if kinds_filter is None or k in kinds_filter
        ]
        text_ = (request.search or "").strip()
        if not text_:
            raise _problem("search", "search needs some text")
        refs = [ref for ref, _ in await search_refs(txn, access, domain, point, text_, kinds, max_seeds)]
    return [ref for ref in refs if kinds_filter is None or ref[0] in kinds_filter]


__all__ = ["Pack", "context_pack"]
