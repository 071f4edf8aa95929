"""The polling changes: the revision.committed events of the first-parent Revisions after `since`.

GET /domains/{domain}/branches/{branch}/changes?since=&kinds=&limit= (docs/feed.md). The cursor is a
Revision (or a tag naming one: lorebase_store.refs), not a sequence: a branch's history grows one
generation at a time under its row lock, so one snapshot of it never skips a Revision that commits
later.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lorebase.problems import Problem
from lorebase_feed.access import FeedAccess, matches
from lorebase_store import Database, RevisionRow, Txn
from lorebase_store.chains import branch_chain
from lorebase_store.refs import revision_named

_SCAN = 500  # Revisions read per statement while filtering by Kind


@dataclass(frozen=True)
class ChangesLimits:
    page_size: int = 100  # agents.feed.page_size
    max_scan: int = 10000  # agents.feed.max_scan


def _resync(branch: str, reason: str, detail: str) -> Problem:
    return Problem(
        409,
        "resync-required",
        f"{detail}; take a new context pack (POST /context) and follow from its revision",
        branch=branch,
        reason=reason,
    )


def check_limit(limit: int, limits: ChangesLimits) -> int:
    if limit == 0:
        return limits.page_size
    if not 1 <= limit <= limits.page_size:
        raise Problem(
            400,
            "invalid-parameter",
            f"limit is between 1 and {limits.page_size} (agents.feed.page_size), not {limit}",
            parameter="limit",
        )
    return limit


def _document(revision: RevisionRow, event: Any, branch: str) -> dict[str, Any]:
    if event is not None:
        return dict(event.document())
    # A Revision without its event (none is written without one today): what the row says.
    return {
        "sequence": None,
        "type": "revision.committed",
        "branch": branch,
        "revision": revision.id,
        "parents": revision.parents,
        "generation": revision.generation,
        "author": revision.author,
        "message": revision.message,
        "origin": revision.origin,
        "stats": revision.stats,
    }


async def _changes(
    txn: Txn, access: FeedAccess, since: str, kinds: frozenset[str], limit: int, limits: ChangesLimits
) -> dict[str, Any]:
    branch = await txn.get_branch(access.domain_id, access.branch)
    if branch is None:
        raise Problem(404, "not-found", f"unknown branch {access.branch!r}; GET /branches lists them")
    chain = await branch_chain(txn, access.domain_id, branch)
    head = branch.generation
    picked: list[RevisionRow] = []
    more = False
    if since:
        named = await revision_named(txn, access.domain_id, since, chain)
        if named.malformed or named.ambiguous:
            raise Problem(
                400,
                "invalid-parameter",
                f"since is a Revision id (64 hex digits, or a unique prefix of 12 or more) or a tag name, "
                f"not {since!r}",
                parameter="since",
            )
        start = named.revision
        if start is None or not chain.holds(start.branch, start.generation):
            raise _resync(
                access.branch,
                "off-history",
                f"since {since} is not a Revision or tag on the first-parent history of branch "
                f"{access.branch!r}",
            )
        if head - start.generation > limits.max_scan:
            raise _resync(
                access.branch,
                "too-far-behind",
                f"since {since} is {head - start.generation} Revisions behind the head of "
                f"{access.branch!r}, more than agents.feed.max_scan ({limits.max_scan})",
            )
        position, next_since = start.generation, start.id
        while position < head and not more:
            batch = await txn.first_parent_revisions(
                access.domain_id, chain, after=position, upto=head, limit=_SCAN
            )
            if not batch:
                break
            events = await txn.revision_events(access.domain_id, [r.id for r in batch], access.branch)
            for revision in batch:
                if len(picked) == limit:
                    more = True
                    break
                event = events.get(revision.id)
                position, next_since = revision.generation, revision.id
                if event is None or matches(event.event, kinds):
                    picked.append(revision)
        documents_of = await txn.revision_events(access.domain_id, [r.id for r in picked], access.branch)
    else:
        # The latest Revisions (those changing `kinds`), looking back at most max_scan.
        position = head
        floor = max(head - limits.max_scan, 0)
        newest: list[RevisionRow] = []
        while position > floor and len(newest) < limit:
            batch = await txn.first_parent_revisions(
                access.domain_id, chain, after=floor, upto=position, limit=_SCAN, newest_first=True
            )
            if not batch:
                break
            events = await txn.revision_events(access.domain_id, [r.id for r in batch], access.branch)
            for revision in batch:
                position = revision.generation - 1
                event = events.get(revision.id)
                if event is None or matches(event.event, kinds):
                    newest.append(revision)
                    if len(newest) == limit:
                        break
        picked = list(reversed(newest))
        next_since = branch.head or ""
        documents_of = await txn.revision_events(access.domain_id, [r.id for r in picked], access.branch)
    return {
        "domain": access.domain,
        "branch": access.branch,
        "head": branch.head,
        "events": [_document(r, documents_of.get(r.id), access.branch) for r in picked],
        "next_since": next_since or None,
        "more": more,
    }


async def changes(
    db: Database, access: FeedAccess, *, since: str, kinds: frozenset[str], limit: int, limits: ChangesLimits
) -> dict[str, Any]:
    since = since.strip()
    limit = check_limit(limit, limits)
    return await db.read("feed_changes", _changes, access, since, kinds, limit, limits)


__all__ = ["ChangesLimits", "changes", "check_limit"]
