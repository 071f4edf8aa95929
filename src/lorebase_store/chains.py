"""The first-parent history of a branch as a `BranchChain` (what keeper reads and the feed follows)."""

from __future__ import annotations

from lorebase_store.domains import BranchRow
from lorebase_store.revisions import BranchChain
from lorebase_store.store import Txn


async def branch_chain(txn: Txn, domain_id: int, branch: BranchRow) -> BranchChain:
    """The first-parent history of a branch: stored with it, or (branches made before migration
    0007) followed through the branches it was forked from."""
    if branch.chain is not None:
        return BranchChain.from_document(branch.chain)
    segments: list[tuple[str, int, int | None]] = []
    current: BranchRow | None = branch
    limit: int | None = None
    seen: set[str] = set()
    while current is not None and current.name not in seen:
        seen.add(current.name)
        low = 0 if current.fork_generation is None else current.fork_generation + 1
        segments.append((current.name, low, limit))
        if not current.from_branch or current.fork_generation is None:
            break
        limit = current.fork_generation if limit is None else min(limit, current.fork_generation)
        current = await txn.get_branch(domain_id, current.from_branch)
    return BranchChain(tuple(segments))


__all__ = ["branch_chain"]
