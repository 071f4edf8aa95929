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
(fast_forward.py); the target then stands on the source's schema version too. A three-way merge of
branches that stand on different schema versions is refused (409 schema-conflict).
"""

from __future__ import annotations

from lorebase.problems import Problem
from lorebase_keeper.merge.attempt import MergeRequest, MergeResult
from lorebase_keeper.merge.base import Side, find_base, lock_pair
from lorebase_keeper.merge.fast_forward import fast_forward
from lorebase_keeper.merge.three_way_merge import three_way_merge
from lorebase_store import Txn


async def merge(txn: Txn, request: MergeRequest) -> MergeResult:
    """Merge `request.source` into `request.target` inside `txn`; conflicts leave both unchanged."""
    domain = request.domain
    source, target = await lock_pair(txn, domain.id, request.source, request.target)
    s_chain, t_chain, common, s_base, t_base = await find_base(txn, domain, source, target)
    if source.head == target.head or s_base >= source.generation:
        return MergeResult("fast_forward", target.head, target.generation, [], 0, 0)
    s_side = Side()
    for row in await txn.changes_after(domain.id, s_chain, s_base):
        s_side.add(row)
    if t_base >= target.generation and (target.head is None or s_base == common):
        return await fast_forward(txn, request, source, s_chain, target, s_side)
    if source.schema_digest != target.schema_digest:
        raise Problem(
            409,
            "schema-conflict",
            f"{request.source} and {request.target} stand on different schemas (versions "
            f"{source.schema_digest or domain.base_digest} and {target.schema_digest or domain.base_digest}); "
            "a three-way merge across a schema change is not built: apply the same change set to "
            f"{request.source} first (POST /branches/{request.source}/schema/changes), then merge",
            source=request.source,
            target=request.target,
        )
    t_side = Side()
    for row in await txn.changes_after(domain.id, t_chain, t_base):
        t_side.add(row)
    return await three_way_merge(txn, request, source, target, s_side, t_side)


__all__ = ["merge"]
