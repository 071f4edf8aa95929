"""Merging one branch into another: a fast-forward when the target has not moved, else a three-way
merge at Attribute level against the merge base, in one transaction that locks both branches.

The merge base is the newest Revision both first-parent histories share, or where the last merge of
the source into the target stood (`branch_merges`), whichever is newer (base.py). What each
side changed since the base comes from its history rows: an Attribute changed on one side only takes
that side's value; changed on both sides to different values it is a Conflict (`both_changed`), as
are a delete against a change (`delete_vs_change`), a Link whose end the other side deleted
(`link_end_deleted`) and a unique value taken on both sides (`unique_taken`) (three_way_merge.py,
conflicts.py). Conflicts resolved earlier (same fingerprint) apply their resolution; any other
stops the merge and is stored for the Proposal.

A value brought over keeps its provenance (the Revision of the source that set it) and names the
Revision that brought it in `$via` (the merge Revision, and the Proposal and resolution when there
is one; provenance.py). A fast-forward moves the target onto the source's Revisions: its
history then runs through the source's segment, and lineage names the source Revision itself
(fast_forward.py); the target then stands on the source's schema version too. When either side
changed the schema since the base, the schemas merge element by element, the source's change sets
the target has not are committed on the target first (its data migrated by them), and each side's
data changes are migrated into the target's schema (schema_merge.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from lorebase.schema import load_schema
from lorebase_keeper.domains import schema_digest
from lorebase_keeper.merge.attempt import Found, MergeRequest, MergeResult
from lorebase_keeper.merge.base import Side, find_base, lock_pair
from lorebase_keeper.merge.fast_forward import fast_forward
from lorebase_keeper.merge.schema_merge import (
    SchemaMerge,
    Step,
    migrate_side,
    schema_conflicts,
    schema_merge,
    source_changes_not_on_target,
)
from lorebase_keeper.merge.three_way_merge import three_way_merge
from lorebase_store import BranchChain, BranchRow, Txn


@dataclass
class _Course:
    """What a merge of the two branches as they stand does before it reads either side's rows: the
    histories and the base, whether there is anything to bring and whether it is a fast-forward,
    and, across schema changes, the schemas merged, their Conflicts, and the source's change sets
    its catch-up commits on the target first (`unseen`)."""

    s_chain: BranchChain
    t_chain: BranchChain
    s_base: int
    t_base: int
    nothing: bool = False
    fast_forward: bool = False
    schemas: SchemaMerge | None = None
    found: list[Found] = field(default_factory=list)
    resolved: int = 0
    settled: set[str] = field(default_factory=set)
    unseen: list[Step] = field(default_factory=list)


async def _course(txn: Txn, request: MergeRequest, source: BranchRow, target: BranchRow) -> _Course:
    domain = request.domain
    s_chain, t_chain, common, s_base, t_base = await find_base(
        txn, domain, source, target, named=request.target
    )
    course = _Course(s_chain, t_chain, s_base, t_base)
    if source.head == target.head or s_base >= source.generation:
        course.nothing = True
    # A fast-forward only when the target has nothing of its own since the fork.
    elif t_base >= target.generation and (target.head is None or s_base == t_base == common):
        course.fast_forward = True
    else:
        course.schemas = await schema_merge(
            txn,
            request,
            s_chain,
            s_base,
            t_chain,
            t_base,
            same_schema=source.schema_digest == target.schema_digest,
        )
    if course.schemas is not None:
        course.found, course.resolved, course.settled = schema_conflicts(course.schemas, request)
        if not course.found:
            course.unseen = source_changes_not_on_target(course.schemas, request)
    return course


async def change_sets_to_catch_up(txn: Txn, request: MergeRequest) -> list[Step]:
    """The source's change sets a merge of `request` would commit on the target first (its
    catch-up), the branches read as they stand, unlocked: none when it would bring nothing,
    fast-forward, or stop at a Conflict of the schemas first. A kept merge stages the first of them
    ahead, outside the branches' locks (proposals/attempts.py)."""
    domain = request.domain
    source = await txn.get_branch(domain.id, request.source)
    target = await txn.get_branch(domain.id, request.written)
    if source is None or target is None or request.catch_up is None:
        return []
    return (await _course(txn, request, source, target)).unseen


async def merge(txn: Txn, request: MergeRequest) -> MergeResult:
    """Merge `request.source` into `request.target` inside `txn`; conflicts leave both unchanged."""
    domain = request.domain
    source, target = await lock_pair(txn, domain.id, request.source, request.written)
    course = await _course(txn, request, source, target)
    if course.nothing:
        # Nothing to bring; the merge is still recorded, as the base of the next one.
        await txn.set_last_merge(
            domain.id, source.name, target.name, source.generation, target.generation, request.at
        )
        return MergeResult("fast_forward", target.head, target.generation, [], 0, 0)
    s_rows = await txn.changes_after(domain.id, course.s_chain, course.s_base)
    s_side = Side()
    for row in s_rows:
        s_side.add(row)
    if course.fast_forward:
        return await fast_forward(txn, request, source, course.s_chain, target, s_side)
    t_rows = await txn.changes_after(domain.id, course.t_chain, course.t_base)
    schemas = course.schemas
    if schemas is None:
        t_side = Side()
        for row in t_rows:
            t_side.add(row)
    else:
        found, resolved = course.found, course.resolved
        if found:
            return MergeResult(
                "conflicts", target.head, target.generation, found, resolved, 0, cleared_known=False
            )
        unseen = course.unseen
        if unseen and request.catch_up is not None:
            change_sets = [(step.revision, step.items) for step in unseen]
            found, cleared = await request.catch_up(txn, request, target, change_sets)
            if found:
                return MergeResult(
                    "conflicts", target.head, target.generation, found, resolved, 0, cleared_known=False
                )
            result = await merge(txn, await _on_target_schema(txn, request, course.settled))
            return replace(
                result,
                cleared=cleared + result.cleared,
                cleared_known=True,
                resolved=result.resolved + resolved,
            )
        s_side, s_found, s_resolved = migrate_side(schemas, s_rows, "source", request)
        t_side, t_found, _ = migrate_side(schemas, t_rows, "target", request)
        resolved += s_resolved
        if s_found or t_found:
            return MergeResult("conflicts", target.head, target.generation, s_found + t_found, resolved, 0)
        result = await three_way_merge(txn, request, source, target, s_side, t_side)
        return replace(result, resolved=result.resolved + resolved)
    return await three_way_merge(txn, request, source, target, s_side, t_side)


async def _on_target_schema(txn: Txn, request: MergeRequest, settled: set[str]) -> MergeRequest:
    """The request again after a catch-up, its Domain on the schema the target stands on now."""
    domain = request.domain
    target = await txn.get_branch(domain.id, request.written)
    assert target is not None
    document = await txn.schema_document(domain.row, target.schema_digest)
    on_target = replace(domain, schema=load_schema(document), schema_digest=schema_digest(document))
    return replace(request, domain=on_target, catch_up=None, settled=request.settled | settled)


__all__ = ["change_sets_to_catch_up", "merge"]
