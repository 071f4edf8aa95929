"""Where a read stands: the head of a branch or an earlier Revision on its first-parent history.

`at` (and `since`, `from`, `to`, which come here too) is a Revision id, a unique prefix of one, or
a tag: lorebase_store.refs reads it, here only.

A deleted branch (a task branch cleaned up at merge, docs/branches.md "Deleting a branch") is still
read at one of its Revisions: `branch=<its name>&at=<a Revision it made>` reads the archive's
history (its own Revisions, then the history it was forked from, up to the fork), so a replay or a
diff of what an agent did there keeps working after the merge. Its head (no `at`) is gone: 404."""

from __future__ import annotations

from dataclasses import dataclass

from lorebase.problems import Problem
from lorebase_keeper.domains import Domain, check_branch_name
from lorebase_store import BranchChain, BranchRow, Txn
from lorebase_store.chains import branch_chain
from lorebase_store.refs import revision_named


@dataclass(frozen=True)
class ReadPoint:
    """A branch read at its head (`at` None) or as of a Revision (then from a snapshot of history)."""

    branch: BranchRow
    chain: BranchChain
    revision: str | None
    at: tuple[str, int] | None  # (branch segment, generation) of the Revision read as of
    # The schema version the Revision read as of was committed under (None: the creation schema, or
    # a read at the head, whose version the Domain's registry knows).
    schema_digest: str | None = None

    @property
    def snapshot(self) -> tuple[BranchChain, tuple[str, int]] | None:
        return None if self.at is None else (self.chain, self.at)


async def read_point(txn: Txn, domain: Domain, branch_name: str | None, at: str | None) -> ReadPoint:
    name = check_branch_name(branch_name or domain.default_branch)
    branch = await txn.get_branch(domain.id, name)
    if branch is None:
        archived = await _archived_point(txn, domain, name, at) if at else None
        if archived is not None:
            return archived
        raise Problem(404, "not-found", f"unknown branch {name!r}; GET /branches lists them")
    chain = await branch_chain(txn, domain.id, branch)
    if not at:
        if branch.mode == "overlay":  # no materialised rows: read the snapshot of its head
            return ReadPoint(branch, chain, branch.head, (branch.name, branch.generation))
        return ReadPoint(branch, chain, branch.head, None)
    named = await revision_named(txn, domain.id, at, chain)
    if named.malformed:
        raise Problem(
            400,
            "invalid-at",
            f"at must be a Revision id (64 hex digits, or at least 12 of them) or a tag name, not {at!r}",
        )
    if named.ambiguous:
        raise Problem(400, "invalid-at", f"at {at!r} names more than one Revision; send more hex digits")
    revision = named.revision
    if revision is None:
        raise Problem(
            404,
            "revision-not-found",
            f"{at} is neither a Revision on the first-parent history of branch {name!r} nor a tag; "
            "read the branch (GET /branches/{branch}) for its head, GET /tags for the tags",
        )
    if not _on_chain(chain, revision.branch, revision.generation):
        through = f"tag {named.tag!r} names Revision {revision.id}, which" if named.tag else f"Revision {at}"
        raise Problem(
            404,
            "revision-not-found",
            f"{through} is not on the first-parent history of branch {name!r}; "
            f"read it with branch={revision.branch.split('~')[0]!r}, or read the branch's head",
        )
    return ReadPoint(
        branch, chain, revision.id, (revision.branch, revision.generation), revision.schema_digest
    )


async def _archived_point(txn: Txn, domain: Domain, name: str, at: str) -> ReadPoint | None:
    """The read point of a Revision (a full id or a tag) that branch `name` made before it was
    deleted; None when `at` names no such Revision."""
    named = await revision_named(txn, domain.id, at, BranchChain(()))
    revision = named.revision
    if revision is None or revision.branch.split("~", 1)[0] != name or "~" not in revision.branch:
        return None
    chain = await archived_chain(txn, domain.id, revision.branch, revision.generation)
    row = BranchRow(
        domain_id=domain.id,
        name=name,
        head=revision.id,
        generation=revision.generation,
        protected=False,
        required_approvals=0,
        from_branch=None,
        fork_generation=None,
        mode="overlay",
        created_by="",
        created_at=revision.created_at,
        chain=chain.document(),
    )
    return ReadPoint(row, chain, revision.id, (revision.branch, revision.generation))


async def archived_chain(
    txn: Txn, domain_id: int, archive: str, generation: int, depth: int = 0
) -> BranchChain:
    """The first-parent history of an archived (deleted) branch up to `generation`: its own
    Revisions, then the history of the Revision its first one was made on (a live branch's, cut
    there, or another archive's)."""
    own = BranchChain(((archive, 0, generation),))
    oldest = await txn.first_parent_revisions(domain_id, own, after=-1, upto=generation, limit=1)
    parents = oldest[0].parents if oldest else []
    fork = await txn.get_revision(domain_id, parents[0]) if parents else None
    if fork is None or depth >= 16:
        return BranchChain(((archive, 0, generation),))
    low = oldest[0].generation
    if "~" in fork.branch:
        below = await archived_chain(txn, domain_id, fork.branch, fork.generation, depth + 1)
    else:
        live = await txn.get_branch(domain_id, fork.branch)
        below = BranchChain(((fork.branch, 0, fork.generation),))
        if live is not None:
            below = (await branch_chain(txn, domain_id, live)).upto(fork.generation)
    return BranchChain(((archive, low, generation), *below.segments))


def _on_chain(chain: BranchChain, branch: str, generation: int) -> bool:
    return chain.holds(branch, generation)


__all__ = ["ReadPoint", "archived_chain", "read_point"]
